-- Consistent initial state: the script gives the coordinates it cares about; compiling
-- computes the rest, keeps the given values where the constraints allow, and reports what
-- moved and by how much.
local tap = dofile("tests/lua/tap.lua")
tap.plan(10)
local joinery = require "joinery"

-- The double pendulum given only its two angles: the pivots are computed.
local dp = dofile("examples/double_pendulum.lua"):compile()
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
tap.done()
