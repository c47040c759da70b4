-- Bad input through the joinery command: each case must end with a clear message naming
-- the part, parameter, coordinate, row or script line, a non-zero exit, and no output file
-- left behind (not even the partial one; the rows of a run the integrator gave up on are
-- kept in <stem>.incomplete.csv, which t_failures.lua checks).
local tap = dofile("tests/lua/tap.lua")
local joinery_cmd = os.getenv("JOINERY") or "build/lua/joinery"
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))
local script, csv = dir .. "/bad.lua", dir .. "/out.csv"

local head = 'local joinery = require "joinery"\nlocal sys = joinery.system { gravity = { 0, -9.81 } }\n'
local pendulum = head .. [[
local g = sys:add("ground", "g", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = g.pos, b = bob.pos })
]]

local cases = {
  { "unknown part type", head .. 'sys:add("masss", "a", {})\nreturn sys',
    { "bad.lua:3:", "unknown part type 'masss'", "did you mean 'mass'" } },
  { "unknown parameter, with the nearest name", head .. 'sys:add("mass", "a", { mas = 1 })\nreturn sys',
    { "bad.lua:3:", "part 'a'", "unknown parameter 'mas'", "did you mean 'm'" } },
  { "negative mass", head .. 'sys:add("mass", "a", { m = -1 })\nreturn sys',
    { "bad.lua:3:", "part 'a'", "m = -1", "must be > 0" } },
  { "zero mass", head .. 'sys:add("mass", "a", { m = 0 })\nreturn sys',
    { "bad.lua:3:", "part 'a'", "m = 0", "must be > 0" } },
  { "negative length", head .. 'sys:add("rod", "r", { L = -1 })\nreturn sys',
    { "bad.lua:3:", "part 'r'", "L = -1", "must be > 0" } },
  { "negative stiffness", head .. 'sys:add("spring", "s", { k = -5 })\nreturn sys',
    { "bad.lua:3:", "part 's'", "k = -5", "must be >= 0" } },
  { "terminals of different dimensions",
    head .. 'local g = sys:add("ground", "g", { dim = 2 })\nlocal a = sys:add("mass", "a", { dim = 3 })\nsys:glue(g.pos, a.pos)\nreturn sys',
    { "bad.lua:5:", "g.pos (2-D)", "a.pos (3-D)", "different dimensions" } },
  { "a terminal glued to itself",
    head .. 'local a = sys:add("mass", "a", { dim = 2 })\nsys:glue(a.pos, a.pos)\nreturn sys',
    { "bad.lua:4:", "a.pos", "to itself" } },
  { "non-unique acceleration names the free coordinates",
    head .. 'local g = sys:add("ground", "g", { dim = 2 })\nsys:add("spring", "s", { dim = 2, a = g.pos })\nreturn sys',
    { "not unique", "s.bx", "s.by" } },
  { "inconsistent constraints name the rows",
    head .. [[
local g1 = sys:add("ground", "g1", { dim = 2 })
local g2 = sys:add("ground", "g2", { dim = 2, x = 3 })
local bob = sys:add("mass", "bob", { dim = 2, init = { x = 1.5, y = 0.5 } })
sys:add("rod", "r1", { dim = 2, L = 1, a = g1.pos, b = bob.pos })
sys:add("rod", "r2", { dim = 2, L = 1, a = g2.pos, b = bob.pos })
return sys]],
    { "inconsistent constraints", "r1.length", "r2.length" } },
  { "Lua syntax error", head .. "local x = = 1\nreturn sys", { "bad.lua:3:" } },
  { "Lua runtime error", head .. 'error("boom")\nreturn sys', { "bad.lua:3:", "boom" } },
  { "a script that returns no system", head .. "return 42", { "bad.lua", "system" } },
  { "unwritable output path", pendulum .. "return sys", { "cannot write output file", "/nonexistent/" },
    "/nonexistent/dir/out.csv" },
  { "integrator failure names the time and CVODE's reason",
    pendulum .. "sys:settings { max_steps = 3 }\nreturn sys",
    { "integrator failure at t =", "CV_TOO_MUCH_WORK" } },
  { "an unknown setting lists the valid ones", pendulum .. "sys:settings { tend = 3 }\nreturn sys",
    { "bad.lua:6:", "tend", "t_end" } },
  { "a negative Baumgarte rate", pendulum .. "sys:settings { baumgarte_rate = -1 }\nreturn sys",
    { "baumgarte_rate = -1", ">= 0" } },
  { "an unknown method lists the valid ones", pendulum .. "return sys",
    { "rk4", "bdf", "adams", "erk" }, nil, "--method rk4" },
  { "a negative velocity tolerance", pendulum .. "sys:settings { atol_velocity = -1 }\nreturn sys",
    { "atol_velocity = -1", "must be > 0" } },
}

tap.plan(#cases * 3 + 1)
for _, c in ipairs(cases) do
  local name, text, expect, out, flags = c[1], c[2], c[3], c[4] or csv, c[5] or ""
  local f = assert(io.open(script, "w"))
  f:write(text)
  f:close()
  os.remove(csv)
  local cmd = string.format("'%s' run '%s' --out '%s' %s 2>&1", joinery_cmd, script, out, flags)
  local pipe = assert(io.popen(cmd))
  local output = pipe:read("a")
  local _, _, code = pipe:close()
  tap.ok(code ~= 0, name .. ": non-zero exit")
  local all = true
  for _, e in ipairs(expect) do
    if not output:find(e, 1, true) then all = false end
  end
  tap.ok(all, name .. ": message says " .. table.concat(expect, " / "))
  if not all then tap.diag(output) end
  local left = io.open(out, "r") or io.open(out .. ".partial", "r")
  if left then left:close() end
  tap.ok(not left, name .. ": no output file left behind")
end

-- The same pendulum, corrected, runs: the cases above failed for their own reason.
local f = assert(io.open(script, "w"))
f:write(pendulum .. "return sys")
f:close()
local ok_run = os.execute(string.format("'%s' run '%s' --out '%s' --t-end 0.1 >/dev/null 2>&1",
  joinery_cmd, script, csv))
local made = io.open(csv, "r")
tap.ok(ok_run and made, "the corrected script runs and writes its CSV")
if made then made:close() end
os.execute("rm -rf '" .. dir .. "'")
tap.done()
