-- The spatial recursion (engine/src/dyn_spatial.c; docs/numerics.md, "The spatial tree"):
-- body3d parts joined into a tree by ball joints (a glue of two points) and hinge3d,
-- prismatic3d and weld3d parts have their acceleration solved body by body, without the
-- rows, and the rows the tree does not carry (a loop's closing joint, a motor's drive) by
-- Udwadia and Kalaba on the tree's reduced system. The row path (tree_recursion = false)
-- solves the same equations through the KKT system, so it is the reference here:
--   1. that each model takes the recursion (res.stats.spatial_evals);
--   2. the acceleration at the consistent initial state: both paths to rounding, on a ball
--      chain whose glues name their points in both orders, the 14-body tree, a free body
--      carrying hinged children (one of them hinged by its frame a) and force elements,
--      a crane of sliders and a weld in both orders, the heavy top on a 3-D ground point, a
--      ball chain closed into a loop, the crane with a motor's velocity row, Bricard's
--      linkage (a loop whose sixth hinge has a redundant row) and the tree with twelve
--      motors (rows of different units beside it); loops of 2 to 6 rods of 1 and 100 kg and
--      the crane's drive either way and at rest;
--   3. whole runs across the tolerance ladder and every method against the row path at rtol
--      1e-12: within the row path's own error at that rung, or a few rtol;
--   4. a parameter changed by an event (the geometry and inertia are read again), and a
--      massless free body, which the row path then names;
--   5. auto's race on the 14-body tree keeps Adams' run, its projections priced.
local dir = (arg and arg[0] and arg[0]:match("^(.*[/\\])") or "")
local tap = dofile(dir .. "tap.lua")
local L = dofile(dir .. "ladder.lua")
local joinery = require "joinery"
tap.plan(29)

-- R(q) v and q a q b, scalar first (as body3d).
local function rotate(q, v)
  local w, x, y, z = q[1], q[2], q[3], q[4]
  local t = { 2 * (y * v[3] - z * v[2]), 2 * (z * v[1] - x * v[3]), 2 * (x * v[2] - y * v[1]) }
  return { v[1] + w * t[1] + (y * t[3] - z * t[2]), v[2] + w * t[2] + (z * t[1] - x * t[3]),
           v[3] + w * t[3] + (x * t[2] - y * t[1]) }
end
local function qmul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4],
           a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
           a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2],
           a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1] }
end

-- N rods on ball joints from the ground, as bench/peers/models/ball_chain.lua, started
-- swinging (a spin about each rod's axis and a sideways velocity): the odd joints glue the
-- parent's point first, the even ones the child's.
local function ball_chain(N, m)
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local ground = sys:add("ground3d", "ground", { x = 0.1, q0 = 0.9, q1 = 0.2, q2 = -0.1 })
  local q = { math.cos(0.5), math.sin(0.5), 0, 0 }
  local s = math.sin(0.15) / math.sqrt(2)
  local qrel = { math.cos(0.15), 0, s, s }
  local top, prev = { 0.1, 0, 0 }, ground.pos
  for i = 1, N do
    if i > 1 then q = qmul(q, qrel) end
    local d = rotate(q, { 0, 0, -0.5 })
    local mi = m or (1 + 0.3 * i)
    local rod = sys:add("body3d", "rod" .. i, {
      m = mi, Ixx = mi / 12, Iyy = mi / 11.5, Izz = mi / 100, Ixy = 0.0005 * i,
      init = { x = top[1] + d[1], y = top[2] + d[2], z = top[3] + d[3],
               q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] },
      vel = { y = 0.4 * i, q1 = 0.1 },
    })
    local here = rod:point("top", { 0, 0, 0.5 })
    if i % 2 == 1 then sys:ball(prev, here) else sys:ball(here, prev) end
    prev = rod:point("bottom", { 0, 0, -0.5 })
    top = { top[1] + 2 * d[1], top[2] + 2 * d[2], top[3] + 2 * d[3] }
  end
  sys:settings { t_end = 1 }
  return sys, top
end

-- The chain of 3 rods closed into a loop: its last rod's bottom end on a ball at a second
-- ground point where it starts (3 rows beside the tree).
local function loop_chain()
  local sys, bottom = ball_chain(3)
  local anchor = sys:add("ground", "anchor", { dim = 3, x = bottom[1], y = bottom[2],
    z = bottom[3] })
  sys:ball(sys:part("rod3"):point("end", { 0, 0, -0.5 }), anchor.pos)
  return sys
end

-- A free box spinning in space with two hinged plates, the second hinged by its frame a
-- (the tree turns that joint round), a damped torsion spring across the first hinge and a
-- load (force and torque) on the second plate: force elements on the bodies' frames.
local function free_body()
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local box = sys:add("body3d", "box", { m = 3, Ixx = 0.2, Iyy = 0.3, Izz = 0.4,
    init = { z = 1, q0 = 1 }, vel = { x = 0.3, q1 = 0.5, q3 = 1.0 } })
  local p1 = sys:add("body3d", "plate1", { m = 0.5, Ixx = 0.02, Iyy = 0.03, Izz = 0.04,
    init = { x = 0.6, z = 1, q0 = 1 } })
  local p2 = sys:add("body3d", "plate2", { m = 0.7, Ixx = 0.03, Iyy = 0.02, Izz = 0.04,
    init = { x = -0.6, z = 1, q0 = 1 } })
  sys:add("hinge3d", "h1", { rax = 0.3, rbx = -0.3, nay = 1, naz = 0, nby = 1, nbz = 0,
    a = box.frame, b = p1.frame })
  sys:add("hinge3d", "h2", { rax = 0.3, rbx = -0.3, naz = 1, nbz = 1,
    a = p2.frame, b = box.frame })
  sys:add("rotational_spring3d", "s", { k = 2, c = 0.1, a = box.frame, b = p1.frame })
  sys:add("torque3d", "load", { tx = 0.3, fz = 4, frame = p2.frame })
  sys:settings { t_end = 1 }
  return sys
end

-- A turntable on a hinge about z carrying a carriage on a slider along its x axis (the
-- turntable the slider's frame a), a payload welded under the carriage by the payload's
-- frame a, a bob on a ball under the payload, and an arm on a second slider whose frame a
-- is the arm's own (the axis turns with the child): slider and weld in both orders.
local function crane()
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local ground = sys:add("ground3d", "ground", {})
  local function body(name, m, x, y, z, vel)
    return sys:add("body3d", name, { m = m, Ixx = 0.1 * m, Iyy = 0.12 * m, Izz = 0.15 * m,
      init = { x = x, y = y, z = z, q0 = 1 }, vel = vel })
  end
  local base = body("base", 5, 0, 0, 0.5, { q3 = 0.5 })
  local carriage = body("carriage", 1, 0.4, 0, 0.8, { x = 0.3 })
  local payload = body("payload", 2, 0.4, 0, 0.5)
  local bob = body("bob", 0.5, 0.4, 0, 0.1, { y = 0.5 })
  local arm = body("arm", 0.7, 0, 0.3, 0.2, { y = -0.2 })
  sys:add("hinge3d", "turn", { rbz = -0.5, a = ground.frame, b = base.frame })
  sys:add("prismatic3d", "rail", { raz = 0.3, nax = 1, naz = 0, a = base.frame,
    b = carriage.frame })
  sys:add("weld3d", "mount", { raz = 0.2, rbz = -0.1, a = payload.frame, b = carriage.frame })
  sys:ball(payload:point("hook", { 0, 0, -0.1 }), bob:point("top", { 0, 0, 0.3 }))
  sys:add("prismatic3d", "side", { rbz = -0.3, nay = 1, naz = 0, a = arm.frame, b = base.frame })
  sys:settings { t_end = 1 }
  return sys
end

local function tree() return (dofile("bench/joint_rows/tree.lua")) end

-- The crane with a motor turning its turntable at a set speed: the drive's velocity row
-- beside the tree (its frames glued to the hinge's, which stays in the tree).
local function motor_crane()
  local sys = crane()
  sys:motor { name = "drive", joint = sys:part("turn"), velocity = 0.5 }
  return sys
end

-- Bricard's linkage (examples/bricard.lua, 1 s): six hinges in a loop, the sixth's five rows
-- beside the tree, one of them redundant.
local function bricard()
  local sys = dofile("examples/bricard.lua")
  sys:settings { t_end = 1 }
  return sys
end

local function compiled(build, recursion)
  local sys = build()
  sys:settings { tree_recursion = recursion }
  return sys:compile()
end

-- 1-2. The path each takes and the acceleration at the consistent initial state.
local cases = { { "ball chain (5 rods)", function() return ball_chain(5) end },
                { "14-body tree", tree }, { "free body with hinged plates", free_body },
                { "crane (sliders, a weld)", crane },
                { "heavy top (a ball on a 3-D ground point)",
                  function() return (dofile("examples/heavy_top.lua")) end },
                { "ball chain closed into a loop", loop_chain },
                { "crane with a motor's drive row", motor_crane },
                { "Bricard (a loop, a redundant row)", bricard },
                { "the tree with twelve hinges driven by motors",
                  function() return (dofile("bench/joint_rows/driven_tree.lua")) end } }
local free_model
-- The largest difference of the two paths' accelerations at the initial state, the largest
-- acceleration, and both models.
local function accel_gap(build)
  local fast, rows = compiled(build, true), compiled(build, false)
  local q, v = fast:initial()
  local a, b = fast:acceleration(q, v, 0), rows:acceleration(q, v, 0)
  local worst, size = 0, 0
  for j = 1, #a do
    worst = math.max(worst, math.abs(a[j] - b[j]))
    size = math.max(size, math.abs(b[j]))
  end
  return worst, size, fast, rows
end
for _, c in ipairs(cases) do
  local name, build = c[1], c[2]
  local worst, size, fast, rows = accel_gap(build)
  -- the initial state meets the rows to the assembly tolerance (1e-12 m): the two answers
  -- agree to that and rounding, ~1e-13 of the largest acceleration measured
  tap.ok(worst <= 1e-10 * size, string.format("%s: the acceleration at the initial state is the "
    .. "row path's (largest difference %.2g of %.3g)", name, worst, size))
  if build == free_body then free_model = { fast, rows } end
  local res = fast:simulate { t_end = 0.01 }
  tap.ok(res.stats.spatial_evals > 0 and res.stats.spatial_evals >= res.stats.rhs_evals,
    string.format("%s: the run takes the recursion (%d accelerations, %d right-hand sides)",
      name, res.stats.spatial_evals, res.stats.rhs_evals))
end

-- Sizes, masses and signs: loops of 2 to 6 rods with light and heavy rods (1 and 100 kg:
-- the rows beside the tree at scales 100 apart), and the crane's drive turning either way
-- and at rest.
local function gap_ratio(build)
  local worst, size = accel_gap(build)
  return worst / size
end
local loops_worst, loops = 0, 0
for _, n in ipairs { 2, 4, 6 } do
  for _, m in ipairs { 1, 100 } do
    loops_worst = math.max(loops_worst, gap_ratio(function()
      local sys, bottom = ball_chain(n, m)
      local anchor = sys:add("ground", "anchor", { dim = 3, x = bottom[1], y = bottom[2],
        z = bottom[3] })
      sys:ball(sys:part("rod" .. n):point("end", { 0, 0, -0.5 }), anchor.pos)
      return sys
    end))
    loops = loops + 1
  end
end
local drives_worst = 0
for _, speed in ipairs { -0.8, 0, 1.3 } do
  drives_worst = math.max(drives_worst, gap_ratio(function()
    local sys = crane()
    sys:motor { name = "drive", joint = sys:part("turn"), velocity = speed }
    return sys
  end))
end
-- as above: the initial state meets the rows to 1e-12 m, the answers agree to ~1e-13
tap.ok(loops_worst <= 1e-10 and drives_worst <= 1e-10, string.format("%d loops of 2 to 6 rods "
  .. "of 1 and 100 kg, and the crane driven at -0.8, 0 and 1.3 rad/s: the row path's "
  .. "acceleration (largest difference %.2g and %.2g of the largest acceleration)", loops,
  loops_worst, drives_worst))

-- 3. Runs against the row path at rtol 1e-12. The bound: the row path's own error at the
-- same rung times 3, or 5 rtol of the state's size, whichever is larger: the two paths take
-- different steps, so each has an error of the method's size, measured at 0.2 to 4.3 times
-- the other's (the worst case is under half its bound).
local function end_state(res, model)
  local out = {}
  for _, name in ipairs(model:coords()) do out[#out + 1] = res[name][#res.t] end
  return out
end
local function distance(x, y)
  local d, size = 0, 0
  for j = 1, #x do
    d = math.max(d, math.abs(x[j] - y[j]))
    size = math.max(size, math.abs(y[j]))
  end
  return d, size
end
for _, c in ipairs({ { "ball chain", function() return ball_chain(4) end }, { "tree", tree },
                     { "free body", free_body }, { "crane", crane }, { "loop chain", loop_chain },
                     { "motor crane", motor_crane }, { "Bricard", bricard } }) do
  local name, build = c[1], c[2]
  local fast, rows = compiled(build, true), compiled(build, false)
  local ref = end_state(rows:simulate { rtol = 1e-12, atol = 1e-14, method = "adams" }, rows)
  local failures, worst_ratio = {}, 0
  for _, tol in ipairs(L.ladder) do
    for _, method in ipairs(L.methods) do
      local opts = { rtol = tol[1], atol = tol[2], method = method }
      local rtol = tol[1] or L.DEFAULT_RTOL
      local ok_f, res_f = pcall(function() return fast:simulate(opts) end)
      local ok_r, res_r = pcall(function() return rows:simulate(opts) end)
      local label = string.format("%s %s", method, L.name(tol))
      if not ok_f or not ok_r then
        failures[#failures + 1] = label .. ": " .. tostring(ok_f and res_r or res_f)
      else
        local ef, size = distance(end_state(res_f, fast), ref)
        local er = distance(end_state(res_r, rows), ref)
        local bound = math.max(3 * er, 5 * rtol * size)
        worst_ratio = math.max(worst_ratio, ef / bound)
        tap.diag(string.format("%s %s: spatial %.3g rows %.3g (%.2f of the bound)", name, label,
          ef, er, ef / bound))
        if not (ef <= bound) or res_f.stats.spatial_evals == 0 then
          failures[#failures + 1] = string.format("%s: %.3g from the reference (rows %.3g)",
            label, ef, er)
        end
      end
    end
  end
  tap.ok(#failures == 0, string.format("%s: every method on every rung within its bound of the "
    .. "row path at rtol 1e-12 (worst %.2f of the bound)%s", name, worst_ratio,
    #failures > 0 and ": " .. table.concat(failures, "; ") or ""))
end

-- 4. Parameters changed by an event at t = 0.3: a plate's mass and a hinge's point. The
-- point leaves the state off that hinge's rows; the action's jump (a velocity set to itself)
-- has the event put it back at once (a parameter change alone does not: docs/events.md).
-- Both paths read the new values and meet (1.4e-10 apart measured; bound 20 rtol).
local function with_event()
  local sys = free_body()
  sys:event { name = "swap", when = function(s) return s.t - 0.3 end,
    action = function(s)
      s:set_param("plate1", "m", 2.5)
      s:set_param("h2", "rax", 0.25)
      s:set("der(box.x)", s["der(box.x)"])
    end }
  return sys
end
do
  local fast, rows = compiled(with_event, true), compiled(with_event, false)
  local opts = { rtol = 1e-10, atol = 1e-12, method = "adams" }
  local a, b = fast:simulate(opts), rows:simulate(opts)
  local plain = compiled(free_body, true):simulate(opts)
  local d, size = distance(end_state(a, fast), end_state(b, rows))
  local moved = distance(end_state(a, fast), end_state(plain, fast))
  tap.ok(a.stats.spatial_evals > 0 and d <= 20 * opts.rtol * size and moved > 1e-3,
    string.format("parameters set by an event: the recursion follows the row path (%.2g apart; "
      .. "the change moved the end state by %.2g)", d, moved))
end

-- A massless free body: the recursion finds no inertia at the root along its translation
-- and leaves the step to the row path, whose error names the coordinates.
do
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  sys:add("body3d", "ghost", { m = 0, init = { q0 = 1 }, vel = { q1 = 0.2 } })
  local ok, err = pcall(function() return sys:compile():simulate { t_end = 0.1 } end)
  tap.ok(not ok and tostring(err):find("not unique", 1, true) ~= nil
    and tostring(err):find("ghost.x", 1, true) ~= nil,
    "a massless free body: the row path's error (" .. tostring(err):sub(1, 200) .. ")")
end

-- auto's race on the 14-body tree: ERK at the same rtol costs 1.14 to 1.64 times Adams' time
-- there (rtol 1e-8 .. 1e-11), and its projections' sparse factorizations, dear beside the
-- recursion, are priced in the race's count (engine/src/int_cvode.c, step_factor_work);
-- counted as one right-hand side each, ERK won the third window at rtol 1e-8 (at 2.5 s).
-- So auto is Adams' run step for step, to the bit.
do
  local model = tree():compile()
  local opts = { rtol = 1e-8, atol = 1e-10, t_end = 3, dt_out = 3 }
  local a = model:simulate(opts)
  opts.method = "adams"
  local b = model:simulate(opts)
  local same = a.stats.steps == b.stats.steps
  for _, c in ipairs(model:coords()) do same = same and a[c][a.rows] == b[c][b.rows] end
  tap.ok(not a.stats.methods.erk and same, string.format(
    "the tree under auto at rtol 1e-8: Adams' run, %d steps and the same end (ERK ran %s)",
    a.stats.steps, a.stats.methods.erk and string.format("%.3g s", a.stats.methods.erk.time)
      or "no step"))
end
