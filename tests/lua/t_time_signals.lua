-- A quarter car over a road bump (issue 42, "time signals stepped over"): a sprung mass m on
-- a spring k and damper c over a road point r(t), at rest on a flat road until a
-- one-minus-cosine bump of height h and length D at t = 3 s, over 10 s:
--   z'' = (-k (z - r) - c (z' - r')) / m.
-- Written two ways: (a) the road as a Lua load of t on the body, k r + c r'; (b) the road
-- point as a mass held on r(t) by a rheonomic sys:constrain row. Checked against an
-- independent RK4 of the same linear equation (fixed step 1e-4 s, its own error measured
-- against step 2e-4 s) at every method and rung of the ladder, two bumps each.
--
-- The default max_step (0: a tenth of the span, 1 s here) does not see a 0.1 s bump on a
-- car at rest: every evaluation of a step of 0.1..1 s may fall outside it (docs/numerics.md,
-- "Integration"). So the 0.1 s bump runs with max_step = D / 2, the rule the docs give,
-- and the defaults are checked on a bump as long as the default step (1 s; from rest the
-- steps happen to see that one without a limit too). With max_step = math.huge (no limit)
-- the 0.1 s bump is missed at the defaults: the car does not move at all, which is what
-- these checks catch.
local tap = dofile("tests/lua/tap.lua")
local L = dofile("tests/lua/ladder.lua")
local joinery = require "joinery"
local M = joinery.math

local m, k, c = 250, 16000, 400 -- 1.27 Hz, damping ratio 0.1
local T0, T_END = 3, 10
local bumps = { { h = 0.05, D = 0.1 }, { h = -0.02, D = 0.1 } }
local long_bump = { h = 0.05, D = 1 }
local forms = { "load", "constraint" }
-- The error allowed in the peak and in z(5 s), as a multiple of rtol times the reference's
-- peak, per rung (the largest measured: 32, 342, 1019, 10046, the last two ERK with the load,
-- whose force has a kink at both ends of the bump; the 1 s bump at the defaults 2893).
local multiple = { [1e-4] = 1000, [1e-6] = 2000, [1e-8] = 1e4, default = 1e5 }

tap.plan(#forms * #bumps * #L.methods * #L.ladder + 2 * #forms * #L.methods)

local function road(t, b)
  if t <= T0 or t >= T0 + b.D then return 0 * t end
  return b.h / 2 * (1 - M.cos(2 * math.pi * (t - T0) / b.D))
end
local function road_rate(t, b)
  if t <= T0 or t >= T0 + b.D then return 0 end
  return b.h / 2 * (2 * math.pi / b.D) * math.sin(2 * math.pi * (t - T0) / b.D)
end

-- The model and the channel of the car's height (1 m above the road at rest).
local function model(form, b)
  if form == "load" then
    local sys = joinery.system { gravity = { 0, 0 } }
    local g = sys:add("ground2d", "g", {})
    local car = sys:add("body2d", "car", { m = m, J = 1, init = { y = 1 } })
    sys:add("spring", "s", { dim = 2, k = k, L = 1, a = g.pos, b = car.pos })
    sys:add("damper", "d", { dim = 2, c = c, a = g.pos, b = car.pos })
    sys:load("road", car.frame, function(t)
      return { fy = k * road(t, b) + c * road_rate(t, b) }
    end)
    return sys, "car.y"
  end
  local sys = joinery.system { gravity = { 0 } }
  local r = sys:add("mass", "road", { dim = 1, m = 1 })
  local car = sys:add("mass", "car", { dim = 1, m = m, init = { x = 1 } })
  sys:add("spring", "s", { dim = 1, k = k, L = 1, a = r.pos, b = car.pos })
  sys:add("damper", "d", { dim = 1, c = c, a = r.pos, b = car.pos })
  sys:constrain { name = "bump", on = { r.x }, phi = function(x, t) return x[1] - road(t, b) end }
  return sys, "car.x"
end

-- RK4 at step H, z sampled every 0.01 s from 0 (the rows of the runs).
local function rk4(b, H)
  local n, per = math.floor(T_END / H + 0.5), math.floor(0.01 / H + 0.5)
  local function f(t, z, w) return w, (-k * (z - road(t, b)) - c * (w - road_rate(t, b))) / m end
  local z, w, out = 0, 0, { 0 }
  for i = 0, n - 1 do
    local t = i * H
    local k1z, k1w = f(t, z, w)
    local k2z, k2w = f(t + H / 2, z + H / 2 * k1z, w + H / 2 * k1w)
    local k3z, k3w = f(t + H / 2, z + H / 2 * k2z, w + H / 2 * k2w)
    local k4z, k4w = f(t + H, z + H * k3z, w + H * k3w)
    z = z + H / 6 * (k1z + 2 * k2z + 2 * k3z + k4z)
    w = w + H / 6 * (k1w + 2 * k2w + 2 * k3w + k4w)
    if (i + 1) % per == 0 then out[#out + 1] = z end
  end
  return out
end

local function reference(b)
  local ref, coarse = rk4(b, 1e-4), rk4(b, 2e-4)
  local peak, own = 0, 0
  for i = 1, #ref do
    peak = math.max(peak, math.abs(ref[i]))
    own = math.max(own, math.abs(ref[i] - coarse[i]))
  end
  return { z = ref, peak = peak, own = own }
end

-- Runs one case; the errors of the peak |z| over the rows and of z(5 s), and the run's peak.
local function errors(form, b, ref, opts)
  local sys, ch = model(form, b)
  opts.t_end, opts.dt_out = T_END, 0.01
  local res = sys:simulate(opts)
  local peak, at5 = 0, nil
  for i = 1, res.rows do
    local z = res[ch][i] - 1
    peak = math.max(peak, math.abs(z))
    if math.abs(res.t[i] - 5) < 1e-9 then at5 = math.abs(z - ref.z[i]) end
  end
  return math.abs(peak - ref.peak), at5 or math.huge, peak, res.stats.steps
end

local function check(form, b, ref, opts, rtol, K, what)
  local ok, e_peak, e5, peak, steps = pcall(errors, form, b, ref, opts)
  if not ok then
    tap.ok(false, what .. ": " .. tostring(e_peak))
    return
  end
  local bound = K * rtol * ref.peak + ref.own
  tap.ok(e_peak <= bound and e5 <= bound, string.format("%s: peak %.6g m (reference %.6g), "
    .. "errors peak %.2e, z(5) %.2e <= %g rtol peak + %.1e; %d steps", what, peak, ref.peak,
    e_peak, e5, K, ref.own, steps))
end

-- ---- the short bumps at max_step = D / 2, every method and rung ------------------------
for _, b in ipairs(bumps) do
  local ref = reference(b)
  for _, form in ipairs(forms) do
    for _, method in ipairs(L.methods) do
      for _, tol in ipairs(L.ladder) do
        local rtol = tol[1] or L.DEFAULT_RTOL
        check(form, b, ref, { method = method, rtol = tol[1], atol = tol[2], max_step = b.D / 2 },
          rtol, multiple[tol[1] or "default"], string.format("%s, h = %g m, D = %g s, %s, rtol %s, "
            .. "max_step D/2", form, b.h, b.D, method, L.name(tol)))
      end
    end
  end
end

-- ---- the default max_step: a bump as long as it, right at the defaults ------------------
local ref_long = reference(long_bump)
for _, form in ipairs(forms) do
  for _, method in ipairs(L.methods) do
    check(form, long_bump, ref_long, { method = method }, L.DEFAULT_RTOL, multiple.default,
      string.format("%s, h = %g m, D = %g s, %s, the defaults (max_step a tenth of the span)",
        form, long_bump.h, long_bump.D, method))
  end
end

-- ---- no limit: the short bump is stepped over (what the checks above catch) ------------
local b = bumps[1]
local ref = reference(b)
for _, form in ipairs(forms) do
  for _, method in ipairs(L.methods) do
    local _, _, peak, steps = errors(form, b, ref, { method = method, max_step = math.huge })
    tap.ok(peak == 0, string.format("%s, %s, max_step = math.huge: the %g s bump is stepped "
      .. "over (peak %g m, %d steps): the checks above would fail", form, method, b.D, peak, steps))
  end
end
tap.done()
