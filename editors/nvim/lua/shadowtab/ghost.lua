-- Ghost text from `textDocument/inlineCompletion` for Neovim versions without
-- `vim.lsp.inline_completion` (before 0.12): the first item is drawn after the cursor as
-- virtual text and inserted on accept. On 0.12+ setup() uses the built-in instead.

local util = require('shadowtab.util')

local M = {}

M.namespace = vim.api.nvim_create_namespace('shadowtab.ghost')
M.method = 'textDocument/inlineCompletion'

local INVOKED = 1
local AUTOMATIC = 2

--- Shown item per buffer: { text = string, srow, scol, erow, ecol (byte positions) }
---@type table<integer, table>
local shown = {}

function M.visible(bufnr)
  return shown[util.resolve_bufnr(bufnr)] ~= nil
end

function M.dismiss(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
  end
end

local function item_text(item)
  local text = item.insertText
  if type(text) == 'table' then
    text = text.value -- a StringValue (snippet): shown and inserted as plain text
  end
  return type(text) == 'string' and text or nil
end

--- Draws `text` at the cursor; the part already typed inside the item's range is skipped.
local function draw(bufnr, item, encoding)
  local text = item_text(item)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local crow, ccol = cursor[1] - 1, cursor[2]
  local srow, scol, erow, ecol = crow, ccol, crow, ccol
  if item.range then
    srow, scol = util.byte_position(bufnr, item.range.start, encoding)
    erow, ecol = util.byte_position(bufnr, item.range['end'], encoding)
  end
  if not text or srow ~= crow or scol > ccol then
    return nil
  end
  local typed = vim.api.nvim_buf_get_text(bufnr, srow, scol, crow, ccol, {})[1] or ''
  if text:sub(1, #typed) ~= typed then
    return nil
  end
  local lines = vim.split(text:sub(#typed + 1), '\n', { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], 'Comment' } }
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.namespace, crow, ccol, {
    virt_text = { { lines[1], 'Comment' } },
    virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
  })
  return { text = text, srow = srow, scol = scol, erow = erow, ecol = math.max(ecol, ccol) }
end

--- Requests inline completions at the cursor and shows the first one.
--- `callback(err, items)` gets the raw items.
function M.request(bufnr, callback, trigger_kind)
  bufnr = util.resolve_bufnr(bufnr)
  local client = util.client(bufnr)
  if not client or bufnr ~= vim.api.nvim_get_current_buf() then
    return -- ghost text goes at the cursor: only for the buffer in the current window
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = trigger_kind or INVOKED }
  local version = util.buf_version(bufnr)
  local cursor = vim.api.nvim_win_get_cursor(0)
  client:request(M.method, params, function(err, result)
    local items = type(result) == 'table' and (result.items or result) or {}
    M.dismiss(bufnr)
    local still = util.buf_version(bufnr) == version
      and bufnr == vim.api.nvim_get_current_buf()
      and vim.deep_equal(vim.api.nvim_win_get_cursor(0), cursor)
    if not err and items[1] and still then
      shown[bufnr] = draw(bufnr, items[1], client.offset_encoding)
    end
    if callback then
      callback(err, items)
    end
  end, bufnr)
end

--- Inserts the shown item and puts the cursor after it.
---@return boolean accepted
function M.accept(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  local item = shown[bufnr]
  M.dismiss(bufnr)
  if not item then
    return false
  end
  local lines = vim.split(item.text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(bufnr, item.srow, item.scol, item.erow, item.ecol, lines)
  local last_col = (#lines == 1 and item.scol or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { item.srow + #lines, last_col })
  return true
end

--- Asks for ghost text after each pause in insert-mode typing; hides it when the cursor
--- moves or insert mode ends.
function M.auto_trigger(bufnr, debounce_ms)
  local timer = assert(vim.uv.new_timer())
  local group = vim.api.nvim_create_augroup('shadowtab.ghost.' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd('TextChangedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.dismiss(bufnr)
      timer:stop()
      timer:start(
        debounce_ms,
        0,
        vim.schedule_wrap(function()
          if vim.api.nvim_buf_is_valid(bufnr) and vim.fn.mode() == 'i' then
            M.request(bufnr, nil, AUTOMATIC)
          end
        end)
      )
    end,
  })
  vim.api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.dismiss(bufnr) -- drawn for the old cursor position
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      timer:stop()
      M.dismiss(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      timer:stop()
      timer:close()
      shown[bufnr] = nil
    end,
  })
end

return M
