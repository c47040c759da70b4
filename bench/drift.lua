-- Drift control: the double pendulum and the Cartesian pendulum over 20 s at rtol 1e-8,
-- atol 1e-10, for Baumgarte rates 0 (none), 1, 5 and 20 1/s: largest position and
-- velocity residual, energy drift relative to the initial energy scale, steps, seconds.
local cases = { { "pendulum", 9.81 }, { "double_pendulum", 4.268 } }
print(string.format("%-16s %-6s %6s %10s %10s %10s %7s %8s", "model", "method", "rate",
  "max|phi|", "max|phi'|", "dE/E", "steps", "seconds"))
for _, c in ipairs(cases) do
  for _, method in ipairs { "adams", "bdf" } do
    for _, rate in ipairs { 0, 1, 5, 20 } do
      local res = dofile("examples/" .. c[1] .. ".lua"):simulate {
        t_end = 20, rtol = 1e-8, atol = 1e-10, baumgarte_rate = rate, method = method }
      local p, v, e = 0, 0, 0
      for i = 1, #res.t do
        p = math.max(p, res["residual.pos"][i])
        v = math.max(v, res["residual.vel"][i])
        e = math.max(e, math.abs(res.energy[i] - res.energy[1]) / c[2])
      end
      print(string.format("%-16s %-6s %6g %10.2e %10.2e %10.2e %7d %8.3f", c[1], method, rate,
        p, v, e, res.stats.steps, res.seconds))
    end
  end
end
