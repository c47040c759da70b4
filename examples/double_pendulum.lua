-- Two pendulum parts, the second hung from the first one's bob. Each pendulum owns its
-- pivot coordinates (px, py), which carry no mass. Glue elimination substitutes them (p1's
-- pivot follows the ground, p2's follows p1's bob), so the model integrates the two angles;
-- with `sys:compile { eliminate_glue = false }` the pivots stay, M is singular, and only
-- the glue rows determine their motion (the auxiliary-mass form of the acceleration solve).
--
--   joinery run examples/double_pendulum.lua --rtol 1e-11 --atol 1e-12
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local p1 = sys:add("pendulum", "p1", { m = 1, l = 1, init = { theta = 2.0 }, pivot = ground.pos })
sys:add("pendulum", "p2", { m = 0.5, l = 0.7, init = { theta = -1.0 }, pivot = p1.bob })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
