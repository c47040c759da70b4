-- A symmetric heavy top: a body3d whose tip is held at the origin by a ball joint (the glue
-- of a marker's point to a fixed point), under gravity along -z. It starts in steady
-- precession: tilted by theta0 from the vertical, spinning at w3 about its symmetry axis, and
-- precessing about the vertical at the slow closed-form rate
--
--   A cos(theta) Omega^2 - C w3 Omega + m g l = 0,   A = A_cm + m l^2 (about the tip),
--
-- so the tilt stays constant. Energy, the vertical angular momentum about the tip and the
-- spin w3 are conserved (tests/lua/t_heavy_top.lua checks all four).
--
--   joinery run examples/heavy_top.lua
local joinery = require "joinery"

local top = {
  m = 1.0,        -- kg
  A_cm = 0.006,   -- kg m^2, transverse moment about the centre of mass
  C = 0.01,       -- kg m^2, about the symmetry axis (body z)
  l = 0.1,        -- m, tip to centre of mass along the symmetry axis
  g = 9.81,       -- m/s^2
  theta0 = math.pi / 6, -- rad, tilt from the vertical
  w3 = 50,        -- rad/s, spin about the symmetry axis
}
local A = top.A_cm + top.m * top.l ^ 2
local c0 = math.cos(top.theta0)
local disc = (top.C * top.w3) ^ 2 - 4 * A * c0 * top.m * top.g * top.l
assert(disc > 0, "this spin is too slow for steady precession at this tilt")
top.Omega = (top.C * top.w3 - math.sqrt(disc)) / (2 * A * c0) -- the slow precession

-- Orientation: the body turned by theta0 about the space x axis, so the symmetry axis is
-- k = (0, -sin theta0, cos theta0) and the centre of mass is at l k.
local h = top.theta0 / 2
local q = { math.cos(h), math.sin(h), 0, 0 }
local k = { 0, -math.sin(top.theta0), math.cos(top.theta0) }
-- Angular velocity in space: precession about z plus the spin relative to the precessing
-- frame, w = Omega z + (w3 - Omega cos theta0) k, so that w . k = w3.
local psi_dot = top.w3 - top.Omega * c0
local w = { psi_dot * k[1], psi_dot * k[2], top.Omega + psi_dot * k[3] }
-- q' = 1/2 E(q)^T w with E = [-e, [e]x + q0 I] (space angular velocity w = 2 E q').
local E = {
  { -q[2], q[1], -q[4], q[3] },
  { -q[3], q[4], q[1], -q[2] },
  { -q[4], -q[3], q[2], q[1] },
}
local qd = {}
for j = 1, 4 do qd[j] = 0.5 * (E[1][j] * w[1] + E[2][j] * w[2] + E[3][j] * w[3]) end
local x = { top.l * k[1], top.l * k[2], top.l * k[3] }
local v = { w[2] * x[3] - w[3] * x[2], w[3] * x[1] - w[1] * x[3], w[1] * x[2] - w[2] * x[1] }

local sys = joinery.system { gravity = { 0, 0, -top.g } }
local ground = sys:add("ground", "pivot", { dim = 3 })
local body = sys:add("body3d", "top", {
  m = top.m, Ixx = top.A_cm, Iyy = top.A_cm, Izz = top.C,
  init = { x = x[1], y = x[2], z = x[3], q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] },
  vel = { x = v[1], y = v[2], z = v[3], q0 = qd[1], q1 = qd[2], q2 = qd[3], q3 = qd[4] },
})
-- The tip: a point l below the centre of mass along the symmetry axis (body:point adds the
-- marker3d part "top_tip", whose glue to the body's frame is eliminated). The ball joint is
-- the glue of two points: sys:ball(a, b) is sys:glue for 3-D points only.
local tip = body:point("tip", { 0, 0, -top.l })
sys:ball(tip, ground.pos, "ball")

sys:settings { t_end = 10, dt_out = 0.01, rtol = 1e-10, atol = 1e-11, method = "erk" }
return sys, top
