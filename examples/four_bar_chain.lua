-- The IFToMM benchmark A02, the N-four-bar mechanism, with N = 40: 41 vertical cranks and
-- 40 horizontal couplers, every one a slender uniform rod of 1 m and 1 kg (J = 1/12 kg m^2
-- about its centre), cranks pinned to the ground at (i, 0), couplers pinned to the tops
-- of neighbouring cranks. Gravity 9.81 m/s^2 along -y. The top of the first crank starts
-- with a horizontal velocity of 1 m/s: every crank turns at -1 rad/s, the couplers
-- translate at 1 m/s.
--
-- The mechanism has one degree of freedom and 81 bodies: 243 coordinates, 242 pin rows.
-- Each time the cranks lie flat (about 20 times in 20 s) the constraint Jacobian loses
-- rank and the mechanism could switch branch; the acceleration solve is minimum-norm, so
-- it goes straight through, and the cranks stay parallel.
--
-- Settings: BDF with projection onto the constraints inside every step (Newton-Krylov for
-- its 486 states) keeps the cranks parallel through all the flat passages; the sparse
-- solve (CHOLMOD) takes the 243 x 242 Jacobian, the dense rank-revealing one only near the
-- flat configurations. The error control is absolute (atol 1e-11 dominates rtol 1e-12):
-- every coordinate is of order 1 m or 1 m/s except the couplers' x, up to 40 m, which a
-- relative tolerance would let drift 40 times more, and the energy feels absolute errors.
--   joinery run examples/four_bar_chain.lua
local joinery = require "joinery"

local N = 40
local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local tops = {}
for i = 0, N do
  local crank = sys:add("body2d", "crank" .. i, {
    m = 1, J = 1 / 12,
    init = { x = i, y = 0.5, theta = math.pi / 2 },
    vel = { x = 0.5, y = 0, theta = -1 } })
  local pivot = sys:add("ground", "pivot" .. i, { dim = 2, x = i, y = 0 })
  sys:glue(crank:point("bottom", { -0.5, 0 }), pivot.pos, "pin" .. i)
  tops[i] = crank:point("top", { 0.5, 0 })
end
for j = 1, N do
  local coupler = sys:add("body2d", "coupler" .. j, {
    m = 1, J = 1 / 12,
    init = { x = j - 0.5, y = 1, theta = 0 },
    vel = { x = 1, y = 0, theta = 0 } })
  sys:glue(coupler:point("left", { -0.5, 0 }), tops[j - 1], "left" .. j)
  sys:glue(coupler:point("right", { 0.5, 0 }), tops[j], "right" .. j)
end
-- The first crank's top, as the benchmark reports it.
sys:channel("B0.x", function(s) return s["crank0.x"] + 0.5 * math.cos(s["crank0.theta"]) end)
sys:channel("B0.y", function(s) return s["crank0.y"] + 0.5 * math.sin(s["crank0.theta"]) end)
-- atol_velocity = atol: at the flat passages the couplers' rotation rates are determined
-- only to the rounding the solve amplifies there, and the default 10 atol on velocities let
-- BDF stall there under one BLAS kernel (Haswell) of three.
sys:settings { t_end = 20, dt_out = 0.01, method = "bdf", rtol = 1e-12, atol = 1e-11,
  atol_velocity = 1e-11 }
return sys
