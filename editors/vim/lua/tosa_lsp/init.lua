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
  preview_mode = 'upstream',
  timeout_ms = 60000,       -- preview request timeout
  compile_timeout_ms = 300000,
  root_dir = nil,           -- default: the current directory
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
    api.nvim_buf_set_extmark(bufnr, M.ns, line, 0, { virt_text = chunks, virt_text_pos = 'eol', hl_mode = 'combine' })
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
function M.open_preview(result, name)
  name = 'tosa-preview://' .. (name or 'lowering')
  local old = vim.fn.bufnr('^' .. name .. '$')
  if old > 0 then pcall(api.nvim_buf_delete, old, { force = true }) end
  vim.cmd('new')
  local buf = api.nvim_get_current_buf()
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
  return buf
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
function M.compile(args, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  local bufnr = api.nvim_get_current_buf()
  args = args or {}
  args.uri = args.uri or uri_of(bufnr)
  compile_token = compile_token + 1
  notify('compiling ' .. vim.uri_to_fname(args.uri) .. ' ...')
  client.request('workspace/executeCommand', {
    command = 'tosa.compile', arguments = { args },
    workDoneToken = 'nvim-tosa-compile-' .. compile_token,
  }, function(err, result)
    if err then
      notify('compile failed: ' .. tostring(err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      M.last_compile = result
      notify('compiled to ' .. tostring(result and result.output)
        .. ((result and result.header and result.header ~= '') and (' (header ' .. result.header .. ')') or ''))
    end
    if callback then callback(err, result) end
  end, bufnr)
end

------------------------------------------------------------------------------
-- Client.
------------------------------------------------------------------------------
local function handlers()
  local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  return {
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
  if result then M.open_preview(result, (args.stage or 'linalg') .. '-' .. (args.mode or 'upstream')) end
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
      if cfg.on_attach then cfg.on_attach(client, bufnr) end
    end,
    on_exit = function() M.client_id = nil end,
  })
  return M.client_id
end

function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local id = M.start()
  if not id then notify('cannot start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR) return false end
  if hints_enabled[bufnr] == nil then hints_enabled[bufnr] = M.config.inlay_hints end
  return vim.lsp.buf_attach_client(bufnr, id)
end

function M.stop()
  local c = M.client()
  if c then c.stop() end
  M.client_id = nil
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
      local words = n <= 1 and { 'linalg', 'loops', 'llvm' } or { 'upstream', 'safe', 'versioned' }
      return vim.tbl_filter(function(w) return vim.startswith(w, lead) end, words)
    end,
  })
  cmd('TosaCompile', function(o) M.compile({ emit = o.args ~= '' and o.args or nil }) end, {
    nargs = '?',
    complete = function() return { 'shared', 'obj', 'asm', 'llvm-ir', 'mlir-llvm' } end,
  })
  cmd('TosaInlayHints', function(o) M.inlay_hints(0, o.args ~= 'off') end, {
    nargs = '?', complete = function() return { 'on', 'off' } end,
  })
  cmd('TosaHover', function() vim.lsp.buf.hover() end, {})
  cmd('TosaCodeAction', function() vim.lsp.buf.code_action() end, {})
  cmd('TosaStop', function() M.stop() end, {})
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
