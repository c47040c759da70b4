-- examples/bricard.lua, the Bricard linkage (IFToMM A04): a redundant spatial mechanism
-- (Grubler 0 DOF, really 1; its Jacobian is rank-deficient everywhere) whose dependent row
-- must stay left out of the solve however far the integrator lets the state drift off the
-- manifold (docs/numerics.md, "Redundant constraints"). Checks: the compile, the energy at
-- the defaults and at rtol 1e-10, P3 against an independent model in relative coordinates
-- (tests/lua/bricard_reference.lua), BDF against the default method, the rank decision at
-- states off the manifold, and the solver settings from the script.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
tap.plan(20)

local function example() return (dofile("examples/bricard.lua")) end

-- 1. The model: 5 bodies (35 coordinates), 35 rows of rank 34; the script's starting
-- configuration is already consistent (the compile moves nothing) and gravity moves it.
local model = example():compile()
local report = model:report()
tap.diag(report)
tap.ok(model:num_coords() == 35 and report:find("rank 34 of 35 rows", 1, true) ~= nil,
  "35 coordinates, 35 rows of rank 34: one dependent row, named in the report")
tap.ok(not report:find("initial value", 1, true), "the starting configuration is consistent as written")
local q0, v0 = model:initial()
local acc0 = model:acceleration(q0, v0, 0)
local largest = 0
for _, a in ipairs(acc0) do largest = math.max(largest, math.abs(a)) end
-- Released at rest, the bars accelerate at ~2 m/s^2 (and the quaternions at ~1 1/s^2).
tap.ok(largest > 1, string.format("gravity moves it from rest (largest |q''| = %.3g)", largest))

local function energy_drift(res)
  local e0, worst = res.energy[1], 0
  for i = 1, #res.t do worst = math.max(worst, math.abs(res.energy[i] - e0)) end
  return worst / math.abs(e0), e0 -- relative to |E0| = 29.43 J (V = m g y, origin at O)
end

-- 2. (a) At the defaults (the script sets only t_end). Before the dependent row was kept out
-- of the solve, 0.24 J went missing here (8e-3 relative; the mechanism locked whenever the
-- state was more than ~1e-9 off the manifold). Measured 4.2e-10 at today's defaults (BDF,
-- rtol 1e-11, atol 1e-13); 6.4e-7 with the old defaults (Adams at rtol 1e-8 restarted at
-- every output): integration error, smooth in time, no jumps.
local default = example():simulate {}
local drift = energy_drift(default)
tap.ok(default.t[#default.t] == 10 and drift < 1e-6,
  string.format("defaults: 10 s, energy constant to %.2g of |E0| (bound 1e-6; %d steps, %.2f s)",
    drift, default.stats.steps, default.seconds))

-- 3. (b) At rtol 1e-10, atol 1e-12, against the reference: the same mechanism in the angles
-- of five hinges (one Lua part, energies from the forward kinematics of the bricks, closure
-- rows), which shares no body, joint, quaternion or glue with the example. Integrated at
-- rtol 1e-12 (Baumgarte, so Adams runs without restarts): its energy holds to 2e-12
-- relative, and P3 agrees with the example at rtol 1e-10 to 3.5e-8 m (measured).
-- Adams, which does not damp: energy measured to 3.9e-10 (bound 1e-9). BDF at the same rtol
-- loses energy to its own damping, more the longer its steps: 1.9e-9 to 7.4e-9 measured, by
-- the step sequence that the solve's rounding and the BLAS kernel pick (bound 2e-8, 200 rtol
-- over 10 s); its default rtol 1e-11 keeps 4.2e-10.
local tight = example():simulate { method = "adams", rtol = 1e-10, atol = 1e-12 }
drift = energy_drift(tight)
tap.ok(drift < 1e-9, string.format("rtol 1e-10, adams: energy constant to %.2g of |E0| (bound 1e-9)", drift))
local tight_bdf = example():simulate { rtol = 1e-10, atol = 1e-12 }
tap.ok(energy_drift(tight_bdf) < 2e-8, string.format("rtol 1e-10, bdf: energy constant to %.2g "
  .. "of |E0| (bound 2e-8)", energy_drift(tight_bdf)))
local ref_sys, P3 = dofile("tests/lua/bricard_reference.lua")
local ref = ref_sys:simulate { t_end = 10, dt_out = 0.1, rtol = 1e-12, atol = 1e-14, drift = "baumgarte" }
local ref_drift = energy_drift(ref)
-- The reference's own error must be far below the 1e-6 m compared: measured 2.3e-12 relative.
tap.ok(ref_drift < 1e-10, string.format("reference: energy constant to %.2g of |E0|", ref_drift))
local worst, worst_t, samples = 0, 0, 0
for i = 1, #ref.t do
  local k = math.floor(ref.t[i] * 100 + 0.5) + 1 -- the example's row at the same time
  if math.abs(tight.t[k] - ref.t[i]) < 1e-9 then
    local p = P3 { ref["chain.th1"][i], ref["chain.th2"][i], ref["chain.th3"][i],
                   ref["chain.th4"][i], ref["chain.th5"][i] }
    samples = samples + 1
    for c, axis in ipairs { "x", "y", "z" } do
      local d = math.abs(tight["P3." .. axis][k] - p[c])
      if d > worst then worst, worst_t = d, ref.t[i] end
    end
  end
end
-- 1e-6 m: the issue's bound; 30x over the 3.5e-8 m measured.
tap.ok(samples == 101 and worst < 1e-6,
  string.format("P3 (x, y, z) against the reference at %d times: worst %.2g m (t = %.1f s)",
    samples, worst, worst_t))
-- P3's largest distance from the reference over the rows of run (dt_out 0.01) at its times.
local function p3_error(run)
  local most = 0
  for i = 1, #ref.t do
    local k = math.floor(ref.t[i] * 100 + 0.5) + 1
    local p = P3 { ref["chain.th1"][i], ref["chain.th2"][i], ref["chain.th3"][i],
                   ref["chain.th4"][i], ref["chain.th5"][i] }
    for c, axis in ipairs { "x", "y", "z" } do
      most = math.max(most, math.abs(run["P3." .. axis][k] - p[c]))
    end
  end
  return most
end
-- auto across the ladder, through the flat passage: its step ends' projections give up a
-- stalling iteration after two passes (ten for a fixed method), and the collapse check
-- hands the passage to BDF. Measured over 10 s: 1e-8: 1.2e-7 m, 1e-10: 6.4e-9, 1e-11 (the
-- defaults' rtol): 4.2e-10; bound 300 rtol plus 1e-9 m for the reference's own error, a
-- factor of 5 over the closest.
for _, rtol in ipairs { 1e-8, 1e-10, 1e-11 } do
  local run = example():simulate { rtol = rtol, atol = rtol / 100 }
  local err = p3_error(run)
  tap.ok(err <= 300 * rtol + 1e-9, string.format("auto, rtol %g: P3 within %.2g m of the "
    .. "reference (<= 300 rtol + 1e-9 m)", rtol, err))
end
local swing = 0
for i = 1, #ref.t do swing = math.max(swing, math.abs(ref["chain.th1"][i])) end
tap.ok(swing > 0.5, string.format("it swings: the first hinge turns up to %.2f rad", swing))

-- 4. (c) The defaults (auto) finish in a number of steps of the order of Adams' (BDF, which
-- auto hands a singular passage, perturbs the state by ~1e-8 for its difference-quotient
-- Jacobian, past the old rank cut: 0.2 s of motion used to cost 11-24 s). Measured at the
-- defaults' tolerances: 1173 steps (the spatial recursion's Adams throughout; BDF alone
-- took 2217), 1253 Adams steps.
local adams = example():simulate { method = "adams" }
drift = energy_drift(adams)
tap.ok(adams.t[#adams.t] == 10 and drift < 1e-6,
  string.format("adams: 10 s in %d steps, %.2f s; energy to %.2g", adams.stats.steps,
    adams.seconds, drift))
tap.ok(default.stats.steps < 5 * adams.stats.steps,
  string.format("the defaults take %d steps, adams %d: within a factor of 5",
    default.stats.steps, adams.stats.steps))

-- 5. The rank decision does not flip off the manifold: at the state of t = 1 s, moved off
-- the manifold by 1e-8 (well past the rank cut 1e-10), the acceleration changes by O(1e-8),
-- not to that of a locked mechanism (q'' = 0 along the motion).
local i1 = 101
local q, v = {}, {}
for j, name in ipairs(model:coords()) do
  q[j], v[j] = tight[name][i1], tight["der(" .. name .. ")"][i1]
end
local acc = model:acceleration(q, v, 1)
local size, moved, off = 0, 0, {}
for j = 1, #q do off[j] = q[j] + 1e-8 * math.sin(7 * j) end -- not along any constraint's null space
local acc_off = model:acceleration(off, v, 1)
for j = 1, #q do
  size = math.max(size, math.abs(acc[j]))
  moved = math.max(moved, math.abs(acc_off[j] - acc[j]))
end
local residual = model:evaluate(off, v, 1)["residual.pos"]
-- 1e-6 of |q''|: 10x over the 1e-7 measured (a conditioning of ~10), far below the O(1) of
-- a locked solve.
tap.ok(residual > 1e-9 and moved < 1e-6 * size,
  string.format("1e-8 off the manifold (residual %.2g): q'' moves by %.2g of %.3g", residual,
    moved, size))

-- 6. Solver settings from the script: sys:settings takes them, returns them, names a bad
-- one, and `joinery run` compiles with them.
local sys = example()
sys:settings { rank_rcond = 1e-12, dependent_tol = 1e-5 }
local s = sys:settings()
tap.ok(s.rank_rcond == 1e-12 and s.dependent_tol == 1e-5 and s.dependent_rcond == 1e-3,
  "sys:settings stores solver settings next to the run settings")
tap.raises(function() sys:settings { rank_rcond = 2 } end, { "rank_rcond", "between 0 and 1" },
  "a relative cut outside (0, 1)")
local exe = tap.joinery()
local tmp = io.popen("mktemp -d"):read("l")
local script = tmp .. "/bricard_cut.lua"
local f = assert(io.open(script, "w"))
f:write('local sys = dofile("examples/bricard.lua")\n',
        'sys:settings { t_end = 0.01, rank_rcond = 1e-3, dependent_rcond = 1e-4 }\nreturn sys\n')
f:close()
local p = io.popen("'" .. exe .. "' run '" .. script .. "' --out '" .. tmp .. "/out.csv' 2>&1")
local out = p:read("a")
p:close()
os.execute("rm -rf '" .. tmp .. "'")
tap.ok(out:find("dependent_rcond = 0.0001 must be at least rank_rcond = 0.001", 1, true) ~= nil,
  "joinery run compiles with the script's solver settings (a bad pair is refused)")
tap.diag(out)
tap.done()
