-- Headless Neovim (0.7.2+) test of editors/vim/lua/tosa_lsp: whole-file
-- rewrites are reviewed.
--
--   TOSA_LSP=/path/to/tosa-lsp nvim --headless -n -i NONE -u NONE -c 'luafile test_review.lua'
--
-- :TosaMigrate / :TosaRefineAll and the same actions chosen in
-- vim.lsp.buf.code_action() (:TosaCodeAction) open a diff of the current
-- and the proposed text in a new tab page; `n` discards, `y` applies (the
-- result verifies with mlir-opt-22); a buffer changed during the review or
-- since the server proposed the rewrite is refused.
-- Prints `nvim-review: N passed, M failed`; exits 0 only if nothing failed.

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local root = vim.fn.fnamemodify(script_dir, ':h:h:h')
local server = os.getenv('TOSA_LSP')
local mlir_opt = os.getenv('MLIR_OPT') or 'mlir-opt-22'
local verbose = (os.getenv('TOSA_NVIM_VERBOSE') or '') ~= ''
local started = vim.loop.hrtime()
local passed, failed = 0, 0
local api = vim.api

local function out(s) io.stdout:write(s .. '\n') io.stdout:flush() end
local function finish()
  out(string.format('nvim-review: %d passed, %d failed (%.1f s)', passed, failed, (vim.loop.hrtime() - started) / 1e9))
  if failed > 0 then vim.cmd('cquit 1') else vim.cmd('qall!') end
end
local function check(cond, msg, detail)
  if cond then
    passed = passed + 1
    if verbose then out('ok: ' .. msg) end
  else
    failed = failed + 1
    out('FAIL: ' .. msg)
    if detail ~= nil then out('  got: ' .. (type(detail) == 'string' and detail or vim.inspect(detail))) end
  end
  return cond
end
vim.defer_fn(function() out('FAIL (fatal): global timeout') failed = failed + 1 finish() end, 90000)
if not server or vim.fn.executable(server) ~= 1 then check(false, 'TOSA_LSP is executable') finish() return end

local notes = {}
vim.notify = function(msg) table.insert(notes, msg) end
vim.o.swapfile = false
vim.opt.runtimepath:prepend(root .. '/editors/vim')
vim.cmd('filetype plugin on')
local tosa = require('tosa_lsp')
tosa.setup({ cmd = { server } })

local tmpdir = vim.fn.tempname()
vim.fn.mkdir(tmpdir, 'p')
local path = tmpdir .. '/old.mlir'
vim.fn.writefile(vim.fn.readfile(root .. '/test/editors/vim/old.mlir'), path)
vim.cmd('edit ' .. vim.fn.fnameescape(path))
local bufnr = api.nvim_get_current_buf()
local orig = api.nvim_buf_get_lines(bufnr, 0, -1, false)
local function lines() return api.nvim_buf_get_lines(bufnr, 0, -1, false) end
local function errors() return vim.diagnostic.get(bufnr, { severity = vim.diagnostic.severity.ERROR }) end
local function verifies(ls)
  local f = vim.fn.tempname() .. '.mlir'
  vim.fn.writefile(ls, f)
  local o = vim.fn.system({ mlir_opt, f })
  vim.fn.delete(f)
  return vim.v.shell_error == 0 and '' or o:sub(1, 300)
end
local function answer(key)
  local r = tosa.reviewing
  if not r then return end
  api.nvim_set_current_win(vim.fn.bufwinid(r.bufs[2]))
  vim.cmd('normal ' .. key)
end
local function review_lines()
  local r = tosa.reviewing
  if not r then return {}, {} end
  return api.nvim_buf_get_lines(r.bufs[1], 0, -1, false), api.nvim_buf_get_lines(r.bufs[2], 0, -1, false)
end

check(vim.wait(15000, function() return #errors() >= 2 end, 20), 'old-form ops are errors', vim.diagnostic.get(bufnr))

-- :TosaMigrate: a review, nothing applied yet.
api.nvim_win_set_cursor(0, { 6, 2 })
vim.cmd('TosaMigrate')
check(vim.wait(10000, function() return tosa.reviewing ~= nil end, 20), ':TosaMigrate opens a review')
local r = tosa.reviewing or {}
local cur, new = review_lines()
check(#api.nvim_list_tabpages() == 2 and #api.nvim_tabpage_list_wins(0) == 2, 'the review is a new tab page with two windows')
local wins = api.nvim_tabpage_list_wins(0)
check(vim.wo[wins[1]].diff and vim.wo[wins[2]].diff, 'both windows in diff mode')
check((r.title or ''):find('^Migrate this file to MLIR 22 TOSA %(2 ops%)') ~= nil, 'of "Migrate this file ... (2 ops)"', r.title)
check(vim.deep_equal(cur, orig), 'left: the current text', cur)
local old_attrs = false
for _, l in ipairs(new) do if l:find('shift = 1 : i8', 1, true) or l:find('min_fp', 1, true) then old_attrs = true end end
check(not vim.deep_equal(new, orig) and not old_attrs, 'right: the proposed text without the old attributes', new)
check(vim.wo.statusline:find(' y apply  n discard │ proposed: Migrate this file', 1, true) == 1,
  'the status line says how to answer', vim.wo.statusline)
check(vim.deep_equal(lines(), orig) and not vim.bo[bufnr].modified, 'the file is unchanged while reviewed')

-- n: discarded.
answer('n')
check(tosa.reviewing == nil and #api.nvim_list_tabpages() == 1 and api.nvim_get_current_buf() == bufnr, 'n closes the review')
check(vim.deep_equal(lines(), orig), 'n: nothing applied')

-- Changed during the review: refused.
vim.cmd('TosaMigrate')
vim.wait(10000, function() return tosa.reviewing ~= nil end, 20)
api.nvim_buf_set_lines(bufnr, 0, 1, false, { '// edited during the review' })
notes = {}
answer('y')
check(tosa.reviewing == nil and vim.deep_equal(vim.list_slice(lines(), 2), vim.list_slice(orig, 2)), 'changed during the review: not applied')
check(#vim.tbl_filter(function(n) return n:find('changed during the review: "Migrate this file.*" not applied') ~= nil end, notes) == 1,
  'changed during the review: says so', notes)
api.nvim_buf_set_lines(bufnr, 0, 1, false, { orig[1] })

-- A proposal for an older text: refused before any review.
notes = {}
check(tosa.review({ title = 'Migrate (stale)', data = { review = true }, edit = { documentChanges = {
  { textDocument = { uri = vim.uri_from_bufnr(bufnr), version = 1 }, edits = {} } } } }) == false and tosa.reviewing == nil,
  'a rewrite of an older version is not reviewed')
check(#vim.tbl_filter(function(n) return n:find('changed since the server proposed', 1, true) ~= nil end, notes) == 1, 'and says why', notes)

-- y: applied, verifies.
vim.wait(500)
vim.cmd('TosaMigrate')
check(vim.wait(10000, function() return tosa.reviewing ~= nil end, 20), ':TosaMigrate again')
cur, new = review_lines()
answer('y')
check(tosa.reviewing == nil and #api.nvim_list_tabpages() == 1 and api.nvim_get_current_buf() == bufnr, 'y closes the review')
check(vim.deep_equal(lines(), new), 'y: the file is the proposed text', lines())
check(verifies(lines()) == '', mlir_opt .. ' verifies the migrated file', verifies(lines()))
check((tosa.last_progress or ''):find('applied "Migrate this file', 1, true) ~= nil, 'y: says what was applied', tosa.last_progress)
check(vim.wait(10000, function() return #errors() == 0 end, 20), 'no errors after the migration', errors())
vim.cmd('TosaMigrate')
check(vim.wait(5000, function() return (tosa.last_progress or ''):find('nothing to migrate', 1, true) ~= nil end, 20),
  'a migrated file: nothing to migrate', tosa.last_progress)

-- :TosaRefineAll in @refinable.
local exp_line
for i, l in ipairs(lines()) do if l:find('tosa.exp', 1, true) then exp_line = i end end
api.nvim_win_set_cursor(0, { exp_line, 2 })
vim.cmd('TosaRefineAll')
check(vim.wait(10000, function() return tosa.reviewing ~= nil end, 20), ':TosaRefineAll opens a review')
check(((tosa.reviewing or {}).title or ''):find('^Refine all shapes in @refinable') ~= nil, 'of "Refine all shapes in @refinable"')
answer('y')
check(lines()[exp_line]:find('-> tensor<5x7xf32>$') ~= nil, 'refined: tosa.exp returns tensor<5x7xf32>', lines()[exp_line])
check(verifies(lines()) == '', mlir_opt .. ' verifies the refined file', verifies(lines()))

-- The built-in code action menu (vim.lsp.buf.code_action via :TosaCodeAction).
api.nvim_buf_set_lines(bufnr, 0, -1, false, orig)
check(vim.wait(10000, function() return #errors() >= 2 end, 20), 'the old text again')
api.nvim_win_set_cursor(0, { 11, 2 })
local offered
vim.ui.select = function(items, opts, on_choice)
  offered = vim.tbl_map(function(t) return opts.format_item(t) end, items)
  for _, t in ipairs(items) do
    if t[2].title:find('^Migrate this file') then return on_choice(t) end
  end
  on_choice(nil)
end
vim.cmd('TosaCodeAction')
check(vim.wait(10000, function() return tosa.reviewing ~= nil end, 20), 'code action "Migrate this file" opens the review', offered)
check(vim.deep_equal(lines(), orig), 'and applies nothing by itself')
answer('q')
check(tosa.reviewing == nil and vim.deep_equal(lines(), orig), 'q discards it')

-- The review's tab page closed without an answer: nothing applied.
vim.cmd('TosaMigrate')
vim.wait(10000, function() return tosa.reviewing ~= nil end, 20)
vim.cmd('tabclose')
check(tosa.reviewing == nil and vim.deep_equal(lines(), orig) and (tosa.last_progress or ''):find('review closed, not applied', 1, true) ~= nil,
  ':tabclose ends the review, nothing applied', tosa.last_progress)

-- Edits made in memory in one pass: out of order, across lines, UTF-16
-- columns after a multi-byte character, at the end of the file.
do
  local got, n = tosa.edited_lines({ 'a café b', 'line two', 'line three', 'last' }, {
    { range = { start = { line = 3, character = 4 }, ['end'] = { line = 4, character = 0 } }, newText = '!\nappended\n' },
    { range = { start = { line = 0, character = 2 }, ['end'] = { line = 0, character = 6 } }, newText = 'CAFÉ' },
    { range = { start = { line = 0, character = 7 }, ['end'] = { line = 2, character = 5 } }, newText = 'B\nX ' },
  }, 'utf-16')
  check(vim.deep_equal(got, { 'a CAFÉ B', 'X three', 'last!', 'appended' }) and n == 4,
    'edits out of order, across lines, after a multi-byte character and at the end of the file', { got, n })
end

-- A rewrite of thousands of ops: reviewed and applied in seconds (0.7's
-- apply_workspace_edit took minutes: one incremental sync per edit).
do
  local big = {}
  for i = 0, 999 do
    for k = 5, 13 do
      big[#big + 1] = (orig[k]:gsub('@(relu6)', '@%1_' .. i):gsub('@(mul_shift)', '@%1_' .. i))
    end
  end
  vim.fn.writefile(big, tmpdir .. '/big.mlir')
  vim.cmd('edit ' .. vim.fn.fnameescape(tmpdir .. '/big.mlir'))
  local bbuf = api.nvim_get_current_buf()
  vim.wait(60000, function() return #vim.diagnostic.get(bbuf) >= 2000 end, 50)
  local t0 = vim.loop.hrtime()
  vim.cmd('TosaMigrate')
  check(vim.wait(60000, function() return tosa.reviewing ~= nil end, 20), 'a 9000-line file: :TosaMigrate opens the review')
  local treview = (vim.loop.hrtime() - t0) / 1e9
  local _, want = review_lines()
  t0 = vim.loop.hrtime()
  answer('y')
  local tapply = (vim.loop.hrtime() - t0) / 1e9
  check(vim.deep_equal(api.nvim_buf_get_lines(bbuf, 0, -1, false), want) and tapply < 3,
    string.format('2000 migrated ops applied in < 3 s (review %.2f s, apply %.2f s)', treview, tapply), { treview, tapply })
end

tosa.stop()
vim.fn.delete(tmpdir, 'rf')
finish()
