-- examples/constant_speed.lua (a constraint nonlinear in the velocities): the velocity angle
-- and the position against the closed form theta(t) = gd(asinh(tan theta0) - g t / v0),
-- x = -(v0^2/g)(theta - theta0), y = -(v0^2/g) ln(cosh u / cosh u0); the speed stays v0 and
-- the constraint's power is the rate of change of the potential energy, m g y'.
local tap = dofile("tests/lua/tap.lua")
tap.plan(5)
local g, v0, theta0 = 9.81, 3.0, math.rad(60)
local function asinh(x) return math.log(x + math.sqrt(x * x + 1)) end
local function cosh(x) return (math.exp(x) + math.exp(-x)) / 2 end
local function sinh(x) return (math.exp(x) - math.exp(-x)) / 2 end
local u0 = asinh(math.tan(theta0))

local res = dofile("examples/constant_speed.lua"):simulate()
local n = #res.t
local ang, pos, speed, power = 0, 0, 0, 0
for i = 1, n do
  local t = res.t[i]
  local u = u0 - g * t / v0
  local theta = math.atan(sinh(u)) -- gd(u)
  local x = -(v0 * v0 / g) * (theta - theta0)
  local y = -(v0 * v0 / g) * math.log(cosh(u) / cosh(u0))
  local vx, vy = res["der(ball.x)"][i], res["der(ball.y)"][i]
  ang = math.max(ang, math.abs(math.atan(vy, vx) - theta))
  pos = math.max(pos, math.abs(res["ball.x"][i] - x), math.abs(res["ball.y"][i] - y))
  speed = math.max(speed, math.abs(math.sqrt(vx * vx + vy * vy) - v0))
  power = math.max(power, math.abs(res["power.cruise.ideal"][i] - g * vy))
end
tap.ok(res.t[n] == 3, "ran 3 s")
-- Tolerances: the integration (rtol 1e-11) leaves ~1e-10; 1e-8 leaves room for the
-- angle's amplification near the vertical (cos theta -> 0).
tap.ok(ang < 1e-8, string.format("velocity angle = Gudermannian closed form: max error %.2e rad", ang))
tap.ok(pos < 1e-8, string.format("position = closed form: max error %.2e m", pos))
tap.ok(speed < 1e-9, string.format("speed stays v0: max error %.2e m/s", speed))
-- The constraint force cancels gravity along v: its power is m g y' (m = 1).
tap.ok(power < 1e-8, string.format("power.cruise.ideal = m g y': max error %.2e W", power))
tap.done()
