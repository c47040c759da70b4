-- Many contacts at once (issue 39, item 6): a chain of N = 300 masses (1 kg) joined by rods
-- (0.1 m), each mass on its own floor (e = 0.5), dropped tilted from 0.2 m (it lands mass by
-- mass: an impact each, then contact), and the same chain lying on the plane sliding at
-- 0.5 m/s with its first mass kicked up at 1 m/s (it lifts off, pulls its neighbours up a
-- little way and lands). The floors are frictionless and their normals vertical, so:
--   - the horizontal momentum, sum m vx, is what it was at the start (the rods' forces are
--     internal, the floors' and the impacts' vertical), to the tolerance;
--   - the energy never rises (impacts with e < 1 and plastic closings only remove it), so
--     at each row it is at most the energy of the row before, less rounding;
--   - no mass is below the floor by more than the dead band and the integrator's own error.
-- Under BDF and Adams at rtol 1e-8 / atol 1e-10, the resting chain also at the defaults
-- (the dropped one there takes 10-20 s a run; bench/contacts.lua times it).
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local L = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "ladder.lua")
local joinery = require "joinery"

local N, LINK, g = 300, 0.1, 9.81
local rungs = { L.ladder[3], L.ladder[4] }
local methods = { "auto", "bdf", "adams" }
tap.plan(#methods * (1 + #rungs))

local function chain(dropped)
  local sys = joinery.system { gravity = { 0, -g } }
  local prev
  for i = 1, N do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1,
      init = { x = (i - 1) * LINK, y = dropped and 0.2 + 0.001 * i or 0 },
      vel = dropped and {} or { x = 0.5, y = i == 1 and 1 or 0 } })
    sys:add("floor", "f" .. i, { dim = 2, nx = 0, ny = 1, d = 0, e = 0.5, pos = m.pos })
    if prev then
      sys:add("rod", "r" .. i, { dim = 2, L = dropped and math.sqrt(LINK ^ 2 + 1e-6) or LINK,
        a = prev.pos, b = m.pos })
    end
    prev = m
  end
  return sys:compile()
end

for _, case in ipairs { { dropped = true, t_end = 0.3, name = "dropped", rungs = { rungs[1] } },
  { dropped = false, t_end = 0.5, name = "resting, kicked", rungs = rungs } } do
  local model = chain(case.dropped)
  for _, method in ipairs(methods) do
    for _, tol in ipairs(case.rungs) do
      local rtol, atol = tol[1] or L.DEFAULT_RTOL, tol[2] or L.DEFAULT_ATOL
      local name = string.format("chain of %d on floors, %s, %s, rtol %s", N, case.name, method,
        L.name(tol))
      local ok, res = pcall(function()
        return model:simulate { t_end = case.t_end, dt_out = 0.01, method = method,
          rtol = tol[1], atol = tol[2] }
      end)
      if not ok then
        tap.ok(false, name)
        tap.diag(res)
      else
        local rows = #res.t
        local function momentum(i)
          local p = 0
          for k = 1, N do p = p + res["der(m" .. k .. ".x)"][i] end
          return p
        end
        local p0, worst_p, rise, deepest = momentum(1), 0, 0, 0
        for i = 2, rows do
          worst_p = math.max(worst_p, math.abs(momentum(i) - p0))
          rise = math.max(rise, res.energy[i] - res.energy[i - 1])
        end
        for k = 1, N do
          for _, y in ipairs(res["m" .. k .. ".y"]) do deepest = math.min(deepest, y) end
        end
        local impacts = 0
        for k = 1, N do
          for _, j in ipairs(res["impulse.f" .. k]) do impacts = impacts + (j ~= 0 and 1 or 0) end
        end
        -- momentum: 150 kg m/s (resting) or 0 (dropped), changed by no force: to rounding of
        -- the sum and of the solves (1e-12 measured), with a margin of 1000;
        -- energy: rounding of a 300-mass sum (1e-12 of its 600 J scale) plus the
        -- projection's own change at a restart, of the tolerance's size; depth: the band
        -- (half of atol + rtol |y|) and ten resolutions of the interpolant
        local allowed_p = 1e-9
        local allowed_rise = 1e-12 * 600 + 100 * N * (atol + rtol)
        tap.ok(worst_p <= allowed_p and rise <= allowed_rise and deepest >= -(10 * atol + 1e-12)
          and impacts > 0, name .. ": momentum kept, energy never rising, no mass below the floor")
        tap.diag(string.format("  %d impact rows; momentum change %.3g (allowed %.3g); largest "
          .. "energy rise %.3g (allowed %.3g); deepest y %.3g; %.2f s", impacts, worst_p,
          allowed_p, rise, allowed_rise, deepest, res.seconds))
      end
    end
  end
end

tap.done()
