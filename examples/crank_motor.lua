-- A crank-rocker four-bar driven at constant speed by a motor (sys:motor, docs/parts.md,
-- "Motors and actuators"). Ground pivots O = (0, 0) and B = (1, 0); crank OA 0.3 m, coupler
-- AC 0.9 m, rocker BC 0.8 m (Grashof: 0.3 + 1 < 0.9 + 0.8 and the crank is the shortest,
-- so it turns fully while the rocker swings). Each bar is a uniform rod of 2 kg/m; gravity
-- 9.81 m/s^2 along -y.
--
-- The motor holds the crank angle at theta(t) = pi/2 + omega t exactly: a rheonomic row
-- theta_crank - theta_ground - (angle0 + speed t) = 0 whose multiplier is the drive torque,
-- the channel drive.torque (N m, on the crank). With the drive the mechanism has no degree
-- of freedom left, so the torque is what the motion needs: its power drive.power =
-- torque * omega is the rate of change of the mechanism's energy, and its integral over any
-- interval is the change of energy (tests/lua/t_crank_motor.lua checks this).
--
--   joinery run examples/crank_motor.lua --out crank.csv
local joinery = require "joinery"

local omega = 2 * math.pi -- rad/s: one turn a second
local L_crank, L_coupler, L_rocker, B = 0.3, 0.9, 0.8, { 1, 0 }
local rho = 2 -- kg/m

local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground2d", "ground", {})
local pivot_b = sys:add("ground", "pivot_b", { dim = 2, x = B[1], y = B[2] })

-- The assembly at theta = pi/2: A on the crank, C where the coupler and rocker circles meet
-- (the upper intersection).
local th0 = math.pi / 2
local A = { L_crank * math.cos(th0), L_crank * math.sin(th0) }
local dx, dy = B[1] - A[1], B[2] - A[2]
local d = math.sqrt(dx * dx + dy * dy)
local a = (L_coupler ^ 2 - L_rocker ^ 2 + d * d) / (2 * d)
local h = math.sqrt(L_coupler ^ 2 - a * a)
local C = { A[1] + a * dx / d - h * dy / d, A[2] + a * dy / d + h * dx / d }

-- A uniform rod from p to q: a body2d at its middle, its x axis along the rod.
local function rod(name, L, p, q)
  local th = math.atan(q[2] - p[2], q[1] - p[1])
  return sys:add("body2d", name, { m = rho * L, J = rho * L * L * L / 12,
    init = { x = (p[1] + q[1]) / 2, y = (p[2] + q[2]) / 2, theta = th } })
end
local crank = rod("crank", L_crank, { 0, 0 }, A)
local coupler = rod("coupler", L_coupler, A, C)
local rocker = rod("rocker", L_rocker, B, C)

sys:pin(crank:point("o", { -L_crank / 2, 0 }), ground.pos, "pin_o")
sys:pin(crank:point("a", { L_crank / 2, 0 }), coupler:point("a", { -L_coupler / 2, 0 }), "pin_a")
sys:pin(coupler:point("c", { L_coupler / 2, 0 }), rocker:point("c", { L_rocker / 2, 0 }), "pin_c")
sys:pin(rocker:point("b", { -L_rocker / 2, 0 }), pivot_b.pos, "pin_b")

sys:motor { name = "drive", a = ground.frame, b = crank.frame, position = th0, speed = omega }

sys:settings { t_end = 2, dt_out = 0.0025 }
return sys
