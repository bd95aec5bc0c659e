-- The server's work-done progress ($/progress: "shadowtab: loading model", with a
-- percentage) shown in Neovim: a notification when it begins and ends, and the percentage
-- in `require('shadowtab').statusline()` meanwhile.

local util = require('shadowtab.util')

local M = {}

---@type { title: string, percentage: integer? }?
M.state = nil
M.notify = true

--- LspProgress autocmd callback (Neovim 0.10+).
function M.on_progress(args)
  local data = args.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  local value = data.params and data.params.value
  if not client or client.name ~= util.client_name or type(value) ~= 'table' then
    return
  end
  if value.kind == 'begin' then
    M.state = { title = value.title or 'shadowtab', percentage = value.percentage }
    if M.notify then
      util.notify(((value.title or 'working'):gsub('^shadowtab: ', '')))
    end
  elseif value.kind == 'report' and M.state then
    M.state.percentage = value.percentage or M.state.percentage
  elseif value.kind == 'end' then
    M.state = nil
    if M.notify and value.message then
      util.notify(value.message)
    end
  end
  vim.cmd.redrawstatus()
end

--- "shadowtab: loading model 40%" while the model loads, else ''.
function M.statusline()
  if not M.state then
    return ''
  end
  local percent = M.state.percentage and (' %d%%'):format(M.state.percentage) or ''
  return M.state.title .. percent
end

return M
