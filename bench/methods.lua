-- Issue 41 ("defaults that pick the method") measured: what a run at the defaults costs
-- against the cheapest fixed method that reaches the same accuracy. Four sections:
--   examples  every examples/*.lua against a reference motion computed at rtol 1e-13 (the
--             two fixed methods that agree best; their difference is the reference's own
--             error), the error the largest over 100 rows: each method at rtol 1e-6, 1e-8,
--             1e-10 and the example's own rtol, timed with one output row; then the
--             example's settings unchanged (the defaults) against the cheapest fixed method
--             and rtol reaching the same error (target <= 1.5x).
--   singular  the four-bar, the four-bar chain, Bricard and the A01 pendulum (100 s): each
--             method at rtol 1e-6, 1e-8, 1e-10 and 1e-11, with rows, the model's own error
--             measure, energy drift and the branch it ends on.
--   w1        the W1 chain (mass + rod, bench/peers/models/w1.lua) at N = 10, 100 (10 s) and
--             1000 (1 s) with only rtol given (1e-8, 1e-10) against each fixed method from
--             rtol 1e-7 to 1e-11: energy drift, the tip's end position against a reference,
--             and the default's time over the cheapest fixed method at most as far off in
--             both (target <= 1.3x).
--   cloth     a 20 x 20 sheet of masses and springs pinned at two corners, 1 s, at the
--             defaults and at rtol 1e-8 against adams and bdf (target defaults <= 1.3x adams).
-- Every run's atol (and atol_velocity, where the model sets one) keeps the model's own
-- ratio to rtol. A method the build refuses (`auto` until it lands) or a run that fails is a
-- row `stops: <why>`. Seconds are processor seconds of the run (robust to other jobs on
-- shared cores), the best of 3 to 10 repeats under 0.5 s.
--   build/lua/joinery --trust bench/methods.lua [examples|singular|w1|cloth|all] [NAMES]
-- (NAMES: examples only, a comma-separated list such as crank_motor,tracking)
-- (--trust: the examples section lists examples/ with io.popen; the others run without.)
local joinery = require "joinery"

local section = arg and arg[1] or "all"
-- examples only: a comma-separated list of example names (default: every one)
local only = arg and arg[2]
local METHODS = { "auto", "adams", "bdf", "erk" }
local FIXED = { adams = true, bdf = true, erk = true }
local summary = {} -- { section, case, defaults, cheapest, ratio, target }

-- A failure as a row shows it: the message's first line, without the script position.
local function why_stopped(err)
  return (tostring(err):gsub("\n.*", ""):gsub("^[^:]+:%d+: ", ""):sub(1, 90))
end

-- A new table of base's fields with extra's over them.
local function with(base, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

-- opts at rtol, with the model's atol (and a set atol_velocity) in the same ratio to rtol.
local function at_rtol(settings, rtol, opts)
  local scale = rtol / settings.rtol
  opts = with(opts, { rtol = rtol, atol = settings.atol * scale })
  if settings.atol_velocity > 0 then opts.atol_velocity = settings.atol_velocity * scale end
  return opts
end

-- Runs model with opts: the result, or nil and why it stopped. res.cpu is the processor
-- time of the call (os.clock: other jobs on the shared cores do not count, as they do in
-- res.seconds, the wall time; one BLAS thread, OPENBLAS_NUM_THREADS=1, as bench/run.sh
-- sets). A run under 0.5 s is repeated, at least 3 times in all and until the runs add up
-- to 0.2 s (at most 10), and both times are the best of those: a run of a few milliseconds
-- is otherwise as noisy as its ratio to another.
local function measure(model, opts)
  local start = os.clock()
  local ok, res = pcall(model.simulate, model, opts)
  if not ok then return nil, why_stopped(res) end
  res.cpu = os.clock() - start
  local runs, total = 1, res.cpu
  while res.cpu < 0.5 and runs < 10 and (runs < 3 or total < 0.2) do
    start = os.clock()
    local again = model:simulate(opts)
    local took = os.clock() - start
    res.cpu, res.seconds = math.min(res.cpu, took), math.min(res.seconds, again.seconds)
    runs, total = runs + 1, total + took
  end
  res.again = function() return model:simulate(opts) end
  return res
end

-- The processor times of two measured runs taken again side by side, alternating, each the
-- best of as many runs (at least 3, until both add up to 0.8 s, at most 20 or 10 s in all):
-- the machine's speed drifts over the minutes a section takes (a shared host: the same run
-- 1.5 times slower a minute later), so two bests taken minutes apart do not make a ratio.
local function side_by_side(a, b)
  local ta, tb, runs, total = math.huge, math.huge, 0, 0
  repeat
    local start = os.clock()
    a.again()
    local mid = os.clock()
    b.again()
    local stop = os.clock()
    ta, tb = math.min(ta, mid - start), math.min(tb, stop - mid)
    runs, total = runs + 1, total + stop - start
    collectgarbage()
  until runs >= 20 or total >= 10 or (runs >= 3 and total >= 0.8)
  a.cpu, b.cpu = ta, tb
end

-- Largest |E(t) - E0| over the rows, relative to the larger of |E0| and the largest kinetic
-- energy (bench/stepping.lua's measure; E0 may be near 0 where the potential's origin is).
local function energy_drift(res)
  local e0, drift, scale = res.energy[1], 0, math.abs(res.energy[1])
  for i = 1, res.rows do
    scale = math.max(scale, math.abs(res.kinetic[i]))
    drift = math.max(drift, math.abs(res.energy[i] - e0))
  end
  return drift / scale
end

-- The fastest fixed-method run of runs whose error is at most target, or nil.
local function cheapest(runs, target)
  local best
  for _, r in ipairs(runs) do
    if FIXED[r.method] and r.res and r.error and r.error <= target
      and (not best or r.res.cpu < best.res.cpu) then
      best = r
    end
  end
  return best
end

local function sci(x) return x and string.format("%.1e", x) or "-" end

-- The columns every run row starts with: steps, right-hand sides, seconds.
local COST_HEAD = string.format("%8s %9s %8s", "steps", "rhs", "cpu s")
local function cost(res)
  return string.format("%8d %9d %8.4f", res.stats.steps, res.stats.rhs_evals, res.cpu)
end
local NO_COST = string.format("%8s %9s %8s", "-", "-", "-")

-- One summary line: the defaults' run, the cheapest fixed run reaching its accuracy, and
-- the ratio of their seconds against the target.
local function add_summary(name, case, defaults, best, target)
  if defaults.res and best and not defaults.res.paired then side_by_side(defaults.res, best.res) end
  local line = { section = name, case = case, target = target }
  if not defaults.res then
    line.defaults, line.cheapest, line.ratio = "stops: " .. defaults.why, "-", "-"
  else
    line.defaults = string.format("%s %g %.3f s", defaults.method, defaults.rtol,
      defaults.res.cpu)
    if best then
      line.cheapest = string.format("%s %g %.3f s", best.method, best.rtol, best.res.cpu)
      line.ratio = string.format("%.2f", defaults.res.cpu / best.res.cpu)
    else
      line.cheapest, line.ratio = "none as accurate", "<1"
    end
  end
  summary[#summary + 1] = line
end

-- The rtols of a sweep: the given ones, and extra when it is not among them.
local function rtols_with(list, extra)
  local out = { table.unpack(list) }
  for _, r in ipairs(list) do
    if math.abs(r - extra) <= 1e-3 * r then return out end
  end
  out[#out + 1] = extra
  return out
end

---------------------------------------------------------------------------------------------
-- 1. examples

-- The mixed error of the coordinates over the motion: |q - q_ref| where |q_ref| <= 1 (m,
-- rad), relative above (the four-bar chain's far couplers sit 40 m out, the four-bar's crank
-- turns to -30 rad); the largest over the coordinates and over the rows the two runs share
-- (ERROR_ROWS of them; the last row alone, the final state, where a run has one). Judged at
-- the last row alone a method can look as accurate at ten times the rtol by a dip of its
-- error at that instant (constant_speed: ERK at rtol 1e-10 ended 160 times closer than
-- Adams at 1e-10, and is 10 times farther by the closed form over the motion).
local ERROR_ROWS = 100
local function motion_error(coords, res, ref)
  local worst = 0
  local rows = math.min(res.rows, ref.rows)
  for i = 1, rows do
    local r, rr = res.rows - rows + i, ref.rows - rows + i
    for _, c in ipairs(coords) do
      local q, q_ref = res[c][r], ref[c][rr]
      worst = math.max(worst, math.abs(q - q_ref) / math.max(1, math.abs(q_ref)))
    end
  end
  return worst
end

-- The error of a timed run over the motion: the same settings run again with ERROR_ROWS
-- rows (the timing's run has one: rows cost their interpolation and projection, not steps).
local function run_error(model, coords, opts, ref, span)
  local ok, res = pcall(model.simulate, model, with(opts, { dt_out = span / ERROR_ROWS }))
  if not ok then return nil end
  return motion_error(coords, res, ref)
end

-- A reference run: each fixed method (the example's own first, bdf if it has none fixed)
-- at rtol 1e-13 (or the example's tighter one) and atol 1e-15, or where that fails (the
-- four-bar chain's velocities) at the example's ratio of atol to rtol. Of those that go
-- through, the two that agree best make the reference (the first of them) and its spread,
-- their difference: BDF's error at rtol 1e-13 on the heavy top (2.5e-8) had hidden every
-- error below it. Returns the reference result, its label and the spread (nil with one).
local function reference(model, settings, span)
  local own = FIXED[settings.method] and settings.method or "bdf"
  local rtol = math.min(1e-13, settings.rtol)
  local rows = span / ERROR_ROWS
  local tries = { { rtol = rtol, atol = math.min(1e-15, settings.atol), dt_out = rows },
                  at_rtol(settings, rtol, { dt_out = rows }) }
  local got, seen = {}, {}
  for _, method in ipairs { own, "bdf", "adams", "erk" } do
    if not seen[method] then
      seen[method] = true
      for _, opts in ipairs(tries) do
        local ok, res = pcall(model.simulate, model, with(opts, { method = method }))
        if ok then
          got[#got + 1] = { method = method, res = res, atol = opts.atol }
          break
        end
      end
    end
  end
  if #got == 0 then return nil end
  local label = function(g) return string.format("%s at rtol %g atol %g", g.method, rtol, g.atol) end
  if #got == 1 then return got[1].res, label(got[1]) .. " alone (no second method went through)" end
  local best
  for i = 1, #got do
    for j = i + 1, #got do
      local spread = motion_error(model:coords(), got[j].res, got[i].res)
      if not best or spread < best.spread then best = { i = i, j = j, spread = spread } end
    end
  end
  local first, second = got[best.i], got[best.j]
  return first.res, string.format("%s, %s agrees to %.1e (the closest two of %d)", label(first),
    second.method, best.spread, #got), best.spread
end

local function example_paths()
  local ok, pipe = pcall(io.popen, "ls examples/*.lua")
  if not ok then return nil, why_stopped(pipe) end
  local paths = {}
  for path in pipe:lines() do
    local name = path:match("([^/]+)%.lua$")
    if not only or ("," .. only .. ","):find("," .. name .. ",", 1, true) then
      paths[#paths + 1] = path
    end
  end
  pipe:close()
  return paths
end

local function run_examples()
  print("== examples: each method and rtol, timed with one output row; error over the motion against the "
    .. "reference")
  print("   error: max over coordinates and 100 rows of |q - q_ref| / max(1, |q_ref|); atol keeps "
    .. "the example's ratio to rtol")
  local paths, why = example_paths()
  if not paths then
    print("   skipped: listing examples/ needs --trust (" .. why .. ")")
    return
  end
  local head = string.format("%-24s %-6s %-7s %s %9s", "example", "method", "rtol", COST_HEAD,
    "error")
  local defaults_rows = {}
  for _, path in ipairs(paths) do
    local name = path:match("([^/]+)%.lua$")
    local loaded, sys = pcall(dofile, path)
    local model
    if loaded then loaded, model = pcall(sys.compile, sys) end
    if not loaded then
      print(string.format("%-24s fails to load: %s", name, why_stopped(sys or model)))
      goto next_example
    end
    do
      local settings = sys:settings()
      local span = settings.t_end - settings.t_start
      local coords = model:coords()
      local ref, ref_label, spread = reference(model, settings, span)
      local defaults = { method = settings.method, rtol = settings.rtol }
      defaults.res, defaults.why = measure(model, { dt_out = span })
      local events = defaults.res and defaults.res.stats.events or 0
      print(string.format("-- %s: %g s, %s rtol %g atol %g; reference: %s%s", name, span,
        settings.method, settings.rtol, settings.atol, ref_label or "none went through",
        events > 0 and string.format("; hybrid (%d events)", events) or ""))
      print(head)
      local runs = {}
      for _, method in ipairs(METHODS) do
        for _, rtol in ipairs(rtols_with({ 1e-6, 1e-8, 1e-10 }, settings.rtol)) do
          local run = { method = method, rtol = rtol }
          run.res, run.why = measure(model, at_rtol(settings, rtol, { method = method,
            dt_out = span }))
          if run.res and ref then
            run.error = run_error(model, coords, at_rtol(settings, rtol, { method = method }), ref,
              span)
          end
          runs[#runs + 1] = run
          print(string.format("%-24s %-6s %-7g %s %9s", name, method, rtol,
            run.res and cost(run.res) or NO_COST,
            run.res and sci(run.error) or "stops: " .. run.why))
          collectgarbage()
        end
      end
      if defaults.res and ref then defaults.error = run_error(model, coords, {}, ref, span) end
      -- Errors below the references' own difference are not told apart.
      local target = defaults.error and math.max(defaults.error, spread or 0)
      defaults_rows[#defaults_rows + 1] = { name = name, defaults = defaults,
        best = target and cheapest(runs, target), has_ref = ref ~= nil }
    end
    ::next_example::
  end

  print()
  print("== examples at their own settings (the defaults) against the cheapest fixed method "
    .. "and rtol reaching the same error (target <= 1.5x)")
  print(string.format("%-24s %-6s %-7s %s %9s   %-20s %8s %9s %6s", "example", "method", "rtol",
    COST_HEAD, "error", "cheapest as accurate", "s", "error", "ratio"))
  for _, row in ipairs(defaults_rows) do
    local d, best = row.defaults, row.best
    if d.res and best and row.has_ref then
      side_by_side(d.res, best.res)
      d.res.paired = true
    end
    if not d.res then
      print(string.format("%-24s %-6s %-7g stops: %s", row.name, d.method, d.rtol, d.why))
    else
      local other = "no reference"
      if row.has_ref then
        other = best and string.format("%-20s %8.3f %9s %6.2f", best.method .. " "
          .. string.format("%g", best.rtol), best.res.cpu, sci(best.error),
          d.res.cpu / best.res.cpu) or "none as accurate"
      end
      print(string.format("%-24s %-6s %-7g %s %9s   %s", row.name, d.method, d.rtol, cost(d.res),
        sci(d.error), other))
    end
    if row.has_ref then add_summary("examples", row.name, d, best, 1.5) end
  end
end

---------------------------------------------------------------------------------------------
-- 2. singular configurations

-- IFToMM A01 (tests/lua/t_a01.lua): the pendulum from the horizontal, and its exact
-- solution x, y at t.
local a01_exact = dofile("tests/lua/a01_exact.lua")

local function a01_system()
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
  sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
  return sys
end

-- Each case: its system, the span and rows, and assess(res) → error, right branch?, note.
local function singular_cases()
  local bricard_ref, P3 -- computed on first use (3 s)
  return {
    { name = "four_bar", error_name = "crank end angle off, rad",
      system = function() return dofile("examples/four_bar.lua") end, t_end = 10, dt_out = 0.01,
      assess = function(res) -- the parallelogram branch ends at -30.343945 rad
        local off = math.abs(res["crank.theta"][res.rows] + 30.343945)
        return off, off < 0.5, off < 0.5 and "right branch" or "WRONG BRANCH"
      end },
    { name = "four_bar_chain", error_name = "energy drift (t_four_bar_chain.lua: 1e-8)",
      system = function() return dofile("examples/four_bar_chain.lua") end, t_end = 20,
      dt_out = 0.01,
      assess = function(res) -- parallel cranks, about 20 flat passages (t_four_bar_chain.lua)
        local apart, flat, prev = 0, 0, nil
        for i = 1, res.rows do
          local th0 = res["crank0.theta"][i]
          for k = 1, 40 do
            apart = math.max(apart, math.abs(res["crank" .. k .. ".theta"][i] - th0))
          end
          local up = math.sin(th0) >= 0
          if prev ~= nil and up ~= prev then flat = flat + 1 end
          prev = up
        end
        local right = apart < 0.1 and flat >= 18
        return energy_drift(res), right, string.format("%s, %d flat passages, cranks %.1e "
          .. "rad apart", right and "right branch" or "WRONG BRANCH", flat, apart)
      end },
    { name = "bricard", error_name = "P3 off the reference, m",
      system = function() return dofile("examples/bricard.lua") end, t_end = 10, dt_out = 0.01,
      assess = function(res) -- P3 against the model in hinge angles (t_bricard.lua)
        if not bricard_ref then
          local ref_sys
          ref_sys, P3 = dofile("tests/lua/bricard_reference.lua")
          bricard_ref = ref_sys:simulate { t_end = 10, dt_out = 0.1, rtol = 1e-12, atol = 1e-14,
                                           drift = "baumgarte" }
        end
        local worst = 0
        for i = 1, bricard_ref.rows do
          local k = math.floor(bricard_ref.t[i] * 100 + 0.5) + 1
          local th = {}
          for j = 1, 5 do th[j] = bricard_ref["chain.th" .. j][i] end
          local p = P3(th)
          for c, axis in ipairs { "x", "y", "z" } do
            worst = math.max(worst, math.abs(res["P3." .. axis][k] - p[c]))
          end
        end
        return worst, worst < 1e-3, worst < 1e-3 and "ran" or "OFF THE REFERENCE"
      end },
    { name = "A01 pendulum", error_name = "max |dx|, |dy|, m", system = a01_system, t_end = 100,
      dt_out = 0.5,
      assess = function(res)
        local worst = 0
        for i = 1, res.rows do
          local x, y = a01_exact(res.t[i])
          worst = math.max(worst, math.abs(res["bob.x"][i] - x), math.abs(res["bob.y"][i] - y))
        end
        return worst, true, "ran"
      end },
  }
end

local function run_singular()
  print("== singular: each method at rtol 1e-6 .. 1e-11 (atol in the model's ratio), rows "
    .. "as listed; error is the model's own measure")
  local head = string.format("%-15s %-6s %-8s %s %9s %9s  %s", "model", "method", "rtol",
    COST_HEAD, "error", "drift", "outcome")
  for _, case in ipairs(singular_cases()) do
    local sys = case.system()
    local settings = sys:settings()
    local model = sys:compile()
    local base = { t_end = case.t_end, dt_out = case.dt_out }
    print(string.format("-- %s: %g s, rows every %g s; own settings %s rtol %g atol %g; error: %s",
      case.name, case.t_end, case.dt_out, settings.method, settings.rtol, settings.atol,
      case.error_name))
    print(head)
    local function row(run, label)
      if not run.res then
        print(string.format("%-15s %-6s %-8s %s %9s %9s  stops: %s", case.name, run.method,
          label, NO_COST, "-", "-", run.why))
        return
      end
      local note
      run.error, run.right, note = case.assess(run.res)
      print(string.format("%-15s %-6s %-8s %s %9s %9s  %s", case.name, run.method, label,
        cost(run.res), sci(run.error), sci(energy_drift(run.res)), note))
      if not run.right then run.error = nil end -- a wrong branch reaches no accuracy
      collectgarbage()
    end
    local defaults = { method = settings.method, rtol = settings.rtol }
    defaults.res, defaults.why = measure(model, base)
    row(defaults, "own")
    local runs = {}
    for _, method in ipairs(METHODS) do
      for _, rtol in ipairs { 1e-6, 1e-8, 1e-10, 1e-11 } do
        local run = { method = method, rtol = rtol }
        run.res, run.why = measure(model, at_rtol(settings, rtol, with(base, { method = method })))
        row(run, string.format("%g", rtol))
        runs[#runs + 1] = run
      end
    end
    local best = defaults.error and cheapest(runs, defaults.error)
    add_summary("singular", case.name .. (defaults.res and not defaults.right
      and " (WRONG BRANCH)" or ""), defaults, best, 1.5)
  end
end

---------------------------------------------------------------------------------------------
-- 3. W1

-- The W1 chain as bench/peers/run.py builds it: N masses on 1 m rods, from the horizontal.
local function w1_system(n)
  local vars = { N = tostring(n), KIND = "rod" }
  local env = setmetatable({ os = { getenv = function(k) return vars[k] end } }, { __index = _G })
  return assert(loadfile("bench/peers/models/w1.lua", "t", env))()
end

-- The tip's end position; with ref, its distance from ref's.
local function w1_tip(res, n, ref)
  local x, y = res["m" .. n .. ".x"][res.rows], res["m" .. n .. ".y"][res.rows]
  if ref then return math.sqrt((x - ref[1]) ^ 2 + (y - ref[2]) ^ 2) end
  return { x, y }
end

-- Accuracy is both measures: the energy drift (below 1e-14 it is rounding) and the tip's
-- end position against a reference, adams at rtol 1e-13 (atol 1e-15; it is as good as it
-- agrees with adams at 1e-12, as in bench/peers/run.py).
local function run_w1()
  print("== w1: mass + rod chain from the horizontal, only rtol given (atol the default); "
    .. "drift: max |E - E0| at 20 rows / (m g L N(N+1)/2); tip: end position off the "
    .. "reference, m")
  local head = string.format("%5s %6s %-8s %-7s %s %9s %9s", "N", "span", "method", "rtol",
    COST_HEAD, "drift", "tip")
  for _, size in ipairs { { 10, 10 }, { 100, 10 }, { 1000, 1 } } do
    local n, span = size[1], size[2]
    local model = w1_system(n):compile()
    local scale = 9.81 * n * (n + 1) / 2
    local base = { t_end = span, dt_out = span / 20 }
    local ref = w1_tip(model:simulate(with(base, { method = "adams", rtol = 1e-13,
      atol = 1e-15 })), n)
    local spread = w1_tip(model:simulate(with(base, { method = "adams", rtol = 1e-12,
      atol = 1e-14 })), n, ref)
    print(string.format("-- N = %d, %g s: reference tip (%.9f, %.9f), adams at 1e-12 agrees "
      .. "to %.1e m", n, span, ref[1], ref[2], spread))
    print(head)
    local function run(method, rtol)
      local r = { method = method or "default", rtol = rtol }
      r.res, r.why = measure(model, with(base, { method = method, rtol = rtol }))
      if r.res then
        local e0, drift = r.res.energy[1], 0
        for i = 1, r.res.rows do drift = math.max(drift, math.abs(r.res.energy[i] - e0)) end
        r.drift, r.tip = drift / scale, w1_tip(r.res, n, ref)
      end
      print(string.format("%5d %6g %-8s %-7g %s %9s %9s", n, span, r.method, rtol,
        r.res and cost(r.res) or NO_COST, r.res and sci(r.drift) or "stops: " .. r.why,
        sci(r.tip)))
      collectgarbage()
      return r
    end
    local defaults = { run(nil, 1e-8), run(nil, 1e-10) }
    local runs = {}
    for _, method in ipairs { "adams", "bdf", "erk" } do
      for _, rtol in ipairs { 1e-7, 1e-8, 1e-9, 1e-10, 1e-11 } do
        runs[#runs + 1] = run(method, rtol)
      end
    end
    for _, d in ipairs(defaults) do
      local best
      if d.res then
        -- One error for cheapest(): a run is as accurate when it is in both measures.
        local drift_at, tip_at = math.max(d.drift, 1e-14), math.max(d.tip, spread)
        for _, r in ipairs(runs) do
          r.error = r.res and (r.drift <= drift_at and r.tip <= tip_at) and 0 or nil
        end
        best = cheapest(runs, 0)
      end
      add_summary("w1", string.format("N = %d, rtol %g", n, d.rtol), d, best, 1.3)
    end
  end
end

---------------------------------------------------------------------------------------------
-- 4. cloth

-- A 1 m square sheet of 20 x 20 nodes (0.01 kg each) joined by springs (k = 100 N/m) along
-- the grid lines and both diagonals, at their rest lengths, level at z = 0; the two corners
-- of one edge are ground points, the rest falls under gravity along -z and swings. No
-- constraint rows: a pure ODE of 1194 coordinates, its fastest mode about 400 rad/s.
local function cloth_system()
  local n, k, m = 20, 100, 0.01
  local h = 1 / (n - 1)
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local node = {}
  for i = 1, n do
    node[i] = {}
    for j = 1, n do
      local name, at = string.format("n%d_%d", i, j), { x = (i - 1) * h, y = (j - 1) * h, z = 0 }
      if j == n and (i == 1 or i == n) then
        node[i][j] = sys:add("ground", name, { dim = 3, x = at.x, y = at.y, z = 0 }).pos
      else
        node[i][j] = sys:add("mass", name, { dim = 3, m = m, init = at }).pos
      end
    end
  end
  local function spring(kind, i, j, a, b, L)
    sys:add("spring", string.format("%s%d_%d", kind, i, j), { dim = 3, k = k, L = L, a = a, b = b })
  end
  for i = 1, n do
    for j = 1, n do
      if i < n then spring("sx", i, j, node[i][j], node[i + 1][j], h) end
      if j < n then spring("sy", i, j, node[i][j], node[i][j + 1], h) end
      if i < n and j < n then
        spring("sd", i, j, node[i][j], node[i + 1][j + 1], h * math.sqrt(2))
        spring("se", i, j, node[i + 1][j], node[i][j + 1], h * math.sqrt(2))
      end
    end
  end
  return sys
end

local function run_cloth()
  print("== cloth: 20 x 20 masses and springs, pinned at two corners, 1 s, 20 rows; drift: "
    .. "max |E - E0| / max(|E0|, max kinetic)")
  local sys = cloth_system()
  local settings = sys:settings()
  local model = sys:compile()
  print(string.format("%-8s %-8s %s %9s", "method", "rtol", COST_HEAD, "drift"))
  for _, rtol in ipairs { settings.rtol, 1e-8 } do
    local runs = {}
    for _, method in ipairs { "default", "adams", "bdf" } do
      local opts = { t_end = 1, dt_out = 0.05, method = FIXED[method] and method or nil }
      if rtol ~= settings.rtol then opts = at_rtol(settings, rtol, opts) end
      local r = { method = method, rtol = rtol }
      r.res, r.why = measure(model, opts)
      print(string.format("%-8s %-8g %s %9s", method, rtol, r.res and cost(r.res) or NO_COST,
        r.res and sci(energy_drift(r.res)) or "stops: " .. r.why))
      runs[method] = r
      collectgarbage()
    end
    local d, adams = runs.default, runs.adams
    add_summary("cloth", string.format("rtol %g: defaults / adams", rtol), d,
      adams.res and adams, 1.3)
  end
end

---------------------------------------------------------------------------------------------

local sections = { examples = run_examples, singular = run_singular, w1 = run_w1,
                   cloth = run_cloth }
local order = { "examples", "singular", "w1", "cloth" }
if section ~= "all" and not sections[section] then
  error("bench/methods.lua: unknown section '" .. section .. "' (examples, singular, w1, "
    .. "cloth or all)")
end
for _, name in ipairs(order) do
  if section == "all" or section == name then
    sections[name]()
    print()
  end
end

print("== summary: the defaults' seconds over the cheapest fixed method as accurate")
print(string.format("%-9s %-34s %-26s %-26s %6s %6s", "section", "case", "defaults",
  "cheapest as accurate", "ratio", "target"))
for _, s in ipairs(summary) do
  print(string.format("%-9s %-34s %-26s %-26s %6s %6s", s.section, s.case, s.defaults,
    s.cheapest, s.ratio, string.format("%.1f", s.target)))
end
