-- Hover freshness from a real Neovim: `graphctx lsp --no-watch`, so only the
-- server's own check before answering can see an edit made on disk behind
-- the editor's back (no save, no change notification, no watcher).
-- Run headless by tests/it/lsp.rs:
--   nvim --headless -u NONE -i NONE -n -c "luafile tests/nvim/hover_fresh.lua"
-- Inputs (environment): GRAPHCTX_BIN, GRAPHCTX_ROOT, GRAPHCTX_FILE (relative,
-- opened in the editor), GRAPHCTX_LINE and GRAPHCTX_COL (0-based position
-- of a name to hover), GRAPHCTX_EDIT (relative path of another file) and
-- GRAPHCTX_EDIT_APPEND (text appended to it on disk), GRAPHCTX_OUT.
-- Output: a JSON object with both hovers, written to GRAPHCTX_OUT.

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
  local edit = root .. '/' .. assert(os.getenv('GRAPHCTX_EDIT'))
  local append = assert(os.getenv('GRAPHCTX_EDIT_APPEND'))
  local line = tonumber(os.getenv('GRAPHCTX_LINE'))
  local col = tonumber(os.getenv('GRAPHCTX_COL'))

  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'graphctx',
    cmd = { bin, 'lsp', '--no-watch' },
    root_dir = root,
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

  local pos = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = col },
  }
  local function hover()
    local r, e = client.request_sync('textDocument/hover', pos, 120000, bufnr)
    if not r then
      return { failed = e or 'no answer' }
    end
    return { result = r.result, error = r.err }
  end

  results.hover_before = hover()
  table.insert(results.steps, 'hovered')

  -- Behind the editor's back: no buffer, no save, no notification.
  local f = assert(io.open(edit, 'a'))
  f:write(append)
  f:close()
  table.insert(results.steps, 'edited')

  -- At once: no waiting for anything to notice the edit.
  results.hover_after = hover()
  table.insert(results.steps, 'hovered again')

  client.stop()
  vim.wait(20000, function() return results.exit_code ~= nil end, 20)
  table.insert(results.steps, 'stopped')
end)

if not ok then
  results.lua_error = tostring(err)
end
write_results()
vim.cmd('qa!')
