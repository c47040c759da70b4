-- tests/lua/tap.lua — the Test Anything Protocol for Lua test scripts.
-- local tap = dofile((arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
-- tap.plan(n) (optional: done() prints the plan when none was given), tap.ok(cond, name),
-- tap.is(got, want, name), tap.is_near(got, want, tol, name), tap.has(str, part, name),
-- tap.raises(f, {parts...}, name), tap.diag(msg), tap.exists(path), tap.command(),
-- tap.done() (exits 1 on any failure).
local tap = { count = 0, failed = 0 }

function tap.plan(n)
  tap.planned = n
  print("1.." .. n)
end

function tap.diag(msg)
  for line in (tostring(msg) .. "\n"):gmatch("(.-)\n") do print("# " .. line) end
end

function tap.ok(cond, name)
  tap.count = tap.count + 1
  print(string.format("%s %d - %s", cond and "ok" or "not ok", tap.count, name or ""))
  if not cond then
    tap.failed = tap.failed + 1
    local info = debug.getinfo(2, "Sl")
    if info.short_src:match("tap%.lua$") then info = debug.getinfo(3, "Sl") end
    tap.diag(string.format("failed at %s:%d", info.short_src, info.currentline))
  end
  return cond
end

function tap.is(got, want, name)
  local good = tap.ok(got == want, name)
  if not good then tap.diag(string.format("got %s, want %s", tostring(got), tostring(want))) end
  return good
end

function tap.is_near(got, want, tol, name)
  local good = type(got) == "number" and math.abs(got - want) <= tol
  tap.ok(good, name)
  if type(got) == "number" then
    tap.diag(string.format("  got %.17g want %.17g diff %.3g tol %.3g", got, want,
      math.abs(got - want), tol))
  else
    tap.diag("  got " .. tostring(got))
  end
  return good
end

-- str contains part (plain text)
function tap.has(str, part, name)
  local good = tap.ok(type(str) == "string" and str:find(part, 1, true) ~= nil, name)
  if not good then tap.diag(string.format("%q does not contain %q", tostring(str), part)) end
  return good
end

-- f, a function written on one line, must raise an error located at that line whose
-- message contains every string of parts.
function tap.raises(f, parts, name)
  local info = debug.getinfo(f, "S")
  local where = string.format("%s:%d:", info.short_src, info.linedefined)
  local good, err = pcall(f)
  err = tostring(err)
  tap.ok(not good and err:sub(1, #where) == where, name .. ": error at " .. where)
  tap.diag("  " .. err)
  for _, part in ipairs(parts or {}) do
    tap.has(err, part, string.format("%s: message names %q", name, part))
  end
  return err
end

-- The whole of a file, or nil when it cannot be read.
function tap.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Whether a file exists (can be opened for reading).
function tap.exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

-- The joinery command running this test, as an absolute path: arg's lowest index (arg[-1]
-- may be a flag, --trust).
function tap.joinery()
  local first = -1
  while arg[first - 1] do first = first - 1 end
  local exe = arg[first]
  if exe:sub(1, 1) ~= "/" then exe = io.popen("pwd"):read("l") .. "/" .. exe end
  return exe
end

-- The joinery command running this test, for tests that run it in child processes:
-- { exe = its absolute path, root = the working directory, tmp = a fresh temporary directory,
--   quote = shell quoting, sh = function(command) -> exit code, stdout, stderr,
--   run = function(args): sh of the joinery command with these arguments,
--   partial_files = function() -> the temporary files ("*.partial") in tmp, "" when none,
--   write = function(name, text) -> the path of file tmp/name holding text }.
function tap.command()
  local c = {}
  function c.quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
  c.root = io.popen("pwd"):read("l")
  c.exe = tap.joinery()
  c.tmp = io.popen("mktemp -d"):read("l")
  function c.sh(command)
    local errfile = c.tmp .. "/stderr"
    local p = io.popen(command .. " 2>" .. c.quote(errfile))
    local out = p:read("a")
    local _, _, code = p:close()
    local f = io.open(errfile)
    local err = f:read("a")
    f:close()
    return code, out, err
  end
  function c.run(args) return c.sh(c.quote(c.exe) .. " " .. args) end
  -- The names of the files in tmp that end in .partial (a run's temporary file), or "".
  function c.partial_files()
    local _, out = c.sh("ls -a " .. c.quote(c.tmp) .. " | grep '\\.partial$' || true")
    return out
  end
  function c.write(name, text)
    local path = c.tmp .. "/" .. name
    local f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
    return path
  end
  return c
end

function tap.done()
  if not tap.planned then
    print("1.." .. tap.count)
  elseif tap.planned ~= tap.count then
    tap.diag(string.format("planned %d tests, ran %d", tap.planned, tap.count))
    tap.failed = tap.failed + 1
  end
  if tap.failed > 0 then
    tap.diag(string.format("%d failed", tap.failed))
    os.exit(1, true)
  end
end

return tap
