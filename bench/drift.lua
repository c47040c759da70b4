-- Drift control, measured: the Cartesian pendulum and the double pendulum over 100 s at
-- rtol 1e-8, atol 1e-10 (the earlier defaults), for each integration method and drift
-- control: the largest position and velocity residual at the outputs (dt_out 0.01 s), the
-- energy drift relative to the energy scale, steps, restarts and seconds.
local cases = { { "pendulum", 9.81 }, { "double_pendulum", 4.268 } }
print(string.format("%-16s %-6s %-11s %10s %10s %10s %7s %8s %8s", "model", "method", "drift",
  "max|phi|", "max|phi'|", "dE/E", "steps", "restarts", "seconds"))
for _, c in ipairs(cases) do
  for _, method in ipairs { "adams", "bdf", "erk" } do
    for _, drift in ipairs { "projection", "baumgarte", "none" } do
      local res = dofile("examples/" .. c[1] .. ".lua"):simulate {
        t_end = 100, dt_out = 0.01, method = method, drift = drift, rtol = 1e-8, atol = 1e-10 }
      local p, v, e = 0, 0, 0
      for i = 1, #res.t do
        p = math.max(p, res["residual.pos"][i])
        v = math.max(v, res["residual.vel"][i])
        e = math.max(e, math.abs(res.energy[i] - res.energy[1]) / c[2])
      end
      print(string.format("%-16s %-6s %-11s %10.2e %10.2e %10.2e %7d %8d %8.3f", c[1], method,
        drift, p, v, e, res.stats.steps, res.stats.restarts or 0, res.seconds))
    end
  end
end
