-- Tracking control by a constraint (Udwadia 2005, "Recent advances in multi-body dynamics
-- and nonlinear control", eq. 25): a pendulum made to follow theta_d(t) = (pi/4) cos(2 t).
--
-- The trajectory requirement is written as a rheonomic constraint on the coordinate itself,
--   phi(theta, t) = theta - theta_d(t) = 0,
-- and the constraint force the engine computes, Q^c = M^1/2 B^+ (b - A a), is the control
-- torque that makes the nonlinear pendulum follow it exactly — no linearization, no gains.
-- Here A = [1] on theta, so the torque is the row's multiplier, the channel force.track.r1.
-- For this one-degree-of-freedom system it must be the inverse dynamics
--   tau = m l^2 theta_d'' + m g l sin(theta_d);
-- tests/lua/t_tracking.lua checks that to 1e-8 N m over 10 s.
--
-- The pivot is glued to the ground. The script starts the pendulum on the trajectory,
-- theta(0) = pi/4; its velocity (0, as theta_d'(0) = 0) comes from the compile's projection.
--
--   joinery run examples/tracking.lua --out tracking.csv
local joinery = require "joinery"
local M = joinery.math

local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local pend = sys:add("pendulum", "pend", { m = 1, l = 1, init = { theta = math.pi / 4 },
  pivot = ground.pos })

sys:constrain {
  name = "track",
  on = { pend.theta },      -- the coordinate itself: x = { theta }
  phi = function(x, t) return x[1] - math.pi / 4 * M.cos(2 * t) end,
}

sys:settings { t_end = 10, dt_out = 0.01, rtol = 1e-11, atol = 1e-12 }
return sys
