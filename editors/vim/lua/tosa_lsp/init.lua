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
  -- ms after a publish before its hints are asked for (coalesced). At
  -- 50k lines (bench/README.md, ninth session) 0-50 ms drew the hints
  -- ~40 ms sooner than 100 with the same stalls; the server's answer
  -- waited 50-70 ms at 0 and 20 ms, 16-24 ms at 50 ms (loaded machine).
  inlay_publish_delay_ms = 50,
  preview_stage = 'linalg',
  preview_mode = 'fast',
  timeout_ms = 60000,       -- preview request timeout
  compile_timeout_ms = 300000,
  root_dir = nil,           -- default: the current directory
  keymaps = true,           -- false, or a table { hover = 'K', ... } to override
  on_attach = nil,
  capabilities = nil,
  -- ms the client waits after a keystroke before sending it (0.7's
  -- default, 150, was most of "typed -> its error shown" at 50k lines: the
  -- server debounces and coalesces edits itself).
  debounce_text_changes = 50,
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

-- Transient progress: one line on the command line, replaced by the next,
-- kept out of the message history (no "Press ENTER" prompt).
local function progress(msg)
  msg = 'tosa-lsp: ' .. (msg:gsub('\n.*', ''))
  local width = math.max(20, vim.o.columns - 12)
  if vim.fn.strdisplaywidth(msg) > width then msg = vim.fn.strcharpart(msg, 0, width - 3) .. '...' end
  api.nvim_echo({ { msg } }, false, {})
  M.last_progress = msg
end

-- The columns a message can use without a "Press ENTER" prompt.
local function echo_room()
  local room = vim.o.columns - 1
  if vim.o.showcmd then room = room - 11 end
  if vim.o.ruler and (vim.o.laststatus == 0 or (vim.o.laststatus == 1 and vim.fn.winnr('$') == 1)) then
    room = room - 18
  end
  return math.max(20, room)
end

--- A message naming a path: whole (a notification) when it fits the
--- command line; else the whole text goes to :messages and the echo shows
--- the path whole if it fits, else its end.  Returns what was shown.
function M.message_path(prefix, path, suffix)
  local full = 'tosa-lsp: ' .. prefix .. path .. suffix
  local room = echo_room()
  if vim.fn.strdisplaywidth(full) <= room then
    vim.notify(full, vim.log.levels.INFO)
    return full
  end
  vim.cmd('echomsg ' .. vim.fn.string(full))
  -- The path whole without the suffix, else its end.
  local parts = vim.split(path, '/', { plain = true })
  local short = 'tosa-lsp: ' .. prefix .. path
  for i = 2, #parts do
    if vim.fn.strdisplaywidth(short) <= room then break end
    short = 'tosa-lsp: ' .. prefix .. '…/' .. table.concat(parts, '/', i) .. ' (:messages)'
  end
  if vim.fn.strdisplaywidth(short) > room then short = vim.fn.strcharpart(short, 0, room) end
  -- The echo replaces the long one on the command line (no "Press ENTER").
  vim.cmd('redraw')
  api.nvim_echo({ { short } }, false, {})
  return short
end

--- An error of a request that ran in the background (compile, preview):
--- all its lines in :messages, on the command line its first line cut to
--- fit (a multi-line notification asks "Press ENTER" mid-edit).
function M.error_fit(text)
  local lines = vim.split(text, '\n', { plain = true, trimempty = true })
  local room = echo_room()
  local full = 'tosa-lsp: ' .. text
  if #lines <= 1 and vim.fn.strdisplaywidth(full) <= room then
    vim.notify(full, vim.log.levels.ERROR)
    return full
  end
  vim.cmd('echohl ErrorMsg')
  for _, l in ipairs(lines) do vim.cmd('echomsg ' .. vim.fn.string('tosa-lsp: ' .. l)) end
  vim.cmd('echohl None')
  local first, more = 'tosa-lsp: ' .. (lines[1] or ''), ' (:messages)'
  if vim.fn.strdisplaywidth(first .. more) > room then
    first = vim.fn.strcharpart(first, 0, room - #more - 1) .. '…'
  end
  vim.cmd('redraw')
  api.nvim_echo({ { first .. more, 'ErrorMsg' } }, false, {})
  M.last_message = first .. more
  return first .. more
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

-- The text columns of the narrowest window showing the buffer (signs and
-- numbers excluded), nil when none does; negative when it does not wrap.
local function text_width(bufnr)
  local w
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == bufnr then
      local info = vim.fn.getwininfo(win)[1]
      local tw = info.width - (info.textoff or 0)
      if not w or tw < math.abs(w) then w = vim.wo[win].wrap and tw or -tw end
    end
  end
  return w
end

local last_hints = {} -- bufnr -> { hints, width }: placed again after a resize

--- Places the hints (list of LSP InlayHint): 0.7 has no inline virtual
--- text, so at the end of their line when the line and its hints fit the
--- window; else on a virtual line below it, ending under the line's end
--- (the type they refine), where they stay visible at 80 columns.
function M.render_inlay_hints(bufnr, hints)
  if not api.nvim_buf_is_valid(bufnr) then return end
  api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local tw = text_width(bufnr)
  local width = tw and math.abs(tw)
  last_hints[bufnr] = { hints = hints, width = tw, tick = api.nvim_buf_get_changedtick(bufnr) }
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
    local labels = {}
    for _, h in ipairs(hs) do table.insert(labels, h.label) end
    local text = table.concat(labels)
    local linew = vim.fn.strdisplaywidth(api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1] or '')
    -- A wrapped line: what its last screen row leaves.
    if tw and tw > 0 and linew > width then linew = linew - width * math.floor((linew - 1) / width) end
    if not width or linew + vim.fn.strdisplaywidth(text) <= width then
      -- Priority 1: 0.7 draws eol texts by priority, so hints come before
      -- the diagnostics' virtual text instead of being pushed off screen.
      api.nvim_buf_set_extmark(bufnr, M.ns, line, 0,
        { virt_text = { { text, 'Comment' } }, virt_text_pos = 'eol', hl_mode = 'combine', priority = 1 })
    else
      text = vim.trim(text)
      local pad = math.max(0, math.min(linew, width) - vim.fn.strdisplaywidth(text))
      api.nvim_buf_set_extmark(bufnr, M.ns, line, 0,
        { virt_lines = { { { string.rep(' ', pad) .. text, 'Comment' } } }, priority = 1 })
    end
  end
end

--- After a resize: the hints placed again for the new width.
local function rerender_if_resized(bufnr)
  local last = last_hints[bufnr]
  if last and last.hints and text_width(bufnr) ~= last.width and last.tick == api.nvim_buf_get_changedtick(bufnr) then
    M.render_inlay_hints(bufnr, last.hints)
  end
end

-- The lines shown in the buffer's windows plus a margin (0-based, end
-- exclusive); nil when no window shows it.  Never the whole file: a
-- 50k-line file's hints take a second to place.
local function visible_range(bufnr)
  local first, last
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == bufnr then
      local top, bot = unpack(api.nvim_win_call(win, function() return { vim.fn.line('w0'), vim.fn.line('w$') } end))
      first = first and math.min(first, top) or top
      last = last and math.max(last, bot) or bot
    end
  end
  if not first then return nil end
  local margin = M.config.inlay_margin or 100
  return math.max(0, first - 1 - margin), math.min(api.nvim_buf_line_count(bufnr), last + margin)
end

local function hint_params(bufnr, first, last)
  return {
    textDocument = { uri = uri_of(bufnr) },
    range = { start = { line = first, character = 0 }, ['end'] = { line = last, character = 0 } },
  }
end

local hint_state = {} -- bufnr -> { first, last, tick, timer }

--- Asynchronously refreshes the inlay hints of the visible part of a buffer
--- (if enabled); callback(hints) when they are placed.
function M.refresh_inlay_hints(bufnr, callback)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = M.client()
  if not client or not hints_enabled[bufnr] or not api.nvim_buf_is_loaded(bufnr) then return end
  -- Not before the buffer's didOpen (sent once the client is initialized):
  -- the server does not know it yet. The first publish asks again.
  if vim.lsp.util.buf_versions[bufnr] == nil then return end
  local first, last = visible_range(bufnr)
  local st = hint_state[bufnr] or {}
  hint_state[bufnr] = st
  if not first then st.first = nil return end
  local tick = api.nvim_buf_get_changedtick(bufnr)
  client.request('textDocument/inlayHint', hint_params(bufnr, first, last), function(err, result)
    if err or not hints_enabled[bufnr] or not api.nvim_buf_is_valid(bufnr) then return end
    -- Hints of an older text land in the wrong place; a newer request follows.
    if api.nvim_buf_get_changedtick(bufnr) ~= tick then return end
    st.first, st.last, st.tick = first, last, tick
    M.render_inlay_hints(bufnr, result)
    if callback then callback(result) end
  end, bufnr)
end

--- Asks for `bufnr`'s hints `delay` ms from now, once (the timer under
--- `st[key]` restarts: calls in a row are coalesced).
local function refresh_hints_after(st, key, delay, bufnr)
  if st[key] then st[key]:stop() st[key]:close() end
  st[key] = vim.loop.new_timer()
  -- libuv counts a timer from the loop's cached time, which a long callback
  -- before this one (decoding a big publish) left behind: from now instead.
  vim.loop.update_time()
  st[key]:start(delay, 0, vim.schedule_wrap(function()
    if st[key] then st[key]:close() st[key] = nil end
    M.refresh_inlay_hints(bufnr)
  end))
end

--- WinScrolled / BufWinEnter: new hints once the view rests, unless the
--- lines now shown were covered by the last answer.
function M.view_changed(bufnr)
  if not hints_enabled[bufnr] or not M.client() then return end
  -- Before the buffer's first publish the server is still analysing it
  -- (the request would wait, then infer on a parse of its own); the
  -- publish asks.
  if M.published[bufnr] == nil then return end
  rerender_if_resized(bufnr)
  local first, last = visible_range(bufnr)
  if not first then return end
  local st = hint_state[bufnr] or {}
  hint_state[bufnr] = st
  local margin = M.config.inlay_margin or 100
  if st.first and st.tick == api.nvim_buf_get_changedtick(bufnr)
      and st.first <= math.min(first + margin, last) and math.max(last - margin, first) <= st.last then
    return
  end
  refresh_hints_after(st, 'timer', M.config.inlay_scroll_delay_ms or 100, bufnr)
end

--- After a publish: the hints asked for a little later (coalesced), once
--- the server's background inference of the shown functions, which starts
--- with the publish, has done them: asked at once, the request waited for
--- it, then inferred them on a parse of its own (at 50k lines ~0.15 s
--- more server CPU per open).
function M.published_hints(bufnr)
  local st = hint_state[bufnr] or {}
  hint_state[bufnr] = st
  refresh_hints_after(st, 'pub_timer', M.config.inlay_publish_delay_ms or 50, bufnr)
end

--- :TosaInlayHints [on|off]: asynchronous; callback(hints) once placed.
function M.inlay_hints(bufnr, enable, callback)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if enable == false then
    hints_enabled[bufnr] = false
    last_hints[bufnr] = nil
    api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    return
  end
  hints_enabled[bufnr] = true
  if not M.client() then notify('not running', vim.log.levels.ERROR) return end
  M.refresh_inlay_hints(bufnr, callback)
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

-- Asynchronous: the editor stays usable while the server lowers (a big
-- function or a hung server takes up to timeout_ms); on_result(result).
local preview_seq = 0
local function preview_request(bufnr, params, on_result)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return nil end
  preview_seq = preview_seq + 1
  local seq = preview_seq
  local done = false
  local ok, id = client.request('tosa/previewLowering', params, function(err, result)
    if done then return end
    done = true
    if err then
      M.error_fit('previewLowering: ' .. tostring(err.message or vim.inspect(err)))
      return
    end
    M.last_preview = result
    if seq ~= preview_seq then return end -- a newer preview was asked for
    if result then on_result(result) end
  end, bufnr)
  if not ok then notify('previewLowering: the request was not sent', vim.log.levels.ERROR) return nil end
  progress('lowering to ' .. tostring(params.stage or 'linalg') .. ' ...')
  vim.defer_fn(function()
    if done then return end
    done = true
    pcall(client.cancel_request, id)
    notify('previewLowering: no answer in ' .. M.config.timeout_ms .. ' ms', vim.log.levels.ERROR)
  end, M.config.timeout_ms)
  return id
end

--- :TosaPreviewLowering [stage] [mode] for the function at the cursor.
--- Asynchronous: callback(preview bufnr) once the split is open.
function M.preview_lowering(stage, mode, callback)
  local bufnr = api.nvim_get_current_buf()
  stage = (stage and stage ~= '') and stage or M.config.preview_stage
  mode = (mode and mode ~= '') and mode or M.config.preview_mode
  local params = position_params(bufnr)
  params.stage, params.mode = stage, mode
  return preview_request(bufnr, params, function(result)
    local buf = M.open_preview(result, stage .. '-' .. mode, bufnr)
    if callback then callback(buf) end
  end)
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
  progress('compiling ' .. what .. ' ...  (:TosaCancel to stop)')
  local ok, id = client.request('workspace/executeCommand', {
    command = 'tosa.compile', arguments = { args }, workDoneToken = token,
  }, function(err, result)
    M.compiling = nil
    api.nvim_echo({ { '' } }, false, {})
    if err and err.code == -32800 then
      notify('compiling ' .. what .. ': cancelled')
    elseif err then
      M.error_fit('compiling ' .. what .. ' failed: ' .. tostring(err.message or vim.inspect(err)))
    else
      M.last_compile = result
      local out = tostring(result and result.output)
      local header = result and result.header or ''
      local suffix = ''
      if header ~= '' then
        -- The header is named by its file name when it is beside the output.
        suffix = vim.fn.fnamemodify(header, ':h') == vim.fn.fnamemodify(out, ':h')
          and (' (and ' .. vim.fn.fnamemodify(header, ':t') .. ')') or (' (header ' .. header .. ')')
      end
      M.last_message = M.message_path('compiled to ', out, suffix)
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
  progress('cancelling ' .. M.compiling.what .. ' ...')
  return true
end

------------------------------------------------------------------------------
-- Review of whole-file rewrites (migrate, refine all shapes): a diff of the
-- current and the proposed text in a new tab page, applied only on `y`.
------------------------------------------------------------------------------
local function is_review(action)
  if type(action) ~= 'table' then return false end
  if type(action.data) == 'table' and action.data.review == true then return true end
  -- Older servers: edits whose annotation needs confirmation.
  local ann = type(action.edit) == 'table' and action.edit.changeAnnotations
  if type(ann) == 'table' then
    for _, a in pairs(ann) do
      if type(a) == 'table' and a.needsConfirmation == true then return true end
    end
  end
  return false
end
M.is_review = is_review

-- The one document a review edit changes: bufnr, version (or nil), edits.
local function review_target(edit)
  for _, dc in ipairs(edit.documentChanges or {}) do
    if dc.edits then
      local v = dc.textDocument.version
      return vim.uri_to_bufnr(dc.textDocument.uri), type(v) == 'number' and v or nil, dc.edits
    end
  end
  for uri, edits in pairs(edit.changes or {}) do return vim.uri_to_bufnr(uri), nil, edits end
end

--- Code actions as the built-in client shows them: a reviewed rewrite
--- becomes the client-side command tosa.review (else vim.lsp.buf's
--- code_action would apply its edit at once).
function M.review_actions(actions)
  if type(actions) ~= 'table' then return actions end
  local out = {}
  for i, a in ipairs(actions) do
    if is_review(a) then
      out[i] = { title = a.title, kind = a.kind, diagnostics = a.diagnostics, data = a.data,
        command = { title = 'Review', command = 'tosa.review', arguments = { a } } }
    else
      out[i] = a
    end
  end
  return out
end

M.reviewing = nil -- { bufnr, old, version, edit, title, from, bufs, lines }

local function review_buffer(name, lines)
  local buf = api.nvim_get_current_buf()
  vim.b[buf].tosa_lsp_preview = true
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = 'mlir'
  vim.cmd('diffthis')
  for key, yes in pairs({ y = true, n = false, q = false }) do
    vim.keymap.set('n', key, function() M.review_answer(yes) end,
      { buffer = buf, nowait = true, desc = yes and 'tosa-lsp: apply the rewrite' or 'tosa-lsp: discard the rewrite' })
  end
  -- Closed without an answer (:q, :tabclose): nothing applied.
  api.nvim_create_autocmd('BufWipeout', { buffer = buf, callback = function()
    local r = M.reviewing
    if r and (r.bufs[1] == buf or r.bufs[2] == buf) then
      M.reviewing = nil
      progress('review closed, not applied: ' .. r.title)
    end
  end })
  return buf
end

-- UTF-16 character -> byte offset in a line (clamped).
local function byte_col(line, character, encoding)
  if encoding == 'utf-8' then return math.min(character, #line) end
  if not line:find('[\128-\255]') then return math.min(character, #line) end
  local ok, col = pcall(vim.str_byteindex, line, character, true)
  return ok and math.min(col, #line) or #line
end

--- The lines after LSP TextEdits (not overlapping), in one pass from the
--- top, and how many lines of the result they wrote.  A whole-file
--- rewrite of thousands of edits takes milliseconds (0.7's
--- apply_text_edits on an attached buffer took minutes: one incremental
--- sync per edit).
function M.edited_lines(lines, edits, encoding)
  local sorted = edits
  for i = 2, #edits do
    local a, b = edits[i - 1].range.start, edits[i].range.start
    if a.line > b.line or (a.line == b.line and a.character > b.character) then
      sorted = vim.deepcopy(edits)
      table.sort(sorted, function(x, y)
        local p, q = x.range.start, y.range.start
        return p.line < q.line or (p.line == q.line and p.character < q.character)
      end)
      break
    end
  end
  local n = #lines
  local out, acc, cl, cc = {}, '', 0, 0
  local touched, last = 0, -1
  for _, e in ipairs(sorted) do
    local sl, el = math.min(e.range.start.line, n), math.min(e.range['end'].line, n)
    local sc = byte_col(lines[sl + 1] or '', e.range.start.character, encoding)
    local ec = byte_col(lines[el + 1] or '', e.range['end'].character, encoding)
    if sl > cl or (sl == cl and sc >= cc) then
      if sl == cl then
        acc = acc .. (lines[cl + 1] or ''):sub(cc + 1, sc)
      else
        out[#out + 1] = acc .. (lines[cl + 1] or ''):sub(cc + 1)
        for i = cl + 2, sl do out[#out + 1] = lines[i] end
        acc = (lines[sl + 1] or ''):sub(1, sc)
      end
      local parts = vim.split(e.newText, '\n', { plain = true })
      local first = math.max(#out, last + 1)
      local final = #out + #parts - 1
      if final >= first then touched, last = touched + final - first + 1, final end
      acc = acc .. parts[1]
      for i = 2, #parts do
        out[#out + 1] = acc
        acc = parts[i]
      end
      cl, cc = el, ec
    end
  end
  if cl < n then
    out[#out + 1] = acc .. lines[cl + 1]:sub(cc + 1)
    for i = cl + 2, n do out[#out + 1] = lines[i] end
  elseif acc ~= '' then
    out[#out + 1] = acc
  end
  -- The empty text after a final newline is no line.
  if last >= #out then touched = touched - (last - #out + 1) end
  if #out == 0 then out = { '' } end
  return out, touched
end

--- Replaces a buffer's lines `old` (its text now) with `new`: one
--- nvim_buf_set_lines for the lines between the first and the last that
--- differ (one change event, the other lines keep their marks); the
--- cursor stays on its text.
local function set_lines(bufnr, old, new)
  local n, m = #old, #new
  local p = 0
  while p < n and p < m and old[p + 1] == new[p + 1] do p = p + 1 end
  local q = 0
  while q < n - p and q < m - p and old[n - q] == new[m - q] do q = q + 1 end
  local wins = {}
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == bufnr then wins[w] = api.nvim_win_get_cursor(w) end
  end
  api.nvim_buf_set_lines(bufnr, p, n - q, false, vim.list_slice(new, p + 1, m - q))
  for w, c in pairs(wins) do
    -- Below the changed lines: moved by the lines added or removed.
    local line = c[1] > n - q and c[1] + (m - n) or c[1]
    pcall(api.nvim_win_set_cursor, w, { math.max(1, math.min(line, m)), c[2] })
  end
end

local function same_lines(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

--- Shows a whole-file rewrite as a diff (current | proposed) in a new tab
--- page; `y` applies it if the buffer did not change meanwhile, `n`/`q`
--- discard it.  Returns true when the review is shown.
function M.review(action, offset_encoding)
  local bufnr, version, edits = review_target(action.edit or {})
  local title = action.title or 'rewrite'
  if not bufnr or not api.nvim_buf_is_loaded(bufnr) then
    notify('review: the rewrite is for a file that is not loaded', vim.log.levels.ERROR)
    return false
  end
  local name = vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ':t')
  local have = vim.lsp.util.buf_versions[bufnr]
  if version and have and version ~= have then
    notify(name .. ' changed since the server proposed "' .. title .. '": not applied; ask again', vim.log.levels.ERROR)
    return false
  end
  if M.reviewing then M.review_answer(false, true) end
  local old = api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local new, changed = M.edited_lines(old, edits, offset_encoding or 'utf-16')
  local from = api.nvim_get_current_win()
  vim.cmd('tabnew')
  local left_win = api.nvim_get_current_win()
  local left = review_buffer('tosa-review://' .. name .. ' (current)', old)
  vim.cmd('rightbelow vnew')
  local right = review_buffer('tosa-review://' .. name .. ' (proposed)', new)
  for _, b in ipairs({ left, right }) do
    vim.bo[b].modifiable = false
    vim.bo[b].readonly = true
    vim.bo[b].modified = false
  end
  -- How to answer first: a half-width status line cuts its end.
  local esc = title:gsub('%%', '%%%%')
  vim.wo[left_win].statusline = ' y apply  n discard │ current: ' .. name:gsub('%%', '%%%%') .. '%<'
  vim.wo[api.nvim_get_current_win()].statusline = ' y apply  n discard │ proposed: ' .. esc .. '%<'
  M.reviewing = { bufnr = bufnr, old = old, new = new, edit = action.edit, title = title, from = from,
    bufs = { left, right }, lines = changed, offset_encoding = offset_encoding or 'utf-16' }
  pcall(vim.cmd, 'normal! gg]c')
  vim.cmd('redraw')
  progress(string.format('apply? y: yes, n: no (%d line%s: %s)', changed, changed == 1 and '' or 's', title))
  return true
end

--- `y` (true) / `n`, `q` (false): closes the review, applies on yes.
function M.review_answer(yes, quiet)
  local r = M.reviewing
  if not r then return false end
  M.reviewing = nil
  local win = vim.fn.bufwinid(r.bufs[1])
  if win > 0 and #api.nvim_list_tabpages() > 1 then
    api.nvim_set_current_win(win)
    vim.cmd('tabclose')
  end
  for _, b in ipairs(r.bufs) do
    if api.nvim_buf_is_valid(b) then pcall(api.nvim_buf_delete, b, { force = true }) end
  end
  if api.nvim_win_is_valid(r.from) then api.nvim_set_current_win(r.from) end
  local name = vim.fn.fnamemodify(api.nvim_buf_get_name(r.bufnr), ':t')
  if not yes then
    if not quiet then progress('not applied: ' .. r.title) end
    return false
  end
  if not api.nvim_buf_is_loaded(r.bufnr) or not same_lines(api.nvim_buf_get_lines(r.bufnr, 0, -1, false), r.old) then
    notify(name .. ' changed during the review: "' .. r.title .. '" not applied; ask again', vim.log.levels.ERROR)
    return false
  end
  set_lines(r.bufnr, r.old, r.new)
  progress(string.format('applied "%s" to %s (%d line%s)', r.title, name, r.lines, r.lines == 1 and '' or 's'))
  return true
end

vim.lsp.commands['tosa.review'] = function(command, ctx)
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id)
  M.review(command.arguments and command.arguments[1] or {}, client and client.offset_encoding)
end

--- :TosaMigrate ('source.migrate') / :TosaRefineAll ('source.refineShapes'):
--- the whole-file action of that kind, through the review.  callback(shown).
function M.rewrite(kind, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  local bufnr = api.nvim_get_current_buf()
  local line = api.nvim_win_get_cursor(0)[1] - 1
  local params = { textDocument = { uri = uri_of(bufnr) },
    range = { start = { line = line, character = 0 }, ['end'] = { line = line, character = 0 } },
    context = { diagnostics = {}, only = { kind } } }
  client.request('textDocument/codeAction', params, function(err, actions)
    local found
    for _, a in ipairs(actions or {}) do
      local orig = (type(a.command) == 'table' and a.command.command == 'tosa.review') and a.command.arguments[1] or a
      local k = orig.kind or ''
      if orig.edit and (k:sub(1, #kind) == kind or (kind == 'source.migrate' and (orig.title or ''):find('^Migrate'))) then
        found = orig
        break
      end
    end
    local shown = false
    if err then
      notify(kind .. ': ' .. tostring(err.message), vim.log.levels.ERROR)
    elseif not found then
      progress(kind == 'source.migrate' and 'nothing to migrate in this file'
        or 'no shape to refine in the function at the cursor')
    else
      shown = M.review(found, client.offset_encoding)
    end
    if callback then callback(shown) end
  end, bufnr)
end

------------------------------------------------------------------------------
-- Hover: Markdown tables as plain aligned text (0.7 renders them raw and
-- turns `\|` inside a cell into a column separator).
------------------------------------------------------------------------------
local function plain_inline(s)
  s = s:gsub('%*%*', ''):gsub('`', '')
  s = s:gsub('^%*([^*]+)%*', '%1'):gsub('(%s)%*([^* ][^*]*)%*', '%1%2')
  -- _emphasis_ too, but not the underscores inside names (a_b_c).
  s = (' ' .. s .. ' '):gsub('([%s(])_([^_%s][^_]*)_([%s%p])', '%1%2%3'):sub(2, -2)
  return (s:gsub('%s+$', ''))
end

local dw = function(s) return vim.fn.strdisplaywidth(s) end

-- A line broken between words into lines of at most `width` columns; list
-- items and indented lines continue under their text.
local function wrap(line, width)
  if dw(line) <= width then return { line } end
  local lead = line:match('^%s*[-*+]%s+') or line:match('^%s*%d+[.)]%s+') or line:match('^%s*')
  local indent = string.rep(' ', dw(lead))
  if #indent > width / 2 then indent = '' end
  local out, cur, empty = {}, lead, true
  for word in line:sub(#lead + 1):gmatch('[^ ]+') do
    local sep = empty and '' or ' '
    if not empty and dw(cur .. sep .. word) > width then
      table.insert(out, cur)
      cur, sep = indent, ''
    end
    -- A word longer than a line: cut (nothing else fits).
    while dw(cur .. sep .. word) > width and vim.fn.strchars(word) > 1 do
      local room = math.max(1, width - dw(cur .. sep))
      table.insert(out, cur .. sep .. vim.fn.strcharpart(word, 0, room))
      word = vim.fn.strcharpart(word, room)
      cur, sep = indent, ''
    end
    cur = cur .. sep .. word
    empty = false
  end
  table.insert(out, cur)
  return out
end

local function col_widths(rows)
  local widths = {}
  for _, r in ipairs(rows) do
    for i, c in ipairs(r) do widths[i] = math.max(widths[i] or 0, dw(c)) end
  end
  return widths
end

local function table_width(widths, gap)
  local w = 0
  for _, x in ipairs(widths) do w = w + x end
  return w + gap * math.max(0, #widths - 1)
end

-- Rows aligned in columns within `width`: the gap shrinks to one space, then
-- the widest column wraps its cells between words; a table that cannot fit
-- is shown as one `header: cell` line per cell.
local function fit_table(rows, width)
  local widths = col_widths(rows)
  local gap = table_width(widths, 2) > width and 1 or 2
  while table_width(widths, gap) > width do
    local i, m = 1, 0
    for k, x in ipairs(widths) do if x > m then i, m = k, x end end
    if m <= 6 then break end
    widths[i] = m - 1
  end
  local lines = {}
  if table_width(widths, gap) > width then
    for ri = 2, #rows do
      for i, c in ipairs(rows[ri]) do vim.list_extend(lines, wrap((rows[1][i] or '') .. ': ' .. c, width)) end
    end
    return lines
  end
  for _, r in ipairs(rows) do
    local cells, height = {}, 1
    for i, c in ipairs(r) do
      cells[i] = wrap(c, widths[i])
      height = math.max(height, #cells[i])
    end
    for k = 1, height do
      local parts = {}
      for i = 1, #cells do
        local c = cells[i][k] or ''
        parts[i] = c .. string.rep(' ', widths[i] - dw(c))
      end
      table.insert(lines, (table.concat(parts, string.rep(' ', gap)):gsub('%s+$', '')))
    end
  end
  return lines
end

--- Markdown as plain lines at most `maxw` (default 78) columns wide: tables
--- aligned and fitted to the width (the widest column wraps between words),
--- `---` rules drawn as a line across, long lines wrapped between words,
--- emphasis and code marks dropped.
function M.plain_markdown(text, maxw)
  maxw = math.max(12, maxw or 78)
  local blocks, tbl = {}, {}
  local function is_blank_text(b) return b and b[1] == 'text' and b[2] == '' end
  for _, line in ipairs(vim.split(text .. '\n', '\n', { plain = true })) do
    if line:match('^%s*|') then
      local cells = vim.split(vim.trim(line):gsub('\\|', '\1'), '|', { plain = true })
      local row = {}
      for i = 2, #cells - 1 do row[#row + 1] = vim.trim(plain_inline(cells[i]):gsub('\1', '|')) end
      if not table.concat(row, ''):match('^[-: ]*$') then table.insert(tbl, row) end
    else
      if #tbl > 0 then table.insert(blocks, { 'table', tbl }) tbl = {} end
      local stripped = line:gsub('%s', '')
      if #stripped >= 3 and (stripped:match('^%-+$') or stripped:match('^%*+$') or stripped:match('^_+$')) then
        -- A rule: the blank lines around it are dropped (it separates).
        while is_blank_text(blocks[#blocks]) do table.remove(blocks) end
        table.insert(blocks, { 'rule' })
      elseif line:match('^```') then
        -- fences dropped
      elseif not (line == '' and blocks[#blocks] and blocks[#blocks][1] == 'rule') then
        table.insert(blocks, { 'text', plain_inline((line:gsub('^#+%s*', ''))) })
      end
    end
  end
  while blocks[#blocks] and (is_blank_text(blocks[#blocks]) or blocks[#blocks][1] == 'rule') do table.remove(blocks) end
  local width = 1
  for _, b in ipairs(blocks) do
    if b[1] == 'text' then width = math.max(width, dw(b[2]))
    elseif b[1] == 'table' then width = math.max(width, table_width(col_widths(b[2]), 2)) end
  end
  width = math.min(width, maxw)
  local out = {}
  for _, b in ipairs(blocks) do
    if b[1] == 'text' then vim.list_extend(out, wrap(b[2], width))
    elseif b[1] == 'table' then vim.list_extend(out, fit_table(b[2], width))
    else table.insert(out, string.rep(vim.o.encoding == 'utf-8' and '─' or '-', width)) end
  end
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
  -- The lines fit the float (never wrapped inside a word or a table cell).
  local width = math.max(20, math.min(78, vim.o.columns - 2))
  local lines = M.plain_markdown(text, width)
  config = vim.tbl_extend('force', config or {}, {
    focus_id = 'tosa_lsp_hover', border = 'single',
    max_width = width, max_height = math.max(3, vim.o.lines - 6),
  })
  return vim.lsp.util.open_floating_preview(lines, 'plaintext', config)
end

------------------------------------------------------------------------------
-- Client.
------------------------------------------------------------------------------
-- A publish's diagnostics for vim.diagnostic.set as 0.7-0.8's handler
-- makes them, reading only the lines they are on: that handler reads the
-- whole buffer on every publish, for any number of diagnostics (at 50k
-- lines 20-40 ms of the editor's main thread, ~100 ms while the server's
-- background inference holds the cores: the longest UI stall at open).
function M.diagnostics_to_vim(bufnr, diagnostics, offset_encoding)
  local lines = {}
  local function byte_col(lnum, character)
    if offset_encoding == 'utf-8' then return character end
    local line = lines[lnum]
    if line == nil then
      line = api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1] or false
      lines[lnum] = line
    end
    -- A line past the end or a column past the line: as sent (as 0.7 does).
    local ok, col = pcall(vim.str_byteindex, line or nil, character, offset_encoding == 'utf-16')
    return ok and col or character
  end
  local out = {}
  for i, d in ipairs(diagnostics) do
    local s, e = d.range.start, d.range['end']
    local severity = d.severity
    if type(severity) == 'string' then severity = vim.lsp.protocol.DiagnosticSeverity[severity] end
    out[i] = {
      lnum = s.line, col = byte_col(s.line, s.character),
      end_lnum = e.line, end_col = byte_col(e.line, e.character),
      severity = severity, message = d.message, source = d.source, code = d.code,
      user_data = { lsp = { code = d.code, codeDescription = d.codeDescription, tags = d.tags,
        relatedInformation = d.relatedInformation, data = d.data } },
    }
  end
  return out
end

-- 0.9 changed the diagnostics' fields (_tags): its own handler converts
-- them there and later, except for an empty publish.
local own_conversion = vim.fn.has('nvim-0.9') == 0

local function publish_diagnostics(default, err, result, ctx, config)
  local client_id = ctx and ctx.client_id
  if err or config or type(client_id) ~= 'number' or type(result) ~= 'table'
      or type(result.uri) ~= 'string' or type(result.diagnostics) ~= 'table' then
    return default(err, result, ctx, config)
  end
  local fname = vim.uri_to_fname(result.uri)
  local n = #result.diagnostics
  if vim.fn.bufexists(fname) == 0 then return default(err, result, ctx, config) end
  local bufnr = vim.fn.bufadd(fname)
  if n > 0 and not (own_conversion and api.nvim_buf_is_loaded(bufnr)) then
    return default(err, result, ctx, config)
  end
  local client = vim.lsp.get_client_by_id(client_id)
  vim.diagnostic.set(vim.lsp.diagnostic.get_namespace(client_id), bufnr,
    M.diagnostics_to_vim(bufnr, result.diagnostics, client and client.offset_encoding or 'utf-16'))
end

local function handlers()
  local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  return {
    ['textDocument/hover'] = hover_handler,
    ['$/progress'] = function(err, result, ctx, config)
      local v = result and result.value or {}
      if M.compiling and result.token == M.compiling.token and v.kind ~= 'end' then
        M.compiling.step = ((v.message or v.title or ''):gsub('\n.*', ''))
        progress(M.compiling.what .. ': ' .. M.compiling.step .. '  (:TosaCancel to stop)')
      end
      local default = vim.lsp.handlers['$/progress']
      if default then return default(err, result, ctx, config) end
    end,
    ['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
      publish_diagnostics(default_publish, err, result, ctx, config)
      if result and result.uri then
        local bufnr = vim.uri_to_bufnr(result.uri)
        M.published[bufnr] = result.version or vim.lsp.util.buf_versions[bufnr]
        if hints_enabled[bufnr] then M.published_hints(bufnr) end
      end
    end,
  }
end

-- Client-side commands for the code actions' `command`s.
vim.lsp.commands['tosa.previewLowering'] = function(command)
  local args = command.arguments and command.arguments[1] or {}
  local src = api.nvim_get_current_buf()
  preview_request(src, args, function(result)
    M.open_preview(result, (args.stage or 'linalg') .. '-' .. (args.mode or 'fast'), src)
  end)
end
vim.lsp.commands['tosa.compile'] = function(command)
  M.compile(command.arguments and command.arguments[1] or {})
end

-- Code actions answered to any caller (vim.lsp.buf.code_action, a picker
-- plugin, :TosaCodeAction) go through review_actions first.
local function wrap_code_actions(client)
  if client.tosa_lsp_wrapped then return end
  client.tosa_lsp_wrapped = true
  local request = client.request
  client.request = function(method, params, handler, bufnr)
    if method == 'textDocument/codeAction' then
      local h = handler or client.handlers[method] or vim.lsp.handlers[method]
      if h then
        handler = function(err, result, ctx, config) return h(err, M.review_actions(result), ctx, config) end
      end
    end
    return request(method, params, handler, bufnr)
  end
end

-- A didOpen is encoded and written on the next tick: 0.7 reads the buffer
-- twice for it (the incremental sync's copy, then the text), encodes it
-- and writes it in one go: at 50k lines ~100 ms without a redraw or a
-- keystroke. Anything sent before that tick (a request, an edit, stop)
-- sends it first, so the server sees the messages in order.
-- (0.7-0.8, whose didOpen this is; later ones are left alone.)
-- The didOpen of a buffer read ahead (read_then_attach) was encoded
-- there, a slice per step: set while share_open_lines attaches it.
local encoded_open = nil

local function defer_did_open(client)
  if vim.fn.has('nvim-0.9') == 1 or client.tosa_lsp_deferred then return end
  client.tosa_lsp_deferred = true
  local notify, request, stop = client.notify, client.request, client.stop
  local pending = {}
  local function flush()
    while #pending > 0 do
      local entry = table.remove(pending, 1)
      if entry.message then
        -- vim.lsp encodes the message it sends: this one is done already.
        local encode = vim.json.encode
        vim.json.encode = function(v, ...)
          if type(v) == 'table' and v.params == entry.params then return entry.message end
          return encode(v, ...)
        end
        local ok, err = pcall(notify, 'textDocument/didOpen', entry.params)
        vim.json.encode = encode
        if not ok then error(err, 0) end
      else
        notify('textDocument/didOpen', entry.params)
      end
    end
  end
  client.notify = function(method, params)
    if method == 'textDocument/didOpen' then
      local doc, e = params.textDocument, encoded_open
      local same = e and doc.uri == e.uri and doc.languageId == e.languageId and doc.version == 0
        and #doc.text == e.length
      table.insert(pending, { params = params, message = same and e.message or nil })
      vim.schedule(flush)
      return true
    end
    flush()
    return notify(method, params)
  end
  client.request = function(...)
    flush()
    return request(...)
  end
  client.stop = function(...)
    flush()
    return stop(...)
  end
end

-- The function and index of the upvalue `name` reachable from `fn`
-- through the functions among its upvalues (up to `depth` levels).
local function find_upvalue(fn, name, depth, seen)
  seen = seen or {}
  if depth < 0 or seen[fn] then return nil end
  seen[fn] = true
  for i = 1, 255 do
    local n, v = debug.getupvalue(fn, i)
    if not n then break end
    if n == name then return fn, i end
    if type(v) == 'function' then
      local f, j = find_upvalue(v, name, depth - 1, seen)
      if f then return f, j end
    end
  end
end

-- 0.7-0.8's attach reads the whole buffer twice before the didOpen is
-- sent: a copy for the incremental sync, then again for the didOpen's text
-- (a full-sync server's client reads it once). While a buffer is
-- attached, the second whole read of the same changedtick gets the first
-- one's lines (the text is only their concatenation): at 50k lines one
-- nvim_buf_get_lines less before the didOpen (~20 ms, ~60 ms on a busy
-- machine), the most of what the open cost beyond upstream's client.
-- The lines are vim.lsp's local, reached through _on_attach's upvalues;
-- where they are not found nothing changes.
-- A big buffer is read before it is attached, a slice of lines per step
-- (read_then_attach), and joined in a step of its own: the attach (in the
-- step of the server's `initialize` answer, or at once) then gets both, so
-- no step reads or joins the whole buffer (at 50k lines reading and joining
-- in the attach's step was the longest stall of the open: 115-168 ms).
local prefetched = {}

local function share_open_lines(client)
  if vim.fn.has('nvim-0.9') == 1 or client.tosa_lsp_shared_lines then return end
  client.tosa_lsp_shared_lines = true
  local attach = client._on_attach
  if type(attach) ~= 'function' then return end
  local fn, idx = find_upvalue(attach, 'nvim_buf_get_lines', 3)
  if not fn then return end
  client._on_attach = function(bufnr, ...)
    local _, get_lines = debug.getupvalue(fn, idx)
    if type(get_lines) ~= 'function' then return attach(bufnr, ...) end
    local memo, uses = prefetched[bufnr], 2
    prefetched[bufnr] = nil
    if memo and memo.tick ~= api.nvim_buf_get_changedtick(bufnr) then memo = nil end
    -- The didOpen's text: the read-ahead's own join of these lines.
    local concat, joined = table.concat, memo
    if joined then
      table.concat = function(t, sep, ...)
        if t == joined.lines and sep == '\n' and select('#', ...) == 0 then return joined.text end
        return concat(t, sep, ...)
      end
    end
    debug.setupvalue(fn, idx, function(b, first, last, strict)
      if first ~= 0 or last ~= -1 then return get_lines(b, first, last, strict) end
      local tick = api.nvim_buf_get_changedtick(b)
      if memo and memo.buf == b and memo.tick == tick and memo.strict == strict then
        local lines = memo.lines
        uses = uses - 1
        if uses == 0 then memo = nil end
        return lines
      end
      local lines = get_lines(b, first, last, strict)
      memo, uses = { buf = b, tick = tick, strict = strict, lines = lines }, 1
      return lines
    end)
    encoded_open = joined
    local ok, err = pcall(attach, bufnr, ...)
    encoded_open = nil
    debug.setupvalue(fn, idx, get_lines)
    table.concat = concat
    if not ok then error(err, 0) end
  end
end

-- Lines read per step ahead of the attach (tests make it small); while
-- M._prefetch_hold is set, the read waits after its first slice (tests).
M._prefetch_step = 10000
M._prefetch_hold = false

-- Reads buffer `bufnr` M._prefetch_step lines per step, joins them in a
-- step of its own, then calls `attach`: the lines and the text wait in
-- `prefetched` for share_open_lines. A change meanwhile (or a buffer gone)
-- stops the reading; `attach` then reads the buffer itself.
local function read_then_attach(bufnr, attach)
  -- (From the first step: the tick moves once more after FileType.)
  local tick, n
  local lines, pieces, escaped, at = {}, {}, {}, 0
  local progress = { lines = 0 }
  prefetched[bufnr] = nil
  M._reading[bufnr] = progress
  local function fresh()
    return api.nvim_buf_is_loaded(bufnr) and api.nvim_buf_get_changedtick(bufnr) == tick
  end
  local function finish(memo)
    M._reading[bufnr] = nil
    if memo then
      prefetched[bufnr] = memo
      -- Not kept past the open if the initialize answer never comes.
      vim.defer_fn(function() if prefetched[bufnr] == memo then prefetched[bufnr] = nil end end, 30000)
    end
    if api.nvim_buf_is_loaded(bufnr) then attach() end
  end
  local function step()
    if M._reading[bufnr] ~= progress then return end -- a newer read attaches
    if not tick and api.nvim_buf_is_loaded(bufnr) then
      tick, n = api.nvim_buf_get_changedtick(bufnr), api.nvim_buf_line_count(bufnr)
    end
    if not fresh() then return finish(nil) end
    if at > 0 and M._prefetch_hold then return vim.defer_fn(step, 5) end
    if at >= n then
      -- The text, then (a step later) the didOpen as vim.lsp would encode it.
      local memo = { buf = bufnr, tick = tick, strict = true, lines = lines, text = table.concat(pieces, '\n') }
      pieces = nil
      vim.defer_fn(function()
        if M._reading[bufnr] ~= progress then return end
        if not fresh() then return finish(nil) end
        local eol = vim.bo[bufnr].eol
        memo.uri, memo.languageId = vim.uri_from_bufnr(bufnr), vim.bo[bufnr].filetype
        memo.length = #memo.text + (eol and 1 or 0)
        local parts = { '{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":',
          vim.json.encode(memo.uri), ',"languageId":', vim.json.encode(memo.languageId), ',"version":0,"text":"' }
        for i, e in ipairs(escaped) do
          if i > 1 then parts[#parts + 1] = '\\n' end
          parts[#parts + 1] = e
        end
        parts[#parts + 1] = (eol and '\\n' or '') .. '"}}}'
        escaped = nil
        memo.message = table.concat(parts)
        finish(memo)
      end, 0)
      return
    end
    local slice = api.nvim_buf_get_lines(bufnr, at, math.min(at + M._prefetch_step, n), true)
    local base = #lines
    for k = 1, #slice do lines[base + k] = slice[k] end
    local piece = table.concat(slice, '\n')
    pieces[#pieces + 1] = piece
    escaped[#escaped + 1] = vim.json.encode(piece):sub(2, -2)
    at = at + #slice
    progress.lines = at
    -- A timer, not vim.schedule: the editor handles its own events between.
    vim.defer_fn(step, 0)
  end
  vim.defer_fn(step, 0)
end

M._reading = {} -- buffer -> { lines = read so far } (tests)
M._prefetched = prefetched -- (tests)

local install_hint = 'install it: sudo apt install ./tosa-lsp_0.1.0_amd64.deb (cpack -G DEB in the build directory), '
  .. 'or cmake --install build, then it is on PATH'

--- The Debian package of a library the loader did not find (text: the
--- server's stderr): 'cannot start: libMLIR.so.22.1 is missing (install
--- ...)', or nil when the text holds no loader error.
function M.missing_library(text)
  local lib = text:match('error while loading shared libraries: (%S+): cannot open shared object file')
  local old = text:match("(GLIBCXX_[%d.]+)' not found")
  if not lib and not old then return nil end
  if not lib or lib:find('^libstdc%+%+%.so%.6') then
    local what = lib and (lib .. ' is missing') or ('libstdc++.so.6 is too old (' .. old .. ' not found)')
    return 'cannot start: ' .. what .. ' (install a newer libstdc++6: sudo apt-get install libstdc++6)'
  end
  for _, m in ipairs({ { '^libMLIR%.so%.22', 'libmlir-22' }, { '^libmlir_.*%.so%.22', 'libmlir-22' },
      { '^libLLVM%.so%.22', 'libllvm22' }, { '^libLLVM%-22%.so', 'libllvm22' },
      { '^libmimalloc%.so%.2', 'libmimalloc2.0' } }) do
    if lib:find(m[1]) then
      return 'cannot start: ' .. lib .. " is missing (install Debian's " .. m[2] .. ': sudo apt-get install ' .. m[2] .. ')'
    end
  end
  return 'cannot start: ' .. lib .. ' is missing (find its Debian package: apt-file search ' .. lib .. ')'
end

-- The server exited before it initialized. Neovim 0.7 writes its stderr
-- to lsp.log only: `cmd[1] --version` is run once (in the background; a
-- loader error is the same whatever the arguments) and its output shown,
-- with the package of a missing library first.
local function report_start_failure(cmd, code)
  local why = 'the server exited with code ' .. code .. ' while starting'
  local out, done = {}, false
  local function report(rc)
    if done then return end
    done = true
    local lines = vim.tbl_filter(function(l) return l:find('%S') ~= nil end, out)
    local text
    if rc ~= 0 and #lines > 0 then
      local lib = M.missing_library(table.concat(lines, '\n'))
      text = (lib and lib .. '\n' or '') .. why .. '; ' .. cmd[1] .. ' --version says:\n'
        .. table.concat(vim.list_slice(lines, math.max(1, #lines - 4)), '\n')
    else
      text = why .. ' (its stderr is in ' .. vim.lsp.get_log_path() .. ')'
    end
    M.error_fit(text .. '\n:TosaRestart starts it again')
  end
  local function collect(_, data) vim.list_extend(out, data) end
  local job = vim.fn.jobstart({ cmd[1], '--version' }, { stdout_buffered = true, stderr_buffered = true,
    on_stdout = collect, on_stderr = collect, on_exit = function(_, rc) report(rc) end })
  if job <= 0 then return report(0) end
  vim.defer_fn(function() if not done then vim.fn.jobstop(job) report(0) end end, 3000)
end

function M.start()
  if M.client() then return M.client_id end
  -- Said once; attaching stays quiet until :TosaRestart.
  if M.failed then return nil end
  local cfg = M.config
  if vim.fn.executable(cfg.cmd[1]) ~= 1 then
    M.failed = 'server not found: ' .. cfg.cmd[1] .. ' is not executable or not on $PATH'
    M.error_fit(M.failed .. '\n' .. install_hint
      .. "\nor setup{ cmd = { '/path/to/build/bin/tosa-lsp' } }; then :TosaRestart")
    return nil
  end
  local ready = false
  M.client_id = vim.lsp.start_client({
    name = cfg.name,
    cmd = cfg.cmd,
    root_dir = cfg.root_dir or vim.loop.cwd(),
    -- An empty Lua table is encoded as a JSON list ([]): none is sent then.
    init_options = (cfg.settings and next(cfg.settings)) and cfg.settings or nil,
    settings = (cfg.settings and next(cfg.settings)) and cfg.settings or vim.empty_dict(),
    capabilities = cfg.capabilities,
    flags = { debounce_text_changes = cfg.debounce_text_changes },
    handlers = handlers(),
    on_init = function(client)
      ready = true
      share_open_lines(client)
      defer_did_open(client)
      wrap_code_actions(client)
      if cfg.settings and next(cfg.settings) then
        client.notify('workspace/didChangeConfiguration', { settings = cfg.settings })
      end
    end,
    on_attach = function(client, bufnr)
      M.set_keymaps(bufnr)
      -- CTRL-X CTRL-O: the server's completion (vim.lsp.omnifunc), unless set.
      if vim.bo[bufnr].omnifunc == '' and cfg.omnifunc ~= false then
        vim.bo[bufnr].omnifunc = "v:lua.require'tosa_lsp'.omnifunc"
      end
      if cfg.on_attach then cfg.on_attach(client, bufnr) end
    end,
    on_exit = function(code, signal, client_id)
      -- A restart may already have started the next client.
      if client_id == nil or M.client_id == client_id then
        M.client_id = nil
        M.compiling = nil
        if code ~= 0 and not ready then
          M.failed = 'exited while starting'
          vim.schedule(function() report_start_failure(cfg.cmd, code) end)
        end
        -- Its inlay hints cannot be updated any more (the built-in client
        -- clears its diagnostics itself).
        vim.schedule(function()
          if M.client_id then return end
          for _, b in ipairs(api.nvim_list_bufs()) do
            if api.nvim_buf_is_valid(b) then api.nvim_buf_clear_namespace(b, M.ns, 0, -1) end
          end
          hint_state = {}
          last_hints = {}
        end)
      end
    end,
  })
  return M.client_id
end

--- :TosaCodeAction / <LocalLeader>a: the built-in menu for the actions of
--- the whole cursor line (0.7's code_action() asks for the cursor
--- position only: with the cursor at the start of an error's line, its
--- fix was not offered).
function M.code_action()
  local line = api.nvim_win_get_cursor(0)[1]
  local text = api.nvim_get_current_line()
  local ctx = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0) }
  -- The end is inclusive ('selection'): the last byte of the line.
  local last = vim.o.selection == 'exclusive' and #text or math.max(0, #text - 1)
  vim.lsp.buf.range_code_action(ctx, { line, 0 }, { line, last })
end

local default_keys = {
  hover = { 'K', function() vim.lsp.buf.hover() end },
  definition = { 'gd', function() vim.lsp.buf.definition() end },
  references = { 'gr', function() vim.lsp.buf.references() end },
  symbols = { 'gO', function() vim.lsp.buf.document_symbol() end },
  code_action = { '<LocalLeader>a', function() M.code_action() end },
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
  -- An unnamed buffer has no URI (it would be sent as `file://`).
  if api.nvim_buf_get_name(bufnr) == '' then return false end
  local id = M.start()
  if not id then
    if not M.failed then notify('cannot start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR) end
    return false
  end
  if hints_enabled[bufnr] == nil then hints_enabled[bufnr] = M.config.inlay_hints end
  -- (0.7-0.8; a read under way attaches when done.)
  if vim.fn.has('nvim-0.9') == 0 and api.nvim_buf_line_count(bufnr) >= 2000
      and not vim.lsp.buf_is_attached(bufnr, id) then
    if not M._reading[bufnr] then
      read_then_attach(bufnr, function()
        local c = M.client()
        if c then vim.lsp.buf_attach_client(bufnr, c.id) end
      end)
    end
    return true
  end
  return vim.lsp.buf_attach_client(bufnr, id)
end

--- After a rename: didClose for the old URI, didOpen for the new one.
function M.renamed(bufnr)
  local old = vim.b[bufnr].tosa_lsp_uri
  vim.b[bufnr].tosa_lsp_uri = nil
  local c = M.client()
  if not old or not c or not vim.lsp.buf_is_attached(bufnr, c.id) or old == uri_of(bufnr) then return end
  c.notify('textDocument/didClose', { textDocument = { uri = old } })
  if api.nvim_buf_get_name(bufnr) == '' then return end
  local lines = api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, '\n') .. (vim.bo[bufnr].eol and '\n' or '')
  c.notify('textDocument/didOpen', { textDocument = {
    uri = uri_of(bufnr), languageId = 'mlir', version = vim.lsp.util.buf_versions[bufnr] or 0, text = text } })
end

function M.stop()
  local c = M.client()
  if c then c.stop() end
  M.client_id = nil
  M.compiling = nil
end

-- Loaded buffers of the configured filetypes that are not previews.
local function source_buffers()
  local bufs = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.tbl_contains(M.config.filetypes, vim.bo[b].filetype)
        and not vim.b[b].tosa_lsp_preview and vim.bo[b].buftype == '' then
      table.insert(bufs, b)
    end
  end
  return bufs
end

--- :TosaRestart: a new server for every loaded mlir buffer, also after the
--- old one crashed or was stopped (there is no client to ask then).
function M.restart()
  local c = M.client()
  if c then c.stop(true) end
  M.client_id = nil
  M.compiling = nil
  M.failed = nil
  local function start_all()
    local n = 0
    for _, b in ipairs(source_buffers()) do
      if M.attach(b) then n = n + 1 end
    end
    if M.failed then return end
    notify(n > 0 and ('restarted (' .. n .. (n == 1 and ' buffer)' or ' buffers)')) or 'restarted: no mlir buffer to attach')
  end
  if not c then return start_all() end
  local waited = 0
  local function poll()
    if c.is_stopped() or waited >= 2000 then return start_all() end
    waited = waited + 20
    vim.defer_fn(poll, 20)
  end
  poll()
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
  cmd('TosaCodeAction', function() M.code_action() end, {})
  cmd('TosaStop', function() M.stop() end, {})
  cmd('TosaCancel', function() M.cancel() end, {})
  cmd('TosaRestart', function() M.restart() end, {})
  cmd('TosaPreviewSource', function() M.preview_source() end, {})
  cmd('TosaMigrate', function() M.rewrite('source.migrate') end, {})
  cmd('TosaRefineAll', function() M.rewrite('source.refineShapes') end, {})
  cmd('TosaReviewApply', function() M.review_answer(true) end, {})
  cmd('TosaReviewDiscard', function() M.review_answer(false) end, {})
  -- The CLI writes the picture (autoload/tosa_lsp/graph.vim, shared with Vim).
  cmd('TosaRename', function(o) M.rename(o.args ~= '' and o.args or nil) end, { nargs = '?' })
  cmd('TosaFormat', function(o)
    M.format(o.range > 0 and { o.line1, o.line2 } or nil)
  end, { range = '%' })
  cmd('TosaGraph', function(o) vim.fn['tosa_lsp#graph#open'](M.config.cmd[1], o.args) end, {
    nargs = '?', complete = function() return { 'html', 'svg', 'dot', 'json' } end,
  })
end

------------------------------------------------------------------------------
-- Editing: completion, rename, format, bytecode.
------------------------------------------------------------------------------
M.published = {} -- bufnr -> version of the last publishDiagnostics

--- Waits (at most ms) until the server has published the diagnostics of the
--- buffer's current version: answers from the previous text (completion
--- after `tosa.` listing values, format edits) would not fit the buffer.
function M.wait_analysed(bufnr, ms)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  return vim.wait(ms, function()
    local v = vim.lsp.util.buf_versions[bufnr]
    return v == nil or (M.published[bufnr] or -1) >= v
  end, 5)
end

--- 'omnifunc' of mlir buffers: vim.lsp.omnifunc once the text is analysed.
function M.omnifunc(findstart, base)
  if findstart == 1 then M.wait_analysed(0, M.config.complete_wait_ms or 1000) end
  return vim.lsp.omnifunc(findstart, base)
end

local function edit_count(edit)
  local n = 0
  for _, edits in pairs(edit.changes or {}) do n = n + #edits end
  for _, dc in ipairs(edit.documentChanges or {}) do n = n + #(dc.edits or {}) end
  return n
end

--- :TosaRename [NEWNAME]: prepareRename, then rename (asked for when not
--- given; the sigil may be left out). Refusals say the server's reason.
function M.rename(new_name, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  local bufnr = api.nvim_get_current_buf()
  M.wait_analysed(bufnr, 2000)
  local params = vim.lsp.util.make_position_params()
  client.request('textDocument/prepareRename', params, function(err, r)
    if err then return M.error_fit('rename: ' .. tostring(err.message)) end
    if type(r) ~= 'table' then
      return M.error_fit('rename: nothing to rename here (put the cursor on a %value, ^block, @symbol or alias)')
    end
    local old = r.placeholder or ''
    local new = new_name
    if not new then
      new = vim.fn.input('Rename ' .. old .. ' to: ', old)
      if new == '' or new == old then return end
    end
    local sigil = old:match('^[%%^@#!]')
    if sigil and new:sub(1, 1) ~= sigil then new = sigil .. new end
    params.newName = new
    client.request('textDocument/rename', params, function(err2, edit)
      if err2 then return M.error_fit('rename: ' .. tostring(err2.message)) end
      if type(edit) ~= 'table' or edit_count(edit) == 0 then return notify('rename: nothing to change') end
      for _, dc in ipairs(edit.documentChanges or {}) do
        local v = dc.textDocument and dc.textDocument.version
        if v and v ~= vim.NIL and vim.uri_to_bufnr(dc.textDocument.uri) == bufnr and v ~= vim.lsp.util.buf_versions[bufnr] then
          return M.error_fit('rename: the buffer changed meanwhile; nothing renamed (run it again)')
        end
      end
      local n = edit_count(edit)
      vim.lsp.util.apply_workspace_edit(edit, client.offset_encoding)
      M.last_message = ('renamed %s to %s (%d %s)'):format(old, new, n, n == 1 and 'place' or 'places')
      notify(M.last_message)
      if callback then callback(edit) end
    end, bufnr)
  end, bufnr)
end

--- :[range]TosaFormat: formatting (rangeFormatting for a range), applied if
--- the buffer did not change meanwhile; a section that does not parse is
--- refused by the server, with its reason.
function M.format(lines, callback)
  local client = M.client()
  if not client then notify('not running', vim.log.levels.ERROR) return end
  local bufnr = api.nvim_get_current_buf()
  M.wait_analysed(bufnr, 3000)
  local params = { textDocument = { uri = uri_of(bufnr) },
    options = { tabSize = vim.fn.shiftwidth(), insertSpaces = vim.bo[bufnr].expandtab } }
  local method = 'textDocument/formatting'
  if lines and not (lines[1] == 1 and lines[2] == api.nvim_buf_line_count(bufnr)) then
    method = 'textDocument/rangeFormatting'
    local last = api.nvim_buf_get_lines(bufnr, lines[2] - 1, lines[2], false)[1] or ''
    params.range = { start = { line = lines[1] - 1, character = 0 },
      ['end'] = { line = lines[2] - 1, character = vim.str_utfindex(last) } }
  end
  local tick = api.nvim_buf_get_changedtick(bufnr)
  client.request(method, params, function(err, edits)
    if err then return M.error_fit('format: ' .. tostring(err.message)) end
    if api.nvim_buf_get_changedtick(bufnr) ~= tick then
      return M.error_fit('format: the buffer changed meanwhile; nothing changed (run it again)')
    end
    local before = api.nvim_buf_get_lines(bufnr, 0, -1, false)
    if type(edits) == 'table' and #edits > 0 then
      vim.lsp.util.apply_text_edits(edits, bufnr, client.offset_encoding)
    end
    local after = api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local n = 0
    for i = 1, math.max(#before, #after) do
      if before[i] ~= after[i] then n = n + 1 end
    end
    M.last_message = n == 0 and 'format: already formatted'
      or ('formatted: %d %s changed'):format(n, n == 1 and 'line' or 'lines')
    notify(M.last_message)
    if callback then callback(n) end
  end, bufnr)
end

local b64 = {}
do
  local chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  for i = 1, 64 do b64[chars:byte(i)] = i - 1 end
end

--- Base64 -> bytes (Neovim 0.7 has no vim.base64).
function M.base64_decode(s)
  local out, acc, bits = {}, 0, 0
  for i = 1, #s do
    local v = b64[s:byte(i)]
    if v then
      acc = (acc % 0x40000) * 64 + v
      bits = bits + 6
      if bits >= 8 then
        bits = bits - 8
        out[#out + 1] = string.char(math.floor(acc / 2 ^ bits) % 256)
      end
    end
  end
  return table.concat(out)
end

-- A request before anything else: the client started and initialized.
local function ready_client(ms)
  local id = M.start()
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then return nil, M.failed or 'the server is not running' end
  if not vim.wait(ms, function() return client.initialized == true end, 10) then
    return nil, 'the server did not start in ' .. ms .. ' ms'
  end
  return client
end

local function sync_request(client, method, params, ms, bufnr)
  local r, err = client.request_sync(method, params, ms, bufnr)
  if not r then return nil, tostring(err or 'no answer') end
  if r.err then return nil, tostring(r.err.message or vim.inspect(r.err)) end
  return r.result
end

--- BufReadCmd *.mlirbc: the text of the bytecode (mlir/convertFromBytecode),
--- then filetype mlir (the client attaches as to any mlir buffer). A file
--- that cannot be read leaves an empty buffer that is never written.
function M.bytecode_read(bufnr, path)
  local name = vim.fn.fnamemodify(path, ':t')
  vim.bo[bufnr].modifiable = true
  if vim.fn.filereadable(path) == 0 then
    vim.b[bufnr].tosa_lsp_bytecode = 'new'
    vim.bo[bufnr].filetype = 'mlir'
    return
  end
  vim.b[bufnr].tosa_lsp_bytecode = 'reading'
  local client, why = ready_client(10000)
  local result
  if client then
    result, why = sync_request(client, 'mlir/convertFromBytecode', { uri = vim.uri_from_fname(path) },
      M.config.bytecode_timeout_ms or 20000, bufnr)
  end
  if type(result) ~= 'table' or type(result.output) ~= 'string' then
    vim.b[bufnr].tosa_lsp_bytecode = 'failed'
    vim.bo[bufnr].modifiable = false
    vim.bo[bufnr].modified = false
    M.last_message = 'cannot open ' .. name .. ' as MLIR text: ' .. tostring(why or 'the server answered no text')
      .. '. The file was not changed.'
    M.error_fit(M.last_message)
    return
  end
  local lines = vim.split(result.output, '\n', true)
  if #lines > 1 and lines[#lines] == '' then table.remove(lines) end
  api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modified = false
  vim.b[bufnr].tosa_lsp_bytecode = 'text'
  vim.bo[bufnr].filetype = 'mlir'
  notify(('"%s" bytecode, %d lines of MLIR text'):format(name, #lines))
end

--- BufWriteCmd *.mlirbc: the buffer's text as bytecode
--- (mlir/convertToBytecode once the server has analysed this text), written
--- only when the server answered bytecode. A failure is an error (`:wq`
--- does not quit) and the file keeps what it had.
function M.bytecode_write(bufnr, path)
  local name = vim.fn.fnamemodify(path, ':t')
  local state = vim.b[bufnr].tosa_lsp_bytecode
  local function fail(msg)
    M.last_message = name .. ' not written (it keeps its bytecode): ' .. msg
    error('tosa-lsp: ' .. M.last_message, 0)
  end
  if state == 'failed' or state == 'reading' then fail('its bytecode was never read as text') end
  local client, why = ready_client(10000)
  if not client then fail(why) end
  if not vim.lsp.buf_is_attached(bufnr, client.id) then M.attach(bufnr) end
  if not M.wait_analysed(bufnr, M.config.bytecode_timeout_ms or 20000) or not M.published[bufnr] then
    fail('the server has not analysed the text yet; write again')
  end
  local result, err = sync_request(client, 'mlir/convertToBytecode', { uri = uri_of(bufnr) },
    M.config.bytecode_timeout_ms or 20000, bufnr)
  if not result then fail(err) end
  local bytes = type(result.output) == 'string' and M.base64_decode(result.output) or ''
  if bytes:sub(1, 4) ~= 'ML\239R' then fail('the server answered no bytecode') end
  local f = io.open(path, 'wb')
  if not f then fail('cannot write ' .. path) end
  f:write(bytes)
  f:close()
  if vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ':p') == path then vim.bo[bufnr].modified = false end
  notify(('"%s" %d bytes of bytecode written'):format(name, #bytes))
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  M.failed = nil
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
  -- :saveas / :file: the document closed under its old name and opened
  -- under the new one (0.7's client keeps sending the new URI otherwise,
  -- for a document the server never saw).
  api.nvim_create_autocmd('BufFilePre', {
    group = group,
    callback = function(ev) vim.b[ev.buf].tosa_lsp_uri = uri_of(ev.buf) end,
  })
  api.nvim_create_autocmd('BufFilePost', {
    group = group,
    callback = function(ev) M.renamed(ev.buf) end,
  })
  -- Inlay hints follow the view (they are asked for the visible lines).
  api.nvim_create_autocmd({ 'WinScrolled', 'BufWinEnter', 'VimResized' }, {
    group = group,
    callback = function()
      local seen = {}
      for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
        local b = api.nvim_win_get_buf(win)
        if not seen[b] and hints_enabled[b] then
          seen[b] = true
          M.view_changed(b)
        end
      end
    end,
  })
  -- MLIR bytecode: read and written as text through the server.
  api.nvim_create_autocmd('BufReadCmd', {
    group = group, pattern = '*.mlirbc',
    callback = function(ev) M.bytecode_read(ev.buf, vim.fn.fnamemodify(ev.file, ':p')) end,
  })
  api.nvim_create_autocmd('BufWriteCmd', {
    group = group, pattern = '*.mlirbc',
    callback = function(ev) M.bytecode_write(ev.buf, vim.fn.fnamemodify(ev.file, ':p')) end,
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
