-- End-to-end test of the qgates Neovim plugin: real headless Neovim, the real `qgates lsp`, the
-- real ruff and mypy. Started by scripts/test-nvim.sh once per scenario, each in a fresh Neovim:
--
--   QGATES_BIN            the qgates binary under test
--   QGATES_NVIM_SCENARIO  one of the functions of `scenarios` below (main, untrusted, ...)
--   QGATES_NVIM_TMP       a fresh folder for this scenario's workspaces
--   QGATES_NVIM_RESULTS   the file that collects "PASS\tname" / "FAIL\tname\twhy" lines
--   QGATES_NVIM_REPO      the repository (for fixtures/python-basic)
--   QGATES_TRUST_FILE     a throw-away trust store (read by qgates itself)
--
-- Waits end as soon as their condition holds; their limits are generous because the machine may
-- be busy, and no assertion depends on how long anything took.

local BIN = assert(vim.env.QGATES_BIN, 'QGATES_BIN is not set')
local SCENARIO = assert(vim.env.QGATES_NVIM_SCENARIO, 'QGATES_NVIM_SCENARIO is not set')
local TMP = assert(vim.uv.fs_realpath(assert(vim.env.QGATES_NVIM_TMP)))
local RESULTS = assert(vim.env.QGATES_NVIM_RESULTS)
local REPO = assert(vim.env.QGATES_NVIM_REPO)
local FIXTURE = REPO .. '/fixtures/python-basic'

local WAIT_MS = 60000
-- The server's log level (its lines go to the LSP log the runner prints on failure).
local LOG_LEVEL = vim.env.QGATES_NVIM_LOG_LEVEL or 'info'

local results = {}
local failures = 0

local function record(name, ok, why)
  local line
  if ok then
    line = ('PASS\t%s/%s'):format(SCENARIO, name)
  else
    failures = failures + 1
    line = ('FAIL\t%s/%s\t%s'):format(SCENARIO, name, (tostring(why or '')):gsub('\n', ' | '))
  end
  table.insert(results, line)
  io.stderr:write(line .. '\n')
end

--- Records one check; `why` (a string or a function giving one) explains a failure.
local function check(name, ok, why)
  if not ok and type(why) == 'function' then
    why = why()
  end
  record(name, ok, why)
  return ok
end

local function wait(cond, ms)
  return vim.wait(ms or WAIT_MS, cond, 20)
end

--- Lets every callback already queued with vim.schedule run (FIFO), without waiting on time.
local function flush()
  local done = false
  vim.schedule(function()
    done = true
  end)
  wait(function()
    return done
  end)
end

local function sh(argv, opts)
  local out = vim.system(argv, vim.tbl_extend('force', { text = true }, opts or {})):wait(WAIT_MS)
  if out.code ~= 0 and not (opts and opts.ok_codes and vim.tbl_contains(opts.ok_codes, out.code)) then
    error(('%s failed (%s): %s%s'):format(table.concat(argv, ' '), out.code, out.stdout or '', out.stderr or ''))
  end
  return out
end

local function read_file(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

local function write_file(path, text)
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

--- A git repository with a copy of fixtures/python-basic, or of `opts.fixture` (the auto scope
--- needs git history);
--- `trust` records trust with `qgates trust` in the test's trust store, as a user would.
local function workspace(name, opts)
  opts = opts or {}
  local dir = TMP .. '/' .. name
  sh({ 'cp', '-R', opts.fixture or FIXTURE, dir })
  for _, cache in ipairs({ '.qgates', '.mypy_cache', '.ruff_cache' }) do
    vim.fn.delete(dir .. '/' .. cache, 'rf')
  end
  if opts.edit_config then
    local path = dir .. '/quality.yaml'
    write_file(path, opts.edit_config(read_file(path)))
  end
  local git = function(...)
    sh(vim.list_extend({ 'git', '-C', dir, '-c', 'user.email=test@example.com', '-c', 'user.name=Test' }, { ... }))
  end
  git('init', '-q', '-b', 'main')
  write_file(dir .. '/.gitignore', '.qgates/\n')
  git('add', '-A')
  git('commit', '-qm', 'fixture')
  if opts.trust then
    sh({ BIN, 'trust', '--yes', dir })
  end
  return dir
end

-- Every vim.notify, in order: {msg = ..., level = ...}.
local notes = {}
local real_notify = vim.notify
vim.notify = function(msg, level, o)
  table.insert(notes, { msg = tostring(msg), level = level })
  io.stderr:write(('notify[%s]: %s\n'):format(tostring(level), tostring(msg)))
end

local function notes_matching(pattern)
  return vim.tbl_filter(function(n)
    return n.msg:find(pattern, 1, true) ~= nil
  end, notes)
end

local function show_notes()
  return vim.inspect(vim.tbl_map(function(n)
    return n.msg
  end, notes))
end

-- vim.ui.select calls (Neovim shows window/showMessageRequest with it); `answer` picks the item.
local selects = {}
local select_answer = nil
vim.ui.select = function(items, o, on_choice)
  table.insert(selects, { items = items, prompt = o and o.prompt or '' })
  local choice = nil
  for _, item in ipairs(items) do
    local title = type(item) == 'table' and item.title or item
    if title == select_answer then
      choice = item
    end
  end
  on_choice(choice)
end

-- How many times the server published diagnostics for each URI (empty lists included).
local published = {}
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx)
  if params then
    published[params.uri] = (published[params.uri] or 0) + 1
    io.stderr:write(('publish %s v%s: %s\n'):format(params.uri, tostring(params.version), table.concat(
      vim.tbl_map(function(d)
        return tostring(d.code) .. '@' .. d.range.start.line
      end, params.diagnostics or {}), ' ')))
  end
  return publish(err, params, ctx)
end

local function bufnr_of(path)
  return vim.fn.bufnr(path)
end

--- {code, lnum (0-based), col (bytes), source} of each diagnostic of a file.
local function diags(path)
  local b = bufnr_of(path)
  if b < 0 then
    return {}
  end
  return vim.tbl_map(function(d)
    return { code = d.code, lnum = d.lnum, col = d.col, source = d.source, message = d.message, severity = d.severity }
  end, vim.diagnostic.get(b))
end

local function find(list, code, lnum)
  for _, d in ipairs(list) do
    if d.code == code and (lnum == nil or d.lnum == lnum) then
      return d
    end
  end
end

local function shape(list)
  local out = vim.tbl_map(function(d)
    return ('%s@%d:%d[%s]'):format(tostring(d.code), d.lnum, d.col, tostring(d.source))
  end, list)
  table.sort(out)
  return table.concat(out, ', ')
end

local function client()
  return vim.lsp.get_clients({ name = 'qgates' })[1]
end

--- Opens a file, or switches to its buffer when it is loaded (as a user does: `:edit` of the
--- current file would reload it, which Neovim's client answers with didClose and a late didOpen).
local function edit(path)
  local b = vim.fn.bufnr(path)
  if b > 0 and vim.api.nvim_buf_is_loaded(b) then
    vim.api.nvim_set_current_buf(b)
  else
    vim.cmd.edit(vim.fn.fnameescape(path))
  end
  return vim.api.nvim_get_current_buf()
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

--- What a tool makes of a file's text (ruff reads the workspace's pyproject.toml).
local function tool_output(dir, argv, text, ok_codes)
  return sh(argv, { cwd = dir, stdin = text, ok_codes = ok_codes }).stdout
end

local function float_windows()
  return vim.tbl_filter(function(w)
    return vim.api.nvim_win_get_config(w).relative ~= ''
  end, vim.api.nvim_list_wins())
end

--- Opens :QGates summary and waits for its window: the window, its lines and their text.
local function summary_window()
  vim.cmd('QGates summary')
  local win = nil
  wait(function()
    win = float_windows()[1]
    return win ~= nil
  end)
  local lines = win and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false) or {}
  return win, lines, table.concat(lines, '\n')
end

local function execute_sync(command, args)
  local c = assert(client(), 'no qgates client')
  local res = c:request_sync('workspace/executeCommand', { command = command, arguments = { args or vim.empty_dict() } }, WAIT_MS)
  assert(res and not res.err, 'executeCommand ' .. command .. ': ' .. vim.inspect(res))
  return res.result
end

--- Checks that `qgates status --json` answers (what :checkhealth reports from).
local function check_status_answers(dir)
  local out = vim.system({ BIN, 'status', '--json', dir }, { text = true }):wait(WAIT_MS)
  local ok, status = pcall(vim.json.decode, out.stdout or '')
  check('qgates status --json answers', (out.code == 0 or out.code == 2) and ok and type(status) == 'table'
    and status.config_ok ~= nil, vim.inspect(out))
end

local function checkhealth_text()
  vim.cmd('checkhealth qgates')
  local text = buffer_text(vim.api.nvim_get_current_buf())
  vim.cmd('tabclose')
  return text
end

local scenarios = {}

-- The working path: a trusted workspace, every gate's violations where the tools put them, a
-- change saved and checked, the format quick fix, :QGates fix / run / summary, :checkhealth.
function scenarios.main()
  local ws = workspace('ws', { trust = true })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  check('setup is silent when the binary is found', #notes == 0, show_notes)
  local subs = vim.fn.getcompletion('QGates ', 'cmdline')
  local scopes = vim.fn.getcompletion('QGates run p', 'cmdline')
  check(':QGates completes its subcommands and scopes', vim.deep_equal(subs, { 'clean', 'fix', 'log', 'run', 'summary', 'trust' })
    and vim.deep_equal(scopes, { 'project' }), vim.inspect({ subs, scopes }))

  local files = {}
  for _, f in ipairs({ 'unused_import', 'unformatted', 'unicode_line', 'type_error', 'clean' }) do
    files[f] = ws .. '/src/' .. f .. '.py'
  end
  local original_unformatted = read_file(files.unformatted)
  local original_unused = read_file(files.unused_import)
  for _, f in ipairs({ 'unused_import', 'unformatted', 'unicode_line', 'type_error', 'clean' }) do
    edit(files[f])
  end
  check('the client starts with the workspace as root', wait(function()
    local c = client()
    return c ~= nil and c.initialized
  end) and client().root_dir == ws, function()
    return 'root: ' .. tostring(client() and client().root_dir)
  end)

  -- Violations of every default gate, at the lines `qgates check --scope project` reports
  -- (the report's 1-based lines are the diagnostics' 0-based lnum + 1).
  local expected = {
    unused_import = { { 'F401', 2, 'Ruff Lint' } },
    unformatted = { { 'FORMAT', 4, 'Ruff Format' } },
    unicode_line = { { 'E702', 2, 'Ruff Lint' }, { 'FORMAT', 2, 'Ruff Format' }, { 'assignment', 2, 'Mypy' } },
    type_error = { { 'return-value', 4, 'Mypy' } },
  }
  for f, want in pairs(expected) do
    local all = wait(function()
      for _, w in ipairs(want) do
        if not find(diags(files[f]), w[1], w[2]) then
          return false
        end
      end
      return true
    end)
    local got = diags(files[f])
    local ok = all and #got == #want
    for _, w in ipairs(want) do
      local d = find(got, w[1], w[2])
      -- The files are as committed, so their findings are pre-existing: marked at once, or once
      -- the commit's findings of a whole-project gate (mypy) are known (the `existing` scenario).
      ok = ok and d ~= nil and d.source:gsub(' %(pre%-existing%)$', '') == w[3]
    end
    check('diagnostics of src/' .. f .. '.py', ok, function()
      return 'got ' .. shape(got)
    end)
  end
  -- Positions are negotiated as UTF-8, so byte columns land on the right characters after
  -- "café ☕": each finding starts on its token in the buffer's text.
  local uline = vim.api.nvim_buf_get_lines(bufnr_of(files.unicode_line), 2, 3, false)[1]
  local e702 = find(diags(files.unicode_line), 'E702', 2)
  local assignment = find(diags(files.unicode_line), 'assignment', 2)
  check('E702 points at the semicolon after non-ASCII text', e702 ~= nil and uline:sub(e702.col + 1, e702.col + 1) == ';', function()
    return vim.inspect(e702) .. ' on ' .. uline
  end)
  check('the mypy error points at "3" after non-ASCII text', assignment ~= nil and uline:sub(assignment.col + 1, assignment.col + 3) == '"3"', function()
    return vim.inspect(assignment) .. ' on ' .. uline
  end)
  -- clean.py was published too, with nothing in it.
  local clean_uri = vim.uri_from_fname(files.clean)
  check('src/clean.py is checked and clean', wait(function()
    return (published[clean_uri] or 0) > 0
  end) and #diags(files.clean) == 0, function()
    return 'published ' .. tostring(published[clean_uri]) .. ' times: ' .. shape(diags(files.clean))
  end)

  -- Type a change and save it: the new unused import is reported on its own line.
  -- (An empty line after it keeps the file formatted, so the unused import is the only finding.)
  local clean = edit(files.clean)
  vim.cmd('normal! ggjoimport sys\r')
  vim.cmd.write()
  local typed_line = vim.api.nvim_buf_get_lines(clean, 2, 3, false)[1]
  check('the change is typed on line 3', typed_line == 'import sys', typed_line)
  local f401 = nil
  wait(function()
    f401 = find(diags(files.clean), 'F401', 2)
    return f401 ~= nil
  end)
  check('after :write, F401 for sys on the new line', f401 ~= nil and f401.message:find('sys', 1, true) ~= nil
    and f401.source == 'Ruff Lint' and #diags(files.clean) == 1, function()
    return 'got ' .. shape(diags(files.clean))
  end)

  -- The format quick fix: code actions for the FORMAT diagnostic, "Format with ruff" applied.
  local unformatted = edit(files.unformatted)
  -- On the line of the FORMAT diagnostic: ruff's first change (the `+` on line 5).
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  local formatted = tool_output(ws, { 'ruff', 'format', '--stdin-filename', 'src/unformatted.py', '-' }, original_unformatted)
  check('ruff format changes the fixture (the test means something)', formatted ~= original_unformatted)
  local titles = {}
  vim.lsp.buf.code_action({
    filter = function(action)
      table.insert(titles, action.title)
      return action.title == 'Format with ruff'
    end,
    apply = true,
  })
  check('"Format with ruff" makes the buffer what ruff format makes of the file', wait(function()
    return buffer_text(unformatted) == formatted
  end), function()
    return 'actions: ' .. vim.inspect(titles) .. '; buffer:\n' .. buffer_text(unformatted)
  end)
  check('the quick fix asked nothing', #selects == 0, vim.inspect(selects))

  -- :QGates fix: every safe fix (the unused import) and then the formatter.
  local unused = edit(files.unused_import)
  local fixed = tool_output(ws, { 'ruff', 'check', '--fix-only', '--stdin-filename', 'src/unused_import.py', '-' }, original_unused)
  fixed = tool_output(ws, { 'ruff', 'format', '--stdin-filename', 'src/unused_import.py', '-' }, fixed)
  check('ruff removes the unused import (the test means something)', not fixed:find('import os', 1, true))
  local before = #notes
  vim.cmd('QGates fix')
  check(':QGates fix applies the safe fixes and the formatter', wait(function()
    return buffer_text(unused) == fixed
  end), function()
    return buffer_text(unused)
  end)
  check(':QGates fix says what it did', wait(function()
    return #notes > before and notes[#notes].msg:find('^qgates: fixed') ~= nil
  end), show_notes)
  -- Saved, the fixed file is checked again and comes out clean.
  vim.cmd.write()
  check('after :write, the fixed file has no diagnostics', wait(function()
    return #diags(files.unused_import) == 0
  end), function()
    return shape(diags(files.unused_import))
  end)

  -- The save's findings are compared with the commit's in the background, after which the
  -- server runs again: that run ends before the project's, so the project's stays the last.
  local line = ''
  check('the comparison with the commit settles', wait(function()
    line = execute_sync('qgates.summary').summary_line
    return line:find('being compared', 1, true) == nil
  end), function()
    return line
  end)
  -- :QGates run project: the summary line as a notification; it is the server's last result.
  before = #notes
  vim.cmd('QGates run project')
  local note = nil
  wait(function()
    note = notes[before + 1]
    return note ~= nil
  end)
  local last = execute_sync('qgates.summary')
  check(':QGates run project notifies the summary line', note ~= nil and note.msg == last.summary_line
    and note.level == vim.log.levels.WARN, function()
    return vim.inspect(note) .. ' vs ' .. tostring(last.summary_line)
  end)
  check('the run covered the project scope', last.report.scope.mode == 'project', vim.inspect(last.report.scope))
  check(':QGates run gave one notification', #notes == before + 1, show_notes)

  -- :QGates summary: a floating window with the summary line and the violations; q closes it.
  local win, lines, text = summary_window()
  check(':QGates summary opens a window with the summary line', lines[1] == last.summary_line, text)
  check('the window lists the gates and their violations',
    text:find('Ruff Lint (ruff_lint): failed', 1, true) ~= nil
      and text:find('src/with space.py:3:8  F401', 1, true) ~= nil
      and text:find('src/type_error.py:5:12  return-value', 1, true) ~= nil, text)
  if win then
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_feedkeys('q', 'x', false)
    check('q closes the summary window', wait(function()
      return not vim.api.nvim_win_is_valid(win)
    end))
  end
  -- <CR> on a violation opens its file at its line and column.
  vim.cmd('QGates summary')
  win = nil
  wait(function()
    win = float_windows()[1]
    return win ~= nil
  end)
  local target = nil
  for i, l in ipairs(win and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false) or {}) do
    if l:find('src/type_error.py:5:12', 1, true) then
      target = i
    end
  end
  if check('the summary window opens again', win ~= nil and target ~= nil) then
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { target, 0 })
    vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)
    local cursor = vim.api.nvim_win_get_cursor(0)
    check('<CR> opens the violation', vim.api.nvim_buf_get_name(0) == files.type_error
      and cursor[1] == 5 and cursor[2] == 11 and #float_windows() == 0, function()
      return vim.api.nvim_buf_get_name(0) .. ' ' .. vim.inspect(cursor)
    end)
  end

  -- :checkhealth qgates: the binary, its version, and `qgates status` (configuration, trust).
  edit(files.clean)
  local health = checkhealth_text()
  local version = vim.trim(sh({ BIN, '--version' }).stdout)
  check('checkhealth: binary found', health:find('qgates found: ' .. vim.fn.exepath(BIN), 1, true) ~= nil, health)
  check('checkhealth: version', health:find('version: ' .. version, 1, true) ~= nil, health)
  check_status_answers(ws)
  check('checkhealth: configuration valid', health:find('configuration valid: ' .. ws .. '/quality.yaml', 1, true) ~= nil, health)
  check('checkhealth: trusted', health:find('trusted: the language server runs its gates', 1, true) ~= nil, health)
  check('checkhealth: gate tools found', health:find('gate mypy: `mypy` found: ', 1, true) ~= nil, health)
  check('checkhealth: the running server', health:find('running (id ', 1, true) ~= nil, health)

  -- The help file's tags are well formed (helptags fails on duplicates) and name the commands.
  local doc = TMP .. '/doc'
  sh({ 'cp', '-R', REPO .. '/editors/nvim/doc', doc })
  local ok, err = pcall(vim.cmd.helptags, doc)
  local tags = ok and read_file(doc .. '/tags') or ''
  check('doc/qgates.txt has valid help tags', ok and tags:find(':QGates', 1, true) ~= nil
    and tags:find('qgates-setup', 1, true) ~= nil, tostring(err))
end

-- An untrusted workspace: the server asks (vim.ui.select), nothing runs after "Not now", and
-- :QGates trust runs the gates.
function scenarios.untrusted()
  local ws = workspace('ws', { trust = false })
  select_answer = 'Not now'
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local file = ws .. '/src/unused_import.py'
  edit(file)
  check('the server asks whether to trust the workspace', wait(function()
    return #selects > 0
  end), 'no question')
  local q = selects[1] or { items = {}, prompt = '' }
  local titles = vim.tbl_map(function(i)
    return i.title
  end, q.items)
  check('the question names the workspace and :QGates trust',
    q.prompt:find('qgates: run the quality gates of ' .. ws, 1, true) ~= nil and q.prompt:find(':QGates trust', 1, true) ~= nil, q.prompt)
  check('the answers are Trust and Not now', vim.deep_equal(titles, { 'Trust', 'Not now' }), vim.inspect(titles))
  check('no message besides the question', #notes == 0, show_notes)

  -- After "Not now", a run is refused with the way out.
  vim.cmd('QGates run')
  check(':QGates run says the workspace is not trusted and how to trust it', wait(function()
    return #notes > 0
  end) and notes[1].msg:find('not trusted', 1, true) ~= nil and notes[1].msg:find(':QGates trust', 1, true) ~= nil, show_notes)
  check('nothing ran', #diags(file) == 0, shape(diags(file)))

  vim.cmd('QGates trust')
  check(':QGates trust runs the gates', wait(function()
    return find(diags(file), 'F401', 2) ~= nil
  end), function()
    return shape(diags(file)) .. ' ' .. show_notes()
  end)
  check(':QGates trust says so', #notes_matching('qgates: trusted ' .. ws) == 1, show_notes)
  local store = vim.uv.fs_stat(vim.env.QGATES_TRUST_FILE) and read_file(vim.env.QGATES_TRUST_FILE) or ''
  check('trust is recorded in the trust store', store:find(ws, 1, true) ~= nil, store)
  check('the question was asked once', #selects == 1, vim.inspect(selects))
end

-- Answering the question with "Trust" runs the gates and records the trust.
function scenarios.trust_answer()
  local ws = workspace('ws', { trust = false })
  select_answer = 'Trust'
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local file = ws .. '/src/unused_import.py'
  edit(file)
  check('"Trust" runs the gates', wait(function()
    return find(diags(file), 'F401', 2) ~= nil
  end), function()
    return shape(diags(file)) .. ' ' .. show_notes() .. ' ' .. vim.inspect(selects)
  end)
  local store = vim.uv.fs_stat(vim.env.QGATES_TRUST_FILE) and read_file(vim.env.QGATES_TRUST_FILE) or ''
  check('the answer is recorded in the trust store', store:find(ws, 1, true) ~= nil, store)
  check('no message besides the question', #notes == 0 and #selects == 1, show_notes)
end

-- :checkhealth in an untrusted workspace says so and how to trust it.
function scenarios.untrusted_health()
  local ws = workspace('ws', { trust = false })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, autostart = false })
  edit(ws .. '/src/clean.py')
  local health = checkhealth_text()
  check_status_answers(ws)
  check('checkhealth: not trusted, with the way to trust', health:find('not trusted', 1, true) ~= nil
    and health:find(':QGates trust', 1, true) ~= nil and health:find('qgates trust ' .. ws, 1, true) ~= nil, health)
  check('autostart = false starts nothing', #vim.lsp.get_clients({ name = 'qgates', _uninitialized = true }) == 0)
end

-- No binary: one warning at setup (also on a second setup), no client, commands say the same.
function scenarios.missing()
  local ws = workspace('ws')
  local missing = TMP .. '/no-such-dir/qgates'
  require('qgates').setup({ path = missing })
  require('qgates').setup({ path = missing })
  check('setup warns once', #notes == 1 and notes[1].level == vim.log.levels.WARN
    and notes[1].msg:find('qgates not found: install it or set path', 1, true) ~= nil, show_notes)
  edit(ws .. '/src/clean.py')
  flush()
  check('no client starts', #vim.lsp.get_clients({ name = 'qgates', _uninitialized = true }) == 0)
  vim.cmd('QGates run')
  check(':QGates run repeats what to do', #notes == 2 and notes[2].msg:find('qgates not found: install it or set path', 1, true) ~= nil, show_notes)
  local health = checkhealth_text()
  check('checkhealth: not found', health:find('qgates not found: `' .. missing .. '` is not an executable', 1, true) ~= nil, health)
  check('checkhealth: how to install a missing binary (pip, cargo)', health:find('pip install qgates', 1, true) ~= nil
    and health:find('cargo install --git ', 1, true) ~= nil and health:find('cargo install --path .', 1, true) ~= nil
    and health:find("setup{ path = '/path/to/qgates' }", 1, true) ~= nil, health)
  check('the setup warning points to :checkhealth qgates', notes[1] ~= nil
    and notes[1].msg:find(':checkhealth qgates says how to install it', 1, true) ~= nil, show_notes)
end

-- A binary that exits at once: one error naming the command and :checkhealth, not two.
function scenarios.crash()
  local ws = workspace('ws')
  local false_bin = vim.fn.exepath('false')
  require('qgates').setup({ cmd = { false_bin, 'lsp' } })
  edit(ws .. '/src/clean.py')
  check('the exit is reported', wait(function()
    return #notes > 0
  end), 'no message')
  -- Neovim forgets the client in the same callback that would give its own warning.
  wait(function()
    return #vim.lsp.get_clients({ name = 'qgates', _uninitialized = true }) == 0
  end)
  flush()
  check('exactly one message', #notes == 1, show_notes)
  local n = notes[1] or { msg = '' }
  check('it is an error naming the command, :checkhealth qgates and the log', n.level == vim.log.levels.ERROR
    and n.msg:find('`' .. false_bin .. ' lsp`', 1, true) ~= nil
    and n.msg:find(':checkhealth qgates', 1, true) ~= nil
    and n.msg:find(vim.lsp.get_log_path(), 1, true) ~= nil, n.msg)
  -- Opening another file does not start (and fail) again.
  edit(ws .. '/src/type_error.py')
  flush()
  check('no second start, no second message', #notes == 1
    and #vim.lsp.get_clients({ name = 'qgates', _uninitialized = true }) == 0, show_notes)
end

-- A server that dies in the middle of a session: one error that says so; reopening starts it again.
function scenarios.killed()
  local ws = workspace('ws', { trust = true })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local file = ws .. '/src/unused_import.py'
  edit(file)
  check('the server runs', wait(function()
    return find(diags(file), 'F401', 2) ~= nil
  end), shape(diags(file)))
  local pid = nil
  for _, child in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local info = vim.api.nvim_get_proc(child)
    if info and info.name and vim.fs.basename(BIN):find(info.name, 1, true) == 1 then
      pid = child
    end
  end
  if not check('the server is a child of Neovim', pid ~= nil) then
    return
  end
  vim.uv.kill(pid, 'sigkill')
  wait(function()
    return #vim.lsp.get_clients({ name = 'qgates', _uninitialized = true }) == 0
  end)
  flush()
  local n = notes[1] or { msg = '' }
  check('one error: killed, and how to start it again', #notes == 1 and n.level == vim.log.levels.ERROR
    and n.msg:find('was killed by signal 9 unexpectedly', 1, true) ~= nil and n.msg:find(':edit', 1, true) ~= nil, show_notes)
  -- As the message says: opening a file starts the server again.
  vim.cmd.edit(vim.fn.fnameescape(ws .. '/src/type_error.py'))
  check('opening a file starts it again', wait(function()
    return find(diags(ws .. '/src/type_error.py'), 'return-value', 4) ~= nil
  end), show_notes)
end

-- A test suite as a gate (fixtures/python-tests, the pytest preset): it does not run on save;
-- :QGates run runs it, and the failing test is shown at its assertion's line (pre-existing: it
-- fails at the commit too, where :QGates run runs it as well to compare).
function scenarios.tests()
  local ws = workspace('ws', { trust = true, fixture = REPO .. '/fixtures/python-tests' })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local file = ws .. '/tests/test_prices.py'
  local assertion = nil
  for i, line in ipairs(vim.split(read_file(file), '\n', { plain = true })) do
    if line:find('assert line == ', 1, true) then
      assertion = i - 1
      break
    end
  end
  assert(assertion, 'the fixture changed: no `assert line == ` in ' .. file)
  edit(file)
  check('the server attaches to the test file', wait(function()
    return #vim.lsp.get_clients({ name = 'qgates', bufnr = bufnr_of(file) }) == 1
  end), show_notes)
  local before = #notes
  vim.cmd('QGates run project')
  wait(function()
    return notes[before + 1] ~= nil
  end)
  local id = 'tests/test_prices.py::test_receipt_line_shows_euros'
  -- It fails at the commit too (the fixture is committed so): pre-existing, so information.
  check('the failing test is at its assertion, pre-existing', wait(function()
    local d = find(diags(file), id, assertion)
    return d ~= nil and d.severity == vim.diagnostic.severity.INFO and d.source == 'pytest (pre-existing)'
  end), function()
    return shape(diags(file)) .. ' expected ' .. id .. ' at line ' .. assertion
  end)
  check('the summary counts the tests', notes[before + 1] ~= nil
    and notes[before + 1].msg:find('4 tests, 1 failed, 1 skipped', 1, true) ~= nil, show_notes)
end

-- :QGates clean: the gates in a fresh checkout of the commit, not of the working tree. The
-- commit has an unused import that only the working tree fixes: the clean room still fails with
-- it, says the change was left out, removes its checkout, and leaves the open buffers'
-- diagnostics (the working tree's) alone. A revision that names nothing is a clear error.
function scenarios.clean()
  local ws = workspace('ws', { trust = false })
  local file = ws .. '/src/unused_import.py'
  local fixed = tool_output(ws, { 'ruff', 'check', '--fix-only', '--stdin-filename', 'src/unused_import.py', '-' }, read_file(file))
  fixed = tool_output(ws, { 'ruff', 'format', '--stdin-filename', 'src/unused_import.py', '-' }, fixed)
  check('ruff removes the unused import (the test means something)', not fixed:find('import os', 1, true))
  write_file(file, fixed)
  local commit = vim.trim(sh({ 'git', '-C', ws, 'rev-parse', '--short=7', 'HEAD' }).stdout)
  local function worktrees()
    return vim.split(vim.trim(sh({ 'git', '-C', ws, 'worktree', 'list' }).stdout), '\n', { plain = true })
  end

  -- The user answers the trust question as on any first visit.
  select_answer = 'Trust'
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local uri = vim.uri_from_fname(file)
  edit(file)
  check('the fixed working tree is checked and clean', wait(function()
    return (published[uri] or 0) > 0
  end) and #diags(file) == 0, function()
    return shape(diags(file)) .. ' ' .. show_notes()
  end)
  -- Once compared with the commit's findings (in the background), the result says the change
  -- fixed one.
  local working_line = ''
  check('the working tree\'s result says the change fixed a finding', wait(function()
    working_line = execute_sync('qgates.summary').summary_line
    return working_line:find('1 fixed', 1, true) ~= nil
  end), function()
    return working_line
  end)

  local before = #notes
  local publishes = published[uri]
  vim.cmd('QGates clean')
  local note = nil
  wait(function()
    note = notes[before + 1]
    return note ~= nil
  end)
  note = note or { msg = '' }
  check(':QGates clean says the commit fails, what was left out, and that the worktree is gone',
    note.level == vim.log.levels.WARN and note.msg:find('gates failed', 1, true) ~= nil
      and note.msg:find('ruff_lint', 1, true) ~= nil
      and note.msg:find(('clean room at %s (HEAD): 1 uncommitted change not included; worktree removed'):format(commit), 1, true) ~= nil,
    show_notes)
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local f401 = nil
  for _, item in ipairs(qf.items) do
    if vim.api.nvim_buf_get_name(item.bufnr) == file and item.lnum == 3 and item.text:find('F401', 1, true) then
      f401 = item
    end
  end
  check('the quickfix list holds the commit\'s violations, the fixed import among them', f401 ~= nil
    and f401.type == 'E' and f401.text:find('[Ruff Lint] F401 `os` imported but unused', 1, true) ~= nil
    and qf.title:find('clean room at ' .. commit, 1, true) ~= nil and note.msg:find(':copen', 1, true) ~= nil, function()
    return vim.inspect(qf)
  end)
  check('no worktree is left', #worktrees() == 1, function()
    return table.concat(worktrees(), ' | ')
  end)
  -- Any diagnostics the run published came before the answer to a later request.
  local last = execute_sync('qgates.summary')
  flush()
  check('the open buffer keeps the working tree\'s diagnostics', #diags(file) == 0 and published[uri] == publishes, function()
    return ('%s; published %s times, %s before'):format(shape(diags(file)), tostring(published[uri]), tostring(publishes))
  end)
  check('the folder\'s last result is still the working tree\'s', last.summary_line == working_line, last.summary_line)

  before = #notes
  local lists = vim.fn.getqflist({ nr = '$' }).nr
  vim.cmd('QGates clean nope')
  wait(function()
    return notes[before + 1] ~= nil
  end)
  note = notes[before + 1] or { msg = '' }
  check(':QGates clean nope: an error naming `nope` and what to give', note.level == vim.log.levels.ERROR
    and note.msg:find('^qgates: ') ~= nil and note.msg:find('`nope` does not name a commit', 1, true) ~= nil
    and note.msg:find('HEAD~1', 1, true) ~= nil, show_notes)
  check('a refused run leaves the quickfix lists and worktrees alone', vim.fn.getqflist({ nr = '$' }).nr == lists
    and #worktrees() == 1, function()
    return vim.fn.getqflist({ nr = '$' }).nr .. ' lists; ' .. table.concat(worktrees(), ' | ')
  end)
  check('one trust question, no other message', #selects == 1 and #notes == 2, show_notes)
end

-- Which folder is the workspace root (no server involved).
function scenarios.roots()
  local qgates = require('qgates')
  qgates.setup({ cmd = { vim.fn.exepath('true') }, autostart = false })
  local function touch(rel)
    local path = TMP .. '/' .. rel
    vim.fn.mkdir(vim.fs.dirname(path), 'p')
    write_file(path, '')
    return path
  end
  -- A quality.yaml above a nested git repository wins: configuration markers come first.
  touch('mono/quality.yaml')
  vim.fn.mkdir(TMP .. '/mono/sub/.git', 'p')
  local nested = touch('mono/sub/pkg/a.py')
  check('quality.yaml before .git', qgates.find_root(nested) == TMP .. '/mono', tostring(qgates.find_root(nested)))
  -- .qgates/quality.yaml marks the root too, and that file itself belongs to the folder above.
  local hidden = touch('hidden/.qgates/quality.yaml')
  local file = touch('hidden/src/b.py')
  check('.qgates/quality.yaml marks the root', qgates.find_root(file) == TMP .. '/hidden', tostring(qgates.find_root(file)))
  check('.qgates/quality.yaml belongs to the folder above', qgates.find_root(hidden) == TMP .. '/hidden', tostring(qgates.find_root(hidden)))
  -- Without a configuration, the nearest git repository.
  vim.fn.mkdir(TMP .. '/plain/.git', 'p')
  local plain = touch('plain/x/c.py')
  check('.git without quality.yaml', qgates.find_root(plain) == TMP .. '/plain', tostring(qgates.find_root(plain)))
end

-- A broken quality.yaml: the server's one error message, its diagnostics on the file, no question.
function scenarios.broken()
  local broken_line = nil
  local ws = workspace('ws', {
    edit_config = function(text)
      local lines = vim.split(text, '\n', { plain = true })
      for i, l in ipairs(lines) do
        -- The gate's own command (the first match; its fixer's command comes later).
        if l:find('command: ["ruff", "check"', 1, true) then
          lines[i] = l:gsub('command:', 'comand:')
          broken_line = i - 1
          break
        end
      end
      return table.concat(lines, '\n')
    end,
  })
  assert(broken_line, 'the fixture changed: no ruff check command in quality.yaml')
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  edit(ws .. '/src/clean.py')
  check('an error message about the configuration', wait(function()
    return #notes > 0
  end) and notes[1].level == vim.log.levels.ERROR and notes[1].msg:find('configuration', 1, true) ~= nil
    and notes[1].msg:find('comand', 1, true) ~= nil, show_notes)
  local config = ws .. '/quality.yaml'
  edit(config)
  -- The yaml buffer attaches too (it is the workspace's configuration file).
  wait(function()
    return #vim.lsp.get_clients({ name = 'qgates', bufnr = bufnr_of(config) }) == 1
  end)
  local d = nil
  check('the problem is a diagnostic on its line of quality.yaml', wait(function()
    d = vim.diagnostic.get(bufnr_of(config))[1]
    return d ~= nil
  end) and d.lnum == broken_line and d.severity == vim.diagnostic.severity.ERROR, function()
    return vim.inspect(vim.diagnostic.get(bufnr_of(config))) .. ' expected line ' .. broken_line
  end)
  check('quality.yaml attaches to the same server', #vim.lsp.get_clients({ name = 'qgates' }) == 1
    and #vim.lsp.get_clients({ name = 'qgates', bufnr = bufnr_of(config) }) == 1, function()
    return vim.inspect(vim.tbl_map(function(c)
      return { c.id, c.root_dir, vim.tbl_keys(c.attached_buffers) }
    end, vim.lsp.get_clients({ name = 'qgates' })))
  end)
  flush()
  check('exactly one message, no trust question', #notes == 1 and #selects == 0, show_notes)
  local health = checkhealth_text()
  check_status_answers(ws)
  check('checkhealth: the configuration has errors, with the problem', health:find('configuration has errors: ' .. config, 1, true) ~= nil
    and health:find('unknown key `comand`', 1, true) ~= nil, health)
end

-- Neovim on Linux declares no file watching: the server watches the workspace itself, and a save
-- checks a file that a script wrote outside the editor.
function scenarios.watch()
  local ws = workspace('ws', { trust = true })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local clean = ws .. '/src/clean.py'
  local buf = edit(clean)
  check('the client attaches', wait(function()
    return client() ~= nil and client().initialized
  end), show_notes)
  local watching = vim.tbl_get(client().capabilities, 'workspace', 'didChangeWatchedFiles', 'dynamicRegistration')
  check('the client declares no file watching (its defaults on Linux)', watching ~= true, vim.inspect(watching))
  local answer
  check('qgates.summary: the server watches the folder itself', wait(function()
    answer = execute_sync('qgates.summary')
    return answer.file_events == 'server'
  end), function()
    return vim.inspect(answer and answer.file_events)
  end)
  -- A first save: the folder's scope is taken from git, and follows the watch's events after.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  check('the first save runs over the auto scope', wait(function()
    answer = execute_sync('qgates.summary')
    return vim.tbl_get(answer, 'report', 'scope', 'mode') == 'auto'
  end), function()
    return vim.inspect(answer)
  end)
  -- A script, not the editor, writes a module with an unused import.
  local written = ws .. '/src/written_by_script.py'
  sh({ 'sh', '-c', 'printf \'"""Written by a script."""\\n\\nimport os\\n\' > src/written_by_script.py' }, { cwd = ws })
  -- The server's watch reports it within moments: this save, or one soon after, checks it.
  local seen = false
  for _ = 1, 5 do
    vim.api.nvim_buf_call(buf, function()
      vim.cmd('silent write')
    end)
    seen = wait(function()
      return find(diags(written), 'F401') ~= nil
    end, 10000)
    if seen then
      break
    end
  end
  check('a save checks the file the script wrote, never opened in the editor', seen, function()
    return shape(diags(written)) .. ' ' .. vim.inspect(execute_sync('qgates.summary').summary_line)
  end)
end

-- The plugin installed as the README's "package on the packpath": its folder linked as a start
-- package, set up from init.lua, in a Neovim of its own (this one has the folder on 'runtimepath').
function scenarios.packpath()
  local data = TMP .. '/pack-data'
  local start = data .. '/nvim/site/pack/qgates/start'
  vim.fn.mkdir(start, 'p')
  assert(vim.uv.fs_symlink(REPO .. '/editors/nvim', start .. '/qgates'))
  local config = TMP .. '/pack-config'
  vim.fn.mkdir(config .. '/nvim', 'p')
  write_file(config .. '/nvim/init.lua', ("require('qgates').setup({ path = %q, autostart = false })\n"):format(BIN))
  local probe = 'lua io.stdout:write("cmd=" .. table.concat(vim.lsp.config.qgates.cmd, " ") .. "\\n")'
  local out = vim.system({ vim.v.progpath, '--headless', '-i', 'NONE', '-c', probe, '-c', 'qall!' }, {
    env = { XDG_DATA_HOME = data, XDG_CONFIG_HOME = config, XDG_STATE_HOME = TMP .. '/pack-state' },
    text = true,
  }):wait(WAIT_MS)
  check('a start package on the packpath loads the plugin, and setup() in init.lua configures it',
    out.code == 0 and out.stdout:find('cmd=' .. BIN .. ' lsp', 1, true) ~= nil, vim.inspect(out))
end

-- New and pre-existing findings: the committed unused import is there at the commit the auto
-- scope starts from, so once the server has the commit's findings it is shown as information,
-- its source saying "(pre-existing)"; a finding the edit makes is an error; :QGates summary lists
-- the new one and counts the other.
function scenarios.existing()
  local ws = workspace('ws', { trust = true })
  require('qgates').setup({ cmd = { BIN, 'lsp' }, log_level = LOG_LEVEL })
  local file = ws .. '/src/unused_import.py'
  local buf = edit(file)
  local old = nil
  check('the committed finding is shown as information, named pre-existing', wait(function()
    old = find(diags(file), 'F401', 2)
    return old ~= nil and old.severity == vim.diagnostic.severity.INFO
  end) and old.source == 'Ruff Lint (pre-existing)', function()
    return vim.inspect(diags(file)) .. ' ' .. show_notes()
  end)
  -- Two lines above it, and an f-string without placeholders (F541) at the end.
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# A header.', '' })
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', '', 'LABEL = f"plain"' })
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent write')
  end)
  -- The first change to the file: its findings are shown at once, then marked once the
  -- commit's version of it has been checked (in a checkout, in the background).
  local new = nil
  check('the new finding is an error, the old one moved down and is still information', wait(function()
    new = find(diags(file), 'F541')
    old = find(diags(file), 'F401', 4)
    return new ~= nil and old ~= nil and old.severity == vim.diagnostic.severity.INFO
  end) and new.severity == vim.diagnostic.severity.ERROR and new.source == 'Ruff Lint'
    and old.severity == vim.diagnostic.severity.INFO, function()
    return vim.inspect(diags(file))
  end)
  local win, lines, text = summary_window()
  local new_at = text:find('F541 f-string without any placeholders', 1, true)
  local old_at = text:find('F401 `os` imported but unused [fixable] (pre-existing)', 1, true)
  check(':QGates summary counts the new finding, and lists it before the pre-existing one',
    (lines[1] or ''):find('1 new violation (1 pre-existing', 1, true) ~= nil
      and new_at ~= nil and old_at ~= nil and new_at < old_at, text)
end

local fn = scenarios[SCENARIO]
if not fn then
  record('scenario', false, 'unknown scenario ' .. SCENARIO)
else
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    record('error', false, err)
  end
end

vim.notify = real_notify
local f = assert(io.open(RESULTS, 'a'))
f:write(table.concat(results, '\n') .. '\n')
f:close()
if failures > 0 then
  vim.cmd('cquit 1')
else
  vim.cmd('qall!')
end
