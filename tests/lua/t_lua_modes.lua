-- Parts with modes written in Lua (joinery.part_type's modes, guards, transition,
-- admissible, initial_mode: lua/parts/part_modes.c): the Coulomb brake of
-- examples/stick_slip_lua.lua against the closed form of the spring block and against the
-- built-in guide's stick-slip; a Lua floor against the built-in floor; and the definition and
-- run-time errors, each naming the type and the script line.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

tap.plan(30)

local W, DELTA, X0 = 10, 0.3 * 9.81 / 100, 0.5 -- omega, mu m g / k, release
-- Event location and integration at rtol 1e-10 put a turning point within ~2e-9 m of the
-- closed form (measured 1.6e-9); 1e-7 m is 50 times that.
local TOL_X = 1e-7

local function run(path, settings)
  local sys = dofile(path)
  return sys:simulate(settings)
end

-- The rows written in pairs at an event's instant: their times.
local function event_times(res)
  local times = {}
  for i = 2, res.rows do
    if res.t[i] == res.t[i - 1] then times[#times + 1] = res.t[i] end
  end
  return times
end

-- 1. The Lua brake: turning points, the stick, the rest to t_end.
local tight = { rtol = 1e-10, atol = 1e-12 }
local res = run("examples/stick_slip_lua.lua", tight)
local x, v, t = res["block.x"], res["der(block.x)"], res.t
local worst, worst_t = 0, 0
for k = 1, 8 do
  local tk, xk = k * math.pi / W, (-1) ^ k * (X0 - 2 * k * DELTA)
  local best
  for i = 1, res.rows do
    if not best or math.abs(t[i] - tk) < math.abs(t[best] - tk) then best = i end
  end
  worst = math.max(worst, math.abs(x[best] - xk))
  worst_t = math.max(worst_t, math.abs(t[best] - tk))
end
tap.diag(string.format("  worst turning point %.2e m, its row %.2e s from k pi / omega", worst,
  worst_t))
tap.ok(worst <= TOL_X, "Lua brake: the 8 turning points (-1)^k (x0 - 2 k delta) to 1e-7 m")
tap.ok(worst_t <= 1e-7, "Lua brake: each turning point is an event row at k pi / omega")
local x8, t8 = X0 - 16 * DELTA, 8 * math.pi / W
local rest = 0
for i = 1, res.rows do
  if t[i] > t8 + 1e-6 then rest = math.max(rest, math.abs(x[i] - x8), math.abs(v[i])) end
end
tap.ok(rest <= TOL_X, "Lua brake: stuck at x_8 = x0 - 16 delta, at rest, from 0.8 pi s")
tap.is(t[res.rows], 5, "Lua brake: the run ends normally at t_end")
tap.is(res.stopped_by or "", "", "Lua brake: no event stopped it")
local count = {}
for _, e in ipairs(res.events) do count[e.name] = e.count end
tap.is(count["brake.stuck"], 8, "Lua brake: 8 stops listed as brake.stuck")
tap.is(#event_times(res) >= 8, true, "Lua brake: rows before and after each stop")

-- 2. The same motion as the built-in 2-D guide's stick-slip (examples/stick_slip.lua).
local guide = run("examples/stick_slip.lua", tight)
local diff, j = 0, 1
for i = 1, guide.rows do
  while j < res.rows and t[j] < guide.t[i] do j = j + 1 end
  if t[j] == guide.t[i] then diff = math.max(diff, math.abs(x[j] - guide["block.x"][i])) end
end
tap.diag(string.format("  largest difference from the guide's run %.2e m", diff))
tap.ok(diff <= 2 * TOL_X, "Lua brake and the built-in guide agree to 2e-7 m on the output grid")

-- 3. A floor written in Lua against the built-in floor: a ball dropped from 1 m, e = 0.8.
joinery.part_type {
  name = "lua_floor", doc = "a point kept at y >= 0",
  params = { { name = "e", default = 0.8, unit = "1", doc = "restitution" } },
  coords = { "x", "y" },
  terminals = { { name = "pos", coords = { "x", "y" } } },
  constraints = { { name = "gap", phi = function(q, t, p) return q.y end } },
  modes = { { name = "open", rows = {} }, { name = "closed", rows = { "gap" } } },
  nguards = 1,
  guards = function(q, v, t, p, f, a, mode)
    if mode == "open" then return q.y end
    return f.gap
  end,
  transition = function(q, v, t, p, f, guard, direction, mode)
    if mode == "open" and direction < 0 then return "open", { gap = p.e } end
    if mode == "closed" and direction < 0 then return "open" end
  end,
}
local function drop(floor_type)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0, y = 1 } })
  sys:add(floor_type, "floor", { e = 0.8, pos = ball.pos })
  return sys:simulate { t_end = 2, dt_out = 0.01 }
end
local lua_times, c_times = event_times(drop("lua_floor")), event_times(drop("floor"))
local g, t1 = 9.81, math.sqrt(2 / 9.81)
local closed = { t1, t1 + 2 * 0.8 * g * t1 / g, t1 + 2 * (0.8 + 0.64) * g * t1 / g }
tap.is(#lua_times, 3, "Lua floor: three impacts in 2 s")
local worst_impact = 0
for k = 1, 3 do
  worst_impact = math.max(worst_impact, math.abs((lua_times[k] or 0) - closed[k]),
    math.abs((lua_times[k] or 0) - (c_times[k] or 0)))
end
tap.diag(string.format("  worst impact time error %.2e s", worst_impact))
-- Root location at the default rtol 1e-11: ~1e-11 s (t_events.lua); 1e-9 s is 100 times that.
tap.ok(worst_impact <= 1e-9, "Lua floor: impacts at the closed-form times and the built-in floor's")

-- 4. Definition errors: at the script line, naming the type and the field.
local function with(extra)
  local d = {
    coords = { "x" }, terminals = { { name = "pos", coords = { "x" } } },
    constraints = { { name = "gap", phi = function(q) return q.x end } },
  }
  for k, val in pairs(extra) do d[k] = val end
  return d
end
local fn = function() end
tap.raises(function() joinery.part_type(with { name = "m1", modes = { { name = "a", rows = { "nope" } } } }) end,
  { "'m1'", "'nope' is not one of its constraint rows" }, "a mode lists an unknown row")
tap.raises(function() joinery.part_type(with { name = "m2", modes = { { name = "a" }, { name = "a" } } }) end,
  { "'m2'", "two modes are named 'a'" }, "two modes share a name")
tap.raises(function() joinery.part_type(with { name = "m3", nguards = 1, guards = fn }) end,
  { "'m3'", "need modes" }, "guards without modes")
tap.raises(function() joinery.part_type(with { name = "m4", modes = { { name = "a" } }, nguards = 1, guards = fn }) end,
  { "'m4'", "transition" }, "guards without a transition")

-- 5. Run-time errors: the function and its line in the run's message.
local bad_types = 0
local function run_bad(guards, transition)
  bad_types = bad_types + 1
  local name = "bad_floor" .. bad_types
  joinery.part_type {
    name = name, coords = { "y" },
    terminals = { { name = "pos", coords = { "y" } } },
    constraints = { { name = "gap", phi = function(q) return q.y end } },
    modes = { { name = "open", rows = {} }, { name = "closed", rows = { "gap" } } },
    nguards = 1, guards = guards, transition = transition,
  }
  local sys = joinery.system { gravity = { -9.81 } } -- 1-D: the fall is along x
  local ball = sys:add("mass", "ball", { dim = 1, m = 1, init = { x = 1 } })
  sys:add(name, "floor", { pos = ball.pos })
  local ok, err = pcall(sys.simulate, sys, { t_end = 1 })
  return ok, tostring(err)
end
local ok, err = run_bad(function(q) return { q.y, 1 } end, function() end)
tap.diag("  " .. err)
tap.ok(not ok, "guards returning two values for nguards = 1: the run fails")
tap.has(err, "nguards = 1", "  the message says how many guards")
tap.has(err, "t_lua_modes.lua:", "  and names the script line of the guards function")
ok, err = run_bad(function(q) return q.y end, function() return "flying" end)
tap.diag("  " .. err)
tap.ok(not ok, "a transition to an unknown mode: the run fails")
tap.has(err, "flying", "  the message names the mode returned")
tap.has(err, "(open, closed)", "  and the part's modes")
ok, err = run_bad(function(q) return q.y end, function() return "open", { gap = 1.5 } end)
tap.diag("  " .. err)
tap.ok(not ok, "a restitution of 1.5: the run fails")
tap.has(err, "[0, 1]", "  the message says the range")
tap.done()
