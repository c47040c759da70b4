-- examples/driven_pendulum.lua: the angle against a minimal-coordinate RK4 integration of
-- theta'' = -(g + y_p'') sin(theta) / l, y_p'' = -a w^2 cos(w t), to 1e-7 rad at t = 5 s.
local tap = dofile("tests/lua/tap.lua")
tap.plan(4)
local g, l, a, w = 9.81, 1.0, 0.05, 10.0

local function f(t, th, om) return om, -(g - a * w * w * math.cos(w * t)) * math.sin(th) / l end
-- RK4 with h = 1e-4 s: the global error ~ h^4 (w^2)^2 ~ 1e-12, far below the 1e-7 asked.
local th, om, h = 0.5, 0.0, 1e-4
for k = 0, 49999 do
  local t = k * h
  local k1a, k1b = f(t, th, om)
  local k2a, k2b = f(t + h / 2, th + h / 2 * k1a, om + h / 2 * k1b)
  local k3a, k3b = f(t + h / 2, th + h / 2 * k2a, om + h / 2 * k2b)
  local k4a, k4b = f(t + h, th + h * k3a, om + h * k3b)
  th = th + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
  om = om + h / 6 * (k1b + 2 * k2b + 2 * k3b + k4b)
end

local res = dofile("examples/driven_pendulum.lua"):simulate()
local n = #res.t
tap.ok(res.t[n] == 5, "ran 5 s")
tap.is_near(res["pend.theta"][n], th, 1e-7, "theta(5 s) = minimal-coordinate RK4")
tap.is_near(res["der(pend.theta)"][n], om, 1e-6, "theta'(5 s) = minimal-coordinate RK4")
-- The pivot follows the prescription (the rheonomic rows hold).
local worst = 0
for i = 1, n do
  worst = math.max(worst, math.abs(res["pend.py"][i] - a * math.cos(w * res.t[i])),
    math.abs(res["pend.px"][i]))
end
tap.ok(worst < 1e-9, string.format("pivot at (0, a cos(w t)): max error %.2e m", worst))
tap.done()
