-- The :QGates summary window: the summary line, then each gate with its status and violations.
-- `q` or <Esc> closes it; <CR> on a violation opens its file at its line.

local M = {}

local ns = vim.api.nvim_create_namespace('qgates_summary')

local STATUS_HL = {
  passed = 'DiagnosticOk',
  failed = 'DiagnosticError',
  error = 'DiagnosticError',
  skipped = 'Comment',
}

local SEVERITY_HL = {
  error = 'DiagnosticError',
  warning = 'DiagnosticWarn',
  info = 'DiagnosticInfo',
  hint = 'DiagnosticHint',
}

--- "src/a.py:3:8" (or just the file, or "(no file)").
local function location(v)
  if not v.file then
    return '(no file)'
  end
  local s = v.file
  if v.line then
    s = s .. ':' .. v.line
    if v.column then
      s = s .. ':' .. v.column
    end
  end
  return s
end

local function one_line(text)
  return (tostring(text or ''):gsub('%s*\n%s*', ' '))
end

--- The lines of the window, their highlights and the violation each line points at.
--- @return string[] lines, table[] highlights {line, col_start, col_end, group}, table targets
function M.render(result)
  local lines, hls, targets = {}, {}, {}
  local function add(text, hl)
    table.insert(lines, text)
    if hl then
      table.insert(hls, { #lines - 1, 0, #text, hl })
    end
  end
  local report = type(result.report) == 'table' and result.report or {}
  add(one_line(result.summary_line), 'Title')
  local scope = report.scope or {}
  local facts = {}
  if scope.mode then
    table.insert(facts, 'scope ' .. scope.mode)
  end
  if scope.files_checked then
    table.insert(facts, scope.files_checked .. (scope.files_checked == 1 and ' file' or ' files') .. ' checked')
  end
  if report.timings and report.timings.total_ms then
    table.insert(facts, report.timings.total_ms .. ' ms')
  end
  if #facts > 0 then
    add(table.concat(facts, ' · '), 'Comment')
  end
  if scope.note then
    add('note: ' .. one_line(scope.note), 'Comment')
  end
  for _, gate in ipairs(report.gates or {}) do
    add('')
    local status = gate.status or '?'
    local head = ('%s (%s): %s'):format(gate.name or gate.id, gate.id or '', status)
    local why = gate.skip_reason or gate.error
    if why then
      head = head .. ' — ' .. one_line(why)
    end
    add(head)
    table.insert(hls, { #lines - 1, 0, #(gate.name or gate.id or ''), 'Bold' })
    local s = head:find(': ' .. status, 1, true)
    if s then
      table.insert(hls, { #lines - 1, s + 1, s + 1 + #status, STATUS_HL[status] or 'Normal' })
    end
    for _, v in ipairs(gate.violations or {}) do
      local code = v.code and (v.code .. ' ') or ''
      local fixable = v.fixable and ' [fixable]' or ''
      local existing = v.new == false and ' (pre-existing)' or ''
      local loc = location(v)
      add(('  %s  %s%s%s%s'):format(loc, code, one_line(v.message), fixable, existing))
      if v.code then
        local from = 2 + #loc + 2
        table.insert(hls, { #lines - 1, from, from + #v.code, SEVERITY_HL[v.severity] or 'DiagnosticError' })
      end
      if v.file then
        targets[#lines] = { file = v.file, line = v.line, column = v.column }
      end
    end
    if gate.fix_hint and status ~= 'passed' then
      add('  ' .. one_line(gate.fix_hint), 'Comment')
    end
  end
  -- The answer names the whole report; the run's logs are in its folder.
  if report.full_report then
    add('')
    add('report and logs: ' .. report.full_report, 'Comment')
  end
  add('')
  add('q: close   <CR>: open the violation under the cursor', 'Comment')
  return lines, hls, targets
end

local function close(win)
  if vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

--- Opens the window for a qgates.summary / qgates.run result; returns its window and buffer.
function M.open(result, root)
  local lines, hls, targets = M.render(result)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  for _, h in ipairs(hls) do
    vim.api.nvim_buf_set_extmark(buf, ns, h[1], h[2], { end_col = h[3], hl_group = h[4] })
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'qgates'

  local width = 0
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.max(20, math.min(width + 2, vim.o.columns - 4))
  local height = math.max(1, math.min(#lines, vim.o.lines - 4))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    style = 'minimal',
    border = 'rounded',
    title = ' qgates ',
    title_pos = 'center',
  })
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true

  local map = function(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map('q', function()
    close(win)
  end)
  map('<Esc>', function()
    close(win)
  end)
  map('<CR>', function()
    local t = targets[vim.api.nvim_win_get_cursor(win)[1]]
    if not t then
      return
    end
    close(win)
    local path = t.file
    if root and not path:match('^/') then
      path = vim.fs.joinpath(root, path)
    end
    vim.cmd.edit(vim.fn.fnameescape(path))
    if t.line then
      -- Report columns count characters; the cursor wants a byte index.
      local text = vim.api.nvim_buf_get_lines(0, t.line - 1, t.line, false)[1] or ''
      local chars = math.min(math.max(0, (t.column or 1) - 1), vim.str_utfindex(text, 'utf-32'))
      local byte = vim.str_byteindex(text, 'utf-32', chars, false)
      pcall(vim.api.nvim_win_set_cursor, 0, { t.line, byte })
    end
  end)
  -- Leaving the window closes it, like other transient floats.
  vim.api.nvim_create_autocmd('WinLeave', {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        close(win)
      end)
    end,
  })
  return win, buf
end

return M
