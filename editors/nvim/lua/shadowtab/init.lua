-- shadowtab for Neovim: `require('shadowtab').setup(opts)` starts the `shadowtab lsp`
-- client (one per root) for the configured filetypes, turns on ghost text
-- (vim.lsp.inline_completion on 0.12+, a small fallback before), next-edit suggestions,
-- and keys for the save lock.

local cursor = require('shadowtab.cursor')
local ghost = require('shadowtab.ghost')
local lock = require('shadowtab.lock')
local next_edit = require('shadowtab.next_edit')
local progress = require('shadowtab.progress')
local util = require('shadowtab.util')

local M = {}

M.defaults = {
  cmd = { 'shadowtab', 'lsp' },
  cmd_env = nil, -- extra environment for the server (e.g. SHADOWTAB_* directories)
  filetypes = { 'python', 'lua', 'javascript', 'typescript', 'rust', 'go', 'c', 'cpp', 'java' },
  root_markers = { '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  inline_completion = { enabled = true, debounce_ms = 150 },
  next_edit = { auto = true, debounce_ms = 150 },
  -- tell the server where the cursor rests, so the model's prompt there is warm
  warm_at_cursor = { enabled = true, debounce_ms = 150 },
  notify_lock_changes = true,
  notify_progress = true, -- vim.notify when the model starts and finishes loading
  -- Set a key to false to leave it unmapped.
  keys = {
    accept = '<Tab>', -- next edit if one is shown, else ghost text, else a plain <Tab>
    dismiss = '<C-]>',
    next_suggestion = '<M-]>', -- cycle through the next edits shown, else the ghost text's
    previous_suggestion = '<M-[>',
    next_edit = '<leader>sn',
    lock_toggle = '<leader>sl',
    lock_take = '<leader>sL',
  },
}

---@type table
M.config = vim.deepcopy(M.defaults)

--- For the statusline: the model's loading progress while it loads, and the lock holder.
function M.statusline()
  local loading = progress.statusline()
  local holder = lock.statusline()
  if loading ~= '' and holder ~= '' then
    return loading .. ' ' .. holder
  end
  return loading .. holder
end
M.progress = progress
M.lock = lock
M.next_edit = next_edit
M.ghost = ghost

local function builtin_inline_completion()
  return vim.lsp.inline_completion ~= nil
end

--- Accepts what is on screen: a next edit first, then ghost text. Returns true if it did.
--- Called from an <expr> mapping, so the text change is scheduled (textlock).
---@param bufnr integer
---@return boolean
function M.accept(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  if next_edit.visible(bufnr) then
    vim.schedule(function()
      next_edit.accept(bufnr)
    end)
    return true
  end
  if ghost.visible(bufnr) then
    vim.schedule(function()
      ghost.accept(bufnr)
    end)
    return true
  end
  return builtin_inline_completion() and vim.lsp.inline_completion.get({ bufnr = bufnr }) == true
end

function M.dismiss(bufnr)
  next_edit.dismiss(bufnr)
  ghost.dismiss(bufnr)
end

--- Shows the next choice (`count` 1) or the previous one (-1), wrapping around: of the
--- next edits if one is shown (as accept() prefers it), else of the ghost text.
---@param bufnr? integer
---@param count integer
function M.cycle(bufnr, count)
  bufnr = util.resolve_bufnr(bufnr)
  if next_edit.visible(bufnr) then
    next_edit.cycle(bufnr, count)
  elseif builtin_inline_completion() then
    vim.lsp.inline_completion.select({ bufnr = bufnr, count = count })
  else
    ghost.cycle(bufnr, count)
  end
end

local function map_keys(bufnr)
  local keys = M.config.keys
  local function map(modes, lhs, rhs, desc, expr)
    if lhs then
      vim.keymap.set(modes, lhs, rhs, { buffer = bufnr, desc = 'shadowtab: ' .. desc, expr = expr })
    end
  end
  map({ 'n', 'i' }, keys.accept, function()
    return M.accept(bufnr) and '' or vim.keycode(keys.accept)
  end, 'accept the next edit or ghost text', true)
  -- Insert mode only: in normal mode <C-]> is the tag jump.
  map('i', keys.dismiss, function()
    M.dismiss(bufnr)
  end, 'dismiss the suggestion')
  map({ 'n', 'i' }, keys.next_suggestion, function()
    M.cycle(bufnr, 1)
  end, 'show the next choice (next edit or ghost text)')
  map({ 'n', 'i' }, keys.previous_suggestion, function()
    M.cycle(bufnr, -1)
  end, 'show the previous choice (next edit or ghost text)')
  map('n', keys.next_edit, function()
    next_edit.request(bufnr)
  end, 'suggest a next edit')
  map('n', keys.lock_toggle, lock.toggle, 'toggle the save lock')
  map('n', keys.lock_take, function()
    lock.take()
  end, 'take the save lock back')
end

local function on_attach(_, bufnr)
  local config = M.config
  if config.inline_completion.enabled then
    if builtin_inline_completion() then
      vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
    else
      ghost.auto_trigger(bufnr, config.inline_completion.debounce_ms)
    end
  end
  if config.next_edit.auto then
    next_edit.auto_trigger(bufnr, config.next_edit.debounce_ms)
  end
  if config.warm_at_cursor.enabled then
    cursor.follow(bufnr, config.warm_at_cursor.debounce_ms)
  end
  map_keys(bufnr)
  if not lock.state then
    lock.status()
  end
end

local missing_reported = false

--- Starts (or reuses) the client for the buffer's root and attaches the buffer.
---@param bufnr? integer
---@return integer? client_id
function M.start(bufnr)
  bufnr = util.resolve_bufnr(bufnr)
  local executable = M.config.cmd[1]
  if vim.fn.executable(executable) ~= 1 then
    if not missing_reported then
      missing_reported = true
      util.notify(
        ('`%s` was not found on PATH. Install shadowtab (pip install shadowtab) or pass '):format(
          executable
        ) .. "its full path: require('shadowtab').setup({ cmd = { '/path/to/shadowtab', 'lsp' } })",
        vim.log.levels.ERROR
      )
    end
    return nil
  end
  local root = vim.fs.root(bufnr, M.config.root_markers) or vim.fn.getcwd()
  return vim.lsp.start({
    name = util.client_name,
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = root,
    handlers = { ['shadowtab/lockChanged'] = lock.on_lock_changed },
    on_attach = on_attach,
  }, { bufnr = bufnr })
end

local function create_commands()
  local command = vim.api.nvim_create_user_command
  command('ShadowtabLockToggle', function()
    lock.toggle()
  end, { desc = 'shadowtab: toggle the save lock' })
  command('ShadowtabLockTake', function(args)
    lock.take(args.args ~= '' and args.args or nil)
  end, {
    nargs = '?',
    complete = function()
      return { 'commit', 'discard', 'keep' }
    end,
    desc = 'shadowtab: take the save lock back (commit|discard|keep)',
  })
  command('ShadowtabPending', function()
    lock.review()
  end, { desc = 'shadowtab: the pending files: commit or discard one' })
  command('ShadowtabLockRelease', function()
    lock.release()
  end, { desc = 'shadowtab: give the save lock to the model' })
  command('ShadowtabLockStatus', function()
    lock.status(function(err)
      if not err and lock.state then
        util.notify('save lock held by ' .. lock.state.holder)
      end
    end)
  end, { desc = 'shadowtab: show who holds the save lock' })
  command('ShadowtabNextEdit', function()
    next_edit.request()
  end, { desc = 'shadowtab: suggest a next edit at the cursor' })
  command('ShadowtabDismiss', function()
    M.dismiss()
  end, { desc = 'shadowtab: dismiss the shown suggestion' })
  command('ShadowtabNextSuggestion', function()
    M.cycle(nil, 1)
  end, { desc = 'shadowtab: show the next choice (next edit or ghost text)' })
  command('ShadowtabPreviousSuggestion', function()
    M.cycle(nil, -1)
  end, { desc = 'shadowtab: show the previous choice (next edit or ghost text)' })
end

---@param opts? table overrides of M.defaults
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  lock.notify_changes = M.config.notify_lock_changes
  progress.notify = M.config.notify_progress
  local group = vim.api.nvim_create_augroup('shadowtab', { clear = true })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = progress.on_progress })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.start(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if
      vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype)
    then
      M.start(bufnr)
    end
  end
  create_commands()
end

return M
