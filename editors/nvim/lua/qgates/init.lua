-- qgates for Neovim 0.11+: starts `qgates lsp` through vim.lsp.config / vim.lsp.enable and adds
-- the :QGates command (run, summary, fix, trust, log). See :help qgates.

local M = {}

--- The language server's name in vim.lsp.config, :checkhealth vim.lsp and the LSP log.
M.name = 'qgates'

M.defaults = {
  -- The qgates binary (a name on PATH or a path). Ignored when `cmd` is given.
  path = 'qgates',
  -- The full command that starts the server; default: { path, 'lsp' }.
  cmd = nil,
  -- Buffers of these filetypes attach. A yaml buffer attaches only when it is the workspace's
  -- quality.yaml (or .qgates/quality.yaml), so that its problems show in the file itself.
  filetypes = { 'python', 'yaml' },
  -- The workspace root: the nearest folder with a quality.yaml, else the nearest with .git.
  -- Entries are tried in order; a nested list holds markers of equal priority.
  root_markers = { { 'quality.yaml', '.qgates/quality.yaml' }, '.git' },
  -- The server's log level (error, warn, info, debug, trace); its log goes to the LSP log.
  log_level = 'warn',
  -- Also announce pull diagnostics (textDocument/diagnostic); diagnostics are pushed either way.
  pull_diagnostics = false,
  -- How findings that were there before your change are shown: 'hint', 'information', 'same'
  -- (their own severity) or 'hide'. Either way their source says "(pre-existing)".
  existing_findings = 'information',
  -- Extra initializationOptions, merged over the ones above.
  init_options = {},
  -- Called as on_attach(client, bufnr) when a buffer attaches.
  on_attach = nil,
  -- Client capabilities, merged over Neovim's defaults.
  capabilities = nil,
  -- Start the server automatically for matching buffers (vim.lsp.enable).
  autostart = true,
}

M.options = vim.deepcopy(M.defaults)

-- The message given when the binary cannot be found (nil when it was found).
local missing_message = nil
-- Binaries already warned about, so a repeated setup() does not repeat the warning.
local warned_missing = {}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'qgates' })
end

--- The command that starts the server.
function M.cmd()
  local o = M.options
  if o.cmd then
    return o.cmd
  end
  local path = o.path or 'qgates'
  if path:sub(1, 1) == '~' then
    path = vim.fn.expand(path)
  end
  return { path, 'lsp' }
end

--- The binary, resolved to a full path when it can be found (nil otherwise).
function M.binary()
  local cmd = M.cmd()
  if type(cmd) ~= 'table' or not cmd[1] then
    return nil
  end
  local found = vim.fn.exepath(cmd[1])
  return found ~= '' and found or nil
end

--- Whether `file` is a qgates configuration file at the root of a workspace.
local function config_root_of(file)
  local dir = vim.fs.dirname(file)
  if vim.fs.basename(file) ~= 'quality.yaml' then
    return nil
  end
  if vim.fs.basename(dir) == '.qgates' then
    return vim.fs.dirname(dir)
  end
  return dir
end

local function exists(path)
  return vim.uv.fs_stat(path) ~= nil
end

--- The workspace root for a file: for each entry of root_markers in order, the nearest folder
--- (the file's own folder or an ancestor) that holds one of the entry's markers.
function M.find_root(file)
  local config_root = config_root_of(file)
  if config_root then
    return config_root
  end
  local start = vim.fs.dirname(file)
  for _, entry in ipairs(M.options.root_markers or {}) do
    local markers = type(entry) == 'table' and entry or { entry }
    local dir = start
    while dir do
      for _, marker in ipairs(markers) do
        if exists(vim.fs.joinpath(dir, marker)) then
          return dir
        end
      end
      local parent = vim.fs.dirname(dir)
      if parent == dir then
        break
      end
      dir = parent
    end
  end
  return nil
end

--- root_dir for vim.lsp.config: attaches only to files inside a workspace, and only to the
--- quality.yaml among yaml files.
local function root_dir(bufnr, on_dir)
  local name = vim.api.nvim_buf_get_name(bufnr)
  -- Unnamed buffers and URIs of other plugins (oil://, fugitive://) are not workspace files.
  if name == '' or name:match('^%a[%w+.-]*://') then
    return
  end
  name = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  if vim.bo[bufnr].filetype == 'yaml' then
    local root = config_root_of(name)
    if root and exists(name) then
      on_dir(root)
    end
    return
  end
  local root = M.find_root(name)
  if root then
    on_dir(root)
  end
end

-- Neovim reports any non-zero exit of a client with its own generic warning. When the plugin
-- has already said what happened and what to do, that second message only adds noise, so it
-- is swallowed once; anything else passes through untouched.
local function swallow_generic_exit_warning()
  local original = vim.notify
  local filter
  local function restore()
    if vim.notify == filter then
      vim.notify = original
    end
  end
  filter = function(msg, level, opts)
    if type(msg) == 'string' and msg:find('^Client ' .. M.name .. ' quit with exit code') then
      restore()
      return
    end
    return original(msg, level, opts)
  end
  vim.notify = filter
  return restore
end

--- on_exit: a server that stops on its own gets one message naming the command and where to look.
local function on_exit(code, signal, client_id)
  -- 0 is a normal exit; 15 (SIGTERM) is Neovim stopping the server.
  if code == 0 and (signal == 0 or signal == 15) then
    return
  end
  local client = vim.lsp.get_client_by_id(client_id)
  local started = client ~= nil and client.initialized
  local cmd = client and client.config and client.config.cmd or M.cmd()
  local cmd_text = type(cmd) == 'table' and table.concat(cmd, ' ') or tostring(cmd)
  local how = signal ~= 0 and ('was killed by signal ' .. signal) or ('exited with code ' .. code)
  local what
  if started then
    what = how .. ' unexpectedly; it starts again when you open a file (:edit)'
  else
    -- Every buffer opened next would start it (and fail) again: stay off instead.
    vim.schedule(function()
      vim.lsp.enable(M.name, false)
    end)
    what = how .. ' before it started, so qgates is off until Neovim restarts'
  end
  local msg = string.format(
    'qgates: the language server `%s` %s. Run :checkhealth qgates and see the log with :QGates log (%s).',
    cmd_text,
    what,
    vim.lsp.get_log_path()
  )
  -- Neovim's own warning for this exit is queued right after this callback (see above).
  local restore = swallow_generic_exit_warning()
  vim.schedule(function()
    notify(msg, vim.log.levels.ERROR)
    -- Runs after Neovim's queued warning, so the filter never outlives this one exit.
    vim.schedule(restore)
  end)
end

local function lsp_level_to_vim(t)
  local MT = vim.lsp.protocol.MessageType
  if t == MT.Error then
    return vim.log.levels.ERROR
  elseif t == MT.Warning then
    return vim.log.levels.WARN
  elseif t == MT.Info then
    return vim.log.levels.INFO
  end
  return vim.log.levels.DEBUG
end

local handlers = {
  -- The server's messages already start with "qgates:"; shown through vim.notify (so that
  -- notification plugins get them) instead of Neovim's "LSP[qgates]" echo.
  ['window/showMessage'] = function(_, params, _)
    if params and type(params.message) == 'string' then
      local msg = params.message
      if not msg:find('^qgates') then
        msg = 'qgates: ' .. msg
      end
      notify(msg, lsp_level_to_vim(params.type))
    end
    return vim.NIL
  end,
  -- The trust question: Neovim shows it with vim.ui.select. The plugin adds how to answer later,
  -- since the question is asked once per session.
  ['window/showMessageRequest'] = function(err, params, ctx)
    if params and type(params.message) == 'string' then
      for _, action in ipairs(params.actions or {}) do
        if action.title == 'Trust' then
          params = vim.deepcopy(params)
          params.message = params.message .. ' (Later: :QGates trust.)'
          break
        end
      end
    end
    return vim.lsp.handlers['window/showMessageRequest'](err, params, ctx)
  end,
}

--- The vim.lsp.config table for the server.
function M.lsp_config()
  local o = M.options
  local init_options = vim.tbl_extend('force', {
    logLevel = o.log_level,
    pullDiagnostics = o.pull_diagnostics,
    existingFindings = o.existing_findings,
  }, o.init_options or {})
  local config = {
    cmd = M.cmd(),
    filetypes = o.filetypes,
    root_dir = root_dir,
    init_options = init_options,
    handlers = handlers,
    on_exit = on_exit,
    on_attach = o.on_attach,
  }
  if o.capabilities then
    config.capabilities = o.capabilities
  end
  return config
end

--- The qgates client for a buffer (the current one by default), else any running qgates client.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = vim.lsp.get_clients({ name = M.name, bufnr = bufnr })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = M.name })
  end
  return clients[1]
end

local function no_client_message()
  if missing_message then
    return missing_message
  end
  return 'qgates: no qgates language server runs for this buffer. Open a file of a project '
    .. '(a folder with quality.yaml or .git) of a filetype in setup{ filetypes }, '
    .. 'or run :checkhealth qgates.'
end

--- Sends workspace/executeCommand to the buffer's qgates server; calls back with the result.
--- `on_error(why)`, when given, tells the user about a refusal instead of the generic message.
local function execute(command, args, callback, on_error)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify(no_client_message(), vim.log.levels.ERROR)
    return
  end
  client:request('workspace/executeCommand', {
    command = command,
    arguments = { args or vim.empty_dict() },
  }, function(err, result)
    if err then
      -- The server names its command for any client; in Neovim that command is :QGates trust.
      local why = tostring(err.message or vim.inspect(err)):gsub('the command `qgates%.trust`', ':QGates trust')
      if on_error then
        on_error(why)
      else
        notify(('qgates: %s failed: %s'):format(command, why), vim.log.levels.ERROR)
      end
      return
    end
    callback(result, client)
  end, bufnr)
end

local function summary_level(report)
  if type(report) ~= 'table' then
    return vim.log.levels.INFO
  end
  if report.overall_pass then
    return vim.log.levels.INFO
  end
  local s = report.summary or {}
  if (s.errored or 0) > 0 then
    return vim.log.levels.ERROR
  end
  return vim.log.levels.WARN
end

M.scopes = { 'auto', 'branch', 'project' }

--- :QGates run [scope]: runs the gates now and shows the summary line.
function M.run(scope)
  scope = scope or 'auto'
  if not vim.tbl_contains(M.scopes, scope) then
    notify(('qgates: unknown scope `%s`; use one of %s.'):format(scope, table.concat(M.scopes, ', ')), vim.log.levels.ERROR)
    return
  end
  vim.api.nvim_echo({ { ('qgates: running the gates (%s)…'):format(scope) } }, false, {})
  execute('qgates.run', { scope = scope }, function(result)
    if type(result) ~= 'table' then
      notify('qgates: the run gave no result; see :QGates log.', vim.log.levels.ERROR)
      return
    end
    notify(result.summary_line, summary_level(result.report))
  end)
end

-- How many violations of a clean-room run the quickfix list holds at most.
local CLEAN_MAX_VIOLATIONS = 500

--- Quickfix items for the violations of a report whose paths are relative to `root`.
local function quickfix_items(report, root)
  local items = {}
  local kinds = { error = 'E', warning = 'W', info = 'I', hint = 'N' }
  for _, gate in ipairs(type(report) == 'table' and report.gates or {}) do
    for _, v in ipairs(gate.violations or {}) do
      local file = v.file
      if file and root and not file:match('^/') then
        file = vim.fs.joinpath(root, file)
      end
      local code = v.code and (v.code .. ' ') or ''
      table.insert(items, {
        filename = file,
        lnum = v.line or 0,
        -- Report columns count characters: a byte column only for ASCII text, close enough to
        -- land on the line of a commit whose text may differ from the working tree's anyway.
        col = v.column or 0,
        text = ('[%s] %s%s'):format(gate.name or gate.id, code, (tostring(v.message or ''):gsub('%s*\n%s*', ' '))),
        type = kinds[v.severity] or 'E',
        valid = file ~= nil,
      })
    end
  end
  return items
end

--- :QGates clean [rev]: every gate in a fresh git checkout of rev (default HEAD), without the
--- uncommitted changes: does the commit pass from scratch? Shows the summary line (which says
--- what was left out) and puts the violations in a new quickfix list: they are the commit's,
--- so the diagnostics of the open files stay those of the working tree.
function M.run_clean(rev)
  rev = rev or 'HEAD'
  vim.api.nvim_echo({ { ('qgates: running the gates in a clean checkout of %s…'):format(rev) } }, false, {})
  execute('qgates.run', { clean_room = true, rev = rev, max_violations = CLEAN_MAX_VIOLATIONS }, function(result, client)
    if type(result) ~= 'table' then
      notify('qgates: the clean-room run gave no result; see :QGates log.', vim.log.levels.ERROR)
      return
    end
    local report = type(result.report) == 'table' and result.report or {}
    local items = quickfix_items(report, client.root_dir)
    vim.fn.setqflist({}, ' ', { title = 'qgates: ' .. result.summary_line, items = items })
    local where = ''
    if #items > 0 then
      local total = tonumber(report.total) or #items
      local shown = total > #items and ('the first %d of %d violations'):format(#items, total)
        or (#items == 1 and 'its violation' or ('its %d violations'):format(#items))
      where = ('\nquickfix list: %s (:copen)'):format(shown)
    end
    notify(result.summary_line .. where, summary_level(result.report))
  end, function(why)
    -- The server's message names the revision and what to give instead.
    notify('qgates: ' .. why, vim.log.levels.ERROR)
  end)
end

--- :QGates summary: the last result (or a fresh run when there is none) in a floating window.
function M.summary()
  -- Every finding, new ones first, pre-existing ones marked so.
  execute('qgates.summary', { include_existing = true }, function(result, client)
    if type(result) ~= 'table' then
      notify('qgates: no summary available; see :QGates log.', vim.log.levels.ERROR)
      return
    end
    require('qgates.summary').open(result, client.root_dir)
  end)
end

--- :QGates fix: every safe fix and the formatter on the current buffer (qgates.fixAll).
function M.fix()
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    notify('qgates: this buffer has no file to fix.', vim.log.levels.ERROR)
    return
  end
  execute('qgates.fixAll', { uri = vim.uri_from_bufnr(bufnr) }, function(result)
    local edits = type(result) == 'table' and result.edits or 0
    if edits == 0 then
      notify('qgates: nothing to fix in ' .. vim.fn.fnamemodify(name, ':~:.'))
    elseif result.applied then
      notify(('qgates: fixed %s (%d edit%s); save to check it again.'):format(
        vim.fn.fnamemodify(name, ':~:.'), edits, edits == 1 and '' or 's'))
    else
      notify('qgates: the fixes could not be applied (the buffer changed meanwhile?); try again.', vim.log.levels.WARN)
    end
  end)
end

--- :QGates trust: trusts the workspace's quality.yaml (recorded per user, like `qgates trust DIR`).
function M.trust()
  execute('qgates.trust', nil, function(result)
    local roots = type(result) == 'table' and result.trusted or {}
    if #roots == 0 then
      notify('qgates: no workspace folder to trust.', vim.log.levels.WARN)
      return
    end
    notify(('qgates: trusted %s; its gates run now.'):format(table.concat(roots, ', ')))
  end)
end

--- :QGates log: the LSP log, where the server's own log lines go.
function M.log()
  vim.cmd.tabnew(vim.fn.fnameescape(vim.lsp.get_log_path()))
end

local subcommands = {
  run = function(args)
    M.run(args[1])
  end,
  clean = function(args)
    M.run_clean(args[1])
  end,
  summary = function()
    M.summary()
  end,
  fix = function()
    M.fix()
  end,
  trust = function()
    M.trust()
  end,
  log = function()
    M.log()
  end,
}

local function complete(arglead, cmdline)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local list
  if #words <= 1 or (#words == 2 and arglead ~= '') then
    list = vim.tbl_keys(subcommands)
    table.sort(list)
  elseif words[2] == 'run' then
    list = M.scopes
  else
    return {}
  end
  return vim.tbl_filter(function(s)
    return vim.startswith(s, arglead)
  end, list)
end

local function create_command()
  vim.api.nvim_create_user_command('QGates', function(cmd)
    local sub = cmd.fargs[1] or 'summary'
    local fn = subcommands[sub]
    if not fn then
      notify(('qgates: unknown subcommand `%s`; use run, clean, summary, fix, trust or log.'):format(sub), vim.log.levels.ERROR)
      return
    end
    fn(vim.list_slice(cmd.fargs, 2))
  end, {
    nargs = '*',
    complete = complete,
    desc = 'qgates: run [auto|branch|project], clean [rev], summary, fix, trust, log',
  })
end

--- Configures and (by default) enables the qgates language server.
function M.setup(opts)
  if vim.fn.has('nvim-0.11') == 0 then
    notify('qgates: Neovim 0.11 or newer is needed (vim.lsp.config).', vim.log.levels.ERROR)
    return
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists replace the defaults instead of merging with them index by index.
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    if opts and opts[key] then
      M.options[key] = opts[key]
    end
  end
  create_command()
  -- :checkhealth qgates checks the workspace of the last file entered.
  vim.api.nvim_create_autocmd('BufEnter', {
    group = vim.api.nvim_create_augroup('qgates', { clear = true }),
    callback = function(args)
      if vim.bo[args.buf].buftype == '' and vim.api.nvim_buf_get_name(args.buf) ~= '' then
        M.last_file_buf = args.buf
      end
    end,
  })
  -- Assigned, not merged: a second setup() replaces lists such as filetypes instead of mixing
  -- them index by index with the first one's.
  vim.lsp.config[M.name] = M.lsp_config()

  local cmd = M.cmd()
  if type(cmd) == 'table' and M.binary() == nil then
    missing_message = ('qgates not found: install it or set path (`%s` is not an executable; '
      .. "require('qgates').setup{ path = '/path/to/qgates' }); :checkhealth qgates says how to install it."):format(tostring(cmd[1]))
    if not warned_missing[cmd[1]] then
      warned_missing[cmd[1]] = true
      notify(missing_message, vim.log.levels.WARN)
    end
    vim.lsp.enable(M.name, false)
    return
  end
  missing_message = nil
  if M.options.autostart then
    vim.lsp.enable(M.name)
  end
end

return M
