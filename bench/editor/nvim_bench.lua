-- One measured Neovim (0.7.2+) session for bench/editor/run.py.
--
--   BENCH_MODE=plugin|builtin BENCH_CMD='["tosa-lsp","serve"]' BENCH_FILE=F.mlir \
--   BENCH_EDIT='{"line":..,"col":..,"text":"1","first":..,"last":..}' BENCH_OUT=out.json \
--     nvim --headless -n -i NONE -u NONE -c 'luafile nvim_bench.lua'
--
-- plugin:  the project's plugin (editors/vim/lua/tosa_lsp) at its defaults.
-- builtin: Neovim's own client (vim.lsp.start_client + buf_attach_client),
--          as a user would configure it for mlir-lsp-server-22.
-- Measures (wall clock, seconds; run.py turns them into milliseconds):
--   open:  `:edit F` -> the first DiagnosticChanged of the buffer (the
--          built-in handler's vim.diagnostic.set, after it drew them);
--   edit:  one typed character (nvim_buf_set_text; the client's own
--          didChange) -> a DiagnosticChanged with an Error in the edited
--          function;
--   stall: lateness of a 20 ms repeating libuv timer (gap - 20 ms), the
--          longest after `:edit` returned until `settle` after the first
--          publish, and from the edit until `settle` after its error.
-- Writes one JSON object to BENCH_OUT and quits.
local uv = vim.loop
local root = os.getenv('BENCH_ROOT')
local mode = os.getenv('BENCH_MODE') or 'plugin'
local cmd = vim.fn.json_decode(os.getenv('BENCH_CMD'))
local file = os.getenv('BENCH_FILE')
local edit = vim.fn.json_decode(os.getenv('BENCH_EDIT'))
local out_path = os.getenv('BENCH_OUT')
local settle_ms = tonumber(os.getenv('BENCH_SETTLE_MS') or '1500')
local timeout_ms = tonumber(os.getenv('BENCH_TIMEOUT_MS') or '120000')

-- Times: integer microseconds since `base` (whole wall-clock seconds at
-- start): json_encode would round a float of 1.8e9 seconds.
local base = uv.gettimeofday()
local function now()
  local s, us = uv.gettimeofday()
  return (s - base) * 1000000 + us
end

local result = { mode = mode, events = {}, base = base }
local function finish(err)
  if err then result.error = err end
  local f = io.open(out_path, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  -- Stop the clients politely (shutdown/exit) so the tap logs the
  -- server's CPU time, then quit.
  for _, c in pairs(vim.lsp.get_active_clients()) do c.stop() end
  local waited = 0
  local function poll()
    if #vim.lsp.get_active_clients() == 0 or waited > 3000 then
      vim.cmd('qall!')
      return
    end
    waited = waited + 20
    vim.defer_fn(poll, 20)
  end
  poll()
end

vim.defer_fn(function() finish('timeout after ' .. timeout_ms .. ' ms') end, timeout_ms)
vim.notify = function(msg) table.insert(result.events, { t = now(), notify = tostring(msg) }) end

vim.o.swapfile = false
vim.o.shadafile = 'NONE'
vim.o.lines, vim.o.columns = 40, 120
vim.opt.runtimepath:prepend(root .. '/editors/vim')
vim.cmd('filetype plugin on')
vim.cmd('syntax on')

-- Whether the server exited (a crash must fail the run, not time out).
-- The open's steps on the client side, for both clients alike (the times
-- of the first of each): t_start_client (the client is started),
-- t_on_init (initialize answered, before the plugin's on_init),
-- t_did_open / t_did_open_sent (the didOpen's encoding and write: the
-- rpc's notify, which every client's notify ends in), t_publish_handler
-- (the publish handed to the client's handler).
local server_exited = false
local start_client = vim.lsp.start_client
local function first(key)
  if not result[key] then result[key] = now() end
end
vim.lsp.start_client = function(config)
  first('t_start_client')
  local inner = config.on_exit
  config.on_exit = function(...)
    server_exited = true
    if inner then return inner(...) end
  end
  local on_init = config.on_init
  config.on_init = function(client, ...)
    first('t_on_init')
    local rpc = client.rpc
    local notify = rpc.notify
    rpc.notify = function(method, ...)
      if method ~= 'textDocument/didOpen' then return notify(method, ...) end
      first('t_did_open')
      local r = notify(method, ...)
      first('t_did_open_sent')
      return r
    end
    if on_init then return on_init(client, ...) end
  end
  local m = 'textDocument/publishDiagnostics'
  local handlers = vim.tbl_extend('force', {}, config.handlers or {})
  local handler = handlers[m]
  handlers[m] = function(...)
    first('t_publish_handler')
    return (handler or vim.lsp.handlers[m])(...)
  end
  config.handlers = handlers
  return start_client(config)
end

if mode == 'plugin' then
  local settings = os.getenv('BENCH_SETTINGS') or ''
  -- A variant's plugin options (run.py --variant), on top of the defaults.
  local opts = vim.fn.json_decode(os.getenv('BENCH_PLUGIN_OPTS') or '{}')
  if type(opts) ~= 'table' or vim.tbl_isempty(opts) then opts = {} end
  local plugin = require('tosa_lsp')
  plugin.setup(vim.tbl_extend('force', opts,
    { cmd = cmd, settings = settings ~= '' and vim.fn.json_decode(settings) or nil }))
  -- t_hints_shown: the first inlay hints placed (the render returned).
  local render = plugin.render_inlay_hints
  plugin.render_inlay_hints = function(b, hints, ...)
    local r = render(b, hints, ...)
    if hints and #hints > 0 then first('t_hints_shown') end
    return r
  end
else
  local client_id
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'mlir',
    callback = function(ev)
      local settings = os.getenv('BENCH_SETTINGS') or ''
      client_id = client_id or vim.lsp.start_client({
        name = 'mlir-lsp', cmd = cmd, root_dir = vim.fn.fnamemodify(file, ':p:h'),
        init_options = settings ~= '' and vim.fn.json_decode(settings) or nil,
      })
      vim.lsp.buf_attach_client(ev.buf, client_id)
    end,
  })
end

-- The UI timer: every lateness > 2 ms with its time (the windows are cut
-- afterwards). `overhead` is this script's own work inside a window (the
-- diagnostics scan below), taken out of the gap it falls in.
-- With each lateness, how much of it the main thread was running (its
-- CPU time in the gap, from /proc/self/schedstat, ns): on a loaded
-- machine a late timer may only have waited for a core.
local function schedstat()
  local f = io.open('/proc/self/schedstat')
  if not f then return 0 end
  local run = f:read('*n')
  f:close()
  return run or 0
end
local late = {}
local overhead = 0
local last = uv.hrtime()
local last_run = schedstat()
local ticker = uv.new_timer()
ticker:start(20, 20, function()
  local h = uv.hrtime()
  local run = schedstat()
  local lateness = (h - last) / 1e6 - 20 - overhead * 1000
  local busy = math.min(lateness, (run - last_run) / 1e6 - overhead * 1000)
  overhead = 0
  last, last_run = h, run
  if lateness > 2 then table.insert(late, { now(), lateness, busy }) end
end)

local bufnr
local changes = {} -- { t, n, errors_in_function }
local want_error = false
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  callback = function(ev)
    local t = now()
    -- (a server that exits has its diagnostics reset: not a publish)
    if not bufnr or ev.buf ~= bufnr or server_exited then return end
    local h0 = uv.hrtime()
    local all = vim.diagnostic.get(bufnr)
    local errs = 0
    if want_error then
      for _, d in ipairs(all) do
        if d.severity == vim.diagnostic.severity.ERROR and d.lnum >= edit.first and d.lnum <= edit.last then
          errs = errs + 1
        end
      end
    end
    table.insert(changes, { t = t, n = #all, errors = errs })
    overhead = overhead + (uv.hrtime() - h0) / 1e9
  end,
})

-- the longest lateness in [t0, t1] (k = 2), or the longest part of one
-- that the editor was running (k = 3)
local function max_late(t0, t1, k)
  local m = 0
  for _, e in ipairs(late) do
    if e[1] >= t0 and e[1] <= t1 and e[k or 2] > m then m = e[k or 2] end
  end
  return m
end

-- Straight-line script on a coroutine; waits return to the event loop.
local co
local function sleep(ms)
  vim.defer_fn(function() assert(coroutine.resume(co)) end, ms)
  coroutine.yield()
end
-- false on timeout, nil when the server is gone (no LSP client left)
local function wait_for(pred, ms)
  local deadline = now() + ms * 1000
  while not pred() do
    if now() > deadline then return false end
    if server_exited then return nil end
    sleep(2)
  end
  return true
end

co = coroutine.create(function()
  sleep(200) -- the timer runs before the file is opened
  local run0 = schedstat()
  result.t_edit_cmd = now()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  result.t_edit_cmd_done = now()
  bufnr = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[bufnr].filetype
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local ok = wait_for(function() return #changes > 0 end, timeout_ms)
  if not ok then
    return finish(ok == nil and 'the server exited before its first publish'
      or 'no DiagnosticChanged after the open')
  end
  result.t_open_shown = changes[1].t
  result.open_diagnostics = changes[1].n
  sleep(settle_ms)
  result.stall_open_ms = max_late(result.t_edit_cmd_done, now())
  result.stall_open_busy_ms = max_late(result.t_edit_cmd_done, now(), 3)
  result.editor_cpu_open_ms = (schedstat() - run0) / 1e6
  result.open_changes = #changes

  -- The typed character: the view on the edited line, as a user's would be.
  vim.api.nvim_win_set_cursor(0, { edit.line + 1, edit.col })
  vim.cmd('normal! zz')
  sleep(300)
  want_error = true
  local before = #changes
  local run1 = schedstat()
  result.t_type = now()
  vim.api.nvim_buf_set_text(bufnr, edit.line, edit.col, edit.line, edit.col, { edit.text })
  result.t_type_done = now()
  local found = wait_for(function()
    for i = before + 1, #changes do
      if changes[i].errors > 0 then
        result.t_error_shown = changes[i].t
        result.edit_diagnostics = changes[i].n
        return true
      end
    end
    return false
  end, timeout_ms)
  if not found then
    return finish(found == nil and 'the server exited after the edit' or 'the edit\'s error was never shown')
  end
  sleep(settle_ms)
  result.stall_edit_ms = max_late(result.t_type, now())
  result.stall_edit_busy_ms = max_late(result.t_type, now(), 3)
  result.editor_cpu_edit_ms = (schedstat() - run1) / 1e6
  result.changes = changes
  result.lateness = late
  finish()
end)
assert(coroutine.resume(co))
