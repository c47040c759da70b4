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
