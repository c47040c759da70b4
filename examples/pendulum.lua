-- A point mass on a massless rod: the Cartesian pendulum. The bob (1 kg) starts at rest
-- at (1, 0), level with the pivot, so it swings through 90 degrees each side; the rod's
-- tension is an output channel (rod.tension), 3 m g at the lowest point.
--
--   joinery run examples/pendulum.lua
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
