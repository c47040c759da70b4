-- A pendulum on a rope: a bob (1 kg) on an inextensible rope of length L = 1 m that can go
-- slack (distance to the pivot at most L), thrown from the lowest point with v0 =
-- sqrt(2.5 g L) = 4.952 m/s. The rope pulls while taut; where its tension would turn into
-- a push it goes slack, the bob flies on a parabola, and when the rope snaps taut again the
-- jerk is a plastic impact (e = 0) on the rope's row (docs/events.md, "The impact law").
--
-- Closed forms: taut, the tension is T = m v^2 / L + m g cos(theta) (theta from the lowest
-- point) with v^2 = v0^2 - 2 g L (1 - cos theta), so the rope goes slack where T = 0:
--   cos(theta_s) = (2 g L - v0^2) / (3 g L) = -1/6 (theta_s = 99.59 deg), v_s^2 = g L / 6.
-- Slack, the bob is on the parabola through that point with that velocity. At each jerk
-- the plastic impulse removes the radial velocity v_r = (r . v) / |r| and keeps the
-- tangential one, so the energy drops by exactly the impact's loss 1/2 m v_r^2. The bob
-- swings back and forth above the pivot's level, snapping taut five times in 6 s
-- (t = 1.012, 2.135, 3.335, 4.535, 5.736 s, losses 1.336, 0.135, 0.092, 0.069, 0.054 J).
--
--   joinery run examples/rope_pendulum.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local g, L = 9.81, 1
local sys = joinery.system { gravity = { 0, -g } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1,
  init = { x = 0, y = -L }, vel = { x = math.sqrt(2.5 * g * L), y = 0 } })
sys:add("rope", "rope", { dim = 2, L = L, e = 0, a = pivot.pos, b = bob.pos })
sys:settings { t_end = 6, dt_out = 0.01 }
return sys
