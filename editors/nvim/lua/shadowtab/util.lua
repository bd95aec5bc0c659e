-- Small helpers shared by the shadowtab modules: finding our client, and converting LSP
-- positions (UTF-16 by default) into the byte columns extmarks use.

local M = {}

M.client_name = 'shadowtab'

--- nil or 0 means the current buffer, as in the Neovim API.
---@param bufnr? integer
---@return integer
function M.resolve_bufnr(bufnr)
  if bufnr == nil or bufnr == 0 then
    return vim.api.nvim_get_current_buf()
  end
  return bufnr
end

---@param bufnr? integer
---@return vim.lsp.Client?
function M.client(bufnr)
  local clients = vim.lsp.get_clients({ name = M.client_name, bufnr = bufnr })
  return clients[1]
end

---@param bufnr integer
---@return integer?
function M.buf_version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

--- Byte column of an LSP position, clamped to the buffer like the server clamps it.
---@param bufnr integer
---@param position lsp.Position
---@param encoding string
---@return integer row, integer col
function M.byte_position(bufnr, position, encoding)
  local last_row = vim.api.nvim_buf_line_count(bufnr) - 1
  local row = math.max(0, math.min(position.line, last_row))
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  if position.line > last_row then
    return row, #line
  end
  if encoding == 'utf-8' then
    return row, math.min(position.character, #line)
  end
  return row, vim.str_byteindex(line, encoding, position.character, false)
end

--- A timer for the buffer, stopped and closed when the buffer is wiped out (then
--- `on_wipeout`, if given, runs too).
---@param bufnr integer
---@param group integer the autocmd group of the buffer's other autocmds
---@param on_wipeout? fun()
---@return uv.uv_timer_t
function M.buffer_timer(bufnr, group, on_wipeout)
  local timer = assert(vim.uv.new_timer())
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      timer:stop()
      timer:close()
      if on_wipeout then
        on_wipeout()
      end
    end,
  })
  return timer
end

---@param message string
---@param level? integer
function M.notify(message, level)
  vim.notify('shadowtab: ' .. message, level or vim.log.levels.INFO)
end

return M
