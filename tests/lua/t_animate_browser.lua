-- joinery animate's page in a real browser (Debian's chromium, headless; suite 'tools'):
-- opened from file:// with the time set in its address, a pendulum's bob is drawn where its
-- coordinates in the run's CSV put it, at two instants (the view rectangle and the window
-- are fixed, so data -> pixel is known); the page draws with no script error, with every
-- host name unresolvable (nothing to fetch), and the spatial page (three.js) draws too.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")

local cmd = tap.command()
local q = cmd.quote
local chromium
for _, c in ipairs { "/usr/bin/chromium", "/usr/bin/chromium-browser" } do
  if tap.exists(c) then chromium = c end
end
if not chromium then
  tap.ok(false, "chromium is installed (.ci/install-deps installs Debian's chromium)")
  tap.done()
end

local SIZE = 400 -- the window, px: the view -1.5 .. 1.5 m fills it, 400 / 3 px a metre
local function browser(url, what)
  local profile = cmd.tmp .. "/profile"
  return cmd.sh(q(chromium) .. " --headless --no-sandbox --disable-gpu --use-angle=swiftshader " ..
    "--enable-unsafe-swiftshader --disable-quic --no-first-run --disable-background-networking " ..
    "--disable-component-update --disable-sync --hide-scrollbars --force-device-scale-factor=1 " ..
    "--host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir=" .. q(profile) ..
    " --window-size=" .. SIZE .. "," .. SIZE .. " " .. what .. " " .. q(url))
end

-- a pendulum of 1 m from (0, 0), released at 1 rad
local script = cmd.write("pendulum.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2 })
sys:add("pendulum", "p", { l = 1, init = { theta = 1.0 }, pivot = pivot.pos })
sys:settings { t_end = 2, dt_out = 0.01 }
return sys
]])
local page, csv = cmd.tmp .. "/pendulum.html", cmd.tmp .. "/pendulum.csv"
local code, _, err = cmd.run("animate " .. q(script) .. " -o " .. q(page))
tap.is(code, 0, "joinery animate writes the page")
if code ~= 0 then tap.diag(err) end
cmd.run("run " .. q(script) .. " --out " .. q(csv))

-- p.theta at each time of the CSV
local theta = {}
do
  local f = assert(io.open(csv))
  local col, i = nil, 0
  for line in f:lines() do
    local cells = {}
    for c in line:gmatch("[^,]+") do cells[#cells + 1] = c end
    if not col then
      for k, name in ipairs(cells) do if name == "p.theta" then col = k end end
    else
      i = i + 1
      theta[string.format("%.2f", tonumber(cells[1]))] = tonumber(cells[col])
    end
  end
  f:close()
end

-- The centroid of the bob's red pixels (the viewer's point colour, #d62728) in a PNG,
-- read through netpbm's pngtopnm as a binary PPM.
local function red_centroid(png)
  local p = io.popen("pngtopnm " .. q(png))
  local data = p:read("a")
  p:close()
  local w, h, maxv, at = data:match("^P6%s+(%d+)%s+(%d+)%s+(%d+)%s()")
  if not w then return nil end
  w, h = tonumber(w), tonumber(h)
  local sx, sy, n = 0, 0, 0
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local o = at + 3 * (y * w + x)
      local r, g, b = data:byte(o, o + 2)
      if r > 180 and g < 90 and b < 90 then sx, sy, n = sx + x + 0.5, sy + y + 0.5, n + 1 end
    end
  end
  if n == 0 then return nil end
  return sx / n, sy / n, n, w, h
end

local moved = {}
for _, t in ipairs { "0.50", "1.30" } do
  local png = cmd.tmp .. "/at" .. t .. ".png"
  local url = "file://" .. page .. "#t=" .. t .. "&ui=0&view=-1.5,-1.5,1.5,1.5"
  browser(url, "--screenshot=" .. q(png))
  local th = theta[t]
  local bx, by = math.sin(th), -math.cos(th)
  local px, py = (bx + 1.5) * SIZE / 3, SIZE - (by + 1.5) * SIZE / 3
  local cx, cy, n, w, h = red_centroid(png)
  tap.ok(cx and w == SIZE and h == SIZE, "t = " .. t .. ": a " .. SIZE .. " px screenshot with red pixels")
  tap.diag(string.format("t = %s: theta %.4f, bob (%.4f, %.4f) m -> pixel (%.1f, %.1f); " ..
    "red centroid (%s, %s) of %s pixels", t, th, bx, by, px, py, tostring(cx), tostring(cy), tostring(n)))
  tap.ok(cx and math.abs(cx - px) <= 1.5 and math.abs(cy - py) <= 1.5,
    "t = " .. t .. ": the bob drawn within 1.5 px of where its coordinates put it")
  tap.ok(n and n > 60 and n < 200, "t = " .. t .. ": one bob of radius 6 px (about 113 pixels)")
  moved[#moved + 1] = { cx or 0, cy or 0 }
end
tap.ok(math.abs(moved[1][1] - moved[2][1]) > 50, "the bob moved between the two instants")

-- the page's own report: drawn, at the asked time, no script error
code, out = browser("file://" .. page .. "#t=1.30", "--dump-dom")
tap.ok(out:find('data-status="drawn"', 1, true), "the page reports it drew")
tap.ok(out:find('data-time="1.3"', 1, true), "the page shows t = 1.3 when asked")
tap.ok(not out:find("data-errors", 1, true), "no script error in the page")

-- the spatial page: three.js draws the heavy top
local top = cmd.tmp .. "/top.html"
code = cmd.run("animate " .. q(cmd.root .. "/examples/heavy_top.lua") .. " --t-end 0.5 --forces -o " .. q(top))
code, out = browser("file://" .. top .. "#t=0.25&forces=1", "--dump-dom")
tap.ok(out:find('data-status="drawn"', 1, true) and not out:find("data-errors", 1, true),
  "the 3-D page (three.js) draws with no script error")
os.execute("rm -rf " .. q(cmd.tmp))
tap.done()
