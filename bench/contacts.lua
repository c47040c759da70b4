-- Parts with modes at scale (issue 39, item 4): a chain of N masses joined by rods, each
-- mass on its own floor (e = 0.5), dropped tilted from 0.2 m onto the plane: it falls, lands
-- mass by mass (an impact each, then contact) and lies there; against the same chain
-- without floors (its rod rows only, falling all the way: the same coordinates and rods).
-- Both run 0.3 s at the defaults with max_step = 1e-3 s, so that each takes at least 300
-- steps and the costs per right-hand side compare like with like:
--   us/rhs: the run's time over its right-hand sides (guards, events, projections and the
--     run's setup included), best of 3;
--   ratio: floors over no floors at the same N;
--   s per sim s: the dropped chain's whole run (without max_step: the defaults alone) per
--     simulated second, and its exponent log(t_1 / t_0) / log(N_1 / N_0) from the first
--     size to the last.
-- Then the chain lying on the plane, every contact closed, sliding along it at 0.5 m/s with
-- its first mass kicked up at 1 m/s (it lifts off, the chain follows it a little way, it
-- lands: 19 mode changes and impacts whatever N): its whole run to t = 1 s at the defaults,
-- per simulated second (N = 50, 150, 500, 1000), and the exponent over N = 50 to 500.
-- Before this issue a model with modes fell onto the dense rank-revealing solve for its row
-- forces: N = 100 took 88 s for 0.3 s simulated, N = 300 263 s.
-- Run: build/lua/joinery bench/contacts.lua [sizes...] (default 10 50 100 300 500 1000)
local joinery = require "joinery"

local L = 0.1
local function chain(n, floors)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev
  for i = 1, n do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = (i - 1) * L, y = 0.2 + 0.001 * i } })
    if floors then sys:add("floor", "f" .. i, { dim = 2, nx = 0, ny = 1, d = 0, e = 0.5, pos = m.pos }) end
    if prev then
      sys:add("rod", "r" .. i, { dim = 2, L = math.sqrt(L * L + 1e-6), a = prev.pos, b = m.pos })
    end
    prev = m
  end
  return sys:compile()
end

local function run(model, max_step)
  local fastest, rhs = math.huge, 0
  for _ = 1, 3 do
    local res = model:simulate { t_end = 0.3, dt_out = 0.1, max_step = max_step }
    fastest, rhs = math.min(fastest, res.seconds), res.stats.rhs_evals
  end
  return fastest, rhs
end

local function per_rhs(model)
  local s, rhs = run(model, 1e-3)
  return s / rhs
end

local sizes = {}
for _, a in ipairs(arg or {}) do sizes[#sizes + 1] = tonumber(a) end
if #sizes == 0 then sizes = { 10, 50, 100, 300, 500, 1000 } end
print(string.format("%7s %14s %16s %7s %14s", "N", "us/rhs floors", "us/rhs no floors", "ratio",
  "s per sim s"))
local first_n, first_s, last_n, last_s
for _, n in ipairs(sizes) do
  local floors = chain(n, true)
  local with, without = per_rhs(floors), per_rhs(chain(n, false))
  -- the whole drop grows as N^2 (each landing restarts the integrator): above 500 it would
  -- take minutes, so only its cost per right-hand side is measured there
  local per_sim = n <= 500 and run(floors, 0) / 0.3 or nil
  print(string.format("%7d %14.2f %16.2f %7.2f %14s", n, with * 1e6, without * 1e6,
    with / without, per_sim and string.format("%.4g", per_sim) or "-"))
  if per_sim then
    first_n, first_s = first_n or n, first_s or per_sim
    last_n, last_s = n, per_sim
  end
end
if last_n ~= first_n then
  print(string.format("exponent of s per sim s from N = %d to %d: %.2f", first_n, last_n,
    math.log(last_s / first_s) / math.log(last_n / first_n)))
end

-- The chain at rest on the plane, sliding, its first mass kicked up.
local function resting(n)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev
  for i = 1, n do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = (i - 1) * L, y = 0 },
      vel = { x = 0.5, y = i == 1 and 1 or 0 } })
    sys:add("floor", "f" .. i, { dim = 2, nx = 0, ny = 1, d = 0, e = 0.5, pos = m.pos })
    if prev then sys:add("rod", "r" .. i, { dim = 2, L = L, a = prev.pos, b = m.pos }) end
    prev = m
  end
  return sys:compile()
end
print(string.format("\n%7s %14s %8s %8s", "N resting", "s per sim s", "steps", "events"))
local rest_first_n, rest_first, rest_n, rest_s
for _, n in ipairs { 50, 150, 500, 1000 } do
  local model, fastest, res = resting(n), math.huge, nil
  for _ = 1, 3 do
    res = model:simulate { t_end = 1, dt_out = 0.1 }
    fastest = math.min(fastest, res.seconds)
  end
  local events = 0
  for _, ev in ipairs(res.events) do events = events + ev.count end
  print(string.format("%7d %14.4g %8d %8d", n, fastest, res.stats.steps, events))
  rest_first_n, rest_first = rest_first_n or n, rest_first or fastest
  if n <= 500 then rest_n, rest_s = n, fastest end -- the target's range: N = 50 to 500
end
print(string.format("exponent of s per sim s, resting, from N = %d to %d: %.2f", rest_first_n,
  rest_n, math.log(rest_s / rest_first) / math.log(rest_n / rest_first_n)))
