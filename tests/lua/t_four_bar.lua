-- examples/four_bar.lua and examples/four_bar_chain.lua at the default settings: straight
-- through every flat (singular) configuration on the parallelogram branch they start on,
-- against the exact reduction of that branch to one equation for the crank angle.
local tap = dofile("tests/lua/tap.lua")
tap.plan(14)
local joinery = require "joinery"
local g = 9.81
local defaults = joinery.system {}:settings()
tap.ok(defaults.method == "auto", "the default method is auto (what this test is about)")

-- N + 1 cranks and N couplers, rods of 1 m and 1 kg: on the parallelogram branch the cranks
-- turn together (I = 1/3 about the pivot) and the couplers translate with the cranks' tips,
-- so J theta'' = -P cos(theta) with J = (N + 1)/3 + N and P = g ((N + 1)/2 + N), and
-- E = J theta'^2 / 2 + P sin(theta). Started at theta = pi/2, theta' = -1, E > P: the
-- crank turns for ever, theta' = -sqrt(2 (E - P sin theta) / J).
local function reduction(N)
  local J, P = (N + 1) / 3 + N, g * ((N + 1) / 2 + N)
  local E = J / 2 + P
  local function rate(th) return math.sqrt(2 * (E - P * math.sin(th)) / J) end
  -- t(theta) = integral from theta to pi/2 of dphi / rate(phi): 8-point Gauss–Legendre
  -- on panels of at most 0.05 rad (the integrand is smooth and bounded; error ~ 1e-15).
  local x = { 0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363 }
  local w = { 0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763 }
  local function time_to(th)
    local a, b = th, math.pi / 2
    local panels = math.ceil((b - a) / 0.05)
    local h, sum = (b - a) / panels, 0
    for k = 0, panels - 1 do
      local mid = a + (k + 0.5) * h
      for i = 1, 4 do
        sum = sum + w[i] * (1 / rate(mid - x[i] * h / 2) + 1 / rate(mid + x[i] * h / 2))
      end
    end
    return sum * h / 2
  end
  -- theta(t) by Newton on time_to(theta) = t (d time_to / d theta = -1 / rate).
  return function(t, guess)
    local th = guess
    for _ = 1, 20 do th = th + (time_to(th) - t) * rate(th) end
    return th
  end
end

local function check(name, res, N, crank, cranks, couplers, t_end)
  local n = res.rows
  local th_end = reduction(N)(t_end, res[crank][n])
  tap.is_near(res[crank][n], th_end, 1e-3,
    string.format("%s: crank angle at %g s = the reduction's %.6f rad", name, t_end, th_end))
  local level, par, flat, prev = 0, 0, 0, nil
  for i = 1, n do
    local th = res[crank][i]
    for _, c in ipairs(couplers) do level = math.max(level, math.abs(res[c][i])) end
    for _, c in ipairs(cranks) do par = math.max(par, math.abs(res[c][i] - th)) end
    local up = math.sin(th) >= 0
    if prev ~= nil and up ~= prev then flat = flat + 1 end
    prev = up
  end
  tap.ok(level < 1e-6, string.format("%s: the coupler stays level to 1e-6 rad (%.2g)", name, level))
  tap.ok(par < 1e-6, string.format("%s: the cranks stay parallel to 1e-6 rad (%.2g)", name, par))
  tap.diag(string.format("%s: %d flat passages, %d steps, %.2f s", name, flat, res.stats.steps,
    res.seconds))
  return flat
end

-- The single four-bar: no settings in the script but t_end and dt_out.
local res = dofile("examples/four_bar.lua"):simulate()
local flat = check("four-bar", res, 1, "crank.theta", { "rocker.theta" }, { "coupler.theta" }, 10)
tap.ok(flat >= 10, string.format("the four-bar lies flat 10 times (sin theta changed sign %d times)", flat))

-- The N-four-bar (N = 40) without its own method and tolerances, 20 s.
local chain = dofile("examples/four_bar_chain.lua"):compile():simulate {
  method = defaults.method, rtol = defaults.rtol, atol = defaults.atol,
  atol_velocity = defaults.atol_velocity }
local cranks, couplers = {}, {}
for k = 1, 40 do cranks[k], couplers[k] = "crank" .. k .. ".theta", "coupler" .. k .. ".theta" end
flat = check("N-four-bar at the defaults", chain, 40, "crank0.theta", cranks, couplers, 20)
tap.ok(flat >= 20, string.format("the N-four-bar lies flat 20 times (%d sign changes)", flat))

-- A method that cannot hold the branch stops instead of switching: explicit Runge–Kutta
-- with a projection after each step, and Adams with its step ends checked, land on the
-- other branch at the first flat passage at rtol 1e-8 (measured); whatever they do, they
-- may not end elsewhere and report success. Adams also with its solves in the sparse
-- store (as a model of 60 coordinates or more has them), where a step end within tolerance
-- is cleared by an estimate from the last right-hand side's matrices instead of the full
-- projection (measured: clearing every such step lands on the other branch at 1e-6, 1e-8
-- and 1e-10 without a word); three tolerances, since which step meets the flat
-- configuration changes with them.
local runs = { { "erk", 1e-8 }, { "adams", 1e-8 }, { "adams", 1e-6, 1 }, { "adams", 1e-8, 1 },
  { "adams", 1e-10, 1 } }
for _, run in ipairs(runs) do
  local method, rtol, store = run[1], run[2], run[3]
  local name = string.format("%s at rtol %g%s", method, rtol, store and " (sparse store)" or "")
  local ok, out = pcall(function()
    return dofile("examples/four_bar.lua"):compile { sparse_min_coords = store or 60 }
      :simulate { method = method, rtol = rtol, atol = rtol / 100 }
  end)
  local right = ok and math.abs(out["crank.theta"][out.rows] - res["crank.theta"][res.rows]) < 1e-3
  tap.ok(right or (not ok and tostring(out):find("singular configuration", 1, true)),
    name .. " either follows the branch or stops naming the singular configuration")
  tap.diag(ok and (name .. " went through") or tostring(out):sub(1, 160))
end
tap.done()
