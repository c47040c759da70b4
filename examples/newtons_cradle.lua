-- Newton's cradle: five balls (1 kg, radius 5 cm) on rods of length 1 m, each ball kept at
-- least one diameter from its neighbours by a one-sided `contact` with restitution e = 1.
-- The first ball is released at 30 degrees; the collisions run down the row one pair at a
-- time and the last ball swings out, comes back, and the row passes it back.
--
-- The pivots are 3 micrometres further apart than the balls' diameter so that the
-- collisions are successive binary impacts (touching balls would make one simultaneous
-- impact, whose outcome the textbook cradle does not show). Closed forms: each impact is
-- the impulsive Udwadia-Kalaba law with e = 1 on one contact row and the rods' rates kept:
-- it conserves the kinetic energy exactly (the rows' rates are reversed or 0 before and
-- after), and the balls' horizontal momentum up to the rods' share of the impulse, J
-- (gap / l)^2 ~ 1e-11 J (the balls meet within gap / l = 3e-6 rad of the vertical). Equal
-- masses exchange their velocities: the ball that strikes stops. Between impacts each
-- ball is a pendulum, energy conserved.
--
-- The integration between impacts is what moves the energy: its global error over the
-- ten collisions in 3 s, relative to m g l (1 - cos 30 deg), measured (every OpenBLAS
-- kernel alike): bdf 5.5e-9 / 4.1e-10, adams 2.5e-9 / 1.0e-10, erk 6.5e-10 / 3.8e-11 at
-- rtol 1e-11, atol 1e-12 / rtol 1e-12, atol 1e-14. The settings below (adams, 1e-12,
-- 1e-14: 840 steps, 1620 right-hand sides) keep it at 1e-10, a tenth of the issue's 1e-9.
--
--   joinery run examples/newtons_cradle.lua
local joinery = require "joinery"

local n, m, l, radius, gap, theta0 = 5, 1, 1, 0.05, 3e-6, math.rad(30)
local sys = joinery.system { gravity = { 0, -9.81 } }
local balls = {}
for i = 1, n do
  local px = (i - 1) * (2 * radius + gap)
  local pivot = sys:add("ground", "pivot" .. i, { dim = 2, x = px, y = 0 })
  local theta = i == 1 and -theta0 or 0
  balls[i] = sys:add("mass", "ball" .. i, { dim = 2, m = m,
    init = { x = px + l * math.sin(theta), y = -l * math.cos(theta) } })
  sys:add("rod", "rod" .. i, { dim = 2, L = l, a = pivot.pos, b = balls[i].pos })
end
for i = 1, n - 1 do
  sys:add("contact", "contact" .. i .. (i + 1), { dim = 2, D = 2 * radius, e = 1,
    a = balls[i].pos, b = balls[i + 1].pos })
end
sys:settings { t_end = 3, dt_out = 0.01, method = "adams", rtol = 1e-12, atol = 1e-14 }
return sys
