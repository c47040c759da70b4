-- A pendulum whose pivot is shaken vertically, y_p(t) = a cos(w t): a rheonomic (explicitly
-- time-dependent) position constraint on the pivot coordinates.
--
-- The built-in pendulum part owns its pivot (px, py) as massless coordinates. Instead of
-- gluing them to the ground, sys:constrain prescribes them:
--   phi(x, t) = { px, py - a cos(w t) } = 0.
-- joinery differentiates phi in q and in t (t is a Jet too), so A = phi_q and
-- b = -(phi_tt + ...) = -a w^2 cos(w t) carries the pivot's prescribed acceleration. The
-- multipliers force.shaker.r1, .r2 are the force the shaker applies to the pivot.
--
-- theta is measured from the downward vertical; in the frame of the pivot the pendulum sees
-- gravity g + y_p'', so theta'' = -(g + y_p'') sin(theta) / l with y_p'' = -a w^2 cos(w t):
-- tests/lua/t_driven_pendulum.lua integrates that minimal equation by itself and compares
-- theta at 5 s. The pendulum starts at theta = 0.5 rad at rest; the pivot starts at its top,
-- y_p(0) = a, with velocity -a w sin(0) = 0, so the state is consistent at t = 0.
--
--   joinery run examples/driven_pendulum.lua --out shaken.csv
local joinery = require "joinery"
local M = joinery.math

local a, w = 0.05, 10.0 -- m, rad/s

local sys = joinery.system { gravity = { 0, -9.81 } }
local pend = sys:add("pendulum", "pend", { m = 1, l = 1, init = { theta = 0.5 } })

sys:constrain {
  name = "shaker",
  on = { pend.pivot },      -- x = { px, py }
  rows = 2,
  phi = function(x, t) return { x[1], x[2] - a * M.cos(w * t) } end,
}

sys:settings { t_end = 5, dt_out = 0.01, rtol = 1e-11, atol = 1e-12 }
return sys
