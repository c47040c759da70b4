-- Time per right-hand side against N, from N = 100 to 10,000, for the three chains issue 12
-- names: the W1 chain as `mass` + `rod` parts and as `pendulum` parts, and masses joined by
-- springs (no constraint rows at all). Each runs two spans with the explicit method (a
-- fixed number of right-hand sides per step, each step projected), best of 3; the time per
-- right-hand side is the difference of their times over the difference of their counts, so
-- what a run costs once (the evaluator, the sparse analysis, the initial state) is left out.
-- The exponent is log(t_1 / t_0) / log(N_1 / N_0) between neighbouring sizes: O(N) work
-- shows as an exponent near 1. Run: build/lua/joinery bench/scaling.lua [sizes...]
local joinery = require "joinery"

-- The W1 chain as bench/peers/run.py builds it (rod or pend), N and KIND given to the
-- script's os.getenv; or masses hanging on springs of rest length 1.
local function chain(kind, n)
  if kind ~= "spring" then
    local vars = { N = tostring(n), KIND = kind }
    local env = setmetatable({ os = { getenv = function(k) return vars[k] end } }, { __index = _G })
    return assert(loadfile("bench/peers/models/w1.lua", "t", env))()
  end
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "ground", { dim = 2 }).pos
  for i = 1, n do
    local b = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = 0, y = -i } })
    sys:add("spring", "s" .. i, { dim = 2, k = 1000, L = 1, a = prev, b = b.pos })
    prev = b.pos
  end
  return sys
end

local sizes = {}
for _, a in ipairs(arg or {}) do sizes[#sizes + 1] = tonumber(a) end
if #sizes == 0 then sizes = { 100, 1000, 10000 } end

print(string.format("%-8s %7s %10s %8s %12s %9s", "chain", "N", "coords", "rhs", "us per rhs",
  "exponent"))
local overall = {}
for _, kind in ipairs { "rod", "pend", "spring" } do
  local prev_n, prev_t, first_n, first_t
  for _, n in ipairs(sizes) do
    local model = chain(kind, n):compile()
    local function run(span)
      local fastest, rhs = math.huge, 0
      for _ = 1, 3 do
        local res = model:simulate { method = "erk", rtol = 1e-8, atol = 1e-10, t_end = span,
                                     dt_out = span }
        fastest, rhs = math.min(fastest, res.seconds), res.stats.rhs_evals
      end
      return fastest, rhs
    end
    local short_s, short_rhs = run(0.05)
    local long_s, long_rhs = run(0.25)
    local rhs = long_rhs - short_rhs
    local per_rhs = (long_s - short_s) / rhs
    local exponent = prev_n and math.log(per_rhs / prev_t) / math.log(n / prev_n) or nil
    print(string.format("%-8s %7d %10d %8d %12.2f %9s", kind, n, model:num_coords(), rhs,
      per_rhs * 1e6, exponent and string.format("%.2f", exponent) or "-"))
    prev_n, prev_t = n, per_rhs
    first_n, first_t = first_n or n, first_t or per_rhs
  end
  if prev_n ~= first_n then
    overall[#overall + 1] = string.format("%s %.2f", kind,
      math.log(prev_t / first_t) / math.log(prev_n / first_n))
  end
end
if #overall > 0 then
  print(string.format("exponent from N = %d to %d: %s", sizes[1], sizes[#sizes],
    table.concat(overall, ", ")))
end
