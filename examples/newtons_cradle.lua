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
--   joinery run examples/newtons_cradle.lua --rtol 1e-10 --atol 1e-12
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
sys:settings { t_end = 3, dt_out = 0.01 }
return sys
