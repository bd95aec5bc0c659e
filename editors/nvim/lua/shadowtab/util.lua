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

---@param message string
---@param level? integer
function M.notify(message, level)
  vim.notify('shadowtab: ' .. message, level or vim.log.levels.INFO)
end

return M
