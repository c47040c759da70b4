-- examples/friction_incline.lua: x(t) = 1/2 g (sin a - mu cos a) t^2 along the incline,
-- the friction force mu m g cos a, and the energy lost equal to the work of friction.
local tap = dofile("tests/lua/tap.lua")
tap.plan(6)
local g, alpha, mu = 9.81, math.rad(30), 0.2
local res = dofile("examples/friction_incline.lua"):simulate { rtol = 1e-10, atol = 1e-12 }
local n = #res.t
local x, y = res["block.x"][n], res["block.y"][n]
-- Distance down the incline (the block moves towards -x, -y).
local along = -(x * math.cos(alpha) + y * math.sin(alpha))
tap.is_near(along, 0.5 * g * (math.sin(alpha) - mu * math.cos(alpha)), 1e-9,
  "x(1 s) = 1/2 g (sin a - mu cos a) t^2 along the incline")
tap.is_near(res["incline.normal_force"][n], g * math.cos(alpha), 1e-9, "normal force m g cos a")
tap.is_near(res["incline.friction_force"][n], mu * g * math.cos(alpha), 1e-9,
  "friction force mu m g cos a")
-- The power of friction is linear in t here, so the trapezoidal rule is exact.
local work = 0
for i = 2, n do
  work = work + (res.t[i] - res.t[i - 1]) *
    (res["incline.friction_power"][i] + res["incline.friction_power"][i - 1]) / 2
end
tap.is_near(res.energy[n] - res.energy[1], work, 1e-9, "energy lost = work of friction")
local total = 0
for i = 2, n do
  total = total + (res.t[i] - res.t[i - 1]) * (res["power.nonideal"][i] + res["power.nonideal"][i - 1]) / 2
end
tap.is_near(total, work, 1e-9, "power.nonideal carries the friction power")
local worst = 0
for i = 1, n do
  worst = math.max(worst, math.abs(res["power.incline.nonideal"][i] - res["incline.friction_power"][i]),
    math.abs(res["power.incline.ideal"][i]))
end
tap.ok(worst < 1e-9, "per-constraint channels: power.incline.nonideal is the friction power, "
  .. "power.incline.ideal is 0")
tap.done()
