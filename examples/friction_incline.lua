-- A block sliding down a 30 degree incline with Coulomb friction mu = 0.2: a non-ideal
-- constraint whose force depends on the constraint's own ideal (normal) force. The guide
-- holds the block on the incline line and applies -mu |N| along the sliding direction;
-- the engine resolves the dependence on N by fixed-point iteration (docs/numerics.md).
-- From rest the block slides with a = g (sin alpha - mu cos alpha).
local joinery = require "joinery"

local alpha, mu = math.rad(30), 0.2
local sys = joinery.system { gravity = { 0, -9.81 } }
local block = sys:add("mass", "block", { dim = 2, m = 1 })
sys:add("guide", "incline", {
  dim = 2, nx = -math.sin(alpha), ny = math.cos(alpha), d = 0, -- the line y = x tan(alpha)
  mu = mu, pos = block.pos })
sys:settings { t_end = 1, dt_out = 0.01 }
return sys
