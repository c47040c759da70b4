-- Contacts you can trust at any tolerance (issue 39, items 1, 2 and 6 in part):
--   1. A ball dropped onto a floor, under each method, across the tolerance ladder, for three
--      restitutions (0.95: 270 bounces at the defaults), two heights and both orientations (a floor below with gravity down, a
--      ceiling above with gravity up): never below the surface by more than the dead band,
--      and at rest on it at the closed-form accumulation time t1 (1 + 2 e / (1 - e)), less
--      what closing the unresolvable bounces leaves out (docs/events.md, "Chatter"). At rtol
--      1e-8, atol 1e-10 the ball once fell through the floor to y = -4.3 m by t = 5, exit 0.
--   2. Every example with events, under each method, across the ladder and two output
--      intervals: rows in time order (equal times only as an event's before/after pair),
--      every gap channel on the free side; or a clear error. Rows past an unlocated
--      crossing were once written before its rows (t = 2.884 then 2.8800706).
--   3. A floor lowered under a resting block by an action: the block falls and lands at the
--      closed-form time (it was pulled down at once); raised into it: an error naming the
--      part and the event; a body starting inside: placed by the compile, which says so.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local g = 9.81
local L = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "ladder.lua")
local ladder, methods, DEFAULT_RTOL, DEFAULT_ATOL = L.ladder, L.methods, L.DEFAULT_RTOL, L.DEFAULT_ATOL
local SIDES, RESTITUTIONS, HEIGHTS, EXAMPLES, DT_OUTS, DROPS = 2, 3, 2, 8, 2, 2
tap.plan(#methods * #ladder * (SIDES * RESTITUTIONS * HEIGHTS + EXAMPLES * DT_OUTS + DROPS) + 2)

-- Row times in order: non-decreasing, equal at most in pairs. Returns the first bad index.
local function out_of_order(t)
  for i = 2, #t do
    if t[i] < t[i - 1] then return i end
    if i > 2 and t[i] == t[i - 1] and t[i - 1] == t[i - 2] then return i end
  end
end

local function event_of(res, name)
  for _, ev in ipairs(res.events or {}) do
    if ev.name == name then return ev end
  end
end

-- ---- 1. the ball on the floor --------------------------------------------------------------
for _, side in ipairs { 1, -1 } do -- 1: floor below, gravity down; -1: ceiling, gravity up
  for _, e in ipairs { 0.5, 0.8, 0.95 } do
    for _, h in ipairs { 1, 0.3 } do
      for _, method in ipairs(methods) do
        for _, tol in ipairs(ladder) do
          local rtol, atol = tol[1] or DEFAULT_RTOL, tol[2] or DEFAULT_ATOL
          local sys = joinery.system { gravity = { 0, -side * g } }
          local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0.3, y = side * h } })
          sys:add("floor", "floor", { dim = 2, nx = 0, ny = side, d = 0, e = e, pos = ball.pos })
          local T = math.sqrt(2 * h / g)
          local t_rest = T * (1 + 2 * e / (1 - e))
          local ok, res = pcall(function()
            return sys:simulate { t_end = t_rest + 0.5, dt_out = 0.01, method = method,
              rtol = tol[1], atol = tol[2] }
          end)
          local name = string.format("ball, %s, e = %g, h = %g, %s, rtol %s", side > 0 and "floor"
            or "ceiling", e, h, method, tol[1] and string.format("%g", rtol) or "default")
          if not ok then
            tap.ok(false, name .. ": runs")
            tap.diag(res)
          else
            -- The dead band: 1e-12 of the length scale |d| + |n| = 1, or half the gap's
            -- resolution (atol here: the ball meets the surface at y = 0); the crossing is
            -- located on the integrator's interpolant, whose own error adds up to ten atol
            -- or so (Adams at the defaults, e = 0.95: 1.1e-12 past a band of 1e-12): 30
            -- atol more.
            local band = math.max(1e-12, 0.5 * atol)
            local deepest, bad_gap = math.huge, nil
            for i, gap in ipairs(res["floor.gap"]) do
              if gap < deepest then deepest, bad_gap = gap, i end
            end
            -- The slowest bounce kept: sqrt(2 g 10 r), r = atol + rtol |y| ~ atol; closing
            -- there leaves out flights of about 2 u / (g (1 - e)); four times that for the
            -- last bounces' own error (they rise a few resolutions: e = 0.95 at the defaults
            -- loses 2.3 times it), plus 100 rtol t of integration error.
            local u = math.max(1e-6, math.sqrt(2 * g * 10 * (atol + rtol * band)))
            local allowed = 4 * (2 * u / (g * (1 - e))) + 100 * rtol * t_rest
            local closed = event_of(res, "floor.contact")
            local last = #res.t
            tap.ok(deepest >= -(band + 30 * atol) and out_of_order(res.t) == nil and closed
              and math.abs(closed.first - t_rest) <= allowed and closed.count == 1
              and math.abs(res["ball.y"][last]) <= 1.5 * band
              and math.abs(res["der(ball.y)"][last]) <= 1e-9,
              name .. ": never past the band, at rest at the accumulation time")
            tap.diag(string.format("  deepest gap %.3g (band %.3g) at t = %.6g; rests at %s "
              .. "(closed form %.9g, allowed %.3g); end y = %.3g, v = %.3g", deepest, band,
              res.t[bad_gap], closed and string.format("%.9g", closed.first) or "never",
              t_rest, allowed, res["ball.y"][last], res["der(ball.y)"][last]))
          end
        end
      end
    end
  end
end

-- ---- 2. rows in time order, every gap on the free side --------------------------------------
local examples = { "bouncing_ball", "incline_stick", "newtons_cradle", "rope_pendulum",
  "stick_slip", "stick_slip_lua", "staircase", "sliding_box" }
-- A bounded floor's gap is the distance to its plane, negative beside it or under it (its
-- mode `below`): the staircase's treads hold the ball only where it is over them.
local over_surface = {
  staircase = function(res, ch, i)
    local k = tonumber(ch:match("^tread(%d+)%.gap$"))
    local x = res["ball.x"][i]
    return not k or (x >= 0.5 * k and x <= 0.5 * (k + 1))
  end,
}
for _, ex in ipairs(examples) do
  for _, method in ipairs(methods) do
    for _, tol in ipairs(ladder) do
      for _, dt in ipairs { 0.001, 0.01 } do
        local sys = dofile("examples/" .. ex .. ".lua")
        local ok, res = pcall(function()
          return sys:simulate { dt_out = dt, method = method, rtol = tol[1], atol = tol[2] }
        end)
        local name = string.format("%s, %s, rtol %s, dt_out %g", ex, method,
          tol[1] and string.format("%g", tol[1]) or "default", dt)
        if not ok then
          -- a clear error is an answer; a message without the time is not
          tap.ok(tostring(res):find("t = ", 1, true), name .. ": stops with an error naming the time")
          tap.diag(res)
        else
          local bad = out_of_order(res.t)
          local atol = tol[2] or DEFAULT_ATOL
          local worst, where = 0, nil
          for _, ch in ipairs(res.channels) do
            if ch:match("%.gap$") then
              for i, gap in ipairs(res[ch]) do
                local counts = not over_surface[ex] or over_surface[ex](res, ch, i)
                if counts and gap < worst then worst, where = gap, ch .. " at t = " .. res.t[i] end
              end
            end
          end
          -- past the free side by at most the dead band (1e-12 of the length scale or half
          -- the resolution atol + rtol |q|, the examples' lengths being about 1 m) and the
          -- integrator's and the projection's own error: 10 (atol + rtol) + 1e-11
          local rtol = tol[1] or DEFAULT_RTOL
          tap.ok(bad == nil and worst >= -(10 * (atol + rtol) + 1e-11), name
            .. ": rows in time order, every gap on the free side")
          if bad then tap.diag(string.format("  row %d: t = %.10g after %.10g", bad, res.t[bad], res.t[bad - 1])) end
          if where then tap.diag(string.format("  deepest gap %.3g (%s)", worst, where)) end
        end
      end
    end
  end
end

-- ---- 3. a parameter change that moves a surface under a resting body ---------------------
-- A block resting on a floor (closed) whose floor an action lowers by `drop` at t = 0.5 falls
-- freely and lands (plastic) at 0.5 + sqrt(2 drop / g); it was moved down at once by the
-- projection (no fall, m g drop of energy gone). One that raises the floor into the block
-- is an error naming the part and the event (a projection would move the block out).
local function lowered(drop, method, tol)
  local sys = joinery.system { gravity = { 0, -g } }
  local block = sys:add("mass", "block", { dim = 2, m = 2, init = { x = 0, y = 0 } })
  sys:add("floor", "floor", { dim = 2, nx = 0, ny = 1, d = 0, e = 0, pos = block.pos })
  sys:event { name = "lower", direction = "up", when = function(s) return s.t - 0.5 end,
    action = function(s) s:set_param("floor", "d", -drop) end }
  return pcall(function()
    return sys:simulate { t_end = 1, dt_out = 0.05, method = method, rtol = tol[1], atol = tol[2] }
  end)
end
for _, drop in ipairs { 0.2, 0.05 } do
  for _, method in ipairs(methods) do
    for _, tol in ipairs(ladder) do
      local rtol, atol = tol[1] or DEFAULT_RTOL, tol[2] or DEFAULT_ATOL
      local ok, res = lowered(drop, method, tol)
      local name = string.format("floor lowered by %g under a resting block, %s, rtol %s", drop,
        method, tol[1] and string.format("%g", rtol) or "default")
      if not ok then
        tap.ok(false, name)
        tap.diag(res)
      else
        local landing = 0.5 + math.sqrt(2 * drop / g)
        local closed = event_of(res, "floor.contact")
        local opened = event_of(res, "floor.free")
        -- the free fall at the row t = 0.55 (before any landing): y = -g/2 (0.05)^2
        local fall_err = math.huge
        for i, t in ipairs(res.t) do
          if math.abs(t - 0.55) < 1e-12 then fall_err = math.abs(res["block.y"][i] + g / 2 * 0.0025) end
        end
        local last = #res.t
        -- the landing time to 100 rtol (the crossing is located on the interpolant; the
        -- fall is a parabola every method integrates to rounding) plus the band's
        -- sqrt(2 band / g)-sized shift of a crossing at a penetration of the band
        local band = math.max(1e-12 * (drop + 1), 0.5 * atol)
        local allowed = 100 * rtol + 2 * band / math.sqrt(2 * g * drop)
        -- the action's event, t - 0.5, is located to rounding
        tap.ok(opened and math.abs(opened.first - 0.5) <= 1e-12 and closed and math.abs(closed.first - landing) <= allowed
          and fall_err <= 100 * (rtol * 0.0123 + atol)
          and math.abs(res["block.y"][last] + drop) <= 10 * (atol + rtol * drop) + band,
          name .. ": opens at 0.5, falls freely, lands at 0.5 + sqrt(2 drop / g), rests there")
        tap.diag(string.format("  landed at %s (closed form %.9g, allowed %.2g); fall error %.2g; "
          .. "end y = %.12g", closed and string.format("%.9g", closed.first) or "never", landing,
          allowed, fall_err, res["block.y"][last]))
      end
    end
  end
end
do
  local ok, err = lowered(-0.2, "bdf", {})
  tap.ok(not ok and tostring(err):find("after the action of event 'lower'", 1, true)
    and tostring(err):find("part 'floor'", 1, true)
    and tostring(err):find("0.2 m past the contact surface", 1, true),
    "a floor raised 0.2 m into a resting block: an error naming the event, the part and how far")
  tap.diag(err)
  -- a body that starts past the surface is the compile's to place (it starts in contact and
  -- is moved onto the surface), and the report says so
  local sys = joinery.system { gravity = { 0, -g } }
  local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0, y = -0.01 } })
  sys:add("floor", "floor", { dim = 2, nx = 0, ny = 1, d = 0, pos = ball.pos })
  local res
  ok, res = pcall(function() return sys:simulate { t_end = 0.1 } end)
  tap.ok(ok and res.report:find("initial value ball.y: -0.01 -> 0", 1, true)
    and res["ball.y"][#res.t] == 0, "a ball starting 1 cm inside the floor: placed on it, and "
    .. "the report says so")
  if not ok then tap.diag(res) end
end

tap.done()
