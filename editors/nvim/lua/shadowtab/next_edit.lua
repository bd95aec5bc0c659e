-- Next-edit suggestions (`shadowtab/nextEdit`, the shape of Copilot's
-- `textDocument/copilotInlineEdit`): request them for the cursor, show the first as
-- extmarks (old text highlighted as removed, new text as virtual text), cycle() through
-- the others, apply the one shown on accept.

local util = require('shadowtab.util')

local M = {}

M.namespace = vim.api.nvim_create_namespace('shadowtab.next_edit')
M.method = 'shadowtab/nextEdit'

--- Shown suggestion per buffer: { edit = table, client_id = integer, version = integer,
--- edits = the answer's edits for this buffer, index = the one shown }
---@type table<integer, table>
local shown = {}
--- Request in flight per buffer: { client = vim.lsp.Client, id = integer }
---@type table<integer, table>
local in_flight = {}
--- Buffers whose changes trigger requests (auto_trigger)
---@type table<integer, boolean>
local watched = {}

---@param bufnr? integer
---@return boolean
function M.visible(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  return shown[bufnr] ~= nil
end

---@param bufnr? integer
---@return table? edit the suggestion on screen, as the server sent it
function M.current(bufnr)
  local entry = shown[util.resolve_bufnr(bufnr)]
  return entry and entry.edit
end

---@param bufnr? integer
function M.dismiss(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
  end
end

---@param bufnr integer
function M.cancel(bufnr)
  local request = in_flight[bufnr]
  in_flight[bufnr] = nil
  if request and not request.client:is_stopped() then
    request.client:cancel_request(request.id)
  end
end

local function virtual_lines(lines)
  local rows = {}
  for i = 2, #lines do
    rows[#rows + 1] = { { lines[i], 'DiffAdd' } }
  end
  return rows
end

--- Draws one edit: the replaced range as DiffDelete, the new text inline after it, and
--- the new text's further lines as virtual lines below; `suffix` (' (2/3)') after it.
---@param bufnr integer
---@param edit table
---@param encoding string
---@param suffix? string
local function draw(bufnr, edit, encoding, suffix)
  local srow, scol = util.byte_position(bufnr, edit.range.start, encoding)
  local erow, ecol = util.byte_position(bufnr, edit.range['end'], encoding)
  if srow ~= erow or scol ~= ecol then
    vim.api.nvim_buf_set_extmark(bufnr, M.namespace, srow, scol, {
      end_row = erow,
      end_col = ecol,
      hl_group = 'DiffDelete',
      strict = false,
    })
  end
  local lines = vim.split(edit.text, '\n', { plain = true })
  local virt_text = lines[1] ~= '' and { { lines[1], 'DiffAdd' } } or {}
  if suffix then
    virt_text[#virt_text + 1] = { suffix, 'NonText' }
  end
  vim.api.nvim_buf_set_extmark(bufnr, M.namespace, erow, ecol, {
    virt_text = #virt_text > 0 and virt_text or nil,
    virt_text_pos = 'inline',
    virt_lines = #lines > 1 and virtual_lines(lines) or nil,
    strict = false,
  })
end

--- Shows edit `index` of `edits` (wrapping around), with its place when there are several.
local function present(bufnr, client, edits, index, version)
  M.dismiss(bufnr)
  index = (index - 1) % #edits + 1
  local edit = edits[index]
  local place = #edits > 1 and (' (%d/%d)'):format(index, #edits) or nil
  draw(bufnr, edit, client.offset_encoding, place)
  shown[bufnr] =
    { edit = edit, client_id = client.id, version = version, edits = edits, index = index }
  if edit.command then -- Copilot's acceptance telemetry, which shadowtab counts too
    client:notify('textDocument/didShowInlineEdit', { item = { command = edit.command } })
  end
end

--- Shows the first edit of a `shadowtab/nextEdit` (or `copilotInlineEdit`) result that
--- targets this buffer at its current version, the others kept for cycle(); returns that
--- edit, or nil.
---@param bufnr integer
---@param client vim.lsp.Client the client that produced the result
---@param result any
---@return table? edit
function M.show(bufnr, client, result)
  local edits = type(result) == 'table' and result.edits or nil
  local uri = vim.uri_from_bufnr(bufnr)
  local version = util.buf_version(bufnr)
  local here = {}
  for _, edit in ipairs(type(edits) == 'table' and edits or {}) do
    local doc = type(edit) == 'table' and edit.textDocument or nil
    local valid = type(doc) == 'table'
      and type(edit.text) == 'string'
      and type(edit.range) == 'table'
    if valid and doc.uri == uri and (doc.version == nil or doc.version == version) then
      here[#here + 1] = edit
    end
  end
  if #here == 0 then
    return nil
  end
  present(bufnr, client, here, 1, version)
  return here[1]
end

--- Shows the next suggested edit (`count` 1; -1: the previous one), wrapping around, if
--- the buffer is still the version they were computed for.
---@param bufnr? integer
---@param count integer
---@return boolean shown
function M.cycle(bufnr, count)
  bufnr = util.resolve_bufnr(bufnr)
  local entry = shown[bufnr]
  local client = entry and vim.lsp.get_client_by_id(entry.client_id)
  if not client or util.buf_version(bufnr) ~= entry.version then
    return false
  end
  present(bufnr, client, entry.edits, entry.index + count, entry.version)
  return true
end

--- Asks the server for a next edit at the cursor and shows it.
--- `callback(err, edit)` gets the edit shown, or nil when there is none.
---@param bufnr? integer
---@param callback? fun(err: lsp.ResponseError?, edit: table?)
function M.request(bufnr, callback)
  bufnr = util.resolve_bufnr(bufnr)
  local client = util.client(bufnr)
  if not client then
    return
  end
  M.cancel(bufnr)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local version = util.buf_version(bufnr)
  params.textDocument.version = version
  local ok, id = client:request(M.method, params, function(err, result)
    in_flight[bufnr] = nil
    local edit = nil
    if not err and util.buf_version(bufnr) == version then
      edit = M.show(bufnr, client, result)
    end
    if callback then
      callback(err, edit)
    end
  end, bufnr)
  if ok and id then
    in_flight[bufnr] = { client = client, id = id }
  end
end

--- Applies the shown edit if the buffer is still the version it was computed for.
---@param bufnr? integer
---@return boolean applied
function M.accept(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  local entry = shown[bufnr]
  M.dismiss(bufnr)
  local client = entry and vim.lsp.get_client_by_id(entry.client_id)
  if not client or util.buf_version(bufnr) ~= entry.version then
    return false
  end
  local edit = entry.edit
  vim.lsp.util.apply_text_edits(
    { { range = edit.range, newText = edit.text } },
    bufnr,
    client.offset_encoding
  )
  if type(edit.command) == 'table' then
    client:exec_cmd(edit.command, { bufnr = bufnr })
  end
  return true
end

--- Requests a next edit after each pause in editing (`debounce_ms`), dropping the shown
--- one and cancelling the stale request on every change. Changes are observed with
--- nvim_buf_attach, so edits made by commands, plugins and the API count, not only typing.
---@param bufnr integer
---@param debounce_ms integer
function M.auto_trigger(bufnr, debounce_ms)
  if watched[bufnr] then
    return -- the client re-attached: the buffer is already watched
  end
  watched[bufnr] = true
  local timer = assert(vim.uv.new_timer())
  local detached = false
  local function on_pause()
    if vim.api.nvim_buf_is_valid(bufnr) and bufnr == vim.api.nvim_get_current_buf() then
      M.request(bufnr)
    end
  end
  local on_change = function()
    M.dismiss(bufnr)
    M.cancel(bufnr)
    timer:stop()
    timer:start(debounce_ms, 0, vim.schedule_wrap(on_pause))
  end
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if not detached then
        vim.schedule(on_change) -- on_lines runs under textlock: act outside it
      end
      return detached
    end,
    on_detach = function()
      detached = true
      timer:stop()
      if not timer:is_closing() then
        timer:close()
      end
      shown[bufnr], in_flight[bufnr], watched[bufnr] = nil, nil, nil
    end,
  })
end

return M
