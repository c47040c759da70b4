-- Bad input to sys:constrain (and the new constraint forms of joinery.part_type): each
-- mistake is one clear error — at the script line for a bad spec; naming the constraint,
-- its function with the line where it is defined, and the time for a run-time failure.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(95)
local M = joinery.math
local SRC = "t_constrain_bad.lua"

local function line_of(f) return debug.getinfo(f, "S").linedefined end
local function has_all(err, parts, name)
  tap.diag("  " .. tostring(err))
  for _, part in ipairs(parts) do tap.has(err, part, name .. ": names " .. string.format("%q", part)) end
end
local function time_in(err) return tonumber(tostring(err):match("at t = ([%d%.e%-+]+)")) end

-- A pendulum hanging from the ground, free to take a constraint on its angle.
local function pendulum()
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local ground = sys:add("ground", "ground", { dim = 2 })
  local pend = sys:add("pendulum", "pend", { init = { theta = 0.3 }, pivot = ground.pos })
  return sys, pend
end
local sys, pend = pendulum()
local phi = function(x, t) return x[1] - 0.3 end

-- ---- specs: errors at the script line ---------------------------------------------------
tap.raises(function() sys:constrain { name = "c", on = { pend.theta } } end,
  { "constraint 'c'", "needs phi = function(x, t)", "psi", "accel" }, "no phi, psi or accel")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, phi = phi, psi = phi } end,
  { "constraint 'c'", "not both phi and psi" }, "both phi and psi")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, kind = "position", psi = function(x, xd, t) return xd[1] end } end,
  { "constraint 'c'", "kind = 'position' needs phi = function(x, t)", "psi gives a velocity constraint",
    "a velocity-level constraint cannot stand where a position constraint is required" },
  "a velocity-level constraint where a position one is required")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, kind = "velocity", phi = phi } end,
  { "kind = 'velocity'", "phi gives a position constraint" }, "kind disagrees with phi")
tap.raises(function() sys:constrain { name = "c", on = pend.theta, phi = phi } end,
  { "on must be a list, e.g. on = { joinery.Terminal pend.theta" }, "on is not a list")
tap.raises(function() sys:constrain { name = "c", on = { pend }, phi = phi } end,
  { "on[1] must be a terminal or a coordinate", "got joinery.Part" }, "on lists a part")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta, 3 }, phi = phi } end,
  { "on[2] must be a terminal" }, "on lists a number")
tap.raises(function() sys:constrain { name = "c", on = {}, phi = phi } end,
  { "on must list 1 to 16 terminals" }, "on is empty")
do
  local other = pendulum()
  local far = other:add("mass", "far", { dim = 1 })
  tap.raises(function() sys:constrain { name = "c", on = { far.pos }, phi = phi } end,
    { "on[1] belongs to another system" }, "a terminal of another system")
end
tap.raises(function() sys:constrain { on = { pend.theta }, phi = phi } end,
  { "needs name = an identifier" }, "no name")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, phi = phi, rows = 0 } end,
  { "rows must be a whole number" }, "rows = 0")
-- The limits of a part (64 rows, 64 coordinates) say what they are, why and what to do.
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, phi = phi, rows = 65 } end,
  { "constraint 'c'", "from 1 to 64, got 65", "one dense block", "split it into several constraints" },
  "rows = 65: the limit, the reason and the way round it")
do
  local frames = {}
  for i = 1, 10 do frames[i] = sys:add("body3d", "limit_b" .. i, {}).frame end
  tap.raises(function() sys:constrain { name = "c", on = frames, phi = phi } end,
    { "70 components (at most 64", "one dense block", "split it into constraints on fewer terminals" },
    "ten 3-D frames (70 components): the limit, the reason and the way round it")
end
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, phi = phi, nonideal = 1 } end,
  { "nonideal must be a function" }, "nonideal not a function")
tap.raises(function() sys:constrain { name = "c", on = { pend.theta }, phi = phi, Phi = phi } end,
  { "unknown field 'Phi'", "valid: name, on" }, "a misspelt field")
tap.raises(function() sys:constrain { name = "pend", on = { pend.theta }, phi = phi } end,
  { "a part named pend already exists" }, "a name that is taken")

-- ---- run time: the constraint, its function and line, the time ---------------------------
-- rows = 2 but phi returns one value: caught when the model is compiled.
do
  local s, p = pendulum()
  local one = function(x, t) return x[1] - 0.3 end
  s:constrain { name = "two", on = { p.pivot }, rows = 2, phi = one }
  local ok, err = pcall(s.compile, s)
  tap.ok(not ok, "rows = 2 with a phi returning one value stops the compile")
  has_all(err, { "part 'two'", "constraint 'r' phi (", SRC .. ":" .. line_of(one) .. ")",
    "must return a table of 2 values" }, "rows mismatch")
end
do
  local s, p = pendulum()
  local three = function(x, t) return { x[1], x[2], 0 } end
  s:constrain { name = "two", on = { p.pivot }, rows = 2, phi = three }
  local ok, err = pcall(s.compile, s)
  tap.ok(not ok, "rows = 2 with a phi returning three values stops the compile")
  has_all(err, { "part 'two'", "returned 3 values; the constraint has 2 rows" }, "rows mismatch (3)")
end
-- A phi that returns NaN after t = 0.3 (the pendulum's angle held by a rheonomic row).
do
  local s, p = pendulum()
  local nan = function(x, t) return x[1] - 0.3 * M.cos(t) * (t > 0.3 and M.sqrt(-1) or 1) end
  s:constrain { name = "hold", on = { p.theta }, phi = nan }
  local ok, err = pcall(s.simulate, s, { t_end = 1, max_step = 0.01 })
  tap.ok(not ok, "a phi returning NaN stops the run")
  has_all(err, { "part 'hold'", "constraint 'r' phi (", SRC .. ":" .. line_of(nan) .. ")", "not finite" },
    "NaN from phi")
  local t = time_in(err)
  tap.ok(t and t > 0.3 and t <= 0.32, "and says when (just after t = 0.3)")
end
-- A psi that raises an error after t = 0.5.
do
  local s, p = pendulum()
  local boom = function(x, xd, t) if t > 0.5 then error("boom") end return xd[1] + 0.3 * M.sin(t) end
  s:constrain { name = "hold", on = { p.theta }, psi = boom }
  local ok, err = pcall(s.simulate, s, { t_end = 1, max_step = 0.01 })
  tap.ok(not ok, "an error in psi stops the run")
  has_all(err, { "part 'hold'", "constraint 'r' psi (", SRC .. ":" .. line_of(boom) .. ")",
    SRC .. ":" .. line_of(boom) .. ": boom" }, "error in psi")
  local t = time_in(err)
  tap.ok(t and t > 0.5 and t <= 0.52, "and says when (just after t = 0.5)")
end
-- A non-ideal law that errors, and one that returns NaN.
do
  local s, p = pendulum()
  local law = function(x, xd, t, lambda, xdd) if t > 0.2 then error("no law") end return { -0.1 * xd[1] } end
  s:constrain { name = "hold", on = { p.theta }, psi = function(x, xd, t) return xd[1] end, nonideal = law }
  local ok, err = pcall(s.simulate, s, { t_end = 1, max_step = 0.01 })
  tap.ok(not ok, "an error in a non-ideal law stops the run")
  has_all(err, { "part 'hold'", "nonideal_law (", SRC .. ":" .. line_of(law) .. ")", "no law" },
    "error in the law")
  local t = time_in(err)
  tap.ok(t and t > 0.2 and t <= 0.22, "and says when (just after t = 0.2)")
  local s2, p2 = pendulum()
  local nanlaw = function(x, xd, t, lambda, xdd) return { 0 / 0 } end
  s2:constrain { name = "hold", on = { p2.theta }, psi = function(x, xd, t) return xd[1] end, nonideal = nanlaw }
  ok, err = pcall(s2.compile, s2)
  tap.ok(not ok, "a law returning NaN stops the compile")
  has_all(err, { "part 'hold'", "nonideal_law (", SRC .. ":" .. line_of(nanlaw) .. ")", "not finite" },
    "NaN from the law")
end
-- accel returning the wrong shapes.
do
  local s, p = pendulum()
  local acc = function(x, xd, t) return { 1, 2 }, 0 end
  s:constrain { name = "a", on = { p.theta }, accel = acc }
  local ok, err = pcall(s.compile, s)
  tap.ok(not ok, "an accel row with too many entries stops the compile")
  has_all(err, { "part 'a'", "constraint 'r' accel (", SRC .. ":" .. line_of(acc) .. ")",
    "returned 2 entries; the part has 1 coordinates" }, "accel A too long")
  local s2, p2 = pendulum()
  local acc2 = function(x, xd, t) return { 1 } end
  s2:constrain { name = "a", on = { p2.theta }, accel = acc2 }
  ok, err = pcall(s2.compile, s2)
  tap.ok(not ok, "an accel function without b stops the compile")
  has_all(err, { "part 'a'", "b must be a number" }, "accel without b")
end

-- ---- the same checks in joinery.part_type ---------------------------------------------------
tap.raises(function() joinery.part_type { name = "bad_k", coords = { "x" }, constraints = { { kind = "position", psi = function(q, v) return v.x end } } } end,
  { "has kind 'position' but gives psi (a velocity constraint)", "a position constraint must be a function phi(q, t)" },
  "part_type: psi where kind = 'position'")
tap.raises(function() joinery.part_type { name = "bad_r", coords = { "x" }, constraints = { { rows = 1.5, phi = function(q) return q.x end } } } end,
  { "rows must be a whole number" }, "part_type: rows = 1.5")
tap.raises(function() joinery.part_type { name = "bad_a", coords = { "x" }, constraints = { { phi = phi, accel = phi } } } end,
  { "exactly one of phi" }, "part_type: phi and accel")
tap.raises(function() joinery.part_type { name = "bad_l", coords = { "x" }, nonideal_law = 3 } end,
  { "nonideal_law must be a function" }, "part_type: nonideal_law not a function")
tap.done()
