-- Bad input to Lua-defined parts: each mistake ends in one clear error that names the part,
-- the Lua function, its script line and (for run-time failures) the simulation time.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
local M = joinery.math
local SRC = "t_lua_parts_bad.lua"
tap.plan(64)

local function line_of(f) return debug.getinfo(f, "S").linedefined end
local function has_all(err, parts, name)
  tap.diag("  " .. tostring(err))
  for _, part in ipairs(parts) do tap.has(err, part, name .. ": names " .. string.format("%q", part)) end
end
local function time_in(err) return tonumber(tostring(err):match("at t = ([%d%.e%-+]+)")) end

-- A point mass in the plane, with whatever Lagrangian a case gives.
local function point_type(name, lagrangian, extra)
  local def = { name = name, doc = "test", coords = { "x", "y" },
    params = { { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" } },
    lagrangian = lagrangian }
  for k, v in pairs(extra or {}) do def[k] = v end
  return joinery.part_type(def)
end
local function one_part(typ, name, opts)
  local sys = joinery.system()
  sys:add(typ, name, opts or { vel = { x = 1, y = 0 } })
  return sys
end

-- 1. A Lagrangian whose mass matrix is indefinite: caught at compile (the initial state).
local neg = function(q, v, t, p) return 0.5 * p.m * v.x * v.x - 0.5 * p.m * v.y * v.y end
point_type("bad_neg_mass", neg)
do
  local ok, err = pcall(function() return one_part("bad_neg_mass", "neg"):compile() end)
  tap.ok(not ok, "an indefinite d2L/dv2 stops the compile")
  has_all(err, { "part 'neg' (bad_neg_mass)", "lagrangian (", SRC .. ":" .. line_of(neg) .. ")",
    "not positive semi-definite", "coordinate 'y'" }, "indefinite mass")
end

-- 2. A Lagrangian that raises an error at t > 0.5.
local boom = function(q, v, t, p) if t > 0.5 then error("boom") end return 0.5 * p.m * (v.x * v.x + v.y * v.y) end
point_type("bad_boom", boom)
do
  local ok, err = pcall(function() return one_part("bad_boom", "b"):simulate { t_end = 1, max_step = 0.01 } end)
  tap.ok(not ok, "an error in a Lagrangian stops the run")
  has_all(err, { "part 'b' (bad_boom)", "lagrangian (", SRC .. ":" .. line_of(boom) .. ")",
    SRC .. ":" .. line_of(boom) .. ": boom" }, "error in the Lagrangian")
  local t = time_in(err)
  tap.ok(t and t > 0.5 and t <= 0.52, "and says when (just after t = 0.5)")
end

-- 3. A Lagrangian that returns NaN from t > 0.3 on.
local nan = function(q, v, t, p) return 0.5 * p.m * (v.x * v.x + v.y * v.y) * (t > 0.3 and M.sqrt(-1) or 1) end
point_type("bad_nan", nan)
do
  local ok, err = pcall(function() return one_part("bad_nan", "n"):simulate { t_end = 1, max_step = 0.01 } end)
  tap.ok(not ok, "a NaN from a Lagrangian stops the run")
  has_all(err, { "part 'n' (bad_nan)", "lagrangian (", SRC .. ":" .. line_of(nan) .. ")",
    "not finite" }, "NaN in the Lagrangian")
  local t = time_in(err)
  tap.ok(t and t > 0.3 and t <= 0.32, "and says when (just after t = 0.3)")
end

-- 4. A terminal function that returns the wrong number of components.
local three = function(q, t, p) return { q.x, q.y, 0 } end
point_type("bad_terminal", function(q, v, t, p) return 0.5 * p.m * (v.x * v.x + v.y * v.y) end,
  { terminals = { { name = "tip", dim = 2, fn = three } } })
do
  local ok, err = pcall(function()
    local sys = joinery.system()
    local g = sys:add("ground", "g", { dim = 2 })
    sys:add("bad_terminal", "w", { tip = g.pos })
    return sys:compile()
  end)
  tap.ok(not ok, "a terminal of the wrong size stops the compile")
  has_all(err, { "part 'w' (bad_terminal)", "terminal 'tip' (", SRC .. ":" .. line_of(three) .. ")",
    "returned 3 components", "dim = 2" }, "wrong terminal size")
end

-- 5. Lua's own math.sin on a differentiated value: the message says to which line.
local luamath = function(q, v, t, p) return 0.5 * p.m * v.x * v.x + math.sin(q.x) end
point_type("bad_luamath", luamath)
do
  local ok, err = pcall(function() return one_part("bad_luamath", "lm"):compile() end)
  tap.ok(not ok, "math.sin instead of joinery.math.sin is an error")
  has_all(err, { "part 'lm' (bad_luamath)", "joinery.Jet", SRC .. ":" .. line_of(luamath) .. ":" },
    "math.sin on a Jet")
end

-- 5b. An error object that is not a string: its __tostring, else lua.c's wording (not an
-- address), with the script line like any other message (lua/lua_call.c).
local tbl_err = function(q, v, t, p) error({}) end
local obj_err = function(q, v, t, p) error(setmetatable({}, { __tostring = function() return "obj" end })) end
point_type("bad_tblerr", tbl_err)
point_type("bad_objerr", obj_err)
do
  local ok, err = pcall(function() return one_part("bad_tblerr", "te"):compile() end)
  tap.ok(not ok, "error({}) in a Lagrangian stops the compile")
  has_all(err, { "part 'te' (bad_tblerr)", SRC .. ":" .. line_of(tbl_err) .. ": (error object is a table value)" },
    "a table as the error")
  ok, err = pcall(function() return one_part("bad_objerr", "oe"):compile() end)
  has_all(err, { "part 'oe' (bad_objerr)", SRC .. ":" .. line_of(obj_err) .. ": obj" },
    "an error object with __tostring")
end

-- 6. Mistakes in the definition, reported at the joinery.part_type line.
tap.raises(function() joinery.part_type { name = "bad_a", coords = { "x" }, lagrangain = neg } end,
  { "unknown field 'lagrangain'", "did you mean 'lagrangian'" }, "a misspelt field")
tap.raises(function() joinery.part_type { name = "bad_b", coords = { "x" }, params = { { name = "m", default = 1 } } } end,
  { "parameter 'm' needs a unit" }, "a parameter without a unit")
tap.raises(function() joinery.part_type { name = "bad_c", coords = { "x" }, lagrangian = neg, mass = neg } end,
  { "one way" }, "two ways to give the dynamics")
tap.raises(function() joinery.part_type { name = "bad_d", coords = { "x" }, terminals = { { name = "a", fn = three } } } end,
  { "terminal 'a' needs dim" }, "a terminal without a dimension")
tap.raises(function() joinery.part_type { name = "bad_e", coords = { "x" }, constraints = { { phi = neg, psi = neg } } } end,
  { "exactly one of phi" }, "a constraint with phi and psi")
tap.raises(function() joinery.part_type { name = "bad_f", lagrangian = neg } end,
  { "coords must be a list" }, "no coordinates")
do
  local coords = {}
  for i = 1, 65 do coords[i] = "q" .. i end
  tap.raises(function() joinery.part_type { name = "big", coords = coords } end,
    { "part type 'big'", "1 to 64 names, got 65", "one dense block", "several parts glued together" },
    "65 coordinates: the limit, the reason and the way round it")
end
tap.raises(function() joinery.part_type { name = "bad_g", coords = { "x", "x" } } end,
  { "coordinate 'x' is listed twice" }, "a coordinate twice")
tap.raises(function() joinery.part_type { name = "bad_h", coords = { "x" }, params = { { name = "k", default = -1, unit = "N/m", domain = "positive" } } } end,
  { "default of parameter 'k'", "outside its domain" }, "a default outside its domain")
tap.raises(function() joinery.part_type { name = "bad_i", coords = { "x" }, terminals = { { name = "a", coords = { "z" } } } } end,
  { "'z' is no coordinate" }, "a terminal on an unknown coordinate")

-- 7. The same through the joinery command: a non-zero exit and no CSV left behind.
do
  local joinery_cmd = os.getenv("JOINERY") or "build/lua/joinery"
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  local script, csv, log = dir .. "/nanpart.lua", dir .. "/out.csv", dir .. "/log.txt"
  local f = assert(io.open(script, "w"))
  f:write([[
local joinery = require "joinery"
joinery.part_type { name = "cli_nan", doc = "x", coords = { "x" },
  lagrangian = function(q, v, t)
    return 0.5 * v.x * v.x + (t > 0.2 and joinery.math.log(-1) or 0) * q.x
  end }
local sys = joinery.system()
sys:add("cli_nan", "c", { vel = { x = 1 } })
return sys
]])
  f:close()
  local ok = os.execute(string.format("'%s' run '%s' --out '%s' --t-end 1 >'%s' 2>&1", joinery_cmd,
    script, csv, log))
  local out = io.open(log):read("a")
  tap.ok(not ok, "joinery run exits non-zero")
  has_all(out, { "part 'c' (cli_nan)", "lagrangian (" .. dir .. "/nanpart.lua:3)", "not finite", "at t = " },
    "joinery run")
  tap.ok(io.open(csv) == nil, "no CSV is left behind")
  os.execute("rm -rf '" .. dir .. "'")
end

tap.done()
