-- :checkhealth qgates: the binary, its version, the workspace's configuration and trust, the
-- gates' tools, and the running servers.

local M = {}

local health = vim.health

-- A stuck binary must not hang :checkhealth.
local TIMEOUT_MS = 10000

local function run(argv)
  local ok, obj = pcall(function()
    return vim.system(argv, { text = true }):wait(TIMEOUT_MS)
  end)
  if not ok then
    return { code = -1, stdout = '', stderr = tostring(obj) }
  end
  return obj
end

local function first_line(text)
  return (vim.split(vim.trim(text or ''), '\n', { plain = true })[1]) or ''
end

--- The folder to check: the current buffer's workspace root, else the current directory.
local function workspace_dir(qgates)
  local client = qgates.client()
  if client and client.root_dir then
    return client.root_dir
  end
  local name = vim.api.nvim_buf_get_name(0)
  if name ~= '' then
    local root = qgates.find_root(vim.fs.normalize(vim.fn.fnamemodify(name, ':p')))
    if root then
      return root
    end
  end
  return vim.fn.getcwd()
end

local function check_status(bin, dir)
  health.start('qgates: workspace ' .. dir)
  local out = run({ bin, 'status', '--json', dir })
  local ok, status = pcall(vim.json.decode, out.stdout or '', { luanil = { object = true, array = true } })
  if not ok or type(status) ~= 'table' or status.config_ok == nil then
    health.warn(
      'cannot check: qgates status not available (configuration and trust of this workspace are unknown)',
      { 'Update qgates; `qgates status --json DIR` reports both.', 'Meanwhile: `qgates check --scope project` shows configuration errors; `qgates trust DIR` records trust.' }
    )
    return
  end
  if status.root and status.root ~= dir then
    health.info('workspace root: ' .. status.root)
  end
  local where = status.config or 'the embedded default (no quality.yaml)'
  if status.config_ok then
    health.ok('configuration valid: ' .. where)
  else
    health.error('configuration has errors: ' .. where .. '\n' .. vim.trim(status.config_errors or ''), {
      'Fix the file (its problems also show as diagnostics when you open it); no gate runs until then.',
    })
  end
  if status.trusted then
    health.ok('trusted: the language server runs its gates')
  elseif status.config_ok then
    health.warn('not trusted: the language server runs nothing here yet', {
      'Run :QGates trust, or `qgates trust ' .. (status.root or dir) .. '` in a terminal.',
      'Trust covers the configuration as it is now: a changed quality.yaml needs trust again.',
    })
  end
  for _, gate in ipairs(status.gates or {}) do
    local label = ('gate %s: `%s`'):format(gate.id or '?', gate.command or '?')
    if gate.found then
      health.ok(label .. ' found: ' .. (gate.path or '?'))
    else
      health.warn(label .. ' not found on PATH (nor in the workspace .venv/bin or node_modules/.bin)', {
        'Install it, or start Neovim with it on PATH; an optional gate is skipped meanwhile.',
      })
    end
  end
end

function M.check()
  local qgates = require('qgates')

  health.start('qgates: Neovim')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()) .. ' (0.11+ needed)')
  else
    health.error('Neovim ' .. tostring(vim.version()) .. ' is too old', { 'qgates needs Neovim 0.11 or newer (vim.lsp.config).' })
  end

  health.start('qgates: binary')
  local cmd = qgates.cmd()
  health.info('server command: ' .. (type(cmd) == 'table' and table.concat(cmd, ' ') or tostring(cmd)))
  local bin = qgates.binary()
  if not bin then
    health.error(('qgates not found: `%s` is not an executable'):format(type(cmd) == 'table' and tostring(cmd[1]) or '?'), {
      'Install qgates so that it is on PATH,',
      "or give its location: require('qgates').setup{ path = '/path/to/qgates' }.",
    })
    return
  end
  health.ok('qgates found: ' .. bin)
  local version = run({ bin, '--version' })
  if version.code == 0 and first_line(version.stdout) ~= '' then
    health.ok('version: ' .. first_line(version.stdout))
  else
    health.error(('`%s --version` failed (exit code %s): %s'):format(bin, tostring(version.code), first_line(version.stderr)), {
      'The binary does not run: reinstall it, or point setup{ path } at a working one.',
    })
    return
  end

  check_status(bin, workspace_dir(qgates))

  health.start('qgates: language server')
  local clients = vim.lsp.get_clients({ name = qgates.name })
  if #clients == 0 then
    health.info('no qgates server is running (it starts when a ' .. table.concat(qgates.options.filetypes or {}, '/')
      .. ' file of a project is opened)')
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers or {})
    health.ok(('running (id %d) for %s, %d buffer%s attached'):format(
      client.id, client.root_dir or '?', buffers, buffers == 1 and '' or 's'))
  end
  health.info('the server logs to the LSP log: ' .. vim.lsp.get_log_path() .. ' (:QGates log)')
end

return M
