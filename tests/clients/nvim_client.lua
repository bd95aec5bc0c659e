-- Headless Neovim as a real LSP client of shadowtab, through our editors/nvim module.
-- usage: nvim --headless --clean -l nvim_client.lua '<json config>'
--   config: { rtp, cmd = {...}, file, scenario = 'features' | 'peer' | 'suggestions' | 'choices',
--             signal_dir }
-- Prints one JSON line per check ({check, ok, detail}); exits 0 only if all passed.

local config = vim.json.decode(_G.arg[1])
vim.opt.runtimepath:prepend(config.rtp)

local checks =
  dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'lua_checks.lua'))
local report = checks.report

local function wait(predicate, timeout)
  return vim.wait(timeout or checks.WAIT_MS, predicate, 20)
end

local function finish()
  checks.finish('shadowtab', wait)
end

local shadowtab = require('shadowtab')
local util = require('shadowtab.util')
local lock = require('shadowtab.lock')
local next_edit = require('shadowtab.next_edit')
local ghost = require('shadowtab.ghost')

local requested = {} -- methods of the requests the client sent, in order
vim.api.nvim_create_autocmd('LspRequest', {
  callback = function(args)
    if args.data.request.type == 'pending' then
      requested[#requested + 1] = args.data.request.method
    end
  end,
})

local lock_events = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'ShadowtabLockChanged',
  callback = function(args)
    lock_events[#lock_events + 1] = args.data
  end,
})

-- Sync helpers over the module's async API ------------------------------------------

local function call(fn, ...)
  local done, err, result = false, nil, nil
  local args = { ... }
  args[#args + 1] = function(e, r)
    done, err, result = true, e, r
  end
  fn(unpack(args))
  wait(function()
    return done
  end)
  return done, err, result
end

local function diagnostics(buf, predicate)
  local found = nil
  wait(function()
    local list = vim.diagnostic.get(buf)
    if predicate(list) then
      found = list
      return true
    end
    return false
  end)
  return found
end

local function has_code(list, code, pattern)
  for _, d in ipairs(list) do
    if d.code == code and (pattern == nil or d.message:find(pattern)) then
      return d
    end
  end
  return nil
end

-- Steps -------------------------------------------------------------------------------

local function open_and_attach(auto_next_edit)
  shadowtab.setup({
    cmd = config.cmd,
    notify_lock_changes = false,
    next_edit = { auto = auto_next_edit, debounce_ms = 50 },
  })
  vim.cmd.edit(config.file)
  local buf = vim.api.nvim_get_current_buf()
  local attached = wait(function()
    local client = util.client(buf)
    return client ~= nil and client.initialized and vim.lsp.buf_is_attached(buf, client.id)
  end)
  report('setup() starts the client for a python buffer', attached, vim.bo[buf].filetype)
  if not attached then
    finish()
  end
  return buf, util.client(buf)
end

local function check_diagnostics(buf)
  local first = diagnostics(buf, function(list)
    return has_code(list, 'F401') ~= nil
  end)
  local unused = first and has_code(first, 'F401')
  report('ruff F401 on line 1 arrives as diagnostics', unused and unused.lnum == 0, first)

  vim.api.nvim_buf_set_lines(buf, 0, 1, false, {})
  local cleared = diagnostics(buf, function(list)
    return has_code(list, 'F401') == nil
  end)
  report(
    'deleting the import clears it (incremental sync)',
    cleared ~= nil,
    vim.diagnostic.get(buf)
  )

  -- Non-ASCII before the error: the server's UTF-16 columns must land on the right bytes.
  local line = 's = "héllo 😀"; import json'
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { line })
  local again = diagnostics(buf, function(list)
    return has_code(list, 'F401', 'json') ~= nil
  end)
  local json_import = again and has_code(again, 'F401', 'json')
  local expected_col = line:find('json', 1, true) - 1
  report(
    'F401 after an emoji lands on the right column',
    json_import and json_import.col == expected_col,
    {
      expected_col = expected_col,
      diagnostics = again or vim.diagnostic.get(buf),
    }
  )
end

--- Typing (real keys through feedkeys) asks for a next edit by itself after a pause.
local function check_typing(buf)
  local before = #requested
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.api.nvim_feedkeys(vim.keycode('A  # typed'), 'tx', false)
  local asked = wait(function()
    return vim.list_contains(vim.list_slice(requested, before + 1), 'shadowtab/nextEdit')
  end, 5000)
  local line = vim.api.nvim_buf_get_lines(buf, 4, 5, false)[1]
  report('typing asks for a next edit by itself', asked and vim.endswith(line, '# typed'), {
    line = line,
    requested = vim.list_slice(requested, before + 1),
  })
end

local function check_predictions(buf, client)
  vim.api.nvim_win_set_cursor(0, { 4, 4 })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 1 }
  local inline = client:request_sync('textDocument/inlineCompletion', params, 10000, buf)
  local items = inline and inline.result
  items = type(items) == 'table' and (items.items or items) or nil
  report(
    'textDocument/inlineCompletion answers with items',
    inline and not inline.err and vim.islist(items),
    inline
  )

  local done, err = call(next_edit.request, buf)
  report('shadowtab/nextEdit answers', done and err == nil, err)

  params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.textDocument.version = util.buf_version(buf)
  local copilot = client:request_sync('textDocument/copilotInlineEdit', params, 10000, buf)
  local edits = copilot and copilot.result and copilot.result.edits
  report(
    'textDocument/copilotInlineEdit answers {edits}',
    copilot and not copilot.err and vim.islist(edits),
    copilot
  )
end

--- The next-edit display and accept, fed a result of the server's shape.
local function check_next_edit_ui(buf, client)
  local uri = vim.uri_from_bufnr(buf)
  local version = util.buf_version(buf)
  local edit = {
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 1 } },
    text = 'text',
    textDocument = { uri = uri, version = version },
  }
  local stale = vim.deepcopy(edit)
  stale.textDocument.version = version - 1
  report(
    'a next edit for an older version is not shown',
    next_edit.show(buf, client, { edits = { stale } }) == nil,
    nil
  )

  local shown = next_edit.show(buf, client, { edits = { edit } })
  local marks = vim.api.nvim_buf_get_extmarks(buf, next_edit.namespace, 0, -1, { details = true })
  report(
    'a next edit is drawn as extmarks',
    shown ~= nil and #marks >= 1 and next_edit.visible(buf),
    marks
  )

  local accepted = next_edit.accept(buf)
  local first_line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  report(
    'accepting applies the edit',
    accepted and vim.startswith(first_line, 'text = '),
    first_line
  )
  report(
    'accepting clears the marks',
    #vim.api.nvim_buf_get_extmarks(buf, next_edit.namespace, 0, -1, {}) == 0,
    nil
  )

  -- The server saw the accepted edit: the F401 for json is still reported on line 1.
  local after = diagnostics(buf, function(list)
    local d = has_code(list, 'F401', 'json')
    return d ~= nil and d.col == first_line:find('json', 1, true) - 1
  end)
  report('the server follows the accepted edit', after ~= nil, vim.diagnostic.get(buf))
end

local function holder_after(action, holder)
  local before = #lock_events
  local done, err, result = call(unpack(action))
  local event = nil
  wait(function()
    for i = before + 1, #lock_events do
      if lock_events[i].holder == holder then
        event = lock_events[i]
        return true
      end
    end
    return false
  end)
  return done and err == nil, event, result
end

local function check_lock()
  local done, err, result = call(lock.status)
  report(
    'lock.status: the user holds the lock',
    done and err == nil and lock.parse(result).holder == 'user',
    result
  )
  report(
    'statusline shows the holder',
    shadowtab.statusline():find('user') ~= nil,
    shadowtab.statusline()
  )

  local ok, event = holder_after({ lock.release }, 'model')
  report('lock.release: lockChanged(model) arrives', ok and event ~= nil, lock_events)
  report(
    'statusline follows lockChanged',
    shadowtab.statusline():find('model') ~= nil,
    shadowtab.statusline()
  )

  ok, event = holder_after({ lock.take, 'discard' }, 'user')
  report('lock.take discard: lockChanged(user) arrives', ok and event ~= nil, lock_events)

  ok, event = holder_after({ lock.toggle }, 'model')
  report('lock.toggle: lockChanged(model) arrives', ok and event ~= nil, lock_events)

  local before = #lock_events
  vim.cmd('ShadowtabLockTake keep')
  local back = wait(function()
    return #lock_events > before and lock.state.holder == 'user'
  end)
  report(':ShadowtabLockTake keep gives the lock back', back, lock_events)
end

local function touch(name)
  local file = assert(io.open(config.signal_dir .. '/' .. name, 'w'))
  file:write('1')
  file:close()
end

local function signalled(name, timeout)
  return wait(function()
    return vim.uv.fs_stat(config.signal_dir .. '/' .. name) ~= nil
  end, timeout)
end

local function features()
  local buf, client = open_and_attach(true)
  check_diagnostics(buf)
  check_typing(buf)
  check_predictions(buf, client)
  check_next_edit_ui(buf, client)
  check_lock()
end

local function mark_with(buf, namespace, key, value)
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, namespace, 0, -1, { details = true })) do
    local details = mark[4]
    if vim.deep_equal(details[key], value) then
      return mark
    end
  end
  return nil
end

--- With a server whose predictor suggests "hello" -> "goodbye" and ghost text ".title()":
--- the whole path from request to drawing to the keys that accept.
--- The lines the stand-in server appended to the warm log (where it was warmed).
local function warmed_at()
  local file = io.open(config.signal_dir .. '/warms.log', 'r')
  if not file then
    return {}
  end
  local lines = vim.split(file:read('*a'), '\n', { trimempty = true })
  file:close()
  return lines
end

local function check_cursor_warms(buf)
  vim.api.nvim_win_set_cursor(0, { 4, 4 }) -- `def greet(...)`, after `def `
  vim.api.nvim_exec_autocmds('CursorMoved', { buffer = buf })
  local warmed = wait(function()
    return vim.list_contains(warmed_at(), '3:4')
  end, 5000)
  report('a cursor resting somewhere new warms the prompt there', warmed, warmed_at())
end

local function suggestions()
  local buf = open_and_attach(false)
  check_cursor_warms(buf)
  local row = 4 -- `    return 'hello ' + name`
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  local done, err, edit = call(next_edit.request, buf)
  report(
    'the server suggests a next edit',
    done and err == nil and edit ~= nil and edit.text == 'goodbye',
    {
      err = err,
      edit = edit,
    }
  )
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  local col = line:find('hello', 1, true) - 1
  local removed = mark_with(buf, next_edit.namespace, 'hl_group', 'DiffDelete')
  local added = mark_with(buf, next_edit.namespace, 'virt_text', { { 'goodbye', 'DiffAdd' } })
  report(
    'drawn: "hello" struck as DiffDelete, "goodbye" as virtual text',
    removed ~= nil
      and removed[2] == row
      and removed[3] == col
      and removed[4].end_col == col + 5
      and added ~= nil,
    vim.api.nvim_buf_get_extmarks(buf, next_edit.namespace, 0, -1, { details = true })
  )

  local before = #requested
  vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'x', false)
  local accepted = wait(function()
    return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]:find('goodbye', 1, true) ~= nil
  end, 5000)
  report(
    '<Tab> accepts the next edit',
    accepted,
    vim.api.nvim_buf_get_lines(buf, row, row + 1, false)
  )
  local told = wait(function()
    return vim.list_contains(vim.list_slice(requested, before + 1), 'workspace/executeCommand')
  end, 5000)
  report(
    "accepting runs the edit's command on the server",
    told,
    vim.list_slice(requested, before + 1)
  )

  vim.o.virtualedit = 'onemore' -- the cursor after the last character, as in insert mode
  line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  vim.api.nvim_win_set_cursor(0, { row + 1, #line })
  local got, ghost_err, items = call(ghost.request, buf)
  local ghost_mark = mark_with(buf, ghost.namespace, 'virt_text', { { '.title()', 'Comment' } })
  report(
    'ghost text from inlineCompletion is drawn at the cursor',
    got and ghost_err == nil and ghost_mark ~= nil,
    {
      err = ghost_err,
      items = items,
    }
  )
  local inserted = ghost.accept(buf)
  line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  report('accepting ghost text inserts it', inserted and vim.endswith(line, 'name.title()'), line)
  report(
    'the cursor ends after the ghost text',
    vim.api.nvim_win_get_cursor(0)[2] == #line,
    vim.api.nvim_win_get_cursor(0)
  )
end

--- The ghost text shown at the cursor, as its virtual text chunks.
local function ghost_chunks(buf)
  local marks = vim.api.nvim_buf_get_extmarks(buf, ghost.namespace, 0, -1, { details = true })
  return marks[1] and marks[1][4].virt_text or nil
end

local function count_of(list, value)
  return #vim.tbl_filter(function(x)
    return x == value
  end, list)
end

--- With a server that offers ghost text ".title()" while typing, and ".upper()" too when
--- asked (fixed_predictor_lsp.py --choices): the keys cycle through the choices.
local function choices()
  local buf = open_and_attach(false)
  local row = 4 -- `    return 'hello ' + name`
  vim.o.virtualedit = 'onemore' -- the cursor after the last character, as in insert mode
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  vim.api.nvim_win_set_cursor(0, { row + 1, #line })
  local answered = false
  ghost.request(buf, function()
    answered = true
  end, 2) -- triggerKind Automatic, as after a pause in typing
  wait(function()
    return answered
  end)
  report(
    'typing: one ghost text choice, drawn',
    vim.deep_equal(ghost_chunks(buf), { { '.title()', 'Comment' } }),
    ghost_chunks(buf)
  )

  local asked = count_of(requested, 'textDocument/inlineCompletion')
  vim.api.nvim_feedkeys(vim.keycode('<M-]>'), 'x', false)
  local second = { { '.upper()', 'Comment' }, { ' (2/2)', 'NonText' } }
  local cycled = wait(function()
    return vim.deep_equal(ghost_chunks(buf), second)
  end, 5000)
  report('<M-]> asks again (Invoked) and shows the next choice', cycled, {
    chunks = ghost_chunks(buf),
    asked_again = count_of(requested, 'textDocument/inlineCompletion') - asked,
  })

  asked = count_of(requested, 'textDocument/inlineCompletion')
  vim.api.nvim_feedkeys(vim.keycode('<M-]>'), 'x', false)
  local first = { { '.title()', 'Comment' }, { ' (1/2)', 'NonText' } }
  report(
    '<M-]> again wraps around to the first, without asking again',
    vim.deep_equal(ghost_chunks(buf), first)
      and count_of(requested, 'textDocument/inlineCompletion') == asked,
    ghost_chunks(buf)
  )
  vim.cmd('ShadowtabPreviousSuggestion')
  report(
    ':ShadowtabPreviousSuggestion goes back',
    vim.deep_equal(ghost_chunks(buf), second),
    ghost_chunks(buf)
  )
  local inserted = ghost.accept(buf)
  line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  report(
    'accepting inserts the choice shown',
    inserted and vim.endswith(line, 'name.upper()'),
    line
  )

  local done, err, edit = call(next_edit.request, buf)
  report(
    'next edits: the first is shown',
    done and err == nil and edit ~= nil and edit.text == 'goodbye',
    {
      err = err,
      edit = edit,
    }
  )
  vim.api.nvim_feedkeys(vim.keycode('<M-]>'), 'x', false)
  local farewell = { { 'farewell', 'DiffAdd' }, { ' (2/2)', 'NonText' } }
  report(
    '<M-]> shows the next edit after it',
    mark_with(buf, next_edit.namespace, 'virt_text', farewell) ~= nil
      and next_edit.current(buf).text == 'farewell'
      and not ghost.visible(buf),
    vim.api.nvim_buf_get_extmarks(buf, next_edit.namespace, 0, -1, { details = true })
  )
  vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'x', false)
  local accepted = wait(function()
    return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]:find('farewell', 1, true) ~= nil
  end, 5000)
  report(
    '<Tab> accepts the next edit shown',
    accepted,
    vim.api.nvim_buf_get_lines(buf, row, row + 1, false)
  )
end

--- The two-editor test: the Node client hands the lock to the model, we see it and take it
--- back, then it dies and we carry on.
local function peer()
  local buf, client = open_and_attach(false)
  local first = diagnostics(buf, function(list)
    return has_code(list, 'F401') ~= nil
  end)
  report('peer: diagnostics through the shared daemon', first ~= nil, first)
  touch('nvim-ready')
  local seen = wait(function()
    return lock.state ~= nil and lock.state.holder == 'model'
  end, 60000)
  report('peer: the other editor releasing the lock reaches us', seen, lock_events)
  local ok, event = holder_after({ lock.take, 'discard' }, 'user')
  report('peer: our take reaches the daemon', ok and event ~= nil, lock_events)

  report('peer: the other editor is gone', signalled('node-gone', 60000), nil)
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, {})
  local cleared = diagnostics(buf, function(list)
    return has_code(list, 'F401') == nil
  end)
  report('peer: diagnostics still follow our edits', cleared ~= nil, vim.diagnostic.get(buf))
  local done, err, result = call(lock.status)
  report(
    'peer: lock commands still work',
    done and err == nil and lock.parse(result) ~= nil,
    result
  )
  done, err = call(next_edit.request, buf)
  report('peer: next-edit requests still work', done and err == nil, err)
  report('peer: the same client all along', util.client(buf) == client, nil)

  -- The command line moves the lock too (`shadowtab lock release`, run by pytest).
  touch('nvim-waits-for-cli')
  local by_cli = wait(function()
    return lock.state.holder == 'model'
  end, 60000)
  report('peer: `shadowtab lock release` reaches the editor', by_cli, lock_events)
  ok, event = holder_after({ lock.take, 'keep' }, 'user')
  report('peer: and the editor takes it back', ok and event ~= nil, lock_events)
end

local scenarios = { features = features, peer = peer, suggestions = suggestions, choices = choices }
local ok, problem = pcall(scenarios[config.scenario])
report('no Lua error', ok, problem)
finish()
