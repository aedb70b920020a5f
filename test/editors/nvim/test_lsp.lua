-- Headless Neovim (0.7.2+) client test for tosa-lsp.
--
--   TOSA_LSP=/path/to/tosa-lsp nvim --headless -u NONE -c 'luafile test_lsp.lua'
--
-- Optional: MLIR_OPT (default mlir-opt-22), TOSA_NVIM_TIMEOUT_MS (default
-- 60000), TOSA_NVIM_VERBOSE=1 (dump server responses).
-- Prints `nvim: N passed, M failed`; exits 0 only if nothing failed.

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local server = os.getenv('TOSA_LSP')
local mlir_opt = os.getenv('MLIR_OPT') or 'mlir-opt-22'
local verbose = (os.getenv('TOSA_NVIM_VERBOSE') or '') ~= ''
local timeout_ms = tonumber(os.getenv('TOSA_NVIM_TIMEOUT_MS') or '') or 60000
local started = vim.loop.hrtime()

local passed, failed = 0, 0

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

local function finish()
  out(string.format('nvim: %d passed, %d failed (%.1f s)', passed, failed,
    (vim.loop.hrtime() - started) / 1e9))
  if failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

local function abort(msg)
  failed = failed + 1
  out('FAIL (fatal): ' .. msg)
  finish()
  -- Not reached; keeps the caller from continuing if cquit is deferred.
  error('aborted: ' .. msg)
end

local function check(cond, msg, detail)
  if cond then
    passed = passed + 1
    if verbose then out('ok: ' .. msg) end
  else
    failed = failed + 1
    out('FAIL: ' .. msg)
    if detail ~= nil then
      out('  got: ' .. (type(detail) == 'string' and detail or vim.inspect(detail)))
    end
  end
  return cond
end

local function eq(actual, expected, msg)
  return check(vim.deep_equal(actual, expected), msg .. ' (expected ' .. vim.inspect(expected) .. ')', actual)
end

local function dump(label, value)
  if verbose then out(label .. ': ' .. vim.inspect(value)) end
end

-- Global timeout: never hang, whatever the server does.
vim.defer_fn(function()
  out(string.format('FAIL (fatal): global timeout after %d ms', timeout_ms))
  failed = failed + 1
  finish()
end, timeout_ms)

if not server or server == '' then abort('TOSA_LSP is not set') end
if vim.fn.executable(server) ~= 1 then abort('TOSA_LSP is not executable: ' .. server) end

-- Work on a private copy so no swap file or edit touches the repository.
vim.o.swapfile = false
vim.o.shadafile = 'NONE'
local tmpdir = vim.fn.tempname()
vim.fn.mkdir(tmpdir, 'p')
local src = vim.fn.readfile(script_dir .. '/example.mlir', 'b')
local path = tmpdir .. '/example.mlir'
vim.fn.writefile(src, path, 'b')

vim.cmd('edit ' .. vim.fn.fnameescape(path))
local bufnr = vim.api.nvim_get_current_buf()
vim.bo[bufnr].filetype = 'mlir'
local uri = vim.uri_from_bufnr(bufnr)

-- Record every raw publishDiagnostics for this file (nvim converts LSP
-- ranges to byte columns in vim.diagnostic; code actions want LSP ranges).
local publishes = {}
local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
  if result and result.uri == uri then
    table.insert(publishes, result)
    dump('publishDiagnostics', result)
  end
  return default_publish(err, result, ctx, config)
end

local client_id = vim.lsp.start_client({
  name = 'tosa-lsp',
  cmd = { server, 'serve' },
  root_dir = tmpdir,
  on_exit = function(code, signal)
    if verbose then out(string.format('server exited: code %s signal %s', code, signal)) end
  end,
})
if not client_id then abort('vim.lsp.start_client failed for ' .. server) end
if not vim.lsp.buf_attach_client(bufnr, client_id) then abort('buf_attach_client failed') end

local client = vim.lsp.get_client_by_id(client_id)
if not vim.wait(10000, function() return client.initialized end, 20) then
  abort('server did not finish initialize within 10 s')
end
check(client.server_capabilities ~= nil, 'initialize returned capabilities')
local caps = client.server_capabilities or {}
check(caps.textDocumentSync and caps.textDocumentSync.change == 2,
  'server advertises incremental sync (change = 2)', caps.textDocumentSync)
check(caps.hoverProvider == true, 'server advertises hover')
check(caps.inlayHintProvider ~= nil and caps.inlayHintProvider ~= false, 'server advertises inlayHint')
check(caps.codeActionProvider ~= nil and caps.codeActionProvider ~= false,
  'server advertises codeAction', caps.codeActionProvider)

local function errors()
  local ds = vim.diagnostic.get(bufnr, { severity = vim.diagnostic.severity.ERROR })
  table.sort(ds, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return a.col < b.col
  end)
  return ds
end

local function summary(ds)
  return vim.tbl_map(function(d)
    return string.format('%d:%d %s [%s/%s]', d.lnum, d.col, d.message, tostring(d.source), tostring(d.code))
  end, ds)
end

local function find_line(pattern)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:find(pattern, 1, true) then return i - 1, l end
  end
  return nil
end

local function request(method, params, ms)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, ms or 5000)
  if not responses then return nil, 'no response: ' .. tostring(err) end
  local r = responses[client_id]
  if not r then return nil, 'no response from tosa-lsp' end
  if r.err or r.error then return nil, vim.inspect(r.err or r.error) end
  return r.result
end

local SUB_MSG = "'tosa.sub' op result type '4x3' not broadcast compatible with broadcasted operands's shapes '1x3'"

------------------------------------------------------------------------------
-- 1. Diagnostics after didOpen.
------------------------------------------------------------------------------
local sub_line = find_line('tosa.sub')
local sub_col = select(2, find_line('tosa.sub')):find('tosa.sub', 1, true) - 1
local got_diags = vim.wait(10000, function() return #publishes > 0 end, 20)
check(got_diags, 'publishDiagnostics arrives after didOpen')
if got_diags then
  local errs = errors()
  eq(#errs, 1, 'one error diagnostic')
  local e = errs[1] or {}
  eq(e.message, SUB_MSG, 'error message')
  eq({ e.lnum, e.col }, { sub_line, sub_col }, 'error position (0-based line, col) at the tosa.sub op name')
  eq(e.source, 'tosa-lsp', 'error source')
  eq(e.code, 'verifier-error', 'error code')
  local raw = publishes[#publishes].diagnostics
  -- The default publish has the problems only (the refinable result of
  -- tosa.maximum is an inlay hint, below, not a diagnostic).
  eq(#raw, 1, 'the publish holds the error only (no informational diagnostics by default)')
  dump('errors', summary(errs))
end

------------------------------------------------------------------------------
-- 2. Hover on the tosa.add op name.
------------------------------------------------------------------------------
do
  local line, text = find_line('tosa.add')
  local col = text:find('tosa.add', 1, true) - 1
  local result, err = request('textDocument/hover',
    { textDocument = { uri = uri }, position = { line = line, character = col + 2 } })
  dump('hover', result)
  check(result ~= nil, 'hover on tosa.add returns a result', err)
  local contents = result and result.contents or {}
  eq(contents.kind, 'markdown', 'hover is markdown')
  local value = contents.value or ''
  check(value:find('**Inferred** `2x3` vs **declared** `2x3`', 1, true) == 1,
    'hover starts with "**Inferred** `2x3` vs **declared** `2x3`"', value)
  check(value:find('| dim |', 1, true) ~= nil, 'hover has the per-dimension table', value)
end

------------------------------------------------------------------------------
-- 3. Inlay hints (nvim 0.7 has no inlay-hint API: raw request).
------------------------------------------------------------------------------
local function inlay_hints()
  local n = vim.api.nvim_buf_line_count(bufnr)
  local result, err = request('textDocument/inlayHint', {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = n, character = 0 } },
  })
  dump('inlayHint', result)
  if not result then return nil, err end
  local hints = {}
  for _, h in ipairs(result) do
    local label = h.label
    if type(label) == 'table' then
      label = table.concat(vim.tbl_map(function(p) return p.value end, label))
    end
    hints[#hints + 1] = { line = h.position.line, character = h.position.character, label = label }
  end
  return hints
end

local function find_hint(hints, label)
  for _, h in ipairs(hints or {}) do
    if h.label == label then return h end
  end
end

local function check_refine_hint(what)
  local line, text = find_line('tosa.maximum')
  local decl = '-> tensor<?x7xf32>'
  local s = text:find(decl, 1, true)
  local hints, err = inlay_hints()
  check(hints ~= nil, what .. ': inlayHint request succeeds', err)
  local h = find_hint(hints, ' inferred: 5x7')
  check(h ~= nil, what .. ': hint " inferred: 5x7" present', hints)
  if h then
    -- Right after the declared result type (ASCII line: UTF-16 == bytes).
    eq({ h.line, h.character }, { line, s - 1 + #decl }, what .. ': hint position (line, character)')
  end
  return hints
end

local hints0 = check_refine_hint('initial')
do
  -- The bad op's declared 4x3 differs from the inferred 1x3 as well.
  local line, text = find_line('tosa.sub')
  local decl = '-> tensor<4x3xf32>'
  local h = find_hint(hints0, ' inferred: 1x3')
  check(h ~= nil, 'hint " inferred: 1x3" on the bad tosa.sub', hints0)
  if h then
    eq({ h.line, h.character }, { line, text:find(decl, 1, true) - 1 + #decl },
      'hint " inferred: 1x3" position (line, character)')
  end
  eq(hints0 and #hints0, 2, 'number of inlay hints')
end

------------------------------------------------------------------------------
-- 4. Incremental edits with multi-byte text.
------------------------------------------------------------------------------
do
  local before = #publishes
  -- Insert a comment line with é (2 bytes, 1 UTF-16 unit) and ✓ (3 bytes,
  -- 1 UTF-16 unit) right before the bad op.
  local comment = '  // café ✓'
  vim.api.nvim_buf_set_lines(bufnr, sub_line, sub_line, true, { comment })
  local moved = vim.wait(10000, function()
    local errs = errors()
    return #publishes > before and #errs == 1 and errs[1].lnum == sub_line + 1
  end, 20)
  check(moved, 'error diagnostic moves one line down after inserting a multi-byte comment line',
    summary(errors()))

  -- Now an edit *after* the multi-byte characters on that line: nvim sends a
  -- range at UTF-16 character 11 (byte 15). A server that treats it as a
  -- byte offset splits the line before ✓ and reports a parse error.
  before = #publishes
  vim.api.nvim_buf_set_text(bufnr, sub_line, #comment, sub_line, #comment, { '', '' })
  moved = vim.wait(10000, function()
    local errs = errors()
    return #publishes > before and #errs == 1 and errs[1].lnum == sub_line + 2
  end, 20)
  check(moved, 'newline inserted after "✓" (UTF-16 position): error moves down again, no parse error',
    summary(errors()))
  local errs = errors()
  eq(errs[1] and errs[1].message, SUB_MSG, 'error message unchanged after edits')
  sub_line = sub_line + 2
  check_refine_hint('after edits')
end

------------------------------------------------------------------------------
-- 5. Code action: quickfix "Change result type to ..." fixes the file.
------------------------------------------------------------------------------
do
  local raw = publishes[#publishes] and publishes[#publishes].diagnostics or {}
  local at_op = vim.tbl_filter(function(d)
    return d.range.start.line == sub_line and d.severity == 1
  end, raw)
  check(#at_op == 1, 'raw LSP error diagnostic at the tosa.sub line', raw)
  local range = at_op[1] and at_op[1].range
    or { start = { line = sub_line, character = sub_col }, ['end'] = { line = sub_line, character = sub_col + 8 } }
  local params = {
    textDocument = { uri = uri },
    range = range,
    context = { diagnostics = at_op },
  }
  local result, err
  if caps.codeActionProvider then
    result, err = request('textDocument/codeAction', params)
  else
    -- nvim 0.7's buf_request_sync refuses methods the server does not
    -- advertise (and then waits out its timeout); ask the server directly
    -- so the failure says what the server itself answers.
    local r, e = client.request_sync('textDocument/codeAction', params, 5000, bufnr)
    result = r and r.result
    local rerr = r and r.err or e
    if type(rerr) == 'table' then
      rerr = string.format('error %s: %s', tostring(rerr.code), tostring(rerr.message))
    end
    err = 'server does not advertise codeActionProvider; direct request -> ' .. tostring(rerr)
  end
  dump('codeAction', result)
  check(result ~= nil, 'codeAction request at the tosa.sub op succeeds', err)
  local titles, fix = {}, nil
  for _, a in ipairs(result or {}) do
    titles[#titles + 1] = tostring(a.title) .. ' [' .. tostring(a.kind) .. ']'
    if not fix and a.kind == 'quickfix' and type(a.title) == 'string'
        and vim.startswith(a.title, 'Change result type to') then
      fix = a
    end
  end
  if check(fix ~= nil, 'a quickfix titled "Change result type to ..." is offered', titles) then
    check(vim.startswith(fix.title, 'Change result type to tensor<1x3xf32>'),
      'quickfix title starts with "Change result type to tensor<1x3xf32>"', fix.title)
    local fixed = fix.diagnostics or {}
    check(#fixed >= 1 and fixed[1].message == SUB_MSG,
      'quickfix lists the diagnostic it fixes', fixed)
    local edits = fix.edit and fix.edit.changes and fix.edit.changes[uri]
    check(type(edits) == 'table' and #edits >= 1, 'quickfix has edit.changes[uri]', fix.edit)
    if edits then
      -- 0.7.2: apply_workspace_edit(workspace_edit, offset_encoding)
      vim.lsp.util.apply_workspace_edit(fix.edit, 'utf-16')
      local line_text = vim.api.nvim_buf_get_lines(bufnr, sub_line, sub_line + 1, false)[1]
      eq(line_text,
        '  %diff = tosa.sub %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>',
        'buffer line after applying the quickfix')

      local tmp = vim.fn.tempname() .. '.mlir'
      vim.fn.writefile(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), tmp)
      local output = vim.fn.system({ mlir_opt, tmp })
      check(vim.v.shell_error == 0, mlir_opt .. ' verifies the fixed buffer (exit 0)',
        'exit ' .. vim.v.shell_error .. ': ' .. output)
      vim.fn.delete(tmp)

      local cleared = vim.wait(10000, function() return #errors() == 0 end, 20)
      check(cleared, 'no error diagnostics after the quickfix', summary(errors()))
      local hints = inlay_hints()
      check(hints ~= nil and find_hint(hints, ' inferred: 1x3') == nil,
        'hint " inferred: 1x3" gone after the quickfix', hints)
    end
  end
end

vim.lsp.stop_client(client_id)
vim.wait(2000, function() return vim.lsp.client_is_stopped(client_id) end, 20)
vim.fn.delete(tmpdir, 'rf')
finish()
