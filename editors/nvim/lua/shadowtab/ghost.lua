-- Ghost text from `textDocument/inlineCompletion` for Neovim versions without
-- `vim.lsp.inline_completion` (before 0.12): the first item is drawn after the cursor as
-- virtual text and inserted on accept; cycle() shows the others. On 0.12+ setup() uses
-- the built-in instead.

local util = require('shadowtab.util')

local M = {}

M.namespace = vim.api.nvim_create_namespace('shadowtab.ghost')
M.method = 'textDocument/inlineCompletion'

local INVOKED = 1
local AUTOMATIC = 2

--- Shown item per buffer: { text = string, srow, scol, erow, ecol (byte positions),
--- items (the answer's items), index (the one shown), encoding, trigger_kind (the answer's) }
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
--- `suffix` (e.g. ' (2/3)') follows it, dimmer.
local function draw(bufnr, item, encoding, suffix)
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
  local chunks = {}
  for i, line in ipairs(lines) do
    chunks[i] = { { line, 'Comment' } }
  end
  if suffix then
    table.insert(chunks[#chunks], { suffix, 'NonText' })
  end
  local virt_lines = {}
  for i = 2, #chunks do
    virt_lines[#virt_lines + 1] = chunks[i]
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.namespace, crow, ccol, {
    virt_text = chunks[1],
    virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
  })
  return { text = text, srow = srow, scol = scol, erow = erow, ecol = math.max(ecol, ccol) }
end

--- Shows item `index` of `items` (wrapping around), `show_index`: with its place, ' (2/3)'.
local function present(bufnr, items, index, encoding, trigger_kind, show_index)
  M.dismiss(bufnr)
  index = (index - 1) % #items + 1
  local suffix = show_index and (' (%d/%d)'):format(index, #items) or nil
  local drawn = draw(bufnr, items[index], encoding, suffix)
  if drawn then
    drawn.items, drawn.index, drawn.encoding, drawn.trigger_kind =
      items, index, encoding, trigger_kind
  end
  shown[bufnr] = drawn
end

--- Asks for inline completions at the cursor; `on_result(err, items, encoding, still)`,
--- `still`: the buffer, its version and the cursor are as they were when it asked.
--- Returns false when it could not ask.
---@return boolean
local function fetch(bufnr, trigger_kind, on_result)
  local client = util.client(bufnr)
  if not client or bufnr ~= vim.api.nvim_get_current_buf() then
    return false -- ghost text goes at the cursor: only for the buffer in the current window
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = trigger_kind }
  local version = util.buf_version(bufnr)
  local cursor = vim.api.nvim_win_get_cursor(0)
  client:request(M.method, params, function(err, result)
    local items = type(result) == 'table' and (result.items or result) or {}
    local still = util.buf_version(bufnr) == version
      and bufnr == vim.api.nvim_get_current_buf()
      and vim.deep_equal(vim.api.nvim_win_get_cursor(0), cursor)
    on_result(err, items, client.offset_encoding, still)
  end, bufnr)
  return true
end

--- Requests inline completions at the cursor and shows the first one.
--- `callback(err, items)` gets the raw items.
function M.request(bufnr, callback, trigger_kind)
  bufnr = util.resolve_bufnr(bufnr)
  trigger_kind = trigger_kind or INVOKED
  fetch(bufnr, trigger_kind, function(err, items, encoding, still)
    M.dismiss(bufnr)
    if not err and items[1] and still then
      present(bufnr, items, 1, encoding, trigger_kind, false)
    end
    if callback then
      callback(err, items)
    end
  end)
end

--- `items` with `item` among them (first when the new answer lacks it), and its index.
local function keeping(items, item)
  for index, other in ipairs(items) do
    if item_text(other) == item_text(item) then
      return items, index
    end
  end
  return vim.list_extend({ item }, items), 1
end

--- Shows the next ghost text choice (`count` 1; -1: the previous one), wrapping around.
--- An answer to typing holds only the fast choices: the first cycle asks again, as the
--- user asking (Invoked), which adds the model's, and moves on from the shown one.
--- `callback(err, items)`, when given, runs once the choice is shown. Returns false when
--- no ghost text is shown (or the server cannot be asked).
---@return boolean
function M.cycle(bufnr, count, callback)
  bufnr = util.resolve_bufnr(bufnr)
  local current = shown[bufnr]
  if not current then
    return false
  end
  if current.trigger_kind == INVOKED then
    present(bufnr, current.items, current.index + count, current.encoding, INVOKED, true)
    if callback then
      callback(nil, current.items)
    end
    return true
  end
  return fetch(bufnr, INVOKED, function(err, items, encoding, still)
    if not err and still and shown[bufnr] == current then -- not dismissed meanwhile
      local list, index = keeping(items, current.items[current.index])
      present(bufnr, list, index + count, encoding, INVOKED, true)
    end
    if callback then
      callback(err, items)
    end
  end)
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
  local group = vim.api.nvim_create_augroup('shadowtab.ghost.' .. bufnr, { clear = true })
  local timer = util.buffer_timer(bufnr, group, function()
    shown[bufnr] = nil
  end)
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
end

return M
