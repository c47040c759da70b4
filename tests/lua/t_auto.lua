-- method = auto, the default (docs/numerics.md, "The automatic method"): Adams where the
-- motion is smooth, at Adams' own cost; BDF where Adams' steps are held by stiffness or
-- where it meets a singular configuration, on the right branch or stopping; changes at step
-- ends, so the output times never change the integration. Each across the tolerance ladder.
local tap = dofile("tests/lua/tap.lua")
local L = dofile("tests/lua/ladder.lua")
local joinery = require "joinery"
local exact = dofile("tests/lua/a01_exact.lua") -- x, y of the A01 bob at t
tap.plan(8 * #L.ladder + 14)

local function with_tol(opts, tol)
  opts.rtol, opts.atol = tol[1], tol[2]
  return opts
end

-- The methods' books add up: steps and simulated time over the methods that ran.
local function books_add_up(res, span)
  local steps, time = 0, 0
  for _, m in pairs(res.stats.methods) do steps, time = steps + m.steps, time + m.time end
  return steps == res.stats.steps and math.abs(time - span) <= 1e-9 * span
end

-- ---- smooth: the A01 pendulum is Adams' run or ERK's, whichever races cheaper ----------
-- Adams' work (right-hand sides and steps) over a window against a shadow ERK run's over the
-- same span; the winner runs the rest. Where Adams wins, auto is Adams' run step for step.
local function a01()
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
  sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
  return sys:compile()
end
local pendulum = a01()
-- The race's measure of work (engine/src/int_auto.c): right-hand sides, and a step's own
-- work beyond them, 1.5 of Adams', 0.5 of ERK's (whose right-hand sides are 8 a step
-- attempted: one output row, so none for its interpolant).
local function work(r)
  local m = r.stats.methods
  return r.stats.rhs_evals + 1.5 * (m.adams and m.adams.steps or 0)
    + 0.5 * (m.erk and m.erk.steps or 0)
end
for _, tol in ipairs(L.ladder) do
  local opts = with_tol({ t_end = 10, dt_out = 10 }, tol)
  local auto = pendulum:simulate(with_tol({ t_end = 10, dt_out = 0.05 }, tol))
  local auto_one = pendulum:simulate(opts)
  opts.method = "adams"
  local adams = pendulum:simulate(opts)
  opts.method = "erk"
  local erk = pendulum:simulate(opts)
  local err = 0
  for i = 1, auto.rows do
    local x, y = exact(auto.t[i])
    err = math.max(err, math.abs(auto["bob.x"][i] - x), math.abs(auto["bob.y"][i] - y))
  end
  local rtol = tol[1] or L.DEFAULT_RTOL
  -- bench/tolerances.lua: Adams' error on this pendulum is 10 to 500 rtol, ERK's 18 to 90
  -- (rtol 1e-4 to 1e-13); 5000 rtol leaves a factor of 10
  tap.ok(err <= 5000 * rtol, string.format("A01, rtol %s: max error %.2g m <= 5000 rtol",
    L.name(tol), err))
  local ran_erk = auto_one.stats.methods.erk ~= nil
  local same_as_adams = auto_one.stats.steps == adams.stats.steps and
    auto_one.stats.rhs_evals == adams.stats.rhs_evals
  -- the race's shadow runs and ERK's first steps cost at most a few Adams windows of 100
  -- steps, and one window can favour the method the whole run does not (by 1.2 on A01):
  -- 1.5 times the cheaper fixed method's work (measured 0.9 to 1.2)
  local cheaper = math.min(work(adams), work(erk))
  tap.ok((ran_erk or same_as_adams) and work(auto_one) <= 1.5 * cheaper and
    auto_one.stats.to_collapse + auto_one.stats.to_singular + auto_one.stats.to_stiff == 0,
    string.format("A01, rtol %s: auto ran %s (work %.0f; Adams %.0f, ERK %.0f)", L.name(tol),
      ran_erk and "ERK after the race" or "as Adams, step for step", work(auto_one), work(adams),
      work(erk)))
end

-- ---- singular: the four-bar through its ten flat passages ---------------------------------
-- Another branch ends radians from -30.343945 rad. On the branch the crank's error under
-- auto is measured 1.3e3 rtol (1e-4), 2.4e3 (1e-6), 43 (1e-8), 3e3 (the defaults; BDF
-- alone about 3000 rtol): allowed 1e5 rtol, at most 0.5 rad.
local four_bar = dofile("examples/four_bar.lua"):compile()
for _, tol in ipairs(L.ladder) do
  local ok, res = pcall(four_bar.simulate, four_bar, with_tol({ dt_out = 10 }, tol))
  local rtol = tol[1] or L.DEFAULT_RTOL
  if ok then
    local off = math.abs(res["crank.theta"][res.rows] + 30.343945)
    tap.ok(off <= math.min(1e5 * rtol, 0.5), string.format(
      "four-bar, rtol %s: the crank ends %.2g rad off its branch (%d steps, %d changes to bdf)",
      L.name(tol), off, res.stats.steps, res.stats.to_collapse + res.stats.to_singular))
    -- ERK's steps at a loose rtol pass the flat configurations without collapsing, its
    -- step ends checked by the branch guard (the branch is checked above)
    tap.ok((res.stats.to_collapse + res.stats.to_singular >= 1 or res.stats.methods.erk)
      and books_add_up(res, 10),
      string.format("four-bar, rtol %s: BDF took the passages (or ERK went through them), "
        .. "and the books add up", L.name(tol)))
  else -- never a wrong branch: a clear stop is allowed
    tap.has(tostring(res), "singular configuration", "four-bar, rtol " .. L.name(tol)
      .. ": stops at a singular configuration saying so")
    tap.ok(true, "four-bar, rtol " .. L.name(tol) .. ": (stopped)")
  end
end
local fine = four_bar:simulate { dt_out = 0.01 }
local coarse = four_bar:simulate { dt_out = 10 }
tap.ok(fine.stats.steps == coarse.stats.steps and
  fine["crank.theta"][fine.rows] == coarse["crank.theta"][coarse.rows],
  string.format("four-bar: rows every 0.01 s or one row, the same %d steps and the same end "
    .. "to the bit", coarse.stats.steps))

-- ---- the race: what ERK's shadow run decides never depends on the output interval --------
-- examples/pendulum.lua over 100 s at rtol 1e-6 (atol 1e-8) is ERK's after the race; rows
-- every 0.01 s ask ERK's interpolant for 10000 states (each costing it right-hand sides
-- that one row does not).
local swing = dofile("examples/pendulum.lua"):compile()
local race_opts = { rtol = 1e-6, atol = 1e-8, t_end = 100, dt_out = 100 }
local one_row = swing:simulate(race_opts)
race_opts.dt_out = 0.01
local many_rows = swing:simulate(race_opts)
local last = function(r, name) return r[name][r.rows] end
tap.ok(one_row.stats.methods.erk and many_rows.stats.methods.erk and
  one_row.stats.steps == many_rows.stats.steps and
  last(one_row, "bob.x") == last(many_rows, "bob.x") and
  last(one_row, "bob.y") == last(many_rows, "bob.y"),
  string.format("the race: ERK from %.3g s either way, the same %d steps and the same end to "
    .. "the bit with 10001 rows as with 2", one_row.stats.methods.adams.time, one_row.stats.steps))
-- ---- the race over inputs: ERK's shadow sees the signals the run sees ---------------------
-- A wheel (I = 0.5 kg m^2) on an axle turned by a Lua load reading the input "push", a
-- triangle wave tabled every 0.05 s over 20 s: the run restarts at each of its 400
-- breakpoints, and a race's window spans several. Every evaluation, the shadow's (which go
-- back in time to its window's start) included, must read the table's value at its own time:
-- a shadow reading the window's last piece extended back (as it did) fails this. theta at
-- 20 s has a closed form (exact for a piecewise-linear torque: per piece of length h,
-- omega += (u_a + u_b) h / (2 I), theta += omega_a h + h^2 (u_a / 3 + u_b / 6) / I).
local WHEEL_I, PIECE, WAVE_END = 0.5, 0.05, 20
local wave_t, wave_u = {}, {}
for k = 0, math.floor(WAVE_END / PIECE + 0.5) do
  wave_t[#wave_t + 1], wave_u[#wave_u + 1] = k * PIECE, (k % 2 == 0 and 1 or -1) * (1 + 0.1 * (k % 3))
end
local function wave_at(t) -- the table's line at t (t within it)
  local k = math.min(math.floor(t / PIECE), #wave_t - 2)
  local a, b = wave_t[k + 1], wave_t[k + 2]
  return wave_u[k + 1] + (wave_u[k + 2] - wave_u[k + 1]) * (t - a) / (b - a)
end
local theta_exact, omega = 0, 0
for k = 1, #wave_t - 1 do
  local h, ua, ub = wave_t[k + 1] - wave_t[k], wave_u[k], wave_u[k + 1]
  theta_exact = theta_exact + omega * h + h * h * (ua / 3 + ub / 6) / WHEEL_I
  omega = omega + (ua + ub) * h / (2 * WHEEL_I)
end
-- The wheel, with a record of what its evaluations read: the largest misreading, and how many
-- evaluations went back more than four pieces behind the latest (the race's shadow runs: the
-- run's steps stop at every breakpoint or sample, so the latest moves on a piece at most; an
-- evaluation further ahead is CVODE's first-step estimate probing, and does not move it).
local function wheel_model(held)
  local sys = joinery.system { gravity = { 0, 0 } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local w = sys:add("body2d", "w", { m = 1, J = WHEEL_I, init = { x = 0, y = 0, theta = 0 } })
  sys:pin(w:point("c", { 0, 0 }), pivot.pos, "axle")
  local seen = { misread = 0, behind = 0, latest = 0 }
  sys:load("push", w.frame, function(t, _, _, u)
    if type(t) == "number" then
      if not held then seen.misread = math.max(seen.misread, math.abs(u.push - wave_at(t))) end
      if t < seen.latest - 4 * PIECE then seen.behind = seen.behind + 1 end
      if t <= seen.latest + PIECE then seen.latest = math.max(seen.latest, t) end
    end
    return { tau = u.push }
  end)
  if held then -- the same wave held piece by piece by a controller: each sample restarts
    sys:input { name = "push", value = 0 }
    sys:controller { name = "step", period = PIECE, fn = function(c)
      c:set_input("push", wave_at(c.t))
    end }
  else
    sys:input { name = "push", t = wave_t, u = wave_u, interp = "linear" }
  end
  return sys:compile(), seen
end
local raced = 0
for _, rtol in ipairs { 1e-6, 1e-8, 1e-10, false } do
  local model, seen = wheel_model(false)
  local opts = { t_end = WAVE_END, dt_out = WAVE_END }
  if rtol then opts.rtol = rtol end
  local res = model:simulate(opts)
  local r = rtol or 1e-11
  local err = math.abs(res["w.theta"][res.rows] - theta_exact)
  raced = raced + seen.behind
  -- Adams starts afresh at each breakpoint: its 400 starts leave 130-170 rtol in theta (rad;
  -- BDF 210-330, ERK, exact on the cubics, none): allowed 1000
  tap.ok(seen.misread <= 1e-12 and err <= 1000 * r * math.max(1, math.abs(theta_exact)),
    string.format("race over 400 breakpoints, rtol %s: every evaluation reads the table at its "
      .. "time (worst %.1g; %d behind), theta(20) %.1f rtol off its closed form",
      rtol or "default", seen.misread, seen.behind, err / r))
end
tap.ok(raced > 0, string.format("the races' shadows ran over the breakpoints (%d evaluations "
  .. "behind the run)", raced))
-- Held by a sampled controller, the input changes at every sample, which the shadow (from its
-- window's first state, with the inputs of its last) cannot see: no window spans one, so no
-- shadow runs (before: ERK's shadow went back over the samples reading the last value).
do
  local model, seen = wheel_model(true)
  local res = model:simulate { t_end = WAVE_END, dt_out = WAVE_END, rtol = 1e-8 }
  tap.ok(seen.behind == 0 and not res.stats.methods.erk,
    string.format("a held input changed every 0.05 s: no race window spans a change (%d "
      .. "evaluations behind the run, %d steps)", seen.behind, res.stats.steps))
end

-- Adams' steps near Bricard's flat passage crawl on the row path, each step end projected by
-- a dense rank-revealing solve; ERK (where it wins a race there) or BDF takes the passage and
-- the motion stays right. (The spatial recursion's Adams goes through without the crawl,
-- its step ends checked by the branch guard there: tests/lua/t_bricard.lua.)
local bricard_rows = dofile("examples/bricard.lua")
bricard_rows:settings { tree_recursion = false }
local bricard = bricard_rows:compile()
local br = bricard:simulate { dt_out = 0.05 }
local e0, br_drift = br.energy[1], 0
for i = 1, br.rows do br_drift = math.max(br_drift, math.abs(br.energy[i] - e0) / math.abs(e0)) end
-- t_bricard.lua measures the defaults' drift; 1e-8 relative is 100 times rtol 1e-10's
tap.ok((br.stats.methods.erk or br.stats.methods.bdf) and br_drift <= 1e-8,
  string.format("Bricard at the defaults: Adams %d steps, ERK %d, BDF %d; energy drift %.2g",
    br.stats.methods.adams and br.stats.methods.adams.steps or 0,
    br.stats.methods.erk and br.stats.methods.erk.steps or 0,
    br.stats.methods.bdf and br.stats.methods.bdf.steps or 0, br_drift))
-- a motion ERK is dear on (the double pendulum, 2.3 times Adams' right-hand sides at 1e-8)
-- stays Adams' run step for step: the races' shadows leave nothing behind
local dp = dofile("examples/double_pendulum.lua"):compile()
local dp_auto = dp:simulate { rtol = 1e-8, atol = 1e-10, dt_out = 10 }
local dp_adams = dp:simulate { method = "adams", rtol = 1e-8, atol = 1e-10, dt_out = 10 }
tap.ok(not dp_auto.stats.methods.erk and dp_auto.stats.steps == dp_adams.stats.steps and
  dp_auto.stats.rhs_evals == dp_adams.stats.rhs_evals,
  string.format("double pendulum at 1e-8: ERK lost its races, and auto is Adams' run step for "
    .. "step (%d steps)", dp_auto.stats.steps))

-- ---- stiff: a soft oscillator carrying a stiff, critically damped one --------------------
-- m1 = 1 kg on k1 = 4 pi^2 N/m (1 Hz) carries m2 = 0.01 kg on k2 = 1e6 N/m with critical
-- damping: eigenvalues near -1e4 /s that Adams must resolve with steps of 1e-4 s after the
-- transient has died out, where BDF steps with the slow motion.
local function stiff()
  local sys = joinery.system { gravity = { 0 } }
  local wall = sys:add("ground", "wall", { dim = 1, x = 0 })
  local m1 = sys:add("mass", "m1", { dim = 1, m = 1, init = { x = 1.1 } })
  local m2 = sys:add("mass", "m2", { dim = 1, m = 0.01, init = { x = 2 } })
  sys:add("spring", "k1", { dim = 1, k = 4 * math.pi ^ 2, L = 1, a = wall.pos, b = m1.pos })
  sys:add("spring", "k2", { dim = 1, k = 1e6, L = 1, a = m1.pos, b = m2.pos })
  sys:add("damper", "c2", { dim = 1, c = 2 * math.sqrt(1e6 * 0.01), a = m1.pos, b = m2.pos })
  return sys:compile()
end
local oscillator = stiff()
local ref = oscillator:simulate { method = "bdf", rtol = 1e-12, atol = 1e-14, t_end = 2,
  dt_out = 2 }
local ref_x = ref["m1.x"][ref.rows]
for _, tol in ipairs(L.ladder) do
  local opts = with_tol({ t_end = 2, dt_out = 2 }, tol)
  local auto = oscillator:simulate(opts)
  opts.method = "adams"
  local adams = oscillator:simulate(opts)
  local rtol = tol[1] or L.DEFAULT_RTOL
  local err = math.abs(auto["m1.x"][auto.rows] - ref_x)
  -- BDF's multiple on smooth models reaches 1e4 at rtol 1e-13 (bench/tolerances.lua); the
  -- reference's own error is below 1e-11 m
  tap.ok(err <= 1e4 * rtol + 1e-10, string.format(
    "stiff, rtol %s: m1 ends %.2g m from the reference (<= 1e4 rtol)", L.name(tol), err))
  local cost = function(r) return r.stats.rhs_evals + r.stats.jac_rhs_evals end
  tap.ok(auto.stats.to_stiff >= 1 and cost(auto) < cost(adams) and books_add_up(auto, 2),
    string.format("stiff, rtol %s: auto changed to bdf for stiffness (%d) and spent %d "
      .. "right-hand sides where Adams spent %d", L.name(tol), auto.stats.to_stiff, cost(auto),
      cost(adams)))
end

-- ---- prescribed: as many independent rows as coordinates, ERK from the start --------------
-- Every reported state is the projection's, so the answer is the closed form's at any rtol
-- to the projection's own tolerance; the method only carries the state between
-- projections: ERK's run from the start, its steps at rtol 1e-6 where the run's is tighter.
local tracking = dofile("examples/tracking.lua"):compile()
local crank_motor = dofile("examples/crank_motor.lua"):compile()
-- the rocker's angle at crank angle th, the four-bar's closure on the branch the example
-- assembles (C the upper intersection of the coupler's and rocker's circles)
local function rocker_angle(th)
  local ax, ay, bx = 0.3 * math.cos(th), 0.3 * math.sin(th), 1
  local dx, dy = bx - ax, -ay
  local d = math.sqrt(dx * dx + dy * dy)
  local a = (0.9 ^ 2 - 0.8 ^ 2 + d * d) / (2 * d)
  local h = math.sqrt(0.9 ^ 2 - a * a)
  local cx, cy = ax + a * dx / d - h * dy / d, ay + a * dy / d + h * dx / d
  return math.atan(cy, cx - bx)
end
for _, tol in ipairs(L.ladder) do
  local auto_run = tracking:simulate(with_tol({ dt_out = 0.05 }, tol))
  local erk_run = tracking:simulate(with_tol({ method = "erk", dt_out = 0.05 }, tol))
  local off = 0
  for i = 1, auto_run.rows do
    local t = auto_run.t[i]
    off = math.max(off, math.abs(auto_run["pend.theta"][i] - math.pi / 4 * math.cos(2 * t)),
      math.abs(auto_run["der(pend.theta)"][i] + math.pi / 2 * math.sin(2 * t)))
  end
  local m = auto_run.stats.methods
  -- ERK's steps at rtol 1e-6 at most (the projections keep the run's own tolerance), and
  -- the books say so; a fixed ERK's are the run's
  local step_rtol = math.max(tol[1] or L.DEFAULT_RTOL, 1e-6)
  tap.ok(auto_run.stats.steps <= erk_run.stats.steps and m.erk and not m.adams and not m.bdf
    and off <= 1e-9 and m.erk.rtol == step_rtol
    and erk_run.stats.methods.erk.rtol == (tol[1] or L.DEFAULT_RTOL),
    string.format("tracking, rtol %s: a prescribed motion is ERK's run (%d steps at rtol %g, "
      .. "ERK alone %d) and tracks theta_d and its rate to %.1g", L.name(tol),
      auto_run.stats.steps, m.erk.rtol or 0, erk_run.stats.steps, off))
  local motor = crank_motor:simulate(with_tol({ dt_out = 0.01 }, tol))
  local crank_off, rocker_off = 0, 0
  for i = 1, motor.rows do
    local th = math.pi / 2 + 2 * math.pi * motor.t[i]
    crank_off = math.max(crank_off, math.abs(motor["crank.theta"][i] - th))
    rocker_off = math.max(rocker_off, math.abs(motor["rocker.theta"][i] - rocker_angle(th)))
  end
  -- a projection is done within the error weights, rtol |q| + atol: |q| <= 2.2 rad for the
  -- rocker, up to 14 rad for the turning crank (its row is linear in it: measured 0)
  local rtol = tol[1] or L.DEFAULT_RTOL
  tap.ok(motor.stats.methods.erk and not motor.stats.methods.bdf and crank_off <= 16 * rtol
    and rocker_off <= 4 * rtol, string.format("crank_motor, rtol %s: ERK's run (%d steps), the "
      .. "crank at pi/2 + 2 pi t to %.1g rad, the rocker on its assembly branch to %.1g rad",
      L.name(tol), motor.stats.steps, crank_off, rocker_off))
end

-- ---- the counters and the run summary ------------------------------------------------------
local adams = pendulum:simulate { method = "adams", t_end = 1, dt_out = 1 }
tap.ok(adams.stats.methods.adams and adams.stats.methods.adams.steps == adams.stats.steps and
  not adams.stats.methods.bdf and adams.stats.to_adams == 0,
  "a fixed method's books: one method, every step")
local cmd = tap.command()
local code, out = cmd.run("run " .. cmd.quote(cmd.root .. "/examples/four_bar.lua") .. " --out "
  .. cmd.quote(cmd.tmp .. "/four_bar.csv") .. " --dt-out 10")
tap.ok(code == 0 and out:find("method auto: adams [%d.]+ s %(%d+ steps%), ") ~= nil and
  out:find("bdf [%d.]+ s %(%d+ steps%); %d+ changes to bdf %(%d+ where the step collapsed, "
    .. "%d+ at the branch guard, %d+ for stiffness%), %d+ back to %a+\n") ~= nil,
  "joinery run says which method ran for how long and why it changed")
code, out = cmd.run("run " .. cmd.quote(cmd.root .. "/examples/pendulum.lua") .. " --out "
  .. cmd.quote(cmd.tmp .. "/pendulum.csv") .. " --dt-out 10")
tap.ok(code == 0 and out:find("method auto: adams 10 s %(%d+ steps%); no change to bdf") ~= nil,
  "a smooth run: Adams alone, no change")
code, out = cmd.run("run " .. cmd.quote(cmd.root .. "/examples/pendulum.lua") .. " --out "
  .. cmd.quote(cmd.tmp .. "/pendulum.csv") .. " --dt-out 10 --method bdf")
tap.ok(code == 0 and not out:find("method auto", 1, true), "a fixed method: no such line")
