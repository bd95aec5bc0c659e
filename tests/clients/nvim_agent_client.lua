-- Headless Neovim showing a file while a coding agent edits it through the shadow
-- (`shadowtab shadow write`, run by pytest): the agent's edit arrives in the buffer as a
-- model edit, the lock shows the model holding it with pending edits, ruff's verdict on
-- the unsaved text arrives as diagnostics; the agent's rename and delete are in the
-- pending list, one committed and one discarded from it.
-- usage: nvim --headless --clean -l nvim_agent_client.lua '<json config>'
--   config: { rtp, cmd = {...}, file, signal_dir, expect_line, renamed_from, renamed_to,
--             deleted }
-- Prints one JSON line per check ({check, ok, detail}); exits 0 only if all passed.

local config = vim.json.decode(_G.arg[1])
vim.opt.runtimepath:prepend(config.rtp)

local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local checks = dofile(vim.fs.joinpath(here, 'lua_checks.lua'))
local report = checks.report

local function wait(predicate, timeout)
  return vim.wait(timeout or checks.WAIT_MS, predicate, 20)
end

local shadowtab = require('shadowtab')
local util = require('shadowtab.util')
local lock = require('shadowtab.lock')

local function has_code(buf, code, pattern)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code and (pattern == nil or d.message:find(pattern)) then
      return d
    end
  end
  return nil
end

local function call(fn, ...)
  local done, err, result = false, nil, nil
  local args = { ... }
  table.insert(args, function(e, r)
    done, err, result = true, e, r
  end)
  fn(unpack(args))
  wait(function()
    return done
  end)
  return done and err == nil, result
end

local function exists(path)
  return vim.uv.fs_stat(path) ~= nil
end

--- The agent renamed one file and deleted another (`shadow mv`, `shadow rm`, run by
--- pytest): the pending list shows them; committing the rename writes it alone, and
--- discarding the delete brings the file back in the shadow.
local function review()
  local agent_done = wait(function()
    return exists(config.signal_dir .. '/agent-done')
  end, 60000)
  report('agent: renames and deletes in the shadow', agent_done, nil)
  local uri = vim.uri_from_fname
  local sample, old, new, gone =
    uri(config.file), uri(config.renamed_from), uri(config.renamed_to), uri(config.deleted)
  local ok, files = call(lock.pending)
  table.sort(files)
  local expected = { sample, old, new, gone }
  table.sort(expected)
  report(
    'pending list: the edit, the rename and the delete',
    ok and vim.deep_equal(files, expected),
    files
  )
  ok = call(lock.commit_files, { new })
  local renamed = wait(function()
    return exists(config.renamed_to) and not exists(config.renamed_from)
  end)
  report(
    'commit one rename: both of its files, nothing else',
    ok and renamed and exists(config.deleted),
    nil
  )
  ok = call(lock.discard_files, { gone })
  local _, left = call(lock.pending)
  report(
    'discard the delete: the file stays, the edit is pending',
    ok and vim.deep_equal(left, { sample }),
    left
  )
end

local function run()
  shadowtab.setup({ cmd = config.cmd, notify_lock_changes = false, next_edit = { auto = false } })
  vim.cmd.edit(config.file)
  local buf = vim.api.nvim_get_current_buf()
  local attached = wait(function()
    local client = util.client(buf)
    return client ~= nil and client.initialized and vim.lsp.buf_is_attached(buf, client.id)
  end)
  report('agent: the editor attaches', attached, nil)
  local first = wait(function()
    return has_code(buf, 'F401', 'os') ~= nil
  end)
  report('agent: diagnostics of the file before the edit', first, vim.diagnostic.get(buf))

  local signal = assert(io.open(config.signal_dir .. '/nvim-ready', 'w'))
  signal:write('1')
  signal:close()

  local arrived = wait(function()
    return vim.tbl_contains(vim.api.nvim_buf_get_lines(buf, 0, -1, false), config.expect_line)
  end, 60000)
  report('agent: the edit arrives in the buffer', arrived, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  local held = wait(function()
    return lock.state ~= nil and lock.state.holder == 'model' and lock.state.pending == true
  end)
  report('agent: the lock shows the model holding it with pending edits', held, lock.state)
  local linted = wait(function()
    return has_code(buf, 'F401', 'sys') ~= nil
  end)
  report('agent: ruff sees the unsaved edit', linted, vim.diagnostic.get(buf))
  review()
end

local ok, problem = pcall(run)
report('no Lua error', ok, problem)
checks.finish('shadowtab', wait)
