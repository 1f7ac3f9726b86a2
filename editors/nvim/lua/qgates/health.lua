-- :checkhealth qgates: the binary, its version, the workspace's configuration and trust, the
-- gates' tools, and the running servers.

local M = {}

local health = vim.health

-- A stuck binary must not hang :checkhealth.
local TIMEOUT_MS = 10000

-- How to get a missing binary: the ways qgates is published, then how the plugin finds it.
local INSTALL_ADVICE = {
  'Install it with pip, into the virtual environment Neovim is started from or for your user: `pip install qgates` (or `pipx install qgates`).',
  'Or build it with cargo (into ~/.cargo/bin): `cargo install --git <the qgates repository URL> qgates`, or `cargo install --path .` in a clone.',
  'Then start Neovim with it on PATH, '
    .. "or give its location: require('qgates').setup{ path = '/path/to/qgates' } (e.g. the project's .venv/bin/qgates).",
}

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

--- The file the user was in: :checkhealth runs in a buffer of its own, so the current buffer is
--- that one; the plugin remembers the last file buffer entered.
local function user_file(qgates)
  for _, b in ipairs({ vim.api.nvim_get_current_buf(), qgates.last_file_buf, vim.fn.bufnr('#') }) do
    if b and b > 0 and vim.api.nvim_buf_is_valid(b) and vim.bo[b].buftype == '' then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' then
        return b, vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
      end
    end
  end
end

--- The folder to check: the workspace of the file the user was in, else the current directory.
local function workspace_dir(qgates)
  local buf, file = user_file(qgates)
  if buf then
    local client = vim.lsp.get_clients({ name = qgates.name, bufnr = buf })[1]
    if client and client.root_dir then
      return client.root_dir
    end
    local root = qgates.find_root(file)
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
      local advice = {
        gate.problem or 'It is looked up in the workspace (.venv/bin, venv/bin, node_modules/.bin), then on PATH.',
        'Install it there, or start Neovim with it on PATH.',
      }
      if gate.optional then
        health.warn(label .. ' not found (optional: the gate is skipped)', advice)
      else
        health.error(label .. ' not found: the gate fails with an error', advice)
      end
    end
  end
  for _, lost in ipairs(status.file_watch_lost or {}) do
    health.warn(('file watch lost by the language server (pid %s) at %s UTC: %s'):format(
      tostring(lost.pid), lost.since or '?', lost.problem or '?'), {
      'Each save in this workspace takes a whole `git status` until the server restarts.',
      'Raise the limit (`sysctl fs.inotify.max_user_watches=524288`), then restart it (:LspRestart).',
    })
  end
end

function M.check()
  local qgates = require('qgates')

  health.start('qgates: Neovim')
  local v = vim.version()
  local nvim = ('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok(nvim .. ' (0.11 or newer is needed)')
  else
    health.error(nvim .. ' is too old', { 'qgates needs Neovim 0.11 or newer (vim.lsp.config).' })
  end

  health.start('qgates: binary')
  local cmd = qgates.cmd()
  health.info('server command: ' .. (type(cmd) == 'table' and table.concat(cmd, ' ') or tostring(cmd)))
  local bin = qgates.binary()
  if not bin then
    health.error(('qgates not found: `%s` is not an executable'):format(type(cmd) == 'table' and tostring(cmd[1]) or '?'), INSTALL_ADVICE)
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
