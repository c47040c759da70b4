-- Udwadia–Kalaba (drift control: none, Baumgarte at 5 1/s, projection) against
-- Natsiavas–Paraskevopoulos (its own recovery, no drift control) over 100 s
-- at rtol 1e-8, atol 1e-10: the position residual at 10 s and its largest value over the
-- run (its growth), the largest velocity residual, the energy drift max |E - E0| relative
-- to an energy scale of the model, steps, and wall seconds per simulated second.
-- Models: the pendulum, the double pendulum, and a closed loop (the redundant double
-- parallelogram of examples/four_bar_redundant.lua).
--   build/lua/joinery bench/formulations.lua [T_END]
local t_end = tonumber(arg and arg[1]) or 100
-- energy scales: m g l; the double pendulum's E0 - V_min (as bench/drift.lua); for the
-- closed loop, the largest kinetic energy of the run.
local cases = { { "pendulum", 9.81 }, { "double_pendulum", 4.268 }, { "four_bar_redundant" } }
local variants = {
  { "UK", "adams", "none" }, { "UK", "adams", "baumgarte" }, { "UK", "adams", "projection" },
  { "UK", "bdf", "none" }, { "UK", "bdf", "baumgarte" }, { "UK", "bdf", "projection" },
  { "N-P", "adams" }, { "N-P", "bdf" },
}
print(string.format("| %-18s | %-4s | %-5s | %10s | %9s | %9s | %9s | %9s | %7s | %9s | note",
  "model", "form", "meth", "drift", "|phi|@10s", "max|phi|", "max|phi'|", "dE/E", "steps",
  "s per s"))
print("|" .. string.rep("---|", 11))
-- Steps a Sim through the outputs, so that a run that fails still reports how far it got
-- and what the residuals did until then.
local function run(name, opts)
  local model = dofile("examples/" .. name .. ".lua"):compile()
  local sim = model:sim(opts)
  local r = { p = 0, p10 = 0, vel = 0, e = 0, kmax = 0, reached = 0 }
  local e0
  local clock = os.clock()
  local steps = math.floor(opts.t_end / opts.dt_out + 0.5)
  for k = 0, steps do
    local t = k * opts.dt_out
    if k > 0 then
      local ok, err = pcall(sim.advance, sim, t)
      if not ok then
        r.failure = err:gsub("^.-: ", "", 1):gsub(" %(CVODE.*", "")
        break
      end
    end
    local ch = sim:channels()
    e0 = e0 or ch.energy
    r.p = math.max(r.p, ch["residual.pos"])
    r.vel = math.max(r.vel, ch["residual.vel"])
    r.e = math.max(r.e, math.abs(ch.energy - e0))
    r.kmax = math.max(r.kmax, ch.kinetic)
    if t <= 10 + 1e-9 then r.p10 = r.p end
    r.reached = t
  end
  r.seconds = os.clock() - clock
  r.steps = sim:stats().steps
  return r
end

for _, c in ipairs(cases) do
  for _, v in ipairs(variants) do
    local opts = { t_end = t_end, dt_out = 0.05, rtol = 1e-8, atol = 1e-10, method = v[2],
                   max_steps = 20000,
                   formulation = v[1] == "UK" and "udwadia-kalaba" or "natsiavas-paraskevopoulos",
                   drift = v[3] or "none" }
    local r = run(c[1], opts)
    print(string.format("| %-18s | %-4s | %-5s | %10s | %9.2e | %9.2e | %9.2e | %9.2e | %7d | %9.2e |%s",
      c[1], v[1], v[2], v[3] or "-", r.p10, r.p, r.vel, r.e / (c[2] or r.kmax), r.steps,
      r.seconds / math.max(r.reached, 1e-9),
      r.failure and string.format(" failed at t = %.1f s: %s", r.reached, r.failure) or ""))
  end
end
