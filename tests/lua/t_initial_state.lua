-- Consistent initial state: the script gives the coordinates it cares about; compiling
-- computes the rest, keeps the given values where the constraints allow, and reports what
-- moved and by how much.
local tap = dofile("tests/lua/tap.lua")
tap.plan(20)
local joinery = require "joinery"

-- The double pendulum given only its two angles: the pivots are computed. Glue elimination
-- would substitute the pivots away (they follow the bobs exactly); this file tests the
-- initial-state solve over them, so the pendulum models here keep them as coordinates.
local dp = dofile("examples/double_pendulum.lua"):compile { eliminate_glue = false }
local q, v = dp:initial()
local ev = dp:evaluate(q, v, 0)
tap.ok(ev["residual.pos"] < 1e-12 and ev["residual.vel"] < 1e-12,
  string.format("double pendulum from two angles: residuals %.1g, %.1g", ev["residual.pos"],
    ev["residual.vel"]))
tap.is_near(ev["p2.px"], math.sin(2.0), 1e-12, "p2's pivot computed at p1's bob (x = l1 sin th1)")
tap.ok(ev["p1.theta"] == 2.0 and ev["p2.theta"] == -1.0, "the angles the script gave are kept")

-- A four-bar of two point masses and three rods: ground A (0, 0) and D (2, 0), crank AB
-- (1 m), coupler BC (2 m), rocker DC (1.5 m).
local function four_bar(bx, by)
  local sys = joinery.system()
  local A = sys:add("ground", "A", { dim = 2 })
  local D = sys:add("ground", "D", { dim = 2, x = 2 })
  local B = sys:add("mass", "B", { dim = 2, init = { x = bx, y = by } })
  -- C's position is only a guess (which of the two assemblies): free to move.
  local C = sys:add("mass", "C", { dim = 2, guess = { x = 2.5, y = 1.5 } })
  sys:add("rod", "AB", { dim = 2, L = 1, a = A.pos, b = B.pos })
  sys:add("rod", "BC", { dim = 2, L = 2, a = B.pos, b = C.pos })
  sys:add("rod", "DC", { dim = 2, L = 1.5, a = D.pos, b = C.pos })
  return sys:compile()
end
local function dist(x1, y1, x2, y2) return math.sqrt((x1 - x2) ^ 2 + (y1 - y2) ^ 2) end

-- A consistent crank angle (60 degrees) is kept; C is assembled onto both circles.
local fb = four_bar(math.cos(math.rad(60)), math.sin(math.rad(60)))
ev = fb:evaluate(fb:initial())
tap.ok(math.abs(ev["B.x"] - 0.5) < 1e-15 and math.abs(ev["B.y"] - math.sin(math.rad(60))) < 1e-15,
  "a consistent crank position is kept exactly")
tap.ok(math.abs(dist(ev["B.x"], ev["B.y"], ev["C.x"], ev["C.y"]) - 2) < 1e-12 and
  math.abs(dist(2, 0, ev["C.x"], ev["C.y"]) - 1.5) < 1e-12, "C assembled onto both circles")

-- An inconsistent crank position (1.08 m from A): B has to move, and the report says so.
fb = four_bar(0.6, 0.9)
ev = fb:evaluate(fb:initial())
local report = fb:report()
tap.ok(math.abs(dist(0, 0, ev["B.x"], ev["B.y"]) - 1) < 1e-12, "the crank is brought to 1 m")
tap.ok(report:find("B.x", 1, true) and report:find("set by the script", 1, true),
  "the report says the script's crank position moved")
tap.diag(report)

-- No configuration at all: A and D are 5 m apart, the chain AB + BC + CD reaches 3 m.
local sys = joinery.system()
local A = sys:add("ground", "A", { dim = 2 })
local D = sys:add("ground", "D", { dim = 2, x = 5 })
local B = sys:add("mass", "B", { dim = 2, init = { x = 1 } })
local C = sys:add("mass", "C", { dim = 2, init = { x = 3 } })
sys:add("rod", "AB", { dim = 2, L = 1, a = A.pos, b = B.pos })
sys:add("rod", "BC", { dim = 2, L = 1, a = B.pos, b = C.pos })
sys:add("rod", "DC", { dim = 2, L = 1, a = D.pos, b = C.pos })
tap.raises(function() sys:compile() end, { "inconsistent constraints", "length" },
  "a four-bar that cannot close: the error names the rows")

-- Unset velocities stay at rest where the constraints allow. A chain of three pendulums,
-- each hung from the previous one's bob, with a velocity given only to the middle one:
-- the first can stay at rest (its bob carries the second's pivot, which then stays put),
-- the third's angle rate can stay zero (it is carried along by its pivot, the second's
-- bob, which moves at l2 w2 (cos th2, sin th2)). Only that pivot's velocity has to move,
-- and it follows its glue: no warning.
local l1, l2, l3, th1, th2, th3, w2 = 1.0, 0.7, 0.5, 0.3, 0.6, 0.9, 1.5
local function chain(close)
  local s = joinery.system { gravity = { 0, -9.81 } }
  local g = s:add("ground", "ground", { dim = 2 })
  local a = s:add("pendulum", "p1", { m = 1, l = l1, init = { theta = th1 }, pivot = g.pos })
  local b = s:add("pendulum", "p2", { m = 2, l = l2, init = { theta = th2 }, vel = { theta = w2 },
    pivot = a.bob })
  local c = s:add("pendulum", "p3", { m = 3, l = l3, init = { theta = th3 }, pivot = b.bob })
  if close then s:glue(c.bob, g.pos) end
  return s:compile { eliminate_glue = false }
end
local ch = chain(false)
local cq, cv = ch:initial()
ev = ch:evaluate(cq, cv, 0)
-- Every expected value is a product of the given numbers: the solve (rows of unit scale)
-- leaves rounding, measured below 1e-16; 1e-14 leaves a margin of 100.
tap.ok(ev["der(p1.theta)"] == 0 and ev["der(p3.theta)"] == 0 and ev["der(p2.theta)"] == w2
  and math.abs(ev["der(p2.px)"]) < 1e-14 and math.abs(ev["der(p2.py)"]) < 1e-14,
  string.format("chain, vel on the middle only: p1 and p3 at rest (der(p1.theta) %.3g, "
    .. "der(p3.theta) %.3g, p2's pivot %.3g, %.3g)", ev["der(p1.theta)"], ev["der(p3.theta)"],
    ev["der(p2.px)"], ev["der(p2.py)"]))
tap.ok(math.abs(ev["der(p3.px)"] - l2 * w2 * math.cos(th2)) < 1e-14
  and math.abs(ev["der(p3.py)"] - l2 * w2 * math.sin(th2)) < 1e-14,
  string.format("chain: p3's pivot moves with p2's bob, (%.15g, %.15g)", ev["der(p3.px)"],
    ev["der(p3.py)"]))
-- Kinetic energy: p2's bob at l2 w2 and p3's bob carried at the same velocity.
tap.is_near(ev.kinetic, 0.5 * (2 + 3) * (l2 * w2) ^ 2, 1e-14,
  "chain: kinetic energy 1/2 (m2 + m3) (l2 w2)^2 (rounding only)")
local moved = ch:moved()
local warned = {}
for _, mv in ipairs(moved) do if mv.warn then warned[#warned + 1] = mv.name end end
tap.ok(#warned == 0 and #moved == 6, string.format("chain: %d values moved (the pivots' "
  .. "positions and p3's pivot velocity, all following their glue), %d warned", #moved, #warned))

-- The chain closed (p3's bob glued back to the ground pivot): a loop with one degree of
-- freedom, so p1 and p3 must turn too. The unset rates move, with a warning each.
ch = chain(true)
cq, cv = ch:initial()
local function loop_rate(q, v) -- velocity of the loop's end: sum l_i w_i (cos th_i, sin th_i)
  local x, y = 0, 0
  for i, l in ipairs { l1, l2, l3 } do
    x = x + l * v[3 * i] * math.cos(q[3 * i])
    y = y + l * v[3 * i] * math.sin(q[3 * i])
  end
  return x, y
end
local ex, ey = loop_rate(cq, cv)
tap.ok(math.abs(ex) < 1e-12 and math.abs(ey) < 1e-12 and cv[6] == w2,
  string.format("closed chain: the loop closes in velocity (%.1g, %.1g) with p2's rate held", ex, ey))
warned = {}
for _, mv in ipairs(ch:moved()) do if mv.warn then warned[mv.name] = mv end end
tap.ok(warned["der(p1.theta)"] and warned["der(p3.theta)"] and not warned["der(p2.theta)"]
  and not warned["der(p1.theta)"].set, "closed chain: the moved unset rates are warned about")

-- All three rates set on the closed loop (1, 2, 3 rad/s): they cannot all hold, so the set
-- values move, as little as the loop allows. On the equilateral triangle the loop's
-- velocity null space is the rigid turn (1, 1, 1) (sum_i l (cos th_i, sin th_i) = 0), so
-- the least change projects (1, 2, 3) onto it: 2 rad/s each. Warned, as set values.
local sys3 = joinery.system { gravity = { 0, -9.81 } }
local g3 = sys3:add("ground", "ground", { dim = 2 })
local tri = { math.pi / 2, 7 * math.pi / 6, 11 * math.pi / 6 } -- an equilateral triangle
local prev = g3.pos
for i = 1, 3 do
  prev = sys3:add("pendulum", "p" .. i, { m = 1, l = 1, init = { theta = tri[i] },
    vel = { theta = i }, pivot = prev }).bob
end
sys3:glue(prev, g3.pos)
local tm = sys3:compile { eliminate_glue = false }
local tq, tv = tm:initial()
local worst = 0
for i = 1, 3 do worst = math.max(worst, math.abs(tv[3 * i] - 2), math.abs(tq[3 * i] - tri[i])) end
-- One linear least-squares step on rows of unit scale: rounding only.
tap.ok(worst < 1e-14, string.format("set rates that cannot hold move least: (%.15g, %.15g, "
  .. "%.15g), angles kept (off by %.1g)", tv[3], tv[6], tv[9], worst))
warned = 0
for _, mv in ipairs(tm:moved()) do if mv.warn and mv.set then warned = warned + 1 end end
tap.ok(warned == 2, string.format("the %d set rates that moved (1 and 3 rad/s) are warned "
  .. "about", warned))

-- The command line prints one warning per moved value on stderr.
local tmp = os.tmpname()
local script = io.open(tmp, "w")
script:write([[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local g = sys:add("ground", "ground", { dim = 2 })
local p = sys:add("pendulum", "p", { m = 1, l = 1, init = { theta = 0.5 }, pivot = g.pos })
local q = sys:add("pendulum", "q", { m = 1, l = 1, init = { theta = 1 }, vel = { theta = 1 },
  pivot = p.bob })
sys:glue(q.bob, g.pos)
sys:settings { t_end = 0.01 }
return sys
]])
script:close()
local cmd = string.format("'%s' run '%s' --out '%s.csv' 2>&1 >/dev/null", tap.joinery(), tmp, tmp)
local pipe = io.popen(cmd)
local err = pipe:read("a")
pipe:close()
os.remove(tmp)
os.remove(tmp .. ".csv")
tap.ok(err:find("warning: initial p.theta moved from 0.5", 1, true)
  and err:find("(it was set by the script)", 1, true)
  and not err:find("warning: initial der(p.theta)", 1, true),
  "joinery run warns on stderr about each moved initial value the script set, not the unset")
local settled = tonumber(err:match("; (%d+) unset initial values? settled onto the constraints"))
tap.ok(settled and settled > 0 and err:find("model: %d+ coordinates.-degrees? of freedom; %d+ unset"),
  string.format("the doctor's line counts the unset values that settled (%s)", tostring(settled)))
tap.diag(err)
tap.done()
