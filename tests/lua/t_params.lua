-- The parameter door (jy_params_fill): sys:add, joinery.eval_part and joinery.check_part look
-- a part's parameters up, default them and check their domains in one engine function, so
-- they accept and refuse the same values in the same words; joinery.part_type refuses
-- parameter names sys:add could not tell from its own keys (issue 14, defect 2 and the
-- "number where a terminal belongs" message of defect 9).
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
-- 4 mistakes through three doors, 4 reserved names (an error with 3 parts each), 73 single
-- checks
tap.plan(4 + 4 * 4 + 73)

-- 1. eval_part checks domains: dim = 7 crashed the process (exit 139) before the door, and
--    m = -1 was evaluated. Run in a child so that a crash fails this test, not the file.
local cmd = tap.command()
local script = cmd.tmp .. "/eval_dim7.lua"
local f = assert(io.open(script, "w"))
f:write('local joinery = require "joinery"\n',
  'joinery.eval_part{ type = "mass", params = { dim = 7 } }\n')
f:close()
local code, _, err = cmd.run(cmd.quote(script))
tap.ok(code ~= 0 and code ~= 139 and code < 128, "eval_part with dim = 7 exits with an error, not a signal (exit " .. tostring(code) .. ")")
tap.has(err, "eval_dim7.lua:2:", "... at the script line")
tap.has(err, "part type 'mass': parameter dim = 7 must be 1, 2 or 3", "... naming type, parameter and domain")
os.execute("rm -rf " .. cmd.quote(cmd.tmp))

tap.raises(function() joinery.eval_part{ type = "mass", params = { dim = 7 } } end,
  { "eval_part", "part type 'mass'", "dim = 7", "must be 1, 2 or 3" }, "eval_part: dim = 7 refused")
tap.raises(function() joinery.eval_part{ type = "mass", params = { m = -1 } } end,
  { "eval_part", "part type 'mass'", "m = -1 kg", "must be > 0" }, "eval_part: m = -1 refused as in sys:add")
tap.raises(function() joinery.eval_part{ type = "mass", params = { m = 0 / 0 } } end,
  { "part type 'mass'", "m = ", "must be > 0" }, "eval_part: m = NaN refused")
tap.raises(function() joinery.eval_part{ type = "mass", params = { mm = 1 } } end,
  { "part type 'mass'", "unknown parameter 'mm'", "did you mean 'm'" }, "eval_part: an unknown parameter, with the nearest")
tap.raises(function() joinery.eval_part{ type = "mass", params = { m = "heavy" } } end,
  { "part type 'mass'", "parameter 'm' must be a number, got string" }, "eval_part: a string value")
tap.raises(function() joinery.eval_part{ type = "mass", params = 3 } end,
  { "params must be a table" }, "eval_part: params not a table")
-- Values inside the domain still evaluate: a 2-D mass of 2.5 kg has M = 2.5 I exactly.
local r = joinery.eval_part{ type = "mass", params = { dim = 2, m = 2.5 } }
tap.ok(#r.M == 2 and r.M[1][1] == 2.5 and r.M[2][2] == 2.5 and r.M[1][2] == 0,
  "eval_part with dim = 2, m = 2.5: M = 2.5 I (exact)")
local d = joinery.eval_part{ type = "mass" }
tap.ok(#d.M == 3 and d.M[1][1] == 1 and d.M[3][3] == 1, "eval_part without params: the schema's defaults (3-D, 1 kg)")

-- 2. One door, one wording: the same mistake gives the same words through every entry point.
local function tail(e) return (tostring(e):match("parameter .*$") or tostring(e):match("'[^']*' is .*$")) end
local cases = {
  { "a value outside its domain", { m = -1 } },
  { "a dimension outside 1..3", { dim = 4 } },
  { "an unknown name", { mas = 1 } },
  { "a terminal given a number", { pos = 3 } },
}
for _, c in ipairs(cases) do
  local sys = joinery.system()
  local _, e_add = pcall(sys.add, sys, "mass", "a", c[2])
  local _, e_eval = pcall(joinery.eval_part, { type = "mass", params = c[2] })
  local _, e_check = pcall(joinery.check_part, "mass", c[2])
  local want = tail(e_add)
  tap.ok(want ~= nil and tail(e_eval) == want and tail(e_check) == want,
    c[1] .. ": sys:add, eval_part and check_part say the same (" .. tostring(want) .. ")")
end

-- 3. A number where a terminal (or coordinate) belongs is called that, not an unknown
--    parameter.
local sys = joinery.system()
sys:add("ground", "g")
local e = tap.raises(function() sys:add("mass", "b", { pos = 3 }) end,
  { "part 'b' (mass)", "'pos' is a terminal of mass, not a parameter", "pos = other.terminal" },
  "sys:add: a number given for a terminal")
tap.ok(not e:find("unknown parameter", 1, true), "... not called an unknown parameter")
tap.raises(function() sys:add("rod", "r", { a = 1, b = sys:part("g").pos }) end,
  { "part 'r' (rod)", "'a' is a terminal of rod" }, "sys:add: a number for one terminal of two")
tap.raises(function() sys:add("mass", "b", { x = 0.5 }) end,
  { "part 'b' (mass)", "'x' is a coordinate of mass", "init = {x = ...}" },
  "sys:add: a number given for a coordinate points to init")
tap.raises(function() sys:add("rod", "r", { a = "g.pos", b = sys:part("g").pos }) end,
  { "part 'r' (rod)", "terminal 'a' must be given a terminal of this system",
    "a = other_part.terminal", "got string" },
  "sys:add: a string for a terminal is called a terminal, not a parameter")
tap.raises(function() sys:add("mass", "b", { m = "1" .. "kg" }) end,
  { "part 'b' (mass)", "parameter 'm' must be a number, got string" },
  "sys:add: a string for a parameter is still a parameter's error")
tap.ok(sys:part("b") == nil and sys:part("r") == nil, "... and the system is unchanged")

-- 4. joinery.part_type refuses parameter names that sys:add reads itself.
local function def(name, pname, extra)
  local t = { name = name, doc = "test", coords = { "x" },
    params = { { name = pname, default = 1, unit = "1", doc = "test" } },
    lagrangian = function(q, v) return 0.5 * v.x * v.x end }
  for k, val in pairs(extra or {}) do t[k] = val end
  return t
end
for _, reserved in ipairs { "init", "vel", "guess", "gravity" } do
  tap.raises(function() joinery.part_type(def("r_" .. reserved, reserved)) end,
    { "part type 'r_" .. reserved .. "'", "'" .. reserved .. "' cannot be a parameter name", "reserved" },
    "part_type: a parameter named " .. reserved)
end
tap.raises(function() joinery.part_type(def("r_tip", "tip", { terminals = { { name = "tip", coords = { "x" } } } })) end,
  { "part type 'r_tip'", "'tip' names both a parameter and a terminal" }, "part_type: a parameter named like a terminal")
tap.ok(not pcall(joinery.eval_part, { type = "r_guess" }), "... and the refused types are not registered")
tap.raises(function() joinery.part_type(def("r_neg", "k", { params = { { name = "k", default = -1, unit = "N/m", doc = "test", domain = "positive" } } })) end,
  { "part type 'r_neg'", "default of parameter 'k'", "outside its domain", "k = -1 N/m must be > 0" },
  "part_type: a default outside its domain, in the door's words")
-- A Lua type's parameters pass the same door in sys:add and eval_part.
joinery.part_type(def("osc", "k", { params = { { name = "k", default = 2, unit = "N/m", doc = "stiffness", domain = "positive" } } }))
local s2 = joinery.system()
tap.raises(function() s2:add("osc", "o", { k = -3 }) end, { "part 'o' (osc)", "k = -3 N/m", "must be > 0" }, "a Lua type: sys:add refuses k = -3")
tap.raises(function() joinery.eval_part{ type = "osc", params = { k = -3 } } end, { "part type 'osc'", "k = -3 N/m", "must be > 0" }, "a Lua type: eval_part refuses k = -3")
tap.ok(s2:add("osc", "o", { k = 3 }) ~= nil, "a Lua type: sys:add takes k = 3")
joinery.part_type(def("osc_end", "k", { terminals = { { name = "tip", coords = { "x" } } } }))
tap.raises(function() s2:add("osc_end", "e", { tip = 0.5 }) end, { "part 'e' (osc_end)", "'tip' is a terminal of osc_end" }, "a Lua type: a number for its terminal is called that")
tap.raises(function() s2:add("osc_end", "e", { x = 0.5 }) end, { "part 'e' (osc_end)", "'x' is a coordinate of osc_end" }, "a Lua type: a number for its coordinate is called that")

tap.done()
