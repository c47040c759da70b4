-- examples/compound_pendulum.lua: a uniform rod (body2d) pinned at one end. Its period
-- against the closed form T = 4 sqrt(I_p / (m g d)) K(sin(theta0 / 2)), I_p = m L^2 / 3,
-- d = L / 2, theta0 = 90 degrees; the pin force at release against m g / 4; energy; and the
-- user channels against the coordinates they are computed from.
local tap = dofile("tests/lua/tap.lua")
tap.plan(8)
local m, L, g = 1, 1, 9.81

local function ellipk(k) -- K(k) = pi / (2 AGM(1, sqrt(1 - k^2)))
  local a, b = 1, math.sqrt(1 - k * k)
  for _ = 1, 40 do a, b = (a + b) / 2, math.sqrt(a * b) end
  return math.pi / (2 * a)
end
local Ip, dist = m * L * L / 3, L / 2
local period = 4 * math.sqrt(Ip / (m * g * dist)) * ellipk(math.sin(math.pi / 4))

local sys = dofile("examples/compound_pendulum.lua")
local model = sys:compile()
tap.ok(model:num_coords() == 3 and model:num_rows() == 2,
  string.format("the rod and its two markers integrate 3 coordinates and 2 pin rows (%s)", tostring(model)))

local res = model:simulate { rtol = 1e-12, atol = 1e-13, t_end = 5, dt_out = 0.01 }
local t, x, w = res.t, res.swing, res["der(rod.theta)"]
-- Times where the swing angle crosses 0 going negative, on the cubic Hermite interpolant of
-- the angle and its rate between outputs (the rod is fastest there: nearly linear).
local function crossing(i)
  local h = t[i + 1] - t[i]
  local p0, p1, m0, m1 = x[i], x[i + 1], w[i] * h, w[i + 1] * h
  local function f(s)
    local s2, s3 = s * s, s * s * s
    return (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1
           + (s3 - s2) * m1
  end
  local lo, hi = 0, 1
  for _ = 1, 60 do
    local mid = (lo + hi) / 2
    if (f(mid) > 0) == (p0 > 0) then lo = mid else hi = mid end
  end
  return t[i] + h * (lo + hi) / 2
end
local crossings = {}
for i = 1, #t - 1 do
  if x[i] > 0 and x[i + 1] <= 0 then crossings[#crossings + 1] = crossing(i) end
end
tap.ok(#crossings >= 3, "the rod passes the bottom in the same direction at least three times in 5 s")
local measured = (crossings[#crossings] - crossings[1]) / (#crossings - 1)
tap.is_near(measured / period, 1, 1e-8, "period = 4 sqrt(I_p/(m g d)) K(sin 45 deg) to 1e-8 relative")
tap.diag(string.format("period %.12f s, closed form %.12f s (%d periods, %.3f s run)",
  measured, period, #crossings - 1, res.seconds))

-- Released from rest level with the pivot, the rod's centre starts down at 3 g / 4, so the
-- pin holds it with m g / 4 (force.hinge: the force on the rod's pivot point).
tap.is_near(res["force.hinge.y"][1] / (m * g / 4), 1, 1e-12, "pin force at release = m g / 4, upwards")
tap.ok(math.abs(res["force.hinge.x"][1]) < 1e-12, "and nothing sideways")

local drift, ch = 0, 0
for i = 1, #t do
  drift = math.max(drift, math.abs(res.energy[i] - res.energy[1]) / (m * g * L))
  local want = res["rod.y"][i] + L / 2 * math.sin(res["rod.theta"][i])
  ch = math.max(ch, math.abs(res.tip_y[i] - want), math.abs(res.swing[i] - res["rod.theta"][i] - math.pi / 2))
end
tap.ok(drift < 1e-9, string.format("energy conserved to %.2g m g L", drift))
tap.ok(ch == 0, "user channels swing and tip_y are exactly what their functions compute")
-- The lowest point of the free end: the rod hangs straight down at the bottom of the swing.
local lowest = math.huge
for i = 1, #t do lowest = math.min(lowest, res.tip_y[i]) end
tap.ok(lowest > -L - 1e-9 and lowest < -L + 1e-3, string.format("the free end reaches y = %.6f m (>= -L)", lowest))
tap.done()
