-- Overhead of parts written in Lua: the same model with built-in C parts and with parts
-- defined in Lua by their Lagrangians (examples/*_lua.lua), time per simulated second
-- (best of 5 runs of 10 s, rtol 1e-8, atol 1e-10) and the ratio Lua / C measured in this
-- run. The target of issue 4 is a ratio <= 10 for the double pendulum.
local pairs_ = {
  { "double_pendulum", "double_pendulum_lua" },
  { "spring_chain", "spring_chain_lua" },
}
local function best_seconds(name, method)
  local best, res = math.huge, nil
  for _ = 1, 5 do
    res = dofile("examples/" .. name .. ".lua"):simulate { method = method, t_end = 10,
                                                          rtol = 1e-8, atol = 1e-10 }
    best = math.min(best, res.seconds)
  end
  return best / 10, res.stats
end
print(string.format("%-20s %-6s %12s %12s %8s %8s %8s", "model", "method", "C s/sim s",
  "Lua s/sim s", "ratio", "rhs C", "rhs Lua"))
for _, pr in ipairs(pairs_) do
  for _, method in ipairs { "adams", "bdf" } do
    local c, cs = best_seconds(pr[1], method)
    local l, ls = best_seconds(pr[2], method)
    print(string.format("%-20s %-6s %12.3e %12.3e %8.2f %8d %8d", pr[1], method, c, l, l / c,
      cs.rhs_evals, ls.rhs_evals))
  end
end
