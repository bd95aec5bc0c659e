-- What both Lua clients (nvim_client.lua, copilot_lsp_client.lua) share: one JSON line
-- per check ({check, ok, detail}) on stdout, and the end of a run, which stops the LSP
-- client and exits 0 only if every check passed.
-- usage: local checks = dofile(vim.fs.joinpath(<this folder>, 'lua_checks.lua'))

local M = { WAIT_MS = 20000, failures = 0 }

--- `value` as JSON can carry it (a table with functions or cycles becomes its inspect).
function M.plain(value)
  local ok, encoded = pcall(vim.json.encode, value)
  return ok and vim.json.decode(encoded) or vim.inspect(value)
end

function M.report(check, ok, detail)
  if not ok then
    M.failures = M.failures + 1
  end
  io.stdout:write(
    vim.json.encode({ check = check, ok = ok and true or false, detail = M.plain(detail) }) .. '\n'
  )
  io.stdout:flush()
end

--- Stops the clients named `name`, reports whether they stopped (polled with the
--- caller's `wait`), and exits.
function M.finish(name, wait)
  for _, client in ipairs(vim.lsp.get_clients({ name = name })) do
    client:stop()
  end
  local stopped = wait(function()
    return #vim.lsp.get_clients({ name = name }) == 0
  end, 10000)
  M.report('the client stops cleanly', stopped, nil)
  os.exit(M.failures == 0 and 0 or 1)
end

return M
