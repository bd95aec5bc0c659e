-- The save lock as the editor sees it: who holds it (from `shadowtab/lockChanged`
-- notifications and command results), and the commands that move it.

local util = require('shadowtab.util')

local M = {}

--- Last known state: { holder = 'user'|'model', root = string?, pending = boolean? }
---@type table?
M.state = nil

--- Whether a lock change is announced with vim.notify (set by setup()).
M.notify_changes = true

local function pending_flag(value)
  local pending = value.pending
  if pending == nil then
    pending = value.has_pending
  end
  if type(pending) == 'number' then
    return pending > 0
  elseif type(pending) == 'table' then
    return #pending > 0
  end
  return pending
end

--- Reads a lock state out of a notification or command result; nil if it has none.
---@param value any
---@return table?
function M.parse(value)
  if type(value) ~= 'table' then
    return nil
  end
  if vim.islist(value) then
    return M.parse(value[1])
  end
  for _, key in ipairs({ 'lock', 'state', 'status' }) do
    if type(value[key]) == 'table' then
      local nested = M.parse(value[key])
      if nested then
        nested.root = nested.root or value.root
        return nested
      end
    end
  end
  if value.workspaces then
    return M.parse(value.workspaces)
  end
  if value.holder ~= 'user' and value.holder ~= 'model' then
    return nil
  end
  return { holder = value.holder, root = value.root, pending = pending_flag(value) }
end

---@param state table
---@param announce boolean
local function update(state, announce)
  local changed = not M.state or M.state.holder ~= state.holder
  M.state = state
  if announce and changed and M.notify_changes then
    util.notify(
      ('save lock held by %s%s'):format(
        state.holder,
        state.root and (' (' .. state.root .. ')') or ''
      )
    )
  end
  vim.api.nvim_exec_autocmds(
    'User',
    { pattern = 'ShadowtabLockChanged', data = state, modeline = false }
  )
  vim.cmd.redrawstatus({ bang = true })
end

--- Handler of the `shadowtab/lockChanged` notification.
function M.on_lock_changed(_, params, _)
  local state = M.parse(params)
  if state then
    update(state, true)
  end
end

--- Runs one `shadowtab.lock.*` command on the server; `callback(err, result)` is optional.
---@param command string
---@param arguments table
---@param callback? fun(err: lsp.ResponseError?, result: any)
function M.execute(command, arguments, callback)
  -- The current buffer's client (its root's lock), else any shadowtab client.
  local client = util.client(vim.api.nvim_get_current_buf()) or util.client()
  if not client then
    util.notify('no shadowtab client is running', vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = arguments }
  client:request('workspace/executeCommand', params, function(err, result)
    if err then
      util.notify(('%s failed: %s'):format(command, err.message), vim.log.levels.ERROR)
    else
      local state = M.parse(result)
      if state then
        update(state, false)
      end
    end
    if callback then
      callback(err, result)
    end
  end)
end

function M.status(callback)
  M.execute('shadowtab.lock.status', {}, callback)
end

function M.toggle(callback)
  M.execute('shadowtab.lock.toggle', {}, callback)
end

function M.release(callback)
  M.execute('shadowtab.lock.release', {}, callback)
end

--- Takes the lock back for the user; without a mode, asks commit/discard/keep.
---@param mode? 'commit'|'discard'|'keep'
function M.take(mode, callback)
  if mode then
    M.execute('shadowtab.lock.take', { { mode = mode } }, callback)
    return
  end
  vim.ui.select({ 'commit', 'discard', 'keep' }, {
    prompt = "shadowtab: take the lock back; the model's shadow edits:",
  }, function(choice)
    if choice then
      M.execute('shadowtab.lock.take', { { mode = choice } }, callback)
    end
  end)
end

--- The pending files of the shadow (URIs): edits, deletes and renames not on disk yet.
---@param callback fun(err: lsp.ResponseError?, files: string[])
function M.pending(callback)
  M.execute('shadowtab.shadow.pending', {}, function(err, result)
    callback(err, (not err and type(result) == 'table' and result.files) or {})
  end)
end

--- Writes some pending files to disk (a rename's two files together); the lock stays.
---@param files string[] URIs
function M.commit_files(files, callback)
  M.execute('shadowtab.shadow.commit', { { files = files } }, callback)
end

--- Drops the model's edits, deletes and renames of some pending files; the lock stays.
---@param files string[] URIs
function M.discard_files(files, callback)
  M.execute('shadowtab.shadow.discard', { { files = files } }, callback)
end

--- The pending list: pick a file, then commit or discard it.
function M.review()
  M.pending(function(err, files)
    if err then
      return
    end
    if #files == 0 then
      util.notify('nothing is pending in the shadow')
      return
    end
    vim.ui.select(files, {
      prompt = 'shadowtab: pending files (edited, deleted or renamed in the shadow)',
      format_item = vim.uri_to_fname,
    }, function(uri)
      if not uri then
        return
      end
      vim.ui.select({ 'commit', 'discard' }, {
        prompt = 'shadowtab: ' .. vim.uri_to_fname(uri),
      }, function(choice)
        if choice then
          M[choice .. '_files']({ uri })
        end
      end)
    end)
  end)
end

--- For the statusline: `%{v:lua.require'shadowtab'.statusline()}`.
---@return string
function M.statusline()
  if not M.state then
    return ''
  end
  local pending = M.state.pending and ' +' or ''
  return ('shadowtab:%s%s'):format(M.state.holder, pending)
end

return M
