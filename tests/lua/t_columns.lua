-- Output selection (issue 43, item 1): the setting columns (sys:output, model:simulate's
-- opts, joinery run --columns / --columns-from), the default that leaves out the copies of
-- eliminated coordinates, the eliminated glues' forces and the outputs of the parts that keep
-- them for whoever asks (springs, dampers), and decimation (every, --every).
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local cmd = tap.command()
local quote, run, tmp, root = cmd.quote, cmd.run, cmd.tmp, cmd.root
local chain = root .. "/examples/double_pendulum.lua" -- two pendulums, glue eliminated

local function same_list(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end
-- Whether every value of res[name] equals full[name] bit for bit (rows: the rows of full
-- that res holds, default 1, 2, ...).
local function same_values(res, full, names, rows)
  for _, name in ipairs(names) do
    local a, b = res[name], full[name]
    if not a or not b then return false, name end
    for i = 1, #a do
      if a[i] ~= b[rows and rows[i] or i] then return false, name end
    end
    if not rows and #a ~= #b then return false, name end
  end
  return true
end
local function read_csv(path)
  local f = io.open(path)
  if not f then return nil end
  local header = f:read("l")
  local names, cols = {}, {}
  for name in header:gmatch("[^,]+") do
    names[#names + 1] = name
    cols[name] = {}
  end
  for line in f:lines() do
    local k = 0
    for v in line:gmatch("[^,]+") do
      k = k + 1
      local c = cols[names[k]]
      c[#c + 1] = tonumber(v)
    end
  end
  f:close()
  return names, cols
end

local opts = { t_end = 0.5, dt_out = 0.01 }

-- ---- the default: every channel but what follows the glue --------------------------------
local sys = dofile(chain)
local model = sys:compile()
local full = model:simulate { t_end = opts.t_end, dt_out = opts.dt_out, columns = "*" }
local default = model:simulate(opts)
tap.ok(same_list(full.channels, model:channels()), "columns '*': every channel, in model:channels() order")
local kept, dropped = {}, {}
for _, name in ipairs(default.channels) do kept[name] = true end
for _, name in ipairs(full.channels) do
  if not kept[name] then dropped[#dropped + 1] = name end
end
-- p1 and p2 are pendulums whose pivots (px, py) glue elimination substitutes by the ground
-- and p1's bob: 4 coordinates, 8 channels with their velocities, and the 2-D forces of the
-- two glues it eliminated
tap.is(#default.channels, #full.channels - 12, "the default leaves out 12 channels (of "
  .. #full.channels .. ")")
tap.ok(same_list(dropped, { "p1.px", "p1.py", "p2.px", "p2.py", "der(p1.px)", "der(p1.py)",
  "der(p2.px)", "der(p2.py)", "force.p1.pivot.x", "force.p1.pivot.y", "force.p2.pivot.x",
  "force.p2.pivot.y" }), "the ones left out are the eliminated copies and the eliminated glues' forces: "
  .. table.concat(dropped, " "))
tap.ok(model:num_coords() == 2 and default.channels[2] == "p1.theta" and default.channels[3] == "p2.theta",
  "the default keeps the parts' own coordinates (2 of them)")
tap.ok(same_values(default, full, default.channels), "the default's values equal the full run's")
tap.ok(default["p1.px"] == nil, "the result has no array for a channel not selected")

-- Springs (JY_PART_OUTPUTS_ON_REQUEST) keep their tension and length for whoever asks: two
-- masses and two springs whose ends glue elimination substitutes, so the default is the
-- masses' coordinates and the system's channels; the rest is one glob away, computed as in
-- the full run.
do
  local springs = dofile(root .. "/examples/spring_chain_monolithic.lua"):compile()
  local all = springs:simulate { t_end = opts.t_end, dt_out = opts.dt_out, columns = "*" }
  local def = springs:simulate(opts)
  tap.ok(same_list(def.channels, { "t", "m1.x", "m2.x", "der(m1.x)", "der(m2.x)", "energy",
    "kinetic", "potential", "residual.pos", "residual.vel", "power.ideal", "power.nonideal" }),
    "the default of a spring chain: the masses' own coordinates and the system's channels: "
    .. table.concat(def.channels, " "))
  local asked = springs:simulate { t_end = opts.t_end, dt_out = opts.dt_out,
    columns = "m*,s*.tension,s*.length,force.*" }
  tap.ok(same_list(asked.channels, { "t", "m1.x", "m2.x", "s1.tension", "s2.tension", "s1.length",
    "s2.length", "force.s1.a", "force.s1.b", "force.s2.a", "force.s2.b" })
    and same_values(asked, all, asked.channels) and same_values(def, all, def.channels),
    "the springs' outputs and the eliminated glues' forces one glob away, equal to the full run's: "
    .. table.concat(asked.channels, " "))
end

-- ---- sys:output and model:simulate -----------------------------------------------------
sys = dofile(chain)
tap.ok(sys:output { "p*.theta", "energy" } == sys, "sys:output returns sys")
tap.is(sys:settings().columns, "p*.theta,energy", "sys:settings() reports the selection")
local res = sys:simulate(opts)
tap.ok(same_list(res.channels, { "t", "p1.theta", "p2.theta", "energy" }),
  "sys:output { 'p*.theta', 'energy' }: t, then the matches in order: " .. table.concat(res.channels, " "))
tap.ok(same_values(res, full, res.channels), "the selected values equal the full run's bit for bit")
res = sys:compile():simulate(opts)
tap.ok(same_list(res.channels, { "t", "p1.theta", "p2.theta", "energy" }),
  "the model takes the system's selection")
sys:output(nil)
tap.is(#sys:simulate(opts).channels, #default.channels, "sys:output(nil) restores the default")
res = model:simulate { t_end = opts.t_end, dt_out = opts.dt_out,
  columns = "energy, der(p2.*) ,t,p1.theta,der(p2.theta)" }
tap.ok(same_list(res.channels, { "t", "energy", "der(p2.px)", "der(p2.py)", "der(p2.theta)", "p1.theta" }),
  "the patterns' order, each pattern's matches in channel order, none twice, t first: "
  .. table.concat(res.channels, " "))
tap.ok(same_values(res, full, res.channels), "those values equal the full run's too (an eliminated copy included)")
res = model:simulate { t_end = opts.t_end, dt_out = opts.dt_out, columns = { "force.p?.pivot.?" } }
tap.ok(same_list(res.channels, { "t", "force.p1.pivot.x", "force.p1.pivot.y", "force.p2.pivot.x", "force.p2.pivot.y" })
  and same_values(res, full, res.channels), "'?' matches one character; glue forces bit for bit")

-- ---- errors ---------------------------------------------------------------------------
tap.raises(function() model:simulate { columns = "p*.thetaa" } end,
  { "'p*.thetaa' matches no output channel", "the nearest is 'p1.theta'" },
  "a pattern matching nothing: named, with the nearest channel")
tap.raises(function() model:simulate { columns = { "energy", 3 } } end, { "pattern 2 must be a string" },
  "a pattern that is not a string")
tap.raises(function() model:simulate { every = 0 } end, { "every = 0 must be > 0" }, "every = 0")
tap.raises(function() model:simulate { every = 1.5 } end, { "every", "integer" }, "every = 1.5")

-- ---- every ----------------------------------------------------------------------------
res = model:simulate { t_end = opts.t_end, dt_out = opts.dt_out, every = 10 }
tap.is(res.rows, 6, "every = 10 over 51 rows: 6 rows")
tap.ok(same_values(res, default, res.channels, { 1, 11, 21, 31, 41, 51 }),
  "they are rows 1, 11, 21, 31, 41, 51 of the full run, bit for bit")

-- A selected angle output (an atan2, reported continuous from its last report) stays
-- continuous when every skips rows over which it turns more than half a turn: a hinge3d
-- driven at 3 rad/s, 6 rad between written rows.
do
  local function spinner()
    local sys = joinery.system { gravity = { 0, 0, -9.81 } }
    local ground = sys:add("ground3d", "ground", {})
    local b = sys:add("body3d", "b", { m = 1, Ixx = 0.05, Iyy = 0.04, Izz = 0.03 })
    local h = sys:add("hinge3d", "h", { nax = 0, nay = 0, naz = 1, nbx = 0, nby = 0, nbz = 1,
      a = ground.frame, b = b.frame })
    sys:motor { name = "drive", joint = h, position = 0.2, speed = 3 }
    return sys
  end
  local spin = spinner():compile()
  local o = { t_end = 4, dt_out = 0.01, columns = "h.angle,drive.angle" }
  local all = spin:simulate(o)
  o.every = 200
  local some = spin:simulate(o)
  tap.ok(some.rows == 3 and all["h.angle"][401] > 12 and same_values(some, all, { "h.angle", "drive.angle" }, { 1, 201, 401 }),
    string.format("every = 200 on a hinge turning 6 rad between written rows: the angle stays continuous (%s)",
      table.concat(some["h.angle"], ", ")))
end

-- An impact's impulse is reported in the first row written after it, however many rows
-- every skips: the impulses of a bouncing ball add up to the full run's.
do
  local ball = dofile(root .. "/examples/bouncing_ball.lua"):compile()
  local o = { t_end = 3, columns = "impulse.*" }
  local function total(res)
    local sum, n = 0, 0
    for _, x in ipairs(res["impulse.floor"]) do
      if x ~= 0 then sum, n = sum + x, n + 1 end
    end
    return sum, n
  end
  local sum_all, n_all = total(ball:simulate(o))
  o.every = 7
  local sum_some, n_some = total(ball:simulate(o))
  tap.ok(n_all > 2 and n_some == n_all and sum_some == sum_all,
    string.format("every = 7: the %d impacts' impulses all reported (sum %.17g, full run %.17g)", n_some, sum_some, sum_all))
end

-- ---- user channels not selected are not computed --------------------------------------
sys = dofile(chain)
local calls = { a = 0, b = 0 }
sys:channel("a", function(s) calls.a = calls.a + 1 return s["p1.theta"] end)
sys:channel("b", function(s) calls.b = calls.b + 1 return s.a end)
res = sys:simulate { t_end = 0.1, dt_out = 0.01, columns = "p1.theta" }
tap.ok(calls.a == 0 and calls.b == 0, "no user channel selected: none computed (" .. calls.a .. ", " .. calls.b .. ")")
res = sys:simulate { t_end = 0.1, dt_out = 0.01, columns = "a" }
tap.ok(calls.a == 11 and calls.b == 0, "'a' selected: a computed for each of 11 rows, b (after it) not ("
  .. calls.a .. ", " .. calls.b .. ")")
calls.a, calls.b = 0, 0
res = sys:simulate { t_end = 0.1, dt_out = 0.01, columns = "b" }
tap.ok(calls.a == 11 and calls.b == 11 and res.b[11] == res.b[11] and #res.channels == 2,
  "'b' selected: a (which b may read) computed too; only t and b written")

-- ---- joinery run --columns, --columns-from, --every -----------------------------------
local full_csv, csv = tmp .. "/full.csv", tmp .. "/sel.csv"
local code, out, err = run("run " .. quote(chain) .. " --t-end 0.5 --columns '*' --out " .. quote(full_csv))
tap.ok(code == 0, "run --columns '*': status 0")
local full_names, full_cols = read_csv(full_csv)
tap.ok(full_names and same_list(full_names, full.channels), "its header is every channel")
code, out, err = run("run " .. quote(chain) .. " --t-end 0.5 --columns 'p*.theta,energy,force.p1.*' --out " .. quote(csv))
local names, cols = read_csv(csv)
local want = { "t", "p1.theta", "p2.theta", "energy", "force.p1.pivot.x", "force.p1.pivot.y" }
tap.ok(code == 0 and names and same_list(names, want), "run --columns: the header is the selection in order: "
  .. table.concat(names or {}, ","))
tap.ok(out:find("wrote 51 rows x 6 columns", 1, true), "it says what it wrote")
tap.ok(names and same_values(cols, full_cols, names), "the CSV's values equal the full run's CSV bit for bit")
local patterns = cmd.write("columns.txt", "# the angles\n  p*.theta  \n\nenergy\r\n")
code, out, err = run("run " .. quote(chain) .. " --t-end 0.5 --columns-from " .. quote(patterns) .. " --out " .. quote(csv))
names, cols = read_csv(csv)
tap.ok(code == 0 and names and same_list(names, { "t", "p1.theta", "p2.theta", "energy" }),
  "--columns-from: one pattern a line, # comments and blank lines skipped")
code, out, err = run("run " .. quote(chain) .. " --t-end 0.5 --every 10 --out " .. quote(csv))
names, cols = read_csv(csv)
tap.ok(code == 0 and names and #cols.t == 6 and same_values(cols, full_cols, names, { 1, 11, 21, 31, 41, 51 }),
  "--every 10 keeps rows 1, 11, 21, 31, 41, 51, bit for bit")
code, out, err = run("run " .. quote(chain) .. " --columns 'p*.theta,bogus*' --out " .. quote(csv))
tap.ok(code == 1 and err:find("'bogus*' matches no output channel", 1, true) and err:find("the nearest is", 1, true),
  "run --columns with a pattern matching nothing: status 1, named")
tap.diag(err)
code, out, err = run("run " .. quote(chain) .. " --every 0 --out " .. quote(csv))
tap.ok(code == 1 and err:find("every = 0 must be > 0", 1, true), "--every 0: the range check names it")
code, out, err = run("run " .. quote(chain) .. " --columns-from " .. quote(tmp .. "/none.txt"))
tap.ok(code == 2 and err:find("--columns-from", 1, true), "--columns-from a missing file: usage error")

os.execute("rm -rf " .. quote(tmp))
tap.done()
