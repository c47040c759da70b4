-- A single four-bar linkage that passes its flat (singular) configuration ten times in
-- 10 s. Crank, coupler and rocker are uniform rods of 1 m and 1 kg (J = 1/12 kg m^2 about
-- the centre); the crank and the rocker are pinned to the ground at (0, 0) and (1, 0). It
-- starts square — crank and rocker upright, coupler level at y = 1 — with the crank turning
-- at -1 rad/s, under g = 9.81 m/s^2 along -y.
--
-- Where all three bars lie along the ground line the constraint Jacobian loses rank and
-- two branches of motion cross: the parallelogram (rocker parallel to the crank, coupler
-- level), on which the mechanism started, and one where the crank stays put. On the
-- parallelogram the motion reduces to one equation, (5/3) theta'' = -2 g cos(theta) for the
-- crank angle theta: the crank keeps turning and ends near -30.34 rad at 10 s, the coupler
-- level throughout (tests/lua/t_four_bar.lua checks both against that reduction).
--
-- No integration settings: this is the defaults' test. BDF with the projection inside its
-- steps goes straight through every flat passage; a method that cannot stops with an error
-- naming the singular configuration rather than continue on the other branch.
--   joinery run examples/four_bar.lua
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local function bar(name, x, y, theta, vx, vy, omega)
  return sys:add("body2d", name, { m = 1, J = 1 / 12, init = { x = x, y = y, theta = theta },
    vel = { x = vx, y = vy, theta = omega } })
end
local crank = bar("crank", 0, 0.5, math.pi / 2, 0.5, 0, -1)
local rocker = bar("rocker", 1, 0.5, math.pi / 2, 0.5, 0, -1)
local coupler = bar("coupler", 0.5, 1, 0, 1, 0, 0)
local ground = sys:add("ground", "ground", { dim = 2 })
local pivot_b = sys:add("ground", "pivot_b", { dim = 2, x = 1, y = 0 })
sys:glue(crank:point("foot", { -0.5, 0 }), ground.pos, "pin_a")
sys:glue(rocker:point("foot", { -0.5, 0 }), pivot_b.pos, "pin_b")
sys:glue(coupler:point("left", { -0.5, 0 }), crank:point("tip", { 0.5, 0 }), "pin_c")
sys:glue(coupler:point("right", { 0.5, 0 }), rocker:point("tip", { 0.5, 0 }), "pin_d")
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
