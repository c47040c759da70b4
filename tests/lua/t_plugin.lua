-- Part types written in C as plugins (joinery/plugin.h): examples/plugin/cubic_spring.c is
-- loaded with joinery.load_plugin, used like a built-in, checked by the conformance suite,
-- and agrees with the built-in spring and with an independent integration of the Duffing
-- equation. Bad input: a missing file, a library without an entry point, a type built for
-- another protocol version.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"
-- 2 doors refusing an oversized shape (an error with 4 parts each), 49 single checks
tap.plan(2 * 5 + 49)

local dir = os.getenv("JOINERY_PLUGIN_DIR") or "build/examples/plugin"
local bad_dir = os.getenv("JOINERY_TEST_PLUGIN_DIR") or "build/tests/plugins"
local path = dir .. "/cubic_spring.so"

local function find(list, x)
  for i, v in ipairs(list) do if v == x then return i end end
end

-- ---- loading -----------------------------------------------------------------------------
local ntypes = #joinery.types()
local names = joinery.load_plugin(path)
tap.ok(#names == 1 and names[1] == "cubic_spring", "load_plugin returns the names it registered")
tap.ok(find(joinery.types(), "cubic_spring") and #joinery.types() == ntypes + 1,
  "joinery.types() lists cubic_spring next to the built-ins")
local d = joinery.describe("cubic_spring")
tap.ok(d.doc:find("k3", 1, true) and d.params[3].name == "k3" and d.params[3].unit == "N/m^3"
  and d.terminals[1].name == "a" and d.terminals[2].name == "b",
  "describe('cubic_spring'): schema with units, terminals a and b")
local again = joinery.load_plugin(path)
tap.ok(#again == 1 and again[1] == "cubic_spring" and #joinery.types() == ntypes + 1,
  "loading the same plugin again returns its names and registers nothing")

-- ---- conformance ---------------------------------------------------------------------------
local report = joinery.check_part("cubic_spring")
tap.ok(report.passed, "cubic_spring passes the conformance suite")
if not report.passed then tap.diag(report.log) end
tap.diag(string.format("cubic_spring: worst FD errors: J %.3g, Q vs energy %.3g",
  report.checks.terminal_jacobian.worst, report.checks.lagrange.worst))
local r3 = joinery.check_part("cubic_spring", { dim = 3, k3 = 50, L = 0 })
tap.ok(r3.passed and r3.instances == 2, "cubic_spring 3-D with L = 0 (the smooth branch) conforms")

-- ---- k3 = 0 is the built-in linear spring ----------------------------------------------
local function oscillator(spring_type, params)
  local sys = joinery.system()
  local wall = sys:add("ground", "wall", { dim = 1 })
  local bob = sys:add("mass", "bob", { dim = 1, m = 1.5, init = { x = 1.4 }, vel = { x = 0.3 } })
  params.dim, params.a, params.b = 1, wall.pos, bob.pos
  sys:add(spring_type, "spring", params)
  -- Adams: not dissipative, so energy conservation shows the part, not BDF's damping.
  return sys:simulate { method = "adams", t_end = 5, dt_out = 0.05, rtol = 1e-11, atol = 1e-12 }
end
local lin = oscillator("spring", { k = 10, L = 1 })
local cub0 = oscillator("cubic_spring", { k1 = 10, k3 = 0, L = 1 })
local worst = 0
for i = 1, lin.rows do worst = math.max(worst, math.abs(lin["bob.x"][i] - cub0["bob.x"][i])) end
tap.ok(lin.rows == cub0.rows and worst <= 1e-10,
  string.format("cubic_spring with k3 = 0 reproduces the built-in spring over 5 s (%.2g m)", worst))

-- ---- the Duffing oscillator against a classical Runge-Kutta integration ---------------------
local m, k1, k3, L = 1.5, 10, 200, 1
local cub = oscillator("cubic_spring", { k1 = k1, k3 = k3, L = L })
local function acc(x) local s = x - L; return -(k1 * s + k3 * s ^ 3) / m end
local x, v, h = 1.4, 0.3, 1e-4
local rk = { [0] = x }
for step = 1, 50000 do -- to t = 5 s
  local k1x, k1v = v, acc(x)
  local k2x, k2v = v + h / 2 * k1v, acc(x + h / 2 * k1x)
  local k3x, k3v = v + h / 2 * k2v, acc(x + h / 2 * k2x)
  local k4x, k4v = v + h * k3v, acc(x + h * k3x)
  x = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
  v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
  if step % 500 == 0 then rk[step // 500] = x end
end
worst = 0
for i = 1, cub.rows do worst = math.max(worst, math.abs(cub["bob.x"][i] - rk[i - 1])) end
tap.ok(worst <= 1e-7,
  string.format("Duffing: cubic_spring matches RK4 (h = 1e-4) over 5 s to %.2g m", worst))
local e0, espread = cub.energy[1], 0
for i = 1, cub.rows do espread = math.max(espread, math.abs(cub.energy[i] - e0)) end
tap.ok(espread <= 1e-8, string.format("Duffing: energy conserved to %.2g J", espread))
local s_end = cub["bob.x"][cub.rows] - L
tap.is_near(cub["spring.tension"][cub.rows], k1 * s_end + k3 * s_end ^ 3, 1e-9,
  "the plugin's output channel: spring.tension = k1 s + k3 s^3")

-- ---- 2-D: a hardening elastic pendulum conserves energy ----------------------------------
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1.2, y = 0 } })
  sys:add("cubic_spring", "s", { dim = 2, k1 = 50, k3 = 400, L = 1, a = pivot.pos, b = bob.pos })
  -- Adams: not dissipative (BDF at this rtol loses 2.5e-7 J over 3 s).
  local res = sys:simulate { method = "adams", t_end = 3, dt_out = 0.01, rtol = 1e-10, atol = 1e-12 }
  local lo, hi = math.huge, -math.huge
  for i = 1, res.rows do lo, hi = math.min(lo, res.energy[i]), math.max(hi, res.energy[i]) end
  tap.ok(hi - lo <= 1e-7, string.format("2-D elastic pendulum on cubic_spring: energy drift %.2g J", hi - lo))
end

-- ---- the example script, through the joinery command -----------------------------------
do
  local cmd = os.getenv("JOINERY") or "build/lua/joinery"
  local out = os.tmpname()
  local p = io.popen(string.format("JOINERY_PLUGIN_DIR='%s' '%s' run --trust examples/plugin_model.lua --t-end 2 --out '%s' 2>&1", dir, cmd, out))
  local text = p:read("a")
  local okrun = p:close()
  local f = io.open(out)
  local csv = f and f:read("a") or ""
  if f then f:close() end
  os.remove(out)
  tap.ok(okrun and csv:find("spring.tension", 1, true) ~= nil,
    "joinery run examples/plugin_model.lua loads the plugin and writes the CSV")
  if not okrun then tap.diag(text) end
end

-- ---- lifetime: the plugin's code stays loaded while anything can still use its types ------
do
  local cmd = os.getenv("JOINERY") or "build/lua/joinery"
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(string.format([[
local joinery = require "joinery"
joinery.load_plugin(%q)
local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local bob = sys:add("mass", "bob", { dim = 1, init = { x = 1.5 } })
sys:add("cubic_spring", "s", { dim = 1, k1 = 1, k3 = 10, a = wall.pos, b = bob.pos })
local model = sys:compile()
-- Drop the module and the system: the model still holds the environment, hence the plugin.
joinery, sys, wall, bob = nil, nil, nil, nil
package.loaded.joinery = nil
collectgarbage() collectgarbage()
local res = model:simulate { t_end = 0.5, dt_out = 0.5 }
print("after collection", res.rows, res["s.tension"][res.rows])
-- Now nothing holds them: the environment goes first, then the library is closed.
model, res = nil, nil
collectgarbage() collectgarbage()
-- A second module instance loads it afresh.
local j2 = require "joinery"
print("reloaded", j2.load_plugin(%q)[1])
]], path, path))
  f:close()
  local p = io.popen(string.format("'%s' --trust '%s' 2>&1", cmd, script))
  local text = p:read("a")
  local okrun = p:close()
  os.remove(script)
  tap.ok(okrun and text:find("after collection\t2\t", 1) and text:find("reloaded\tcubic_spring", 1),
    "a model outlives its module and keeps the plugin loaded; collecting everything closes it")
  if not okrun or not text:find("reloaded") then tap.diag(text) end
end

-- ---- bad input ---------------------------------------------------------------------------
tap.raises(function() joinery.load_plugin(dir .. "/no_such_plugin.so") end,
  { "cannot load plugin", "no_such_plugin.so", "No such file" }, "a missing plugin file")
tap.raises(function() joinery.load_plugin(bad_dir .. "/no_entry.so") end,
  { "no_entry.so", "not a joinery plugin", "no entry point jy_plugin_init", "JY_PLUGIN_ENTRY" },
  "a library without an entry point")
tap.raises(function() joinery.load_plugin(bad_dir .. "/bad_version.so") end,
  { "bad_version.so", "stale_part", "protocol version 9", "speaks version 8", "rebuild" },
  "a part type built for another protocol version")
tap.ok(not find(joinery.types(), "stale_part") and #joinery.types() == ntypes + 1,
  "a refused plugin registers nothing")

-- ---- a plugin whose shape exceeds the protocol's limits ---------------------------------
do
  joinery.load_plugin(bad_dir .. "/oversized.so")
  local sys = joinery.system()
  tap.ok(pcall(sys.add, sys, "oversized", "fine", { n = 64 }), "64 coordinates: at the limit, taken")
  for _, door in ipairs {
    { "sys:add", function() sys:add("oversized", "big", { n = 65 }) end },
    { "eval_part", function() joinery.eval_part { type = "oversized", params = { n = 65 } } end },
  } do
    tap.raises(door[2], { "oversized", "65 coordinates", "coordinates exceed the part protocol's limits",
      "64 coordinates" }, door[1] .. ": a shape of 65 coordinates is refused with the limit")
  end
end

-- ---- a plugin built for the previous protocol version (1, before angle_outputs) ------------
do
  local v1 = joinery.load_plugin(bad_dir .. "/protocol1.so")
  tap.ok(#v1 == 1 and v1[1] == "protocol1_oscillator" and find(joinery.types(), v1[1]),
    "a plugin built for protocol version 1 still loads")
  local sys = joinery.system()
  sys:add("protocol1_oscillator", "osc", { m = 1, k = 4 })
  local res = sys:simulate { t_end = 5, dt_out = 0.01 }
  local w, worst, lo, hi = 2, 0, math.huge, -math.huge
  for i = 1, res.rows do
    worst = math.max(worst, math.abs(res["osc.x"][i] - math.cos(w * res.t[i])))
    lo, hi = math.min(lo, res["osc.phase"][i]), math.max(hi, res["osc.phase"][i])
  end
  -- the default tolerances (rtol 1e-11) keep x within ~1e-9 of cos(2 t) over 5 s
  tap.ok(worst <= 1e-7, string.format("its oscillator follows cos(2 t) to %.2g m", worst))
  -- w t reaches 10 rad: unwrapped, the phase would leave (-pi, pi]; as no angle it wraps
  tap.ok(hi <= math.pi and lo >= -math.pi and hi - lo > 6,
    string.format("its output reads as no angle (version 1: angle_outputs 0): phase in [%.3f, %.3f]",
      lo, hi))
end
tap.raises(function() joinery.load_plugin() end, { "string expected" }, "load_plugin without a path")
tap.raises(function() joinery.load_plugin("examples/plugin_model.lua") end,
  { "cannot load plugin", "plugin_model.lua" }, "a file that is no shared library")
tap.raises(function() joinery.check_part("cubic_sprin") end, { "unknown part type", "cubic_spring" },
  "check_part of an unknown type suggests the nearest")
tap.raises(function() joinery.check_part("cubic_spring", { k2 = 1 }) end,
  { "part type 'cubic_spring'", "unknown parameter 'k2'", "did you mean 'k1'" },
  "check_part with an unknown parameter (the words of sys:add: one parameter door)")
tap.raises(function() joinery.check_part("cubic_spring", { k1 = -1 }) end,
  { "part type 'cubic_spring'", "k1 = -1 N/m", "must be >= 0" },
  "check_part with a value outside the domain")

tap.done()
