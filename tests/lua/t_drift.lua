-- Drift control with default settings: the Cartesian pendulum and the double pendulum over
-- 100 s keep their position and velocity residuals within 10 x atol at every output, and
-- the other drift controls behave as docs/numerics.md says.
local tap = dofile("tests/lua/tap.lua")
tap.plan(11)
local joinery = require "joinery"
-- the default atol: 0, which is rtol / 100, 1e-13 at the default rtol 1e-11
local defaults = joinery.system():settings()
local atol = defaults.atol > 0 and defaults.atol or 1e-13
tap.ok(defaults.atol == 0 and defaults.rtol == 1e-11, "the default atol is 0 (rtol / 100), rtol 1e-11")
local function worst(res)
  local p, v = 0, 0
  for i = 1, #res.t do
    p = math.max(p, res["residual.pos"][i])
    v = math.max(v, res["residual.vel"][i])
  end
  return p, v
end
for _, name in ipairs { "pendulum", "double_pendulum" } do
  local res = dofile("examples/" .. name .. ".lua"):simulate { t_end = 100 }
  local p, v = worst(res)
  tap.ok(#res.t == 10001 and p <= 10 * atol and v <= 10 * atol,
    string.format("%s, 100 s, default settings: |phi| %.2g, |phi'| %.2g <= 10 atol = %.0g", name,
      p, v, 10 * atol))
end
-- Projection with BDF (inside CVODE's steps) holds them too; Baumgarte bounds them at a
-- higher level; without drift control they grow.
local res = dofile("examples/pendulum.lua"):simulate { t_end = 100, method = "bdf", drift = "projection" }
local p, v = worst(res)
tap.ok(p <= 10 * atol and v <= 10 * atol, string.format("BDF with projection: %.2g, %.2g", p, v))
-- At the tolerances of the drift table (Adams, rtol 1e-8, atol 1e-10): measured 4e-8 and
-- 3e-5 (docs/numerics.md), Baumgarte bounds the drift well below none.
local loose = { t_end = 100, method = "adams", rtol = 1e-8, atol = 1e-10 }
loose.drift = "baumgarte"
res = dofile("examples/pendulum.lua"):simulate(loose)
local pb = worst(res)
loose.drift = "none"
res = dofile("examples/pendulum.lua"):simulate(loose)
local pn = worst(res)
tap.ok(pb < 1e-6, string.format("Baumgarte bounds |phi| (%.2g)", pb))
tap.ok(pn > 100 * pb, string.format("without drift control |phi| grows (%.2g)", pn))
tap.raises(function() dofile("examples/pendulum.lua"):simulate { drift = "magic" } end,
  { "magic", "projection", "baumgarte", "none" }, "an unknown drift control lists the valid ones")
tap.done()
