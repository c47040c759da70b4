-- Contact surfaces a user needs (issue 39, item 5), each against a closed form, under each
-- method and across the tolerance ladder:
--   1. A ball bouncing down a staircase of bounded floors (treads): every impact at the time
--      the exact parabolas give, on the tread the parabolas give; past a tread's edge it
--      goes below its level without touching it.
--   2. A table (a bounded top and its underside, a second floor facing down): a ball thrown
--      up under it bounces off the underside; one thrown past its edge lands on the top. A
--      shelf shortened by an action under a resting block: the block falls.
--   3. A point sliding on a rough 3-D plane in any direction comes to rest at the closed-form
--      time v0 / (mu g) and distance v0^2 / (2 mu g), and sticks; a box on four corners does
--      the same; on an incline steeper than mu_s it slips from rest down the slope at
--      g (sin a - mu cos a), on a shallower one it stays stuck.
--   4. A ball hitting a plate (a surface fixed in a free body3d, or in a body2d facing
--      down): the closed-form velocities of a central impact; off centre, momentum and the
--      restitution law on the normal rate at the contact point.
--   5. Bad input: a bound with no extent, one along the normal, z bounds in 2-D, NaN.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local g = 9.81
local L = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "ladder.lua")
local ladder, methods, DEFAULT_RTOL, DEFAULT_ATOL = L.ladder, L.methods, L.DEFAULT_RTOL, L.DEFAULT_ATOL
local STAIRS, TABLE, SHELF, SLIDES, BOX, INCLINES, PLATES = 2, 2, 1, 3, 1, 2, 4
local BAD = 6 + 14 -- six refusals, each also naming 14 parts of its message in all
tap.plan(#methods * #ladder * (STAIRS + TABLE + SHELF + SLIDES + BOX + INCLINES + PLATES) + BAD)

local tol_name = L.name

local function run(sys, settings)
  local ok, res = pcall(function() return sys:simulate(settings) end)
  return ok, res
end

-- A run that failed is a failed check, with its message.
local function ran(ok, res, name)
  if not ok then
    tap.ok(false, name)
    tap.diag(res)
  end
  return ok
end

-- fn(method, tol, rtol, atol) for each method and each rung of the ladder.
local function each_run(fn)
  for _, method in ipairs(methods) do
    for _, tol in ipairs(ladder) do
      fn(method, tol, tol[1] or DEFAULT_RTOL, tol[2] or DEFAULT_ATOL)
    end
  end
end

-- ---- 1. a staircase -------------------------------------------------------------------------
-- Tread k is y = -h k for x in [w k, w (k + 1)]. The impacts, by the parabolas: from (x, y,
-- vx, vy), the next is the earliest downward crossing of a tread's level inside its span.
local function stair_impacts(x0, y0, vx, vy, e, w, h, ntreads, t_end)
  local t, out = 0, {}
  while true do
    local best, tread
    for k = 0, ntreads - 1 do
      local level = -h * k
      -- y0 + vy s - g s^2 / 2 = level, falling: the larger root
      local disc = vy * vy + 2 * g * (y0 - level)
      if disc >= 0 then
        local s = (vy + math.sqrt(disc)) / g
        local x = x0 + vx * s
        if s > 1e-9 and x >= w * k and x <= w * (k + 1) and (not best or s < best) then
          best, tread = s, k
        end
      end
    end
    if not best or t + best > t_end then return out end
    t = t + best
    x0, y0, vy = x0 + vx * best, -h * tread, -e * (vy - g * best)
    out[#out + 1] = { t = t, tread = tread }
  end
end

local function impact_rows(res, parts)
  local list = {}
  for i = 1, #res.t do
    for _, p in ipairs(parts) do
      if res["impulse." .. p][i] ~= 0 then list[#list + 1] = { t = res.t[i], part = p } end
    end
  end
  return list
end

for _, case in ipairs { { vx = 0.9, e = 0.6 }, { vx = 1.4, e = 0.8 } } do
  each_run(function(method, tol, rtol, atol)
    local w, h, n = 0.5, 0.2, 6
    local sys = joinery.system { gravity = { 0, -g } }
    local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0.1, y = 0.3 },
      vel = { x = case.vx } })
    local parts = {}
    for k = 0, n - 1 do
      parts[#parts + 1] = "tread" .. k
      sys:add("floor", "tread" .. k, { dim = 2, nx = 0, ny = 1, d = -h * k, e = case.e,
        x_min = w * k, x_max = w * (k + 1), pos = ball.pos })
    end
    local t_end = 2.5
    local want = stair_impacts(0.1, 0.3, case.vx, 0, case.e, w, h, n, t_end)
    local ok, res = run(sys, { t_end = t_end, dt_out = 0.01, method = method, rtol = tol[1],
      atol = tol[2] })
    local name = string.format("staircase vx = %g, e = %g, %s, rtol %s", case.vx, case.e,
      method, tol_name(tol))
    if ran(ok, res, name) then
      local got = impact_rows(res, parts)
      -- each impact time to 100 rtol of the flight so far (the crossings are located on the
      -- interpolant; the error of each flight carries into the next) and the bands'
      -- sqrt(band / g)-sized shift; the tread by name
      local worst, same = 0, #got == #want
      for i = 1, math.min(#got, #want) do
        worst = math.max(worst, math.abs(got[i].t - want[i].t))
        same = same and got[i].part == "tread" .. want[i].tread
      end
      local allowed = 100 * rtol * t_end + 1e3 * atol
      tap.ok(same and worst <= allowed, name .. ": every impact on the tread and at the time "
        .. "the parabolas give")
      tap.diag(string.format("  %d impacts (closed form %d), worst time error %.3g (allowed %.3g)",
        #got, #want, worst, allowed))
    end
  end)
end

-- ---- 2. a table: its top, and its underside as a second floor facing down ---------------------
local function first_event(res, name)
  for _, ev in ipairs(res.events or {}) do
    if ev.name == name then return ev.first end
  end
end
for _, case in ipairs {
  -- thrown up under the table: hits the underside (y = 0.8) at the first root
  { x = 0.5, vx = 0, vy = 4, event = "under.impact", root = 1 },
  -- thrown past its edge from below its level: rises beside it, lands on the top
  { x = -0.5, vx = 1.5, vy = 4.5, event = "top.impact", root = 2 },
} do
  each_run(function(method, tol, rtol, atol)
    local sys = joinery.system { gravity = { 0, -g } }
    local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = case.x, y = 0.2 },
      vel = { x = case.vx, y = case.vy } })
    sys:add("floor", "top", { dim = 2, nx = 0, ny = 1, d = 0.8, e = 0.5, x_min = 0, x_max = 1,
      pos = ball.pos })
    sys:add("floor", "under", { dim = 2, nx = 0, ny = -1, d = -0.8, e = 0.5, x_min = 0,
      x_max = 1, pos = ball.pos })
    -- 0.2 + vy t - g t^2 / 2 = 0.8
    local disc = math.sqrt(case.vy ^ 2 - 2 * g * 0.6)
    local want = case.root == 1 and (case.vy - disc) / g or (case.vy + disc) / g
    local ok, res = run(sys, { t_end = want + 0.05, dt_out = 0.01, method = method,
      rtol = tol[1], atol = tol[2] })
    local name = string.format("table, %s, %s, rtol %s", case.event, method, tol_name(tol))
    if ran(ok, res, name) then
      local got = first_event(res, case.event)
      local other = first_event(res, case.event == "top.impact" and "under.impact" or "top.impact")
      local allowed = 100 * rtol + 1e3 * atol
      tap.ok(got and math.abs(got - want) <= allowed and not other,
        name .. ": the impact at the closed-form time, on that face only")
      tap.diag(string.format("  at %s (closed form %.12g, allowed %.3g)", tostring(got), want,
        allowed))
    end
  end)
end

-- A block resting on a bounded floor whose edge an action moves in past it (x_max from 1
-- to 0.2 at t = 0.3, the block at x = 0.5): the contact opens and the block falls freely,
-- y = -g/2 (t - 0.3)^2 (a bounded floor's parameters respect the modes as d does).
each_run(function(method, tol, rtol, atol)
  local sys = joinery.system { gravity = { 0, -g } }
  local block = sys:add("mass", "block", { dim = 2, m = 2, init = { x = 0.5, y = 0 } })
  sys:add("floor", "shelf", { dim = 2, nx = 0, ny = 1, d = 0, e = 0, x_min = 0, x_max = 1,
    pos = block.pos })
  sys:event { name = "shorten", direction = "up", when = function(st) return st.t - 0.3 end,
    action = function(st) st:set_param("shelf", "x_max", 0.2) end }
  local ok, res = run(sys, { t_end = 0.5, dt_out = 0.05, method = method, rtol = tol[1],
    atol = tol[2] })
  local name = string.format("a shelf shortened under a resting block, %s, rtol %s", method,
    tol_name(tol))
  if ran(ok, res, name) then
    local n = #res.t
    local want = -g / 2 * 0.2 ^ 2
    local opened = first_event(res, "shelf.free")
    local allowed = 100 * (rtol * 0.2 + atol)
    tap.ok(opened and math.abs(opened - 0.3) <= 1e-12 and math.abs(res["block.y"][n] - want)
      <= allowed, name .. ": opens at the action and falls freely")
    tap.diag(string.format("  opened at %s; y(0.5) = %.12g (closed form %.12g, allowed %.3g)",
      tostring(opened), res["block.y"][n], want, allowed))
  end
end)

-- ---- 3. sliding to rest on a rough 3-D plane ----------------------------------------------
local function check_slide(name, res, stop_events, v0, mu, d0, x_end, rtol, atol)
  local t_stop, d_stop = v0 / (mu * g), v0 ^ 2 / (2 * mu * g)
  -- the stop is located where the sliding velocity along the slide's direction crosses 0
  -- (the integrator's velocity error, 10 (rtol + 10 atol) or so, over the deceleration)
  -- or, for a slide that ends below the stop speed (10 times the velocity resolution),
  -- there; the distance to 100 rtol of it
  local allowed_t = 100 * (rtol + 10 * atol) / (mu * g) + 100 * rtol * t_stop
  local allowed_d = 100 * (rtol * d_stop + atol)
  local worst_t = 0
  for _, ev in ipairs(stop_events) do
    local t = first_event(res, ev)
    worst_t = math.max(worst_t, t and math.abs(t - t_stop) or math.huge)
  end
  local d = x_end - d0
  tap.ok(worst_t <= allowed_t and math.abs(d - d_stop) <= allowed_d,
    name .. ": sticks at v0 / (mu g), after v0^2 / (2 mu g)")
  tap.diag(string.format("  stop time error %.3g (allowed %.3g), distance %.12g (closed form "
    .. "%.12g, allowed %.3g)", worst_t, allowed_t, d, d_stop, allowed_d))
end

for _, case in ipairs { { vx = 1.2, vy = -0.5, mu = 0.3, m = 2 }, { vx = -0.7, vy = 0.9, mu = 0.5,
  m = 0.2 }, { vx = 0, vy = -2, mu = 0.8, m = 1 } } do
  each_run(function(method, tol, rtol, atol)
    local sys = joinery.system { gravity = { 0, 0, -g } }
    local b = sys:add("mass", "b", { dim = 3, m = case.m, init = { x = 0, y = 0, z = 0 },
      vel = { x = case.vx, y = case.vy } })
    sys:add("floor", "fl", { dim = 3, nx = 0, ny = 0, nz = 1, mu = case.mu, e = 0, pos = b.pos })
    local v0 = math.sqrt(case.vx ^ 2 + case.vy ^ 2)
    local ok, res = run(sys, { t_end = v0 / (case.mu * g) + 0.2, dt_out = 0.05, method = method,
      rtol = tol[1], atol = tol[2] })
    local name = string.format("a point sliding at (%g, %g) with mu = %g, %s, rtol %s", case.vx,
      case.vy, case.mu, method, tol_name(tol))
    if ran(ok, res, name) then
      local n = #res.t
      check_slide(name, res, { "fl.stick" }, v0, case.mu, 0,
        math.sqrt(res["b.x"][n] ^ 2 + res["b.y"][n] ^ 2), rtol, atol)
    end
  end)
end

-- examples/sliding_box.lua: a box (3 kg, 0.4 x 0.3 x 0.2 m) on four corners, each on the
-- plane with friction (mu = 0.3): the four normal rows are redundant (three hold it), the
-- eight stick rows more so; the box slides as the point does and all four corners stick.
each_run(function(method, tol, rtol, atol)
  local mu, sys, stops = 0.3, dofile("examples/sliding_box.lua"), {}
  for k = 1, 4 do stops[k] = "floor" .. k .. ".stick" end
  local ok, res = run(sys, { t_end = 0.6, dt_out = 0.05, method = method, rtol = tol[1],
    atol = tol[2] })
  local name = string.format("a box on four corners, %s, rtol %s", method, tol_name(tol))
  if ran(ok, res, name) then
    local n = #res.t
    check_slide(name, res, stops, 1.3, mu, 0,
      math.sqrt(res["box.x"][n] ^ 2 + res["box.y"][n] ^ 2), rtol, atol)
  end
end)

-- An incline at angle alpha (normal (0, -sin alpha, cos alpha)): steeper than mu_s, a point
-- at rest slips down the slope at g (sin alpha - mu cos alpha); shallower, it stays stuck.
for _, case in ipairs { { alpha = 0.5, mu = 0.3, mu_s = 0.4 }, { alpha = 0.3, mu = 0.3,
  mu_s = 0.35 } } do
  each_run(function(method, tol, rtol, atol)
    local sa, ca = math.sin(case.alpha), math.cos(case.alpha)
    local sys = joinery.system { gravity = { 0, 0, -g } }
    local b = sys:add("mass", "b", { dim = 3, m = 1, init = { x = 0, y = 0, z = 0 } })
    sys:add("floor", "slope", { dim = 3, nx = 0, ny = -sa, nz = ca, mu = case.mu,
      mu_s = case.mu_s, e = 0, pos = b.pos })
    local T = 0.5
    local ok, res = run(sys, { t_end = T, dt_out = 0.05, method = method, rtol = tol[1],
      atol = tol[2] })
    local slips = math.tan(case.alpha) > case.mu_s
    local name = string.format("a point at rest on a %g rad incline, mu_s = %g: %s, %s, rtol %s",
      case.alpha, case.mu_s, slips and "slips" or "stays", method, tol_name(tol))
    if ran(ok, res, name) then
      local n = #res.t
      -- down the slope: the direction (0, -ca, -sa)
      local along = -ca * res["b.y"][n] - sa * res["b.z"][n]
      local across = res["b.x"][n]
      local want = slips and 0.5 * g * (sa - case.mu * ca) * T * T or 0
      local allowed = 100 * (rtol * 0.5 + atol)
      tap.ok(math.abs(along - want) <= allowed and math.abs(across) <= allowed,
        name .. ": down the slope by the closed form, not across")
      tap.diag(string.format("  along %.12g (closed form %.12g), across %.3g, allowed %.3g", along,
        want, across, allowed))
    end
  end)
end

-- ---- 4. a ball and a plate (a surface fixed in a free body), no gravity ---------------------
-- In 3-D the ball above a body3d plate, the surface facing up; in 2-D below a body2d plate,
-- the surface facing down (side = -1: every velocity mirrored, so the closed forms hold for
-- side times them). The plate's point under the ball moves at vp + (omega x r).n: in 3-D
-- vp - omega_y x, in 2-D vp + omega x (omega = theta').
for _, case in ipairs { { dim = 3, x = 0, e = 1 }, { dim = 3, x = 0.3, e = 0.5 },
  { dim = 2, x = 0, e = 1 }, { dim = 2, x = -0.3, e = 0.5 } } do
  each_run(function(method, tol, rtol, atol)
    local M, m, v1, v2 = 3, 1, -2, 0.1
    local side, up = case.dim == 3 and 1 or -1, case.dim == 3 and "z" or "y"
    local sys = joinery.system { gravity = { 0, 0, 0 } }
    local ball = sys:add("mass", "ball", { dim = case.dim, m = m,
      init = { x = case.x, [up] = side }, vel = { [up] = side * v1 } })
    local plate, params
    if case.dim == 3 then
      plate = sys:add("body3d", "plate", { m = M, Ixx = 0.5, Iyy = 0.7, Izz = 1.0,
        init = { x = 0, y = 0, z = 0 }, vel = { z = v2 } })
      params = { dim = 3, nx = 0, ny = 0, nz = 1, y_min = -0.4, y_max = 0.4 }
    else
      plate = sys:add("body2d", "plate", { m = M, J = 0.6, init = { x = 0, y = 0 },
        vel = { y = -v2 } })
      params = { dim = 2, nx = 0, ny = -1 }
    end
    params.d, params.e, params.x_min, params.x_max = 0.05, case.e, -0.5, 0.5
    params.body, params.pos = plate.frame, ball.pos
    sys:add("surface", "face", params)
    local ok, res = run(sys, { t_end = 0.6, dt_out = 0.1, method = method, rtol = tol[1],
      atol = tol[2] })
    local name = string.format("a ball meeting a %d-D plate at x = %g, e = %g, %s, rtol %s",
      case.dim, case.x, case.e, method, tol_name(tol))
    if ran(ok, res, name) then
      local at -- the row after the impact
      for i = 1, #res.t do
        if res["impulse.face"][i] ~= 0 then at = i end
      end
      local t_hit = 0.95 / (v2 - v1)
      local good, msg = false, "no impact row"
      if at then
        local vb = side * res["der(ball." .. up .. ")"][at]
        local vp = side * res["der(plate." .. up .. ")"][at]
        local spin = case.dim == 3 and -res["plate.omega_y"][at] or side * res["der(plate.theta)"][at]
        local rel = vb - (vp + spin * case.x)
        local momentum = m * vb + M * vp - (m * v1 + M * v2)
        local allowed = 100 * (rtol + atol) * 3
        local closed = case.x ~= 0 or (math.abs(vb - ((m - M) * v1 + 2 * M * v2) / (m + M))
          <= allowed and math.abs(vp - ((M - m) * v2 + 2 * m * v1) / (m + M)) <= allowed)
        good = closed and math.abs(res.t[at] - t_hit) <= 100 * rtol + 1e3 * atol
          and math.abs(rel - case.e * (v2 - v1)) <= allowed and math.abs(momentum) <= allowed
        msg = string.format("  at t = %.12g (closed form %.12g); separation %.12g (want %.12g); "
          .. "momentum change %.3g", res.t[at], t_hit, rel, case.e * (v2 - v1), momentum)
      end
      tap.ok(good, name .. ": impact time, momentum and the restitution law at the contact point")
      tap.diag(msg)
    end
  end)
end

-- ---- 5. bad input ---------------------------------------------------------------------------
do
  local sys = joinery.system { gravity = { 0, -g } }
  local b = sys:add("mass", "b", { dim = 2 })
  local function refuses(params, parts, what, kind)
    params.pos = params.dim ~= 1 and b.pos or nil
    tap.raises(function() sys:add(kind or "floor", "f", params) end, parts, what)
  end
  refuses({ dim = 2, x_min = 1, x_max = 1 }, { "t_surfaces.lua:", "part 'f' (floor)",
    "x_max = 1 is not above x_min = 1" }, "a bound with no extent")
  refuses({ dim = 2, x_min = 2, x_max = 1 }, { "part 'f' (floor)", "x_max = 1 is not above x_min = 2" },
    "a bound with a negative extent")
  refuses({ dim = 2, y_min = -1 }, { "part 'f' (floor)", "does not extend along y" },
    "a bound along the normal")
  refuses({ dim = 2, z_max = 1 }, { "part 'f' (floor)", "bound a 3-D surface" },
    "z bounds on a 2-D floor")
  refuses({ dim = 2, x_min = 0 / 0 }, { "part 'f' (floor)", "x_min", "must be a number or" },
    "a NaN bound")
  refuses({ dim = 1 }, { "part 'f' (surface)", "needs dim = 2 or 3" }, "a 1-D surface", "surface")
end

tap.done()
