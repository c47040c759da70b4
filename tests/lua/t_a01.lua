-- IFToMM A01, the simple pendulum (1 kg, 1 m, released from the horizontal, g = 9.81),
-- over 2000 s at the default settings against the exact elliptic-function solution: the
-- benchmark's high-precision criterion |dx|, |dy| <= 1e-3 m at all 4000 samples. And the
-- output interval does not change the integration: examples/pendulum.lua with one row or
-- with a row every 0.01 s takes the same steps to the same end state.
local tap = dofile("tests/lua/tap.lua")
tap.plan(5)
local joinery = require "joinery"
local g, L = 9.81, 1

local exact = dofile("tests/lua/a01_exact.lua") -- x, y of the bob at t (L = 1 m, g = 9.81)

local sys = joinery.system { gravity = { 0, -g } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = L, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = L, a = pivot.pos, b = bob.pos })
local res = sys:simulate { t_end = 2000, dt_out = 0.5 } -- 4000 samples, default method and tolerances
local dx, dy, residual = 0, 0, 0
for i = 1, res.rows do
  local x, y = exact(res.t[i])
  dx, dy = math.max(dx, math.abs(res["bob.x"][i] - x)), math.max(dy, math.abs(res["bob.y"][i] - y))
  residual = math.max(residual, res["residual.pos"][i], res["residual.vel"][i])
end
-- Measured 1.1e-5 and 6.8e-6 m (auto: Adams throughout, rtol 1e-11, atol 1e-13; BDF at the
-- same tolerances, the old default, 3.5e-4 and 2.2e-4 m): the phase error grows linearly
-- over the 844 swings.
tap.ok(res.rows == 4001 and dx <= 1e-3 and dy <= 1e-3,
  string.format("A01 at the defaults: max |dx| = %.2g m, max |dy| = %.2g m <= 1e-3 over 2000 s "
    .. "(%d steps, %.1f s)", dx, dy, res.stats.steps, res.seconds))
-- Reported states are projected: residuals at rounding, far inside 10 atol.
local d = sys:settings()
-- atol 0 is the default: rtol / 100, 1e-13 at the default rtol 1e-11
local atol = d.atol > 0 and d.atol or 1e-13
tap.ok(d.rtol == 1e-11 and residual <= 10 * atol,
  string.format("constraint residuals <= 10 atol (%.2g)", residual))

-- One output row against one every 0.01 s: the steps do not depend on the output times.
local pend = dofile("examples/pendulum.lua"):compile()
local fine = pend:simulate { dt_out = 0.01 }
local coarse = pend:simulate { dt_out = 10 }
tap.ok(coarse.rows == 2 and fine.rows == 1001, "one row at the end, or a row every 0.01 s")
tap.ok(math.abs(fine.stats.steps - coarse.stats.steps) <= 0.1 * coarse.stats.steps,
  string.format("steps within 10%% (%d with dt_out 0.01, %d with one row)", fine.stats.steps,
    coarse.stats.steps))
local worst = 0
for _, c in ipairs { "bob.x", "bob.y", "der(bob.x)", "der(bob.y)" } do
  worst = math.max(worst, math.abs(fine[c][fine.rows] - coarse[c][coarse.rows]))
end
tap.ok(worst <= 2 * d.rtol, string.format("the same end state to 2 rtol (%.2g)", worst))
tap.done()
