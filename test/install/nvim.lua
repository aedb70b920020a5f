-- Headless Neovim with the *installed* plugin (test/install/lib.sh
-- check_nvim): found in $XDG_DATA_DIRS/nvim/site/pack, set up by init.lua's
-- require('tosa_lsp').setup{}, server `tosa-lsp` from PATH. Prints
-- `nvim-installed: N passed, M failed`; exits 0 only if nothing failed.
local passed, failed = 0, 0
local function log(msg) io.stdout:write(msg .. '\n') end
local function check(cond, msg, got)
  if cond then passed = passed + 1 else
    failed = failed + 1
    log('FAIL: ' .. msg .. (got ~= nil and (': ' .. vim.inspect(got)) or ''))
  end
end
local root = os.getenv('TOSA_INSTALL_ROOT')

local files = vim.api.nvim_get_runtime_file('lua/tosa_lsp/init.lua', true)
check(#files == 1 and files[1]:sub(1, #root + 1) == root .. '/', 'the plugin found is the installed one', files)
check(package.loaded['tosa_lsp'] ~= nil, "init.lua's require('tosa_lsp').setup{} loaded it")
check(vim.fn.exepath('tosa-lsp') == root .. '/bin/tosa-lsp', 'tosa-lsp on PATH is the installed one', vim.fn.exepath('tosa-lsp'))

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOSA_EXAMPLE')))
check(vim.bo.filetype == 'mlir', 'filetype mlir', vim.bo.filetype)
local ok = vim.wait(20000, function()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.severity == vim.diagnostic.severity.ERROR then return true end
  end
  return false
end, 20)
check(ok, 'an error diagnostic arrives', vim.diagnostic.get(0))

local line = vim.fn.search('tosa.add')
local col = vim.fn.getline(line):find('tosa.add') - 1
local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = line - 1, character = col + 2 } }
local res = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 20000)
local text = ''
for _, r in pairs(res or {}) do
  if r.result and r.result.contents then text = text .. (r.result.contents.value or '') end
end
check(text:find('Inferred') ~= nil, 'hover answered', text)

vim.lsp.stop_client(vim.lsp.get_active_clients())
log(string.format('nvim-installed: %d passed, %d failed', passed, failed))
vim.cmd(failed > 0 and 'cquit 1' or 'qall!')
