-- A third-party next-edit plugin, copilot-lsp (vendored, unmodified, under vendor/), as a
-- user sets it up, with `shadowtab lsp` in place of GitHub's copilot-language-server:
--   vim.lsp.config('copilot_ls', { cmd = { 'shadowtab', 'lsp' } }); vim.lsp.enable('copilot_ls')
-- and the <Tab> mapping from its README. Typing in normal mode triggers its debounced
-- textDocument/copilotInlineEdit; it draws our edit, notifies textDocument/didShowInlineEdit,
-- and <Tab> walks to the edit and applies it.
--
-- usage: COPILOT_LSP_TEST='<json config>' nvim --headless --clean -c 'luafile copilot_lsp_client.lua'
--   config: { vendor, cmd = {...}, file, expect_edit = bool }
-- Not `nvim -l`: the plugin listens to TextChanged, which Neovim fires from its main loop,
-- so the steps run in a coroutine that yields to the main loop while it waits.
--   expect_edit: the server suggests "hello" -> "goodbye" (fixed_predictor_lsp.py); else the
--   server has no model (engine off) and answers {edits: []}.
-- Prints one JSON line per check ({check, ok, detail}); exits 0 only if all passed.

local config = vim.json.decode((assert(vim.env.COPILOT_LSP_TEST, 'COPILOT_LSP_TEST is not set')))
vim.opt.runtimepath:prepend(config.vendor)
vim.cmd.runtime('plugin/copilot-lsp.lua') -- --clean sourced plugin/ before the prepend
vim.cmd('filetype on')
vim.o.swapfile = false

local checks = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'lua_checks.lua'))
local report = checks.report

local steps = nil -- the coroutine running the steps

--- Polls `predicate`, giving the main loop (keys, autocmds, LSP) its turn in between.
local function wait(predicate, timeout)
  local deadline = vim.uv.now() + (timeout or checks.WAIT_MS)
  while true do
    local value = predicate()
    if value or vim.uv.now() > deadline then
      return value
    end
    vim.defer_fn(function()
      local ok, err = coroutine.resume(steps)
      if not ok then
        report('the steps ran without a Lua error', false, tostring(err))
        os.exit(1)
      end
    end, 20)
    coroutine.yield()
  end
end

-- What went over the wire, from Neovim's own LSP events.
local requests, notifications, responses = {}, {}, {}
vim.api.nvim_create_autocmd('LspRequest', {
  callback = function(args)
    local request = args.data.request
    if request.type == 'pending' then
      requests[#requests + 1] = request.method
    end
  end,
})
local client_errors = {}
local notify = vim.notify
vim.notify = function(message, level, opts)
  client_errors[#client_errors + 1] = { message = message, level = level }
  return notify(message, level, opts)
end

local function finish()
  report('copilot-lsp printed no error (vim.notify)', #client_errors == 0, client_errors)
  checks.finish('copilot_ls', wait)
end

local function main()
  -- The user's configuration: the plugin's own lsp/copilot_ls.lua, our command, its README's <Tab>.
  vim.g.copilot_nes_debounce = 100
  vim.lsp.config('copilot_ls', { cmd = config.cmd, root_dir = vim.fs.dirname(config.file) })
  vim.lsp.enable('copilot_ls')
  local nes = require('copilot-lsp.nes')
  vim.keymap.set('n', '<tab>', function()
    local bufnr = vim.api.nvim_get_current_buf()
    local state = vim.b[bufnr].nes_state
    if state then
      local _ = nes.walk_cursor_start_edit()
        or (nes.apply_pending_nes() and nes.walk_cursor_end_edit())
      return nil
    else
      return '<C-i>'
    end
  end, { desc = 'Accept Copilot NES suggestion', expr = true })

  vim.cmd.edit(config.file)
  local buf = vim.api.nvim_get_current_buf()
  local client = nil
  local attached = wait(function()
    client = vim.lsp.get_clients({ name = 'copilot_ls', bufnr = buf })[1]
    return client ~= nil and client.initialized
  end)
  report('vim.lsp.enable("copilot_ls") starts shadowtab for the buffer', attached, {
    filetype = vim.bo[buf].filetype,
    clients = vim.tbl_map(function(c)
      return c.name
    end, vim.lsp.get_clients()),
  })
  if not attached then
    finish()
  end

  -- Wrap the client's request to see copilot-lsp's copilotInlineEdit answers as they arrive.
  local request = client.request
  client.request = function(self, method, params, handler, bufnr)
    if method == 'textDocument/copilotInlineEdit' and handler then
      local inner = handler
      handler = function(err, result, ctx)
        responses[#responses + 1] = { err = err, result = result, version = params.textDocument.version }
        return inner(err, result, ctx)
      end
    end
    return request(self, method, params, handler, bufnr)
  end

  -- Keystrokes as a user types them: a comment at the end of the last line (after the
  -- "hello" the stand-in's edit replaces, so its offsets stay right).
  vim.api.nvim_win_set_cursor(0, { 5, 0 })
  vim.api.nvim_feedkeys(vim.keycode('A  # edited<Esc>'), 't', false)
  local asked = wait(function()
    return #responses > 0
  end, 10000)
  report('typing makes copilot-lsp ask textDocument/copilotInlineEdit', asked, { requests = requests })
  if not asked then
    finish()
  end

  local response = responses[#responses]
  local edits = response.result and response.result.edits
  report(
    'the answer has the shape copilot-lsp reads ({edits: [{range, text, textDocument, command}]})',
    response.err == nil and vim.islist(edits),
    response
  )

  if not config.expect_edit then
    report('with no model the answer is an empty list, and nothing is drawn', #edits == 0
      and vim.b[buf].nes_state == nil, response)
    finish()
  end

  local edit = edits[1] or {}
  report('our edit names the version copilot-lsp asked for', edit.textDocument
    and edit.textDocument.version == response.version, { edit = edit, asked = response.version })

  local nes_ns = vim.api.nvim_get_namespaces()['copilotlsp.nes']
  local drawn = wait(function()
    return vim.b[buf].nes_state ~= nil
      and #vim.api.nvim_buf_get_extmarks(buf, nes_ns, 0, -1, {}) > 0
  end, 5000)
  local marks = nes_ns and vim.api.nvim_buf_get_extmarks(buf, nes_ns, 0, -1, { details = true }) or {}
  local struck, added = nil, nil
  for _, mark in ipairs(marks) do
    local row, col, details = mark[2], mark[3], mark[4]
    if details.hl_group == 'CopilotLspNesDelete' then
      struck = vim.api.nvim_buf_get_text(buf, row, col, details.end_row, details.end_col, {})[1]
    end
    for _, chunks in ipairs(details.virt_lines or { details.virt_text }) do
      for _, chunk in ipairs(chunks) do
        added = (added or '') .. chunk[1]
      end
    end
  end
  report(
    'copilot-lsp draws it: the line with "hello" as CopilotLspNesDelete, with "goodbye" below',
    drawn
      and struck ~= nil
      and struck:find("return 'hello '", 1, true) ~= nil
      and added ~= nil
      and added:find("return 'goodbye '", 1, true) ~= nil,
    { struck = struck, added = added, marks = marks }
  )

  -- The README's <Tab>: walks to the edit when the cursor is on another line, else applies.
  local line_of_edit = edit.range.start.line
  local function has_goodbye()
    local line = vim.api.nvim_buf_get_lines(buf, line_of_edit, line_of_edit + 1, false)[1]
    return line:find('goodbye', 1, true) ~= nil
  end
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local tabs = 0
  while tabs < 3 and not has_goodbye() do
    vim.api.nvim_feedkeys(vim.keycode('<Tab>'), 'm', false) -- through the mapping
    tabs = tabs + 1
    wait(has_goodbye, 1000)
  end
  local applied = wait(has_goodbye, 5000)
  report('<Tab> (its README mapping) walks to the edit and applies it', applied and tabs == 2, {
    tabs = tabs,
    line = vim.api.nvim_buf_get_lines(buf, line_of_edit, line_of_edit + 1, false)[1],
    cursor = vim.api.nvim_win_get_cursor(0),
  })
  local cleared = wait(function()
    return vim.b[buf].nes_state == nil
      and #vim.api.nvim_buf_get_extmarks(buf, nes_ns, 0, -1, {}) == 0
  end, 5000)
  report('the suggestion is cleared after applying', cleared, vim.b[buf].nes_state)

  -- The server followed the applied edit: its shadow differs from the disk by exactly it.
  local diff = client:request_sync('workspace/executeCommand', {
    command = 'shadowtab.shadow.diff',
    arguments = {},
  }, 10000, buf)
  local text = diff and diff.result and diff.result.diff or ''
  report(
    "the server's shadow has the applied edit (shadowtab.shadow.diff)",
    text:find("+    return 'goodbye ' + name  # edited", 1, true) ~= nil and text:find("-    return 'hello '", 1, true) ~= nil,
    diff
  )
  finish()
end

steps = coroutine.create(main)
vim.schedule(function()
  local ok, err = coroutine.resume(steps)
  if not ok then
    report('the steps ran without a Lua error', false, tostring(err))
    os.exit(1)
  end
end)
