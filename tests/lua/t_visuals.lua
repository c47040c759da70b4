-- What joinery animate draws (part protocol 7): the built-in parts' visuals where their
-- coordinates put them (a pendulum's bob, a planar body's marker, a spatial body's frame,
-- a spring's ends), a Lua part type's visuals (and its row forces f), the glues' force
-- arrows equal to the force channels, the definition errors of a Lua visual; and `joinery animate` itself: a page
-- from a run and one from that run's CSV are the same bytes, no address outside the page,
-- the frames in it, a clear error for a CSV without every coordinate. The page opened in
-- a browser: t_animate_browser.lua (suite tools).
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local function by_name(vis, name, kind)
  for _, v in ipairs(vis) do
    if v.name == name and v.kind == kind then return v end
  end
end

-- ---- a pendulum part: the arm and the bob --------------------------------------------
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local ground = sys:add("ground", "pivot", { dim = 2, x = 0.5, y = 2 })
  sys:add("pendulum", "p", { l = 1.5, init = { theta = 0.3 }, pivot = ground.pos })
  local model = sys:compile()
  local th = 0.7
  local q = {}
  for i, name in ipairs(model:coords()) do q[i] = name == "p.theta" and th or 0 end
  local zero = {}
  for i = 1, #q do zero[i] = 0 end
  local vis = model:visuals(q, zero, 0)
  local bob = by_name(vis, "p", "point")
  tap.ok(bob, "pendulum: a point named p")
  tap.is_near(bob.a[1], 0.5 + 1.5 * math.sin(th), 1e-14, "pendulum: bob x = px + l sin theta")
  tap.is_near(bob.a[2], 2 - 1.5 * math.cos(th), 1e-14, "pendulum: bob y = py - l cos theta")
  tap.is(bob.a[3], 0, "pendulum: planar, z = 0")
  local arm = by_name(vis, "p", "rod")
  tap.ok(arm and arm.a[1] == 0.5 and arm.a[2] == 2 and arm.b[1] == bob.a[1] and arm.b[2] == bob.a[2],
    "pendulum: the arm from the (eliminated) pivot to the bob")
  local g = by_name(vis, "pivot", "ground")
  tap.ok(g and g.a[1] == 0.5 and g.a[2] == 2 and g.b[1] == 0 and g.b[2] == 0,
    "ground: a pivot mark at its point, no normal")
end

-- ---- four bar: bodies, markers, the pins' force arrows ---------------------------------
do
  local model = dofile("examples/four_bar.lua"):compile()
  local q, v = model:initial()
  local vis = model:visuals(q, v, 0)
  local crank = by_name(vis, "crank", "frame")
  tap.ok(crank, "four bar: the crank drawn as a frame")
  tap.is_near(crank.a[2], 0.5, 1e-12, "four bar: the crank's frame at its centre of mass")
  -- theta = pi/2 about z: (cos pi/4, 0, 0, sin pi/4)
  tap.is_near(crank.quat[1], math.cos(math.pi / 4), 1e-12, "four bar: crank quaternion w")
  tap.is_near(crank.quat[4], math.sin(math.pi / 4), 1e-12, "four bar: crank quaternion z")
  -- the marker "tip" at r = (0.5, 0) on the crank: (0, 0.5) + R(pi/2) (0.5, 0) = (0, 1)
  local tip
  for _, x in ipairs(vis) do
    if x.kind == "point" and x.name:match("tip") and math.abs(x.a[1]) < 1e-9 then tip = x end
  end
  tap.ok(tip and math.abs(tip.a[2] - 1) < 1e-12, "four bar: the crank's tip marker at (0, 1)")
  local arrows, n = model:visuals(q, v, 0, true), 0
  local ch = model:evaluate(q, v, 0)
  local agree = true
  for _, x in ipairs(arrows) do
    if x.kind == "arrow" then
      n = n + 1
      agree = agree and x.b[1] == ch["force." .. x.name .. ".x"] and
        x.b[2] == ch["force." .. x.name .. ".y"]
    end
  end
  tap.is(n, 4, "four bar: an arrow for each of the four pins")
  tap.ok(agree, "four bar: each arrow is its glue's force channels")
end

-- ---- a spatial body and a spring -------------------------------------------------------
do
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local b = sys:add("body3d", "b", { m = 1, Ixx = 1, Iyy = 1, Izz = 1 })
  local w = sys:add("ground", "w", { dim = 3, z = 1 })
  sys:add("spring", "s", { dim = 3, k = 10, L = 0.5, a = w.pos, b = b.pos })
  local model = sys:compile()
  local q, v = {}, {}
  local half = math.sqrt(0.5)
  local want = { ["b.x"] = 0.1, ["b.y"] = 0.2, ["b.z"] = 0.3, ["b.q0"] = 2 * half, ["b.q3"] = 2 * half }
  for i, name in ipairs(model:coords()) do q[i], v[i] = want[name] or 0, 0 end
  local vis = model:visuals(q, v, 0)
  local f = by_name(vis, "b", "frame")
  tap.ok(f and f.a[1] == 0.1 and f.a[2] == 0.2 and f.a[3] == 0.3, "body3d: its frame at (x, y, z)")
  tap.ok(f and math.abs(f.quat[1] - half) < 1e-15 and math.abs(f.quat[4] - half) < 1e-15,
    "body3d: its quaternion normalized for drawing")
  local s = by_name(vis, "s", "spring")
  tap.ok(s and s.a[3] == 1 and s.b[1] == 0.1 and s.b[3] == 0.3, "spring: from its a end to its b end")
end

-- ---- a Lua part type's visuals ------------------------------------------------------------
do
  local model = dofile("examples/double_pendulum_lua.lua"):compile()
  local q, v = model:initial()
  local vis = model:visuals(q, v, 0)
  local b1, b2 = by_name(vis, "p1", "point"), by_name(vis, "p2", "point")
  local t1, t2
  for i, name in ipairs(model:coords()) do
    if name == "p1.theta" then t1 = q[i] elseif name == "p2.theta" then t2 = q[i] end
  end
  tap.ok(b1 and math.abs(b1.a[1] - math.sin(t1)) < 1e-14 and math.abs(b1.a[2] + math.cos(t1)) < 1e-14,
    "Lua part: p1's bob where its visual function puts it")
  tap.ok(b2 and math.abs(b2.a[1] - (math.sin(t1) + 0.7 * math.sin(t2))) < 1e-14,
    "Lua part: p2's bob hangs from p1's")
  local arm = by_name(vis, "p2", "rod")
  tap.ok(arm and arm.a[1] == b1.a[1] and arm.b[2] == b2.a[2], "Lua part: p2's arm from p1's bob to its own")
  local mass = function() return { { 1 } } end
  tap.raises(function() joinery.part_type { name = "bv1", coords = { "x" }, mass = mass, visuals = { { kind = "blob", fn = mass } } } end,
    { "visuals[1] needs kind", "\"rope\"" }, "Lua part: an unknown kind is refused at the definition")
  tap.raises(function() joinery.part_type { name = "bv2", coords = { "x" }, mass = mass, visuals = { { kind = "point" } } } end,
    { "visuals[1] needs fn" }, "Lua part: a visual needs fn")
  joinery.part_type { name = "wrong_visual", coords = { "x" }, mass = function() return { { 1 } } end,
    visuals = { { kind = "rod", fn = function(q) return { q.x } end } } }
  local sys = joinery.system()
  sys:add("wrong_visual", "w")
  local m = sys:compile()
  tap.raises(function() m:visuals({ 0 }, { 0 }, 0) end, { "part 'w' (wrong_visual), visual", "b must be an array" },
    "Lua part: a rod's visual without b names the part and the function")
end

-- ---- a Lua part's arrow from its row forces f ----------------------------------------------
do
  joinery.part_type { name = "ring_bead", coords = { "x", "y" },
    mass = function() return { { 1, 0 }, { 0, 1 } } end,
    force = function() return { 0, -9.81 } end,
    constraints = { { name = "ring", phi = function(q) return q.x * q.x + q.y * q.y - 1 end } },
    visuals = {
      { kind = "point", fn = function(q) return { q.x, q.y } end },
      -- the ring's force on the bead, A^T f with A = (2x, 2y)
      { kind = "arrow", fn = function(q, v, t, p, f) return { q.x, q.y }, { 2 * q.x * f[1], 2 * q.y * f[1] } end },
    } }
  local sys = joinery.system()
  sys:add("ring_bead", "bead", { init = { x = 0.6, y = -0.8 } })
  local m = sys:compile()
  local q, v = { 0.6, -0.8 }, { 1.6, 1.2 }
  local arrow = by_name(m:visuals(q, v, 0, true), "bead", "arrow")
  local f = m:evaluate(q, v, 0)["force.bead.ring"]
  tap.ok(arrow and f ~= 0 and arrow.b[1] == 2 * 0.6 * f and arrow.b[2] == -2 * 0.8 * f,
    "Lua part: a visual gets its row forces f (an arrow of the ring's force on the bead)")
  arrow = by_name(m:visuals(q, v, 0), "bead", "arrow")
  tap.ok(arrow and arrow.b[1] == 0 and arrow.b[2] == 0, "Lua part: without forces f is 0")
end

-- ---- joinery animate -----------------------------------------------------------------------
local cmd = tap.command()
local script = cmd.quote(cmd.root .. "/examples/four_bar.lua")
local read = tap.read
local page_run, page_csv = cmd.tmp .. "/run.html", cmd.tmp .. "/csv.html"
local code, out, err = cmd.run("animate " .. script .. " --t-end 1 -o " .. cmd.quote(page_run))
tap.ok(code == 0 and out:find("101 frames", 1, true), "animate: a page of 101 frames (t_end 1, dt_out 0.01)")
if code ~= 0 then tap.diag(err) end
local csv = cmd.tmp .. "/fb.csv"
cmd.run("run " .. script .. " --t-end 1 --out " .. cmd.quote(csv))
code = cmd.run("animate " .. script .. " " .. cmd.quote(csv) .. " -o " .. cmd.quote(page_csv))
local a, b = read(page_run), read(page_csv)
tap.ok(code == 0 and a and a == b, "animate: the page from the run's CSV is the page of the run, byte for byte")
a = a or ""
local addresses = {}
for url in a:gmatch("https?://[^\"'%s)]*") do
  if not url:match("^http://www%.w3%.org/") then addresses[#addresses + 1] = url end
end
tap.is(#addresses, 0, "animate: no address in the page but XML namespace names (nothing to fetch)")
tap.ok(not a:find("<script src", 1, true) and not a:find("<link", 1, true), "animate: no external script or style")
tap.ok(a:find('"planar":true', 1, true) and a:find('id="jy-data"', 1, true), "animate: a planar page with its data inline")
local times = a:match('"t":%[([^%]]*)%]') or ""
local nt = select(2, times:gsub(",", ",")) + 1
tap.is(nt, 101, "animate: 101 times in the page")
local partial = cmd.tmp .. "/partial.csv"
cmd.run("run " .. script .. " --t-end 0.1 --columns 't,crank.*' --out " .. cmd.quote(partial))
code, out, err = cmd.run("animate " .. script .. " " .. cmd.quote(partial) .. " -o " .. cmd.quote(cmd.tmp .. "/x.html"))
tap.ok(code == 1 and err:find("has no column rocker.x, a coordinate of the model", 1, true),
  "animate: a CSV without every coordinate is refused, naming the first missing")
tap.ok(not tap.exists(cmd.tmp .. "/x.html"), "animate: no page after an error")
code, out, err = cmd.run("animate " .. script .. " a.csv b.csv")
tap.ok(code == 2 and err:find("at most one CSV", 1, true), "animate: two CSVs are a usage error")
code, out = cmd.run("animate " .. script .. " --t-end 0.2 --forces -o " .. cmd.quote(cmd.tmp .. "/f.html"))
local f = read(cmd.tmp .. "/f.html") or ""
tap.ok(code == 0 and f:find('"forces":true', 1, true), "animate --forces: the page has the forces")
os.execute("rm -rf " .. cmd.quote(cmd.tmp))
tap.done()
