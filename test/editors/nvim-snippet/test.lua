-- Runs the README's init.lua snippet (TOSA_SNIPPET) in headless Neovim.
-- TOSA_MODE=builtin: no nvim-lspconfig, the built-in client against
-- tosa-lsp. TOSA_MODE=lspconfig: a stand-in for nvim-lspconfig records what
-- the snippet registers (no server is started).
local passed, failed = 0, 0
local mode = os.getenv('TOSA_MODE')
local function log(msg) io.stdout:write(msg .. '\n') end
local function check(cond, msg, got)
  if cond then passed = passed + 1 else
    failed = failed + 1
    log('FAIL (' .. mode .. '): ' .. msg .. (got ~= nil and (': ' .. vim.inspect(got)) or ''))
  end
end
local function finish()
  for _, c in pairs(vim.lsp.get_active_clients()) do c.stop() end
  log(string.format('nvim-snippet %s: %d passed, %d failed', mode, passed, failed))
  vim.cmd(failed > 0 and 'cquit 1' or 'qall!')
end

vim.cmd('filetype on')
local setup_opts, registered
if mode == 'lspconfig' then
  -- nvim-lspconfig's shape: configs.NAME = {default_config = ...} makes
  -- require('lspconfig').NAME.setup(opts) available.
  local lspconfig = { util = { root_pattern = function(...)
    local pats = { ... }
    return function() return pats end
  end } }
  local configs = setmetatable({}, { __newindex = function(t, name, cfg)
    rawset(t, name, cfg)
    registered = cfg
    lspconfig[name] = { setup = function(opts) setup_opts = opts end }
  end })
  package.preload['lspconfig'] = function() return lspconfig end
  package.preload['lspconfig.configs'] = function() return configs end
end

local ok, err = pcall(dofile, os.getenv('TOSA_SNIPPET'))
check(ok, 'the snippet runs', err)

if mode == 'lspconfig' then
  local dc = registered and registered.default_config or {}
  check(vim.deep_equal(dc.cmd, { 'tosa-lsp' }), 'registers cmd tosa-lsp', dc.cmd)
  check(vim.deep_equal(dc.filetypes, { 'mlir' }), 'for filetype mlir', dc.filetypes)
  check(type(dc.root_dir) == 'function', 'with a root_dir function')
  check(setup_opts and setup_opts.init_options and setup_opts.init_options.hints ~= nil,
        'sets it up with init_options', setup_opts)
  finish()
  return
end

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOSA_EXAMPLE')))
check(vim.bo.filetype == 'mlir', 'filetype mlir', vim.bo.filetype)
check(vim.wait(15000, function() return #vim.lsp.buf_get_clients(0) == 1 end, 20), 'a client attached')
local function errors()
  return vim.tbl_filter(function(d) return d.severity == vim.diagnostic.severity.ERROR end,
                        vim.diagnostic.get(0))
end
check(vim.wait(15000, function() return #errors() == 1 end, 20), 'one error diagnostic', vim.diagnostic.get(0))

local function at(pat, dc)
  local line = vim.fn.search(pat, 'w')
  local col = vim.fn.getline(line):find(pat, 1, true) - 1
  return { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = line - 1, character = col + (dc or 0) } }
end
local res = vim.lsp.buf_request_sync(0, 'textDocument/hover', at('tosa.add', 2), 15000) or {}
local text = ''
for _, r in pairs(res) do
  if r.result and r.result.contents then text = text .. (r.result.contents.value or '') end
end
check(text:find('Inferred') ~= nil and text:find('2x3') ~= nil, 'hover shows the inferred 2x3', text)

-- The quick fix of the tosa.sub error, applied by the built-in client.
local p = at('tosa.sub')
local line_text = vim.fn.getline(p.position.line + 1)
local params = { textDocument = p.textDocument,
  range = { start = { line = p.position.line, character = 0 }, ['end'] = { line = p.position.line, character = #line_text } },
  context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, p.position.line) } }
local actions = {}
for _, r in pairs(vim.lsp.buf_request_sync(0, 'textDocument/codeAction', params, 15000) or {}) do
  vim.list_extend(actions, r.result or {})
end
local fix
for _, a in ipairs(actions) do
  if a.edit and (a.title or ''):find('1x3', 1, true) then fix = a break end
end
check(fix ~= nil, 'a quick fix to 1x3', vim.tbl_map(function(a) return a.title end, actions))
if fix then
  vim.lsp.util.apply_workspace_edit(fix.edit, 'utf-16')
  check(vim.fn.search('-> tensor<1x3xf32>', 'w') > 0, 'the fix is applied')
  check(vim.wait(15000, function() return #errors() == 0 end, 20), 'no error left', vim.diagnostic.get(0))
end
finish()
