-- tosa-lsp for Neovim (0.7.2+) on the built-in LSP client.
--
--   require('tosa_lsp').setup{ cmd = { 'tosa-lsp' }, settings = { ... } }
--
-- Starts one client for `mlir` buffers (FileType autocmd), keeps the
-- built-in hover / code action / diagnostics, and adds
--   :TosaPreviewLowering [stage] [mode]   read-only scratch split
--   :TosaCompile [emit]                   workspace/executeCommand tosa.compile
--   :TosaInlayHints [on|off]              inlay hints as virtual text (extmarks)
--   :TosaHover, :TosaCodeAction           vim.lsp.buf.hover / code_action
-- The code actions' commands tosa.previewLowering and tosa.compile run on
-- the client side (vim.lsp.commands) so the preview opens in a split.
local M = {}

local api = vim.api
local defaults = {
  cmd = { 'tosa-lsp' },
  name = 'tosa-lsp',
  filetypes = { 'mlir' },
  settings = {},
  inlay_hints = true,       -- show inlay hints, refreshed after each analysis
  preview_stage = 'linalg',
  preview_mode = 'fast',
  timeout_ms = 60000,       -- preview request timeout
  compile_timeout_ms = 300000,
  root_dir = nil,           -- default: the current directory
  keymaps = true,           -- false, or a table { hover = 'K', ... } to override
  on_attach = nil,
  capabilities = nil,
}

M.config = vim.deepcopy(defaults)
M.client_id = nil
M.ns = api.nvim_create_namespace('tosa_lsp_inlay')
M.last_compile = nil
M.last_preview = nil
local hints_enabled = {} -- bufnr -> bool

local function notify(msg, level)
  vim.notify('tosa-lsp: ' .. msg, level or vim.log.levels.INFO)
end

function M.client()
  if M.client_id then
    local c = vim.lsp.get_client_by_id(M.client_id)
    if c and not c.is_stopped() then return c end
  end
  return nil
end

local function uri_of(bufnr) return vim.uri_from_bufnr(bufnr) end

------------------------------------------------------------------------------
-- Inlay hints (0.7 has no inlay-hint API: request + extmarks).
------------------------------------------------------------------------------
local function label_of(h)
  if type(h.label) == 'table' then
    return table.concat(vim.tbl_map(function(p) return p.value end, h.label))
  end
  return h.label
end

local function utf16_to_byte(bufnr, line, character)
  local text = api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1] or ''
  local ok, col = pcall(vim.str_byteindex, text, character, true)
  if not ok then col = #text end
  return math.min(col, #text)
end

--- Places the hints (list of LSP InlayHint) as end-of-line virtual text.
function M.render_inlay_hints(bufnr, hints)
  if not api.nvim_buf_is_valid(bufnr) then return end
  api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local per_line = {}
  local n = api.nvim_buf_line_count(bufnr)
  for _, h in ipairs(hints or {}) do
    local line = h.position.line
    if line < n then
      per_line[line] = per_line[line] or {}
      table.insert(per_line[line], { col = utf16_to_byte(bufnr, line, h.position.character), label = label_of(h) })
    end
  end
  for line, hs in pairs(per_line) do
    table.sort(hs, function(a, b) return a.col < b.col end)
    local chunks = {}
    for _, h in ipairs(hs) do table.insert(chunks, { h.label, 'Comment' }) end
    -- 0.7 only has eol/overlay/right_align virtual text (no inline).
    -- Priority 1: 0.7 draws eol texts by priority, so hints come before
    -- the diagnostics' virtual text instead of being pushed off screen.
    api.nvim_buf_set_extmark(bufnr, M.ns, line, 0,
      { virt_text = chunks, virt_text_pos = 'eol', hl_mode = 'combine', priority = 1 })
  end
end

local function hint_params(bufnr)
  return {
    textDocument = { uri = uri_of(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = api.nvim_buf_line_count(bufnr), character = 0 } },
  }
end

--- Asynchronously refreshes the inlay hints of a buffer (if enabled).
function M.refresh_inlay_hints(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = M.client()
  if not client or not hints_enabled[bufnr] then return end
  client.request('textDocument/inlayHint', hint_params(bufnr), function(err, result)
    if err or not hints_enabled[bufnr] then return end
    M.render_inlay_hints(bufnr, result)
  end, bufnr)
end

--- Synchronous variant used by :TosaInlayHints; returns the hints.
function M.inlay_hints(bufnr, enable)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if enable == false then
    hints_enabled[bufnr] = false
    api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    return {}
  end
  hints_enabled[bufnr] = true
  local client = M.client()
  if not client then return nil, 'not running' end
  local r, err = client.request_sync('textDocument/inlayHint', hint_params(bufnr), 5000, bufnr)
  if not r or r.err then return nil, vim.inspect(err or r.err) end
  M.render_inlay_hints(bufnr, r.result)
  return r.result
end

------------------------------------------------------------------------------
-- Lowering preview.
------------------------------------------------------------------------------
local function position_params(bufnr)
  local ok, p = pcall(vim.lsp.util.make_position_params, 0, 'utf-16')
  if not ok then p = vim.lsp.util.make_position_params() end
  return { uri = uri_of(bufnr), textDocument = { uri = uri_of(bufnr) }, position = p.position }
end

--- Opens text in a read-only scratch split; returns its buffer number.
--- The buffer stays client-side (never attached) and <CR>/gd on a line jump
--- to its source op through the result's mappings.
function M.open_preview(result, name, source)
  source = source or api.nvim_get_current_buf()
  name = 'tosa-preview://' .. (name or 'lowering')
  local old = vim.fn.bufnr('^' .. name .. '$')
  if old > 0 then pcall(api.nvim_buf_delete, old, { force = true }) end
  vim.cmd('new')
  local buf = api.nvim_get_current_buf()
  vim.b[buf].tosa_lsp_preview = true
  vim.b[buf].tosa_lsp_source = source
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.text or '', '\n', { plain = true }))
  vim.b[buf].tosa_lsp_pipeline = result.pipeline
  vim.b[buf].tosa_lsp_mappings = result.mappings
  vim.bo[buf].filetype = 'mlir'
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].modified = false
  for _, key in ipairs({ '<CR>', 'gd' }) do
    vim.keymap.set('n', key, M.preview_source, { buffer = buf, desc = 'tosa-lsp: source op of this line' })
  end
  return buf
end

--- <CR> / gd in a preview: the source op of the line (or the nearest
--- mapped line above); returns the mapping used.
function M.preview_source()
  local maps = vim.b.tosa_lsp_mappings or {}
  local src = vim.b.tosa_lsp_source
  local line0 = api.nvim_win_get_cursor(0)[1] - 1
  local best
  for _, m in ipairs(maps) do
    local pl = m.previewPosition.line
    if pl <= line0 and (not best or pl > best.previewPosition.line) then best = m end
  end
  if not best or not src or not api.nvim_buf_is_valid(src) then
    notify('no source op for this line')
    return nil
  end
  local win = vim.fn.bufwinid(src)
  if win > 0 then api.nvim_set_current_win(win) else vim.cmd('wincmd p') api.nvim_set_current_buf(src) end
  local sp = best.sourcePosition
  api.nvim_win_set_cursor(0, { sp.line + 1, utf16_to_byte(src, sp.line, sp.character) })
  return best
end

local function preview_request(bufnr, params)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return nil end
  local r, err = client.request_sync('tosa/previewLowering', params, M.config.timeout_ms, bufnr)
  if not r then notify('previewLowering: ' .. tostring(err), vim.log.levels.ERROR) return nil end
  if r.err then
    notify('previewLowering: ' .. tostring(r.err.message or vim.inspect(r.err)), vim.log.levels.ERROR)
    return nil
  end
  M.last_preview = r.result
  return r.result
end

--- :TosaPreviewLowering [stage] [mode] for the function at the cursor.
function M.preview_lowering(stage, mode)
  local bufnr = api.nvim_get_current_buf()
  stage = (stage and stage ~= '') and stage or M.config.preview_stage
  mode = (mode and mode ~= '') and mode or M.config.preview_mode
  local params = position_params(bufnr)
  params.stage, params.mode = stage, mode
  local result = preview_request(bufnr, params)
  if not result then return nil end
  return M.open_preview(result, stage .. '-' .. mode)
end

------------------------------------------------------------------------------
-- Compile.
------------------------------------------------------------------------------
local compile_token = 0

--- Runs tosa.compile. With callback: asynchronous, callback(err, result);
--- without: the command echoes the output path when done.
M.compiling = nil -- { id, token, what, step } while a compile runs

function M.compile(args, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  if M.compiling then
    notify('a compile is running (' .. M.compiling.what .. '); :TosaCancel stops it', vim.log.levels.ERROR)
    return
  end
  local bufnr = api.nvim_get_current_buf()
  args = args or {}
  args.uri = args.uri or uri_of(bufnr)
  compile_token = compile_token + 1
  local token = 'nvim-tosa-compile-' .. compile_token
  local what = args['function'] and ('@' .. args['function']) or vim.fn.fnamemodify(vim.uri_to_fname(args.uri), ':t')
  notify('compiling ' .. what .. ' ...  (:TosaCancel to stop)')
  local ok, id = client.request('workspace/executeCommand', {
    command = 'tosa.compile', arguments = { args }, workDoneToken = token,
  }, function(err, result)
    M.compiling = nil
    if err and err.code == -32800 then
      notify('compiling ' .. what .. ': cancelled')
    elseif err then
      notify('compiling ' .. what .. ' failed: ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      M.last_compile = result
      notify('compiled to ' .. tostring(result and result.output)
        .. ((result and result.header and result.header ~= '') and (' (header ' .. result.header .. ')') or ''))
    end
    if callback then callback(err, result) end
  end, bufnr)
  if ok then M.compiling = { id = id, token = token, what = 'compiling ' .. what, step = '' } end
end

--- :TosaCompile [emit]: the function at the cursor when the file has
--- `// -----` sections (one module per compile), else every public one.
function M.compile_at_cursor(emit, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  local bufnr = api.nvim_get_current_buf()
  local sections = vim.fn.search('^// -----', 'nw') > 0
  local line = api.nvim_win_get_cursor(0)[1] - 1
  local params = { textDocument = { uri = uri_of(bufnr) },
    range = { start = { line = line, character = 0 }, ['end'] = { line = line, character = 0 } },
    context = { diagnostics = {}, only = { 'source' } } }
  client.request('textDocument/codeAction', params, function(_, actions)
    local args = { uri = uri_of(bufnr) }
    for _, a in ipairs(actions or {}) do
      local c = a.command
      if type(c) == 'table' and c.command == 'tosa.compile' and c.arguments and c.arguments[1] then
        args = vim.deepcopy(c.arguments[1])
        break
      end
    end
    if sections and not args['function'] then
      notify('this file has `// -----` sections: put the cursor in the function to compile', vim.log.levels.ERROR)
      return
    end
    if not sections then args['function'] = nil end
    args.emit = emit
    M.compile(args, callback)
  end, bufnr)
end

--- :TosaCancel: $/cancelRequest for the running compile.
function M.cancel()
  local client = M.client()
  if not M.compiling or not client then notify('nothing to cancel') return false end
  client.cancel_request(M.compiling.id)
  notify('cancelling ' .. M.compiling.what .. ' ...')
  return true
end

------------------------------------------------------------------------------
-- Hover: Markdown tables as plain aligned text (0.7 renders them raw and
-- turns `\|` inside a cell into a column separator).
------------------------------------------------------------------------------
local function plain_inline(s)
  s = s:gsub('%*%*', ''):gsub('`', '')
  s = s:gsub('^%*([^*]+)%*', '%1'):gsub('(%s)%*([^* ][^*]*)%*', '%1%2')
  return (s:gsub('%s+$', ''))
end

function M.plain_markdown(text)
  local out, tbl = {}, {}
  local function flush()
    if #tbl == 0 then return end
    local widths = {}
    for _, r in ipairs(tbl) do
      for i, c in ipairs(r) do widths[i] = math.max(widths[i] or 0, vim.fn.strdisplaywidth(c)) end
    end
    for _, r in ipairs(tbl) do
      local cells = {}
      for i, c in ipairs(r) do cells[i] = c .. string.rep(' ', widths[i] - vim.fn.strdisplaywidth(c)) end
      table.insert(out, (table.concat(cells, '  '):gsub('%s+$', '')))
    end
    tbl = {}
  end
  for _, line in ipairs(vim.split(text .. '\n', '\n', { plain = true })) do
    if line:match('^%s*|') then
      local cells = vim.split(vim.trim(line):gsub('\\|', '\1'), '|', { plain = true })
      local row = {}
      for i = 2, #cells - 1 do row[#row + 1] = vim.trim(plain_inline(cells[i]):gsub('\1', '|')) end
      if not table.concat(row, ''):match('^[-: ]*$') then table.insert(tbl, row) end
    else
      flush()
      table.insert(out, plain_inline((line:gsub('^#+%s*', ''))))
    end
  end
  while #out > 0 and out[#out] == '' do table.remove(out) end
  return out
end

local function hover_handler(err, result, ctx, config)
  if err or not result or not result.contents then
    notify('no hover information')
    return
  end
  local c = result.contents
  local text = type(c) == 'string' and c or c.value or ''
  M.last_hover = text
  local lines = M.plain_markdown(text)
  config = vim.tbl_extend('force', config or {}, {
    focus_id = 'tosa_lsp_hover', border = 'single',
    max_width = math.min(78, vim.o.columns - 2), max_height = math.max(3, vim.o.lines - 6),
  })
  return vim.lsp.util.open_floating_preview(lines, 'plaintext', config)
end

------------------------------------------------------------------------------
-- Client.
------------------------------------------------------------------------------
local function handlers()
  local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  return {
    ['textDocument/hover'] = hover_handler,
    ['$/progress'] = function(err, result, ctx, config)
      local v = result and result.value or {}
      if M.compiling and result.token == M.compiling.token and v.kind ~= 'end' then
        M.compiling.step = v.message or v.title or ''
        notify(M.compiling.what .. ': ' .. M.compiling.step .. '  (:TosaCancel to stop)')
      end
      local default = vim.lsp.handlers['$/progress']
      if default then return default(err, result, ctx, config) end
    end,
    ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
      default_publish(err, result, ctx, config)
      if result and result.uri then
        local bufnr = vim.uri_to_bufnr(result.uri)
        if hints_enabled[bufnr] then M.refresh_inlay_hints(bufnr) end
      end
    end,
  }
end

-- Client-side commands for the code actions' `command`s.
vim.lsp.commands['tosa.previewLowering'] = function(command)
  local args = command.arguments and command.arguments[1] or {}
  local result = preview_request(api.nvim_get_current_buf(), args)
  if result then M.open_preview(result, (args.stage or 'linalg') .. '-' .. (args.mode or 'fast'), api.nvim_get_current_buf()) end
end
vim.lsp.commands['tosa.compile'] = function(command)
  M.compile(command.arguments and command.arguments[1] or {})
end

function M.start()
  if M.client() then return M.client_id end
  local cfg = M.config
  M.client_id = vim.lsp.start_client({
    name = cfg.name,
    cmd = cfg.cmd,
    root_dir = cfg.root_dir or vim.loop.cwd(),
    init_options = cfg.settings,
    settings = cfg.settings,
    capabilities = cfg.capabilities,
    handlers = handlers(),
    on_init = function(client)
      if cfg.settings and next(cfg.settings) then
        client.notify('workspace/didChangeConfiguration', { settings = cfg.settings })
      end
    end,
    on_attach = function(client, bufnr)
      M.set_keymaps(bufnr)
      if cfg.on_attach then cfg.on_attach(client, bufnr) end
    end,
    on_exit = function() M.client_id = nil end,
  })
  return M.client_id
end

local default_keys = {
  hover = { 'K', function() vim.lsp.buf.hover() end },
  definition = { 'gd', function() vim.lsp.buf.definition() end },
  references = { 'gr', function() vim.lsp.buf.references() end },
  symbols = { 'gO', function() vim.lsp.buf.document_symbol() end },
  code_action = { '<LocalLeader>a', function() vim.lsp.buf.code_action() end },
  preview = { '<LocalLeader>p', function() M.preview_lowering() end },
  compile = { '<LocalLeader>c', function() M.compile_at_cursor() end },
  diagnostic = { '<LocalLeader>e', function() vim.diagnostic.open_float() end },
}

--- Buffer keymaps (keymaps = false: none; { hover = 'gh', compile = false }:
--- other keys or some off).
function M.set_keymaps(bufnr)
  local km = M.config.keymaps
  if km == false then return end
  for name, def in pairs(default_keys) do
    local key = def[1]
    if type(km) == 'table' and km[name] ~= nil then key = km[name] end
    if key then vim.keymap.set('n', key, def[2], { buffer = bufnr, desc = 'tosa-lsp ' .. name }) end
  end
end

function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  -- Previews (and other scratch buffers) stay client-side.
  if vim.b[bufnr].tosa_lsp_preview or vim.bo[bufnr].buftype ~= '' then return false end
  local id = M.start()
  if not id then notify('cannot start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR) return false end
  if hints_enabled[bufnr] == nil then hints_enabled[bufnr] = M.config.inlay_hints end
  return vim.lsp.buf_attach_client(bufnr, id)
end

function M.stop()
  local c = M.client()
  if c then c.stop() end
  M.client_id = nil
  M.compiling = nil
end

--- :TosaRestart: a new server for every mlir buffer.
function M.restart()
  local bufs = {}
  local c = M.client()
  if c then
    for _, b in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(b) and vim.lsp.buf_is_attached(b, c.id) then table.insert(bufs, b) end
    end
    c.stop(true)
  end
  M.client_id = nil
  M.compiling = nil
  vim.wait(2000, function() return c == nil or c.is_stopped() end, 20)
  for _, b in ipairs(bufs) do M.attach(b) end
  notify('restarted')
end

local commands_defined = false
local function define_commands()
  if commands_defined then return end
  commands_defined = true
  local cmd = api.nvim_create_user_command
  cmd('TosaPreviewLowering', function(o) M.preview_lowering(o.fargs[1], o.fargs[2]) end, {
    nargs = '*',
    complete = function(lead, line)
      local n = #vim.split(line, '%s+') - 1
      local words = n <= 1 and { 'linalg', 'loops', 'llvm' } or { 'fast', 'upstream', 'safe', 'versioned' }
      return vim.tbl_filter(function(w) return vim.startswith(w, lead) end, words)
    end,
  })
  cmd('TosaCompile', function(o) M.compile_at_cursor(o.args ~= '' and o.args or nil) end, {
    nargs = '?',
    complete = function() return { 'shared', 'obj', 'asm', 'llvm-ir', 'mlir-llvm' } end,
  })
  cmd('TosaInlayHints', function(o) M.inlay_hints(0, o.args ~= 'off') end, {
    nargs = '?', complete = function() return { 'on', 'off' } end,
  })
  cmd('TosaHover', function() vim.lsp.buf.hover() end, {})
  cmd('TosaCodeAction', function() vim.lsp.buf.code_action() end, {})
  cmd('TosaStop', function() M.stop() end, {})
  cmd('TosaCancel', function() M.cancel() end, {})
  cmd('TosaRestart', function() M.restart() end, {})
  cmd('TosaPreviewSource', function() M.preview_source() end, {})
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if vim.filetype and vim.filetype.add then
    vim.filetype.add({ extension = { mlir = 'mlir' } })
  end
  define_commands()
  local group = api.nvim_create_augroup('tosa_lsp', { clear = true })
  api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(ev) M.attach(ev.buf) end,
  })
  -- Buffers that already have the filetype.
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.tbl_contains(M.config.filetypes, vim.bo[b].filetype) then
      M.attach(b)
    end
  end
  return M
end

return M
