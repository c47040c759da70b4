-- Failures that say why (docs/numerics.md, "Errors while integrating"): a run the
-- integrator gives up on names the coordinate with the largest weighted local error, its
-- part and the likely cause, keeps the rows computed before the failure in
-- "<stem>.incomplete.csv" (first line "# incomplete: <why>") and never leaves the complete
-- file behind. Three failures with a known cause: a block on a spring coming to rest on
-- Coulomb friction it cannot hold (sticking is not modelled), a stiff spring under Adams,
-- and a rheonomic constraint whose derivative diverges; and a run whose steps are so short
-- it stops long before max_steps.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"
tap.plan(32)

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local exe = tap.joinery()
local tmp = io.popen("mktemp -d"):read("l")

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local exists = tap.exists

-- Runs `joinery run` on a script; returns the exit code and stderr.
local function run(script, args)
  local errfile = tmp .. "/stderr"
  local p = io.popen(quote(exe) .. " run " .. quote(script) .. " " .. args .. " >/dev/null 2>"
    .. quote(errfile))
  p:read("a")
  local _, _, code = p:close()
  local f = io.open(errfile)
  local err = f:read("a")
  f:close()
  return code, err
end

local read = tap.read

-- The comment lines, the header and the rows (arrays of numbers) of a CSV file.
local function read_csv(path)
  local comments, header, rows = {}, nil, {}
  for line in io.lines(path) do
    if line:sub(1, 1) == "#" then
      comments[#comments + 1] = line
    elseif not header then
      header = {}
      for name in line:gmatch("[^,]+") do header[#header + 1] = name end
    else
      local row = {}
      for x in line:gmatch("[^,]+") do row[#row + 1] = tonumber(x) end
      rows[#rows + 1] = row
    end
  end
  return comments, header, rows
end

local function column(header, name)
  for i, h in ipairs(header) do if h == name then return i end end
end

local function has_all(text, parts, name)
  local all = true
  for _, part in ipairs(parts) do
    if not text:find(part, 1, true) then all = false end
  end
  tap.ok(all, name .. ": " .. table.concat(parts, " / "))
  if not all then tap.diag(text) end
end

-- ---- (a) a block on a spring coming to rest against Coulomb friction -----------------------
-- 1 kg on a level guide (mu = 0.3) pulled by a spring k = 100 N/m of rest length 0 from the
-- origin, released at rest at x0 = 0.5 m. Each half-swing (half period pi / omega, omega =
-- 10 1/s) is a cosine about an equilibrium shifted by d = mu m g / k against the motion:
-- moving left the friction pushes right, equilibrium +d, and x_{k+1} = 2 d - x_k; moving
-- right, x_{k+1} = -2 d - x_k. The
-- eighth turning point, 0.0291 m at t_s = 8 pi / 10, lies within d of the origin: the block
-- should stick there. Sticking is not modelled: the friction would have to hold the spring,
-- and the non-ideal law has no consistent force; every method stops there (at the
-- defaults, BDF, through the laws' fixed point failing to settle).
local mu, k, g, x0, dt_out = 0.3, 100, 9.81, 0.5, 0.01
local omega, d = math.sqrt(k), mu * g / k
local t_stop = 8 * math.pi / omega
local function closed_form(t)
  local x, tk = x0, 0
  for turn = 0, 7 do
    local eq = turn % 2 == 0 and d or -d -- even: moving left
    if t <= tk + math.pi / omega then return eq + (x - eq) * math.cos(omega * (t - tk)) end
    x, tk = 2 * eq - x, tk + math.pi / omega
  end
  return x
end
-- In 3-D: a 2-D guide models sticking (stick-slip, docs/events.md); a 3-D one does not.
local slide = tmp .. "/slide.lua"
write(slide, string.format([[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -%g } }
local wall = sys:add("ground", "wall", { dim = 3 })
local block = sys:add("mass", "block", { dim = 3, m = 1, init = { x = %g, y = 0 } })
sys:add("guide", "floor", { dim = 3, nx = 0, ny = 1, d = 0, mu = %g, pos = block.pos })
sys:add("spring", "spring", { dim = 3, k = %g, L = 0, a = wall.pos, b = block.pos })
sys:settings { t_end = 5, dt_out = %g }
return sys
]], g, x0, mu, k, dt_out))
local out, kept = tmp .. "/slide.csv", tmp .. "/slide.incomplete.csv"
write(out, "t\n0\n") -- a complete file of an earlier run: kept, and said to be the earlier run's
local code, err = run(slide, "--out " .. quote(out))
tap.diag(err)
tap.is(code, 1, "friction: the failing run exits with status 1")
has_all(err, { "integrator failure at t =",
  "likely cause: block.", "coming to rest against Coulomb friction", "part 'floor' has a friction law" },
  "friction: the message names the coordinate (x, or z: at rest the 3-D law takes its direction in the plane), its part and the cause")
-- The failure comes where the block should stick (the laws stop settling within a few
-- steps of ~1e-10 s there): 1e-6 s is ample.
tap.is_near(tonumber(err:match("integrator failure at t = ([%d.e+-]+)")), t_stop, 1e-6,
  "friction: the failure time is the eighth turning point 8 pi / omega")
has_all(err, { "are in '" .. kept .. "'", "'" .. out .. "' was not written",
  "the file of that name is an earlier run's, left as it was" },
  "friction: stderr says where the rows went, and that the complete file is an earlier run's")
tap.is(read(out), "t\n0\n", "friction: the earlier run's complete file is left as it was")
local comments, header, rows = read_csv(kept)
tap.ok(#comments == 1 and comments[1]:find("^# incomplete: integrator failure at t = ")
  and comments[1]:find("Coulomb friction", 1, true) and header and header[1] == "t",
  "friction: the incomplete file starts with the marker line, then the CSV header")
local ct, cx = column(header, "t"), column(header, "block.x")
tap.is(#rows, math.floor(t_stop / dt_out) + 1, "friction: every output row before the stop is kept")
-- Every kept row on the closed-form half-swings: the defaults' rtol 1e-11 on x ~ 0.5 m
-- keeps the error near 1e-10 m over eight swings; 1e-8 m for margin.
local worst = 0
for _, row in ipairs(rows) do worst = math.max(worst, math.abs(row[cx] - closed_form(row[ct]))) end
tap.ok(worst < 1e-8, string.format("friction: every kept row on the closed-form swings (%.2g m)", worst))

-- The Lua API writes through the same path and raises the same message.
local sys = dofile(slide)
local api_out = tmp .. "/api.csv"
local ok, api_err = pcall(function() return sys:simulate { out = api_out } end)
tap.ok(not ok and tostring(api_err):find("Coulomb friction", 1, true)
  and tostring(api_err):find(tmp .. "/api.incomplete.csv", 1, true)
  and exists(tmp .. "/api.incomplete.csv") and not exists(api_out),
  "friction: sys:simulate { out = ... } raises the same diagnosis and keeps the rows")

-- Explicit Runge–Kutta steps across the sticking point without a failing solve: the
-- friction watch sees the sliding velocity reverse at most steps there and stops the run.
do
  local ok, why = pcall(function() return dofile(slide):simulate { method = "erk" } end)
  why = tostring(why)
  local t = tonumber(why:match("at t = ([%d.e+-]+)"))
  tap.ok(not ok and (why:find("reversed at", 1, true) or why:find("Coulomb friction", 1, true))
    and t and math.abs(t - t_stop) < 1e-6,
    "friction, erk: stops at the sticking point saying the block came to rest against friction")
  tap.diag(why:sub(1, 200))
end

-- ---- (b) a stiff spring under Adams ------------------------------------------------------
-- 1 g on k = 1e9 N/m, critically damped (c = 2 sqrt(k m)), standing under gravity on a
-- spring of rest length L (in 1-D its length is x_b - x_a) and released 1 mm off: the
-- transient dies at 1e6 1/s and the motion is then at rest. Adams' fixed-point iteration holds its step at ~1/rate; BDF steps
-- past it.
local k, m, L = 1e9, 1e-3, 0.1
local stiff = tmp .. "/stiff.lua"
write(stiff, string.format([[
local joinery = require "joinery"
local k, m, L, g = %g, %g, %g, %g
local sys = joinery.system { gravity = { -g } }
local anchor = sys:add("ground", "anchor", { dim = 1, x = 0 })
local bob = sys:add("mass", "bob", { dim = 1, m = m, init = { x = L + 1e-3 } })
sys:add("spring", "spring", { dim = 1, k = k, L = L, a = anchor.pos, b = bob.pos })
sys:add("damper", "damper", { dim = 1, c = 2 * math.sqrt(k * m), a = anchor.pos, b = bob.pos })
sys:settings { t_end = 0.1, dt_out = 0.01, max_steps = 5000 }
return sys
]], k, m, L, g))
out, kept = tmp .. "/stiff.csv", tmp .. "/stiff.incomplete.csv"
code, err = run(stiff, "--method adams --out " .. quote(out))
tap.diag(err)
tap.is(code, 1, "stiff: Adams fails")
has_all(err, { "integrator failure at t =", "likely cause: stiffness", "at bob.x",
  "try --method bdf" }, "stiff: the message names the coordinate and says stiff, try bdf")
-- The transient has decayed below x's rounding long before the run gives up (e^-200 by
-- t = 2e-4 s), so whether Adams' last step still had a non-zero error estimate to list is
-- the rounding's choice; when it lists one, it is bob's velocity. Without one, the
-- stiffness probe looks at the fastest velocities instead.
tap.ok(err:find("der(bob.x) (part bob)", 1, true) or
  err:find("(no local error estimate to name the coordinates by)", 1, true),
  "stiff: the largest local error listed is der(bob.x) (part bob), or none is listed")
tap.ok(exists(kept) and not exists(out) and not exists(out .. ".partial"),
  "stiff: the rows are in the incomplete file, no complete file")
-- At rtol 1e-8, atol 1e-10: the force k (x - L) is computed from x ~ 0.1 m to 1e9 x 1e-17 N,
-- a noise BDF cannot resolve below the defaults' atol 1e-13 (it then crawls at h ~ 1e-7 s).
code, err = run(stiff, "--method bdf --rtol 1e-8 --atol 1e-10 --out " .. quote(out))
tap.is(code, 0, "stiff: the same model runs with BDF")
tap.ok(exists(out) and not exists(kept), "stiff: BDF writes the complete file and removes the "
  .. "incomplete one of the failed run")
comments, header, rows = read_csv(out)
last = rows[#rows] or {}
tap.ok(#comments == 0 and #rows == 11, "stiff: a complete file has no comment line and every row")
-- At rest where the spring holds the weight: x = L - m g / k (9.8e-12 m below L);
-- atol 1e-10 m bounds the error, 1e-9 leaves a margin of 10.
tap.is_near(last[column(header, "bob.x")], L - m * g / k, 1e-9, "stiff: BDF ends at rest at L - m g / k")

-- ---- (c) a rheonomic constraint whose derivative grows without bound ----------------------
-- A pendulum driven along theta = tan(t): the prescribed speed sec^2 t diverges at pi/2.
local drive = tmp .. "/drive.lua"
write(drive, [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local pend = sys:add("pendulum", "pend", { m = 1, l = 1, pivot = ground.pos })
sys:constrain { name = "drive", on = { pend.theta },
  phi = function(x, t) return x[1] - joinery.math.tan(t) end }
sys:settings { t_end = 2, dt_out = 0.01 }
return sys
]])
out = tmp .. "/drive.csv"
code, err = run(drive, "--out " .. quote(out))
tap.diag(err)
has_all(err, { "integrator failure at t = 1.570", "likely cause: the rheonomic row drive.r1",
  "grows without bound" }, "rheonomic: the message names the row and the runaway near pi/2")
tap.ok(code == 1 and exists(tmp .. "/drive.incomplete.csv") and not exists(out),
  "rheonomic: the rows are in the incomplete file, no complete file")
-- Across the ladder too: auto runs a prescribed motion with ERK, whose steps crawl towards
-- the pole until the branch guard hands the run to BDF from an earlier step end; BDF there
-- must keep the guard's energy scale of that step end, or its projections jump through the
-- pole unflagged and the run ends "fine" on the far branch of tan.
for _, rtol in ipairs { 1e-4, 1e-6, 1e-8 } do
  code, err = run(drive, string.format("--rtol %g --atol %g --out %s", rtol, rtol * 1e-2,
    quote(out)))
  tap.ok(code == 1 and err:find("integrator failure at t = 1.570", 1, true) and
    err:find("grows without bound", 1, true), string.format("rheonomic, rtol %g: stops at the "
      .. "pole, naming the runaway (exit %s)", rtol, tostring(code)))
end

-- ---- (d) steps far too short to reach the next output ------------------------------------
-- 1 g on an undamped spring under ERK: at k = 1e20 N/m (a period of 2e-11 s) the steps
-- are ~2e-14 s, and the 0.01 s to the first output would take ~5e11 of them. The run stops
-- once a twentieth of max_steps (5000 of the default 100000) is taken, saying so, instead
-- of taking all 100000. At k = 1e6 N/m it needs ~40,000 steps an output, 0.4 of max_steps,
-- and the early stop (which waits for the remaining way to be 1000 times max_steps of the
-- average step) leaves it alone: it completes.
local function fast_spring(k)
  local path = tmp .. "/fast.lua"
  write(path, string.format([[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0 } }
local anchor = sys:add("ground", "anchor", { dim = 1, x = 0 })
local bob = sys:add("mass", "bob", { dim = 1, m = 1e-3, init = { x = 0.1 + 1e-3 } })
sys:add("spring", "spring", { dim = 1, k = %g, L = 0.1, a = anchor.pos, b = bob.pos })
sys:settings { t_end = 0.02, dt_out = 0.01, method = "erk" }
return sys
]], k))
  return path
end
out = tmp .. "/fast.csv"
code, err = run(fast_spring(1e20), "--out " .. quote(out))
tap.diag(err)
has_all(err, { "integrator failure at t =", "ARK_TOO_MUCH_WORK", "the 5000 steps since t = 0 average",
  "the next output time 0.01 is", "more than max_steps = 100000 allows" },
  "too short: the run stops after 5000 steps, with their average and the steps it would need")
tap.is(code, 1, "too short: the run exits with status 1")
code, err = run(fast_spring(1e6), "--out " .. quote(out))
tap.is(code, 0, "too short: a run needing 40,000 steps an output completes (" .. err:sub(1, 80) .. ")")
-- And it is right: x = L + 1e-3 cos(w t), w = sqrt(k / m), at every row (about 100
-- periods). Measured 1.4e-9 m at the defaults (the same under OpenBLAS's Prescott kernel);
-- 1e-7 m, a ten-thousandth of the amplitude, leaves a margin of 70.
comments, header, rows = read_csv(out)
local omega_fast, worst_fast = math.sqrt(1e6 / 1e-3), 0
for _, row in ipairs(rows) do
  local want = 0.1 + 1e-3 * math.cos(omega_fast * row[column(header, "t")])
  worst_fast = math.max(worst_fast, math.abs(row[column(header, "bob.x")] - want))
end
tap.ok(#rows == 3 and worst_fast < 1e-7,
  string.format("too short: the completed run follows the closed form (%.2g m)", worst_fast))

-- Two velocity drives on one pin that agree in speed and acceleration at the start
-- (1 + t^3 and 1 + 2 t^3 rad/s) and part after it: the compile finds the second redundant
-- and leaves it out of the solves, the run follows the first while the second stops
-- holding, and the steps fail; under every method at every rung the run stops naming the
-- drive left out, as the likely cause (engine/src/int_diagnose.c, say_conflict) or, where
-- the probe's state is not yet off by ten tolerances, as the right-hand side's last trouble
-- (Adams at rtol 1e-4): no run ends with exit 0 on one drive's motion.
local function parting_drives()
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local ground = sys:add("ground2d", "ground", {})
  local w = sys:add("body2d", "wheel", { m = 1, J = 0.1 })
  sys:pin(w.pos, ground.pos, "axle")
  sys:motor { name = "d1", a = ground.frame, b = w.frame, velocity = function(t) return 1 + t ^ 3 end }
  sys:motor { name = "d2", a = ground.frame, b = w.frame,
    velocity = function(t) return 1 + 2 * t ^ 3 end }
  return sys
end
local ladder = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "ladder.lua")
local drives = parting_drives():compile()
for _, method in ipairs(ladder.methods) do
  local stopped, named, said = 0, 0, nil
  for _, tol in ipairs(ladder.ladder) do
    local ok, msg = pcall(drives.simulate, drives, { t_end = 1, dt_out = 0.5, method = method,
      rtol = tol[1], atol = tol[2] })
    msg = tostring(msg)
    stopped = stopped + (ok and 0 or 1)
    local cause = msg:match("likely cause: ([^\n]*)") or msg:match("last trouble[^\n]*") or ""
    if cause:find("d2.drive", 1, true) and (cause:find("rows asking for different motions", 1, true)
        or cause:find("inconsistent constraints", 1, true)) then
      named = named + 1
    end
    said = said or cause
  end
  tap.ok(stopped == #ladder.ladder and named == #ladder.ladder,
    string.format("two drives parting after a common start, %s: stops at every rung naming "
      .. "the one left out (%d of %d; %s)", method, named, #ladder.ladder,
      tostring(said):sub(1, 100)))
end

-- BDF at rtol 1e-4 crawls there with steps of 1e-18 s, below the resolution of t: the last
-- twentieth of max_steps judged alone stops it (it crawled all 100,000 before, 2 s).
local crawled, crawl_msg = pcall(drives.simulate, drives,
  { t_end = 1, dt_out = 0.5, method = "bdf", rtol = 1e-4, atol = 1e-6 })
crawl_msg = tostring(crawl_msg)
tap.ok(not crawled and crawl_msg:find("the last 5000 steps have not moved t", 1, true) ~= nil,
  "a crawl after a good start stops after the next 5000 steps (" .. crawl_msg:sub(1, 160) .. ")")

os.execute("rm -rf " .. quote(tmp))
tap.done()
