-- A constraint nonlinear in the velocities: a particle in gravity whose speed is held
-- constant, psi = vx^2 + vy^2 - v0^2 = 0 (a "cruise control" that pushes along the path).
--
-- For psi(q, v, t) the engine uses A = psi_v = 2 v^T and b = -(psi_q v + psi_t) = 0, so the
-- constraint force is 2 lambda v: it acts along the velocity and does exactly the work
-- that keeps the kinetic energy constant (it is ideal in Udwadia-Kalaba's sense — no work
-- in virtual displacements, which here are perpendicular to v — yet it does work along the
-- motion, m g vy per second against gravity).
--
-- Independent check. With the velocity at angle theta to the horizontal, only the normal
-- part of gravity turns it: v0 theta' = -g cos(theta). This separates:
--   asinh(tan theta) = asinh(tan theta0) - g t / v0,
-- i.e. theta(t) = gd(u), u = u0 - g t / v0, gd(u) = atan(sinh u) the Gudermannian, and then
--   x(t) = x0 - (v0^2 / g) (theta - theta0),   y(t) = y0 - (v0^2 / g) ln(cosh u / cosh u0).
-- tests/lua/t_constant_speed.lua checks the angle and the position against this closed form
-- over 3 s (the particle is thrown up at 60 degrees and ends up falling straight down at v0).
--
--   joinery run examples/constant_speed.lua --out cruise.csv
local joinery = require "joinery"

local v0, theta0 = 3.0, math.rad(60) -- m/s, rad

local sys = joinery.system { gravity = { 0, -9.81 } }
local ball = sys:add("mass", "ball", { dim = 2, m = 1,
  init = { x = 0, y = 0 }, vel = { x = v0 * math.cos(theta0), y = v0 * math.sin(theta0) } })

sys:constrain {
  name = "cruise",
  on = { ball.pos },        -- x = { x, y }, xd = { vx, vy }
  kind = "velocity",
  psi = function(x, xd, t) return xd[1] * xd[1] + xd[2] * xd[2] - v0 * v0 end,
}

sys:settings { t_end = 3, dt_out = 0.01, rtol = 1e-11, atol = 1e-12 }
return sys
