-- A ball (1 kg) bouncing down a staircase: six treads, each a floor bounded to its own
-- stretch of x (tread k is y = -0.2 k for 0.5 k <= x <= 0.5 (k + 1)), restitution 0.6. It
-- starts at (0.1, 0.3) m moving right at 0.9 m/s. Past a tread's edge the ball goes below
-- that tread's level without touching it (the tread's mode `below`) and lands on a lower
-- one (docs/events.md, "Bounded floors, surfaces on bodies").
--
-- Closed form (g = 9.81): the flights are parabolas; an impact is the earliest downward
-- crossing of a tread's level with x inside its stretch, after which the vertical velocity
-- is -0.6 times what it was. The first is on tread 0 at t = sqrt(0.6 / g) = 0.2473097 s,
-- x = 0.32258 m; eight impacts by t = 2.5 s, the last on tread 4
-- (tests/lua/t_surfaces.lua computes them all).
--
--   joinery run examples/staircase.lua
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0.1, y = 0.3 },
  vel = { x = 0.9 } })
for k = 0, 5 do
  sys:add("floor", "tread" .. k, { dim = 2, nx = 0, ny = 1, d = -0.2 * k, e = 0.6,
    x_min = 0.5 * k, x_max = 0.5 * (k + 1), pos = ball.pos })
end
sys:settings { t_end = 2.5, dt_out = 0.01 }
return sys
