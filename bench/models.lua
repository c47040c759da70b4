-- Time per simulated second of the example models, best of 3 runs, as a ratio against
-- the spring chain (Adams, default tolerances) measured in the same run.
local models = { "spring_chain", "pendulum", "double_pendulum", "incline_em" }
local function best_seconds(name, method)
  local best, res = math.huge, nil
  for _ = 1, 3 do
    res = dofile("examples/" .. name .. ".lua"):simulate { method = method, t_end = 10,
                                                          rtol = 1e-8, atol = 1e-10 }
    best = math.min(best, res.seconds)
  end
  return best / 10, res.stats
end
local base
print(string.format("%-18s %-6s %12s %8s %8s %8s", "model", "method", "s per sim s",
  "ratio", "steps", "rhs"))
for _, name in ipairs(models) do
  for _, method in ipairs { "adams", "bdf" } do
    local s, stats = best_seconds(name, method)
    base = base or s -- the first row, spring_chain with Adams, is the baseline
    print(string.format("%-18s %-6s %12.3e %8.2f %8d %8d", name, method, s, s / base,
      stats.steps, stats.rhs_evals))
  end
end

-- Rigid-body mechanisms at their own settings (the N-four-bar: BDF with projection, sparse
-- solve, through singular configurations), as time per simulated second against the same
-- baseline.
print(string.format("%-18s %-6s %12s %8s %8s %8s", "mechanism", "method", "s per sim s",
  "ratio", "steps", "rhs"))
for _, case in ipairs { { "andrews", 0.03 }, { "heavy_top", 2 }, { "free_body", 2 },
                        { "four_bar_chain", 2 } } do
  local best, res, method = math.huge, nil, nil
  for _ = 1, 3 do
    local sys = dofile("examples/" .. case[1] .. ".lua")
    method = sys:settings().method
    res = sys:simulate { t_end = case[2] }
    best = math.min(best, res.seconds)
  end
  local s = best / case[2]
  print(string.format("%-18s %-6s %12.3e %8.2f %8d %8d", case[1], method, s, s / base,
    res.stats.steps, res.stats.rhs_evals))
end
