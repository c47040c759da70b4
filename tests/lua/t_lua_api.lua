-- The Lua API of the joinery module: its surface, and the error raised for each misuse,
-- located at the script line and carrying the engine's message.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"
-- 5 channels looked up by name, 144 single checks
tap.plan(5 + 144)

local function find(list, x)
  for i, v in ipairs(list) do if v == x then return i end end
end

-- ---- module ----------------------------------------------------------------------------
tap.is(type(joinery.version), "string", "joinery.version is a string")
local types = joinery.types()
tap.ok(find(types, "mass") and find(types, "ground") and find(types, "rod"),
  "joinery.types() lists ground, mass, rod")
local d = joinery.describe("mass")
tap.ok(d.name == "mass" and d.params[1].name == "dim" and d.terminals[1].name == "pos"
  and d.coords[1] == "x" and type(d.doc) == "string", "joinery.describe('mass') gives the schema")
tap.raises(function() joinery.describe("mas") end, { "mas", "mass" }, "describe of an unknown type")

-- ---- building --------------------------------------------------------------------------
local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
local rod = sys:add("rod", "rod", { dim = 2, L = 1, a = ground.pos, b = bob.pos })
tap.is(bob.name, "bob", "part.name")
tap.is(bob.type, "mass", "part.type")
tap.is(rod.type, "rod", "part.type of another type")
tap.is(bob.pos.name, "bob.pos", "terminal.name")
tap.is(bob.pos.dim, 2, "terminal.dim")
tap.is(bob.pos.terminal, "pos", "terminal.terminal")
tap.is(bob.pos.part.name, "bob", "terminal.part")
tap.ok(bob.pos == bob.pos and bob.pos ~= ground.pos, "terminals compare by identity")
tap.has(tostring(bob.pos), "bob.pos", "tostring of a terminal")
tap.has(tostring(bob), "bob", "tostring of a part")
tap.is(sys:part("bob").name, "bob", "sys:part(name)")
tap.is(sys:part("nobody"), nil, "sys:part of an unknown name is nil")
tap.is(#sys:parts(), 3, "sys:parts()")
tap.is(sys:settings { t_end = 1, dt_out = 0.01, rtol = 1e-9, atol = 1e-11, method = "adams" },
  sys, "sys:settings returns the system")
tap.is(sys:settings().t_end, 1, "sys:settings() returns the stored settings")

-- ---- model -----------------------------------------------------------------------------
local model = sys:compile()
local coords, channels = model:coords(), model:channels()
-- The rod's end coordinates are massless and glued: glue elimination substitutes them away.
tap.ok(find(coords, "bob.x") and find(coords, "bob.y") and not find(coords, "rod.ax"),
  "model:coords() names part.coord (the rod's ends eliminated)")
tap.is(model:num_coords(), #coords, "model:num_coords()")
tap.is(channels[1], "t", "channel 1 is t")
for _, name in ipairs { "der(bob.x)", "energy", "rod.tension", "force.rod.a.x", "force.rod.b.y" } do
  tap.ok(find(channels, name), "channel " .. name)
end
tap.is(model:num_rows(), 1, "model:num_rows(): the rod's row (its glues eliminated)")
tap.is(#model:rows(), 1, "model:rows()")
tap.is(type(model:report()), "string", "model:report() is a string")
local q, v = model:initial()
tap.ok(#q == #coords and #v == #coords, "model:initial() returns q and v")
tap.is_near(q[find(coords, "bob.x")], 1, 1e-12, "initial bob.x as set")
local acc = model:acceleration(q, v, 0)
tap.is_near(acc[find(coords, "bob.x")], 0, 1e-9, "bob at the level of the pivot: x'' = 0")
tap.is_near(acc[find(coords, "bob.y")], -9.81, 1e-9, "bob at the level of the pivot: y'' = -g")
local ev = model:evaluate(q, v, 0)
tap.is_near(ev["bob.x"], 1, 1e-12, "model:evaluate() gives channels by name")
tap.is_near(ev.energy, 0, 1e-9, "energy at rest level with the pivot is 0")
tap.raises(function() model:acceleration({ 1 }, v) end,
  { "q", "entries" }, "acceleration with a short q")

-- ---- simulation ------------------------------------------------------------------------
local res = sys:simulate { t_end = 0.5, dt_out = 0.1 }
tap.is(#res.t, 6, "6 output rows for 0.5 s at 0.1 s")
tap.is(res.rows, 6, "res.rows")
tap.is_near(res.t[6], 0.5, 1e-12, "last output at t_end")
tap.is(res.channels[1], "t", "res.channels in CSV order")
tap.is(#res["bob.x"], 6, "one array per channel")
local worst_len, worst_e = 0, 0
for i = 1, #res.t do
  local x, y = res["bob.x"][i], res["bob.y"][i]
  worst_len = math.max(worst_len, math.abs(math.sqrt(x * x + y * y) - 1))
  worst_e = math.max(worst_e, math.abs(res.energy[i] - res.energy[1]))
end
tap.ok(worst_len < 1e-6, "the rod keeps the bob at distance 1")
tap.ok(worst_e < 1e-6, "energy is conserved")
tap.ok(res.stats.steps > 0 and res.stats.rhs_evals > 0, "res.stats counts steps")
tap.ok(type(res.seconds) == "number" and res.seconds >= 0, "res.seconds")
tap.is(res.model:num_coords(), #coords, "res.model")
tap.is(type(res.report), "string", "res.report")

local path = os.tmpname()
local res2 = model:simulate { t_end = 0.1, dt_out = 0.05, out = path }
local f = io.open(path)
local header = f and f:read("l")
if f then f:close() end
tap.ok(header and header:sub(1, 8) == "t,bob.x,", "out = file writes the CSV with a header")
tap.ok(res2.out == path and res2.rows == 3 and #res2.t == 3, "with out: res.out, res.rows, arrays")
local res3 = model:simulate { t_end = 0.1, dt_out = 0.05 }
local same = true
for _, name in ipairs(res3.channels) do
  for i = 1, #res3.t do same = same and res2[name][i] == res3[name][i] end
end
tap.ok(same, "the arrays read back from the file are the numbers of a run without out")
os.remove(path)

-- a sim stepped from Lua, outliving a closed model
local m2 = sys:compile()
local sim = m2:sim { rtol = 1e-10 }
m2:close()
tap.is_near(sim:advance(0.25), 0.25, 1e-12, "sim:advance returns the time")
local sq = sim:state()
tap.ok(math.abs(sq[find(coords, "bob.x")]) < 1, "sim:state() after advancing")
tap.ok(sim:channels().energy ~= nil, "sim:channels()")
tap.ok(sim:stats().steps > 0, "sim:stats()")
sim:close()
tap.raises(function() m2:coords() end, { "closed" }, "a closed model")
tap.raises(function() sim:time() end, { "closed" }, "a closed sim")

do
  local tmp <close> = joinery.system()
  tmp:add("mass", "m", { dim = 1 })
  closed_sys = tmp -- luacheck: ignore (a global, to use it after the scope)
end
tap.raises(function() closed_sys:add("mass", "m2", { dim = 1 }) end,
  { "closed" }, "a <close>d system")

-- ---- errors ----------------------------------------------------------------------------
local nparts = #sys:parts()
tap.raises(function() sys:add("mas", "x", {}) end,
  { "unknown part type", "'mas'", "mass" }, "unknown part type")
tap.raises(function() sys:add("mass", "m3", { dim = 2, mm = 1 }) end,
  { "m3", "'mm'", "'m'" }, "unknown parameter")
tap.raises(function() sys:add("mass", "m4", { dim = 2, m = -1 }) end,
  { "m4", "m = -1" }, "negative mass")
tap.raises(function() sys:add("mass", "m5", { dim = 2, m = "heavy" }) end,
  { "m5", "'m'", "number", "string" }, "non-number parameter")
tap.raises(function() sys:add("mass", "m6", { dim = 2, init = { z = 1 } }) end,
  { "m6", "'z'" }, "unknown initial coordinate")
tap.raises(function() sys:add("mass", "m7", { dim = 2, vel = { x = "fast" } }) end,
  { "m7", "vel.x", "number" }, "non-number velocity")
tap.raises(function() sys:add("rod", "r3", { dim = 3, a = bob.pos }) end,
  { "r3.a", "bob.pos", "dimensions" }, "glue key of the wrong dimension")
tap.raises(function() sys:add("rod", "r4", { dim = 2, c = bob.pos }) end,
  { "r4", "'c'", "a, b" }, "glue key that is no terminal")
tap.raises(function() sys:add("mass", "bob", { dim = 2 }) end, { "bob" }, "a duplicate part name")
tap.raises(function() sys:add("mass", "m8", 5) end, { "add", "table" }, "params not a table")
tap.is(#sys:parts(), nparts, "failed adds leave the system unchanged")
local g3 = sys:add("ground", "g3", { dim = 3 })
tap.raises(function() sys:glue(g3.pos, bob.pos) end,
  { "g3.pos", "bob.pos", "dimension" }, "gluing terminals of different dimensions")
tap.raises(function() sys:glue(bob.pos, bob.pos) end,
  { "bob.pos", "itself" }, "gluing a terminal to itself")
tap.raises(function() sys:glue(bob.pos, "ground") end,
  { "glue", "joinery.Terminal" }, "gluing a non-terminal")
local other = joinery.system()
local og = other:add("ground", "og", { dim = 2 })
tap.raises(function() sys:glue(bob.pos, og.pos) end,
  { "another system" }, "gluing a terminal of another system")
tap.raises(function() return bob.pso end,
  { "bob", "'pso'", "'pos'" }, "indexing an unknown terminal")
tap.raises(function() sys:settings { tend = 1 } end,
  { "'tend'", "t_end", "dt_out", "method" }, "unknown setting")
tap.raises(function() sys:settings { method = "rk4" } end,
  { "'rk4'", "adams", "bdf" }, "unknown method")
tap.raises(function() sys:settings { rtol = "small" } end,
  { "rtol", "number" }, "non-number setting")
tap.raises(function() sys:simulate { dt_out = 0 } end, { "dt_out" }, "invalid setting value")
tap.raises(function() joinery.system { gravity = { 1, 2, 3, 4 } } end,
  { "gravity" }, "gravity with 4 components")
tap.raises(function() joinery.system { gravty = { 0, -9.81 } } end,
  { "'gravty'", "gravity" }, "unknown system option")

local bad = joinery.system()
local g1 = bad:add("ground", "g1", { dim = 2 })
local g2 = bad:add("ground", "g2", { dim = 2, x = 1 })
bad:glue(g1.pos, g2.pos, "weld")
tap.raises(function() bad:compile() end,
  { "inconsistent", "weld" }, "compiling inconsistent constraints")
tap.raises(function() sys:simulate { t_end = 1, max_steps = 1 } end,
  { "t =" }, "an integrator failure names the time")
-- BDF with projection steps one at a time (CV_ONE_STEP): max_steps still bounds the steps
-- between two outputs, so a stalling run ends with an error instead of running on.
tap.raises(function() sys:simulate { t_end = 1, dt_out = 1, method = "bdf", max_steps = 5 } end,
  { "max_steps = 5", "CV_TOO_MUCH_WORK", "t =" }, "BDF with projection keeps to max_steps")
local unwritable = "/nonexistent-dir/x.csv"
tap.raises(function() sys:simulate { t_end = 0.1, out = unwritable } end,
  { unwritable }, "an unwritable output file")

-- Nothing but the script's variables holds its systems, models and sims: once those are
-- dropped, garbage collection frees them all (their __gc run).
local weak = setmetatable({ sys = sys, model = model, m2 = m2, sim = sim, other = other, bad = bad,
  closed_sys = closed_sys }, { __mode = "v" })
sys, model, m2, sim, other, bad, closed_sys = nil, nil, nil, nil, nil, nil, nil -- luacheck: ignore
ground, bob, rod, g3, og, g1, g2 = nil, nil, nil, nil, nil, nil, nil
res, res2, res3 = nil, nil, nil -- each result holds its model (res.model)
collectgarbage()
collectgarbage()
local kept = {}
for name in pairs(weak) do kept[#kept + 1] = name end
table.sort(kept)
tap.ok(#kept == 0, "garbage collection frees every system, model and sim above (kept: "
  .. (#kept > 0 and table.concat(kept, ", ") or "none") .. ")")
tap.done()
