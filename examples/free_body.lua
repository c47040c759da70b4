-- A torque-free asymmetric rigid body (principal moments 1 < 2 < 2.5 kg m^2) spinning about
-- its intermediate axis (body y) with a small perturbation: the rotation is unstable and the
-- body flips over and back again and again (the Dzhanibekov effect), while the angular
-- momentum vector in space and the kinetic energy stay constant. The centre of mass drifts
-- uniformly. No gravity. tests/lua/t_free_body.lua checks the invariants, the unit quaternion
-- and Euler's equations integrated independently.
--
--   joinery run examples/free_body.lua
local joinery = require "joinery"

local body = {
  m = 2.0,                      -- kg
  I = { 1.0, 2.0, 2.5 },        -- kg m^2, principal moments about body x, y, z
  omega = { 0.05, 2.0, 0.05 },  -- rad/s, initial angular velocity in body axes
  v = { 0.1, 0.0, 0.05 },       -- m/s, velocity of the centre of mass
}

-- Start at the identity orientation: q = (1, 0, 0, 0), so q' = 1/2 G(q)^T w = (0, w / 2).
local w = body.omega
local sys = joinery.system { gravity = { 0, 0, 0 } }
sys:add("body3d", "b", {
  m = body.m, Ixx = body.I[1], Iyy = body.I[2], Izz = body.I[3],
  init = { q0 = 1, q1 = 0, q2 = 0, q3 = 0 },
  vel = { x = body.v[1], y = body.v[2], z = body.v[3],
          q0 = 0, q1 = w[1] / 2, q2 = w[2] / 2, q3 = w[3] / 2 },
})

sys:settings { t_end = 30, dt_out = 0.01, rtol = 1e-14, atol = 1e-15, method = "adams",
               drift = "baumgarte" }
return sys, body
