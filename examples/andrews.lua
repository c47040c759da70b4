-- Andrews' squeezing mechanism: the seven-body test problem of Hairer & Wanner (Solving
-- ODEs II, section VII.7) and of the Test Set for IVP Solvers ("andrews"), built from
-- planar rigid bodies (body2d), points on them (body:point) and pin joints (sys:pin).
--
-- Seven bodies move in the plane without gravity: the crank K1 turns about the origin O,
-- driven by the torque mom; the rod K2 joins the crank's end P to the point E, where the
-- triangle K3 (pivoted at B), the rod K4 (joined at F to the triangle K5, pivoted at A) and
-- the rod K6 (joined at G to the triangle K7, also pivoted at A) meet. A spring c0, rest
-- length l0, pulls the triangle K3's corner D towards the fixed point C. 21 coordinates,
-- 20 pin rows: one degree of freedom.
--
-- Each body's x axis is laid along the line the Test Set measures its angle from, so the
-- body angles theta_i are the Test Set's absolute angles: beta, beta + Theta, gamma,
-- Phi + delta, delta, Omega + epsilon, epsilon. Body points are in body axes from each
-- centre of mass (they are Hairer & Wanner's figure and formulas, e.g. the centre of mass
-- of K2 lies da from P towards E). The output channels beta, Theta, gamma, Phi, delta,
-- Omega, epsilon are the Test Set's seven angles (continuous: body angles are never
-- wrapped).
--
--   joinery run examples/andrews.lua
local joinery = require "joinery"

-- The Test Set's data (SI units).
local m = { 0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498 }
local J = { 2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5 }
local xa, ya, xb, yb, xc, yc = -0.06934, -0.00227, -0.03635, 0.03273, 0.014, 0.072
local d, da, e, ea = 0.028, 0.0115, 0.02, 0.01421
local rr, ra = 0.007, 0.00092
local ss, sa, sb, sc, sd = 0.035, 0.01874, 0.01043, 0.018, 0.02
local ta, tb = 0.02308, 0.00916
local u, ua, ub = 0.04, 0.01228, 0.00449
local zf, zt, fa = 0.02, 0.04, 0.01421
local mom, c0, l0 = 0.033, 4530, 0.07785

-- The consistent initial angles (all velocities zero).
local beta, Theta = -0.0617138900142764496358948458001, 0
local gamma = 0.455279819163070380255912382449
local Phi, delta = 0.222668390165885884674473185609, 0.487364979543842550225598953530
local Omega, epsilon = -0.222668390165885884674473185609, 1.23054744454982119249735015568

-- Absolute body angles and centres of mass at t = 0.
local th = { beta, beta + Theta, gamma, Phi + delta, delta, Omega + epsilon, epsilon }
local c, s = {}, {}
for i = 1, 7 do c[i], s[i] = math.cos(th[i]), math.sin(th[i]) end
local com = {
  { ra * c[1], ra * s[1] },
  { rr * c[1] - da * c[2], rr * s[1] - da * s[2] },
  { xb + sa * s[3] + sb * c[3], yb - sa * c[3] + sb * s[3] },
  { xa + zt * c[5] + (e - ea) * s[4], ya + zt * s[5] - (e - ea) * c[4] },
  { xa + ta * c[5] - tb * s[5], ya + ta * s[5] + tb * c[5] },
  { xa + u * s[7] + (zf - fa) * c[6], ya - u * c[7] + (zf - fa) * s[6] },
  { xa + ua * s[7] - ub * c[7], ya - ua * c[7] - ub * s[7] },
}

local sys = joinery.system { gravity = { 0, 0 } }
local K = {}
for i = 1, 7 do
  K[i] = sys:add("body2d", "K" .. i, { m = m[i], J = J[i],
    init = { x = com[i][1], y = com[i][2], theta = th[i] } })
end
local O = sys:add("ground", "O", { dim = 2, x = 0, y = 0 })
local A = sys:add("ground", "A", { dim = 2, x = xa, y = ya })
local B = sys:add("ground", "B", { dim = 2, x = xb, y = yb })
local C = sys:add("ground", "C", { dim = 2, x = xc, y = yc })

-- Points in body axes, from each centre of mass.
local E2 = K[2]:point("E", { -(d - da), 0 })
sys:pin(K[1]:point("O", { -ra, 0 }), O.pos, "pin_O")
sys:pin(K[1]:point("P", { rr - ra, 0 }), K[2]:point("P", { da, 0 }), "pin_P")
sys:pin(K[3]:point("B", { -sb, sa }), B.pos, "pin_B")
sys:pin(K[3]:point("E", { -sb, -(ss - sa) }), E2, "pin_E3")
sys:pin(K[4]:point("E", { 0, -ea }), E2, "pin_E4")
sys:pin(K[4]:point("F", { 0, e - ea }), K[5]:point("F", { zt - ta, -tb }), "pin_F")
sys:pin(K[5]:point("A", { -ta, -tb }), A.pos, "pin_A5")
sys:pin(K[6]:point("E", { fa, 0 }), E2, "pin_E6")
sys:pin(K[6]:point("G", { -(zf - fa), 0 }), K[7]:point("G", { ub, -(u - ua) }), "pin_G")
sys:pin(K[7]:point("A", { ub, ua }), A.pos, "pin_A7")

-- The spring from C to the triangle's corner D, and the driving torque on the crank.
sys:add("spring", "spring", { dim = 2, k = c0, L = l0, a = C.pos, b = K[3]:point("D", { sd - sb, sa - sc }) })
sys:add("torque2d", "drive", { tau = mom, frame = K[1].frame })

-- The Test Set's angles.
local function angle(i) return "K" .. i .. ".theta" end
sys:channel("beta", function(q) return q[angle(1)] end)
sys:channel("Theta", function(q) return q[angle(2)] - q[angle(1)] end)
sys:channel("gamma", function(q) return q[angle(3)] end)
sys:channel("Phi", function(q) return q[angle(4)] - q[angle(5)] end)
sys:channel("delta", function(q) return q[angle(5)] end)
sys:channel("Omega", function(q) return q[angle(6)] - q[angle(7)] end)
sys:channel("epsilon", function(q) return q[angle(7)] end)

-- ERK: at rtol 1e-10 it ends 2e-8 rad from the Test Set's reference, and 3e-9 at 1e-11, in
-- proportion. BDF at 1e-10 ends anywhere from 8e-9 to 2.4e-7 rad away as the solve's
-- rounding moves its difference-quotient Jacobian (docs/bodies2d.md).
sys:settings { t_end = 0.03, dt_out = 1e-4, method = "erk", rtol = 1e-10, atol = 1e-12 }
return sys
