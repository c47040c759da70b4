-- The example of Udwadia, Kalaba & Fan (seed udwadia-kalaba-fan-2005, section 4): a unit
-- mass confined to the line x2 = k x1 (k = 0.5) in a vertical plane, with a non-ideal
-- constraint force c = (1, 2) (an electromagnetic force that does work 1 dx1 + 2 dx2 in a
-- virtual displacement). The guide holds the point on k x - y = 0 and carries c; from rest
-- at the origin the particle accelerates uniformly with a of the paper's eq. (32).
local joinery = require "joinery"

local k = 0.5
local sys = joinery.system { gravity = { 0, -9.81 } }
local particle = sys:add("mass", "particle", { dim = 2, m = 1 })
sys:add("guide", "line", {
  dim = 2, nx = k, ny = -1, d = 0, -- k x1 - x2 = 0
  cx = 1, cy = 2,                  -- the non-ideal constraint force c
  pos = particle.pos })
sys:settings { t_end = 1, dt_out = 0.01 }
return sys
