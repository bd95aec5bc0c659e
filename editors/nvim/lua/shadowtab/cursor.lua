-- Tells the server where the cursor comes to rest when it moves without an edit
-- (shadowtab/cursorMoved): the server prefills the model's prompt there, so the first
-- keystrokes at a new place find it warm instead of waiting for it.

local util = require('shadowtab.util')

local M = {}

M.method = 'shadowtab/cursorMoved'

--- Sends the cursor's position once it rests `debounce_ms` after a move in normal mode
--- or on entering insert mode (typing moves it too, but the server sees those edits).
---@param bufnr integer
---@param debounce_ms integer
function M.follow(bufnr, debounce_ms)
  local group = vim.api.nvim_create_augroup('shadowtab.cursor.' .. bufnr, { clear = true })
  local timer = util.buffer_timer(bufnr, group)
  local function send()
    if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_get_current_buf() ~= bufnr then
      return
    end
    local client = util.client(bufnr)
    if client then
      client:notify(M.method, vim.lsp.util.make_position_params(0, client.offset_encoding))
    end
  end
  vim.api.nvim_create_autocmd({ 'CursorMoved', 'InsertEnter' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      timer:stop()
      timer:start(debounce_ms, 0, vim.schedule_wrap(send))
    end,
  })
end

return M
