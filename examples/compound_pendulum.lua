-- The pendulum rebuilt from a rigid body: a uniform rod (body2d, m = 1 kg, L = 1 m,
-- J = m L^2 / 12 about its centre) pinned at one end. Its body x axis runs along the rod, so
-- the pivot is the body point (-L/2, 0). It starts at rest, level with the pivot (theta = 0),
-- and swings through 90 degrees each side with the compound-pendulum period
-- T = 4 sqrt(I_p / (m g d)) K(sin 45 deg), I_p = m L^2 / 3, d = L / 2 (tests/lua/t_compound_pendulum.lua).
--
--   joinery run examples/compound_pendulum.lua
local joinery = require "joinery"

local m, L = 1, 1
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local rod = sys:add("body2d", "rod", { m = m, J = m * L * L / 12,
                                       init = { x = L / 2, y = 0, theta = 0 } })
sys:pin(rod:point("top", { -L / 2, 0 }), pivot.pos, "hinge") -- force.hinge.x/.y on the rod
local tip = rod:point("tip", { L / 2, 0 })

-- User channels: the swing angle from the vertical and the height of the free end.
sys:channel("swing", function(s) return s["rod.theta"] + math.pi / 2 end)
sys:channel("tip_y", function(s) return s["rod.y"] + L / 2 * math.sin(s["rod.theta"]) end)

sys:settings { t_end = 10, dt_out = 0.01 }
return sys
