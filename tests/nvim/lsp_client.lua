-- Drives `graphctx lsp` from a real Neovim (0.7+ API: vim.lsp.start_client,
-- client.request_sync). Run headless by tests/it/lsp.rs:
--   nvim --headless -u NONE -i NONE -n -c "luafile tests/nvim/lsp_client.lua"
-- Inputs (environment): GRAPHCTX_BIN, GRAPHCTX_ROOT, GRAPHCTX_FILE (relative),
-- GRAPHCTX_LINE and GRAPHCTX_COL (0-based position of a function name),
-- GRAPHCTX_APPEND (a line appended to the file and saved), GRAPHCTX_OUT.
-- Output: a JSON object with every answer, written to GRAPHCTX_OUT.

local results = { steps = {} }
local out = os.getenv('GRAPHCTX_OUT')

local function write_results()
  local f = assert(io.open(out, 'w'))
  f:write(vim.fn.json_encode(results))
  f:close()
end

local ok, err = pcall(function()
  local bin = assert(os.getenv('GRAPHCTX_BIN'))
  local root = assert(os.getenv('GRAPHCTX_ROOT'))
  local file = root .. '/' .. assert(os.getenv('GRAPHCTX_FILE'))
  local line = tonumber(os.getenv('GRAPHCTX_LINE'))
  local col = tonumber(os.getenv('GRAPHCTX_COL'))

  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local progress = {}
  local client_id = vim.lsp.start_client({
    name = 'graphctx',
    cmd = { bin, 'lsp' },
    root_dir = root,
    handlers = {
      ['$/progress'] = function(_, result)
        if result and result.value then
          table.insert(progress, result.value.kind)
        end
      end,
    },
    on_exit = function(code, signal)
      results.exit_code = code
      results.exit_signal = signal
    end,
  })
  assert(client_id, 'start_client failed')
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  assert(vim.wait(60000, function() return client.initialized end, 20), 'initialize timed out')
  table.insert(results.steps, 'initialized')

  local uri = vim.uri_from_bufnr(bufnr)
  local pos = { textDocument = { uri = uri }, position = { line = line, character = col } }
  local function req(method, params)
    local r, e = client.request_sync(method, params, 120000, bufnr)
    if not r then
      return { failed = e or 'no answer' }
    end
    return { result = r.result, error = r.err }
  end

  results.hover = req('textDocument/hover', pos)
  results.references = req('textDocument/references', vim.tbl_extend('force', pos,
    { context = { includeDeclaration = false } }))
  results.definition = req('textDocument/definition', pos)
  results.document_symbol = req('textDocument/documentSymbol', { textDocument = { uri = uri } })
  results.workspace_symbol = req('workspace/symbol', { query = 'orgn' })
  results.context = req('graphctx/context', vim.tbl_extend('force', pos,
    { hops = 1, budget = 2000, format = 'e' }))
  results.context_by_key = req('graphctx/context', { key = 'no-such-key', format = 'json' })
  results.outside = req('textDocument/hover', {
    textDocument = { uri = vim.uri_from_fname('/etc/hostname') },
    position = { line = 0, character = 0 },
  })
  results.unknown_method = req('graphctx/noSuchMethod', {})
  local prep = req('textDocument/prepareCallHierarchy', pos)
  results.prepare_call_hierarchy = prep
  if prep.result and prep.result[1] then
    results.incoming_calls = req('callHierarchy/incomingCalls', { item = prep.result[1] })
  end
  table.insert(results.steps, 'requests')

  -- Edit and save: the answer must come to reflect the edit.
  local before = results.references.result and #results.references.result or 0
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', os.getenv('GRAPHCTX_APPEND') })
  vim.cmd('silent write')
  local after = before
  vim.wait(60000, function()
    local r = req('textDocument/references', vim.tbl_extend('force', pos,
      { context = { includeDeclaration = false } }))
    after = r.result and #r.result or 0
    return after > before
  end, 50)
  results.references_after_save = after
  table.insert(results.steps, 'saved')

  results.progress = progress
  client.stop()
  vim.wait(20000, function() return results.exit_code ~= nil end, 20)
  table.insert(results.steps, 'stopped')
end)

if not ok then
  results.lua_error = tostring(err)
end
write_results()
vim.cmd('qa!')
