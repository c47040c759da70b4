-- joinery plot: pictures through gnuplot (suite 'tools': needs gnuplot-nox and netpbm's
-- pngtopnm). A line and a sine from a small CSV drawn to PNG with a fixed size and fixed
-- axis ranges: the PNG decoded (pngtopnm), each curve's colour found in pixel columns where
-- the data puts it (plot.c's fixed margins map data to pixels); the file types and sizes;
-- the same bytes twice; names shown literally; an incomplete run's note; the errors; and
-- examples/four_bar.lua plotted in one command.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")

local cmd = tap.command()
local q, tmp = cmd.quote, cmd.tmp
local function plot(args) return cmd.run("plot " .. args) end
local function read(path) -- the file's bytes, or nil
  local f = io.open(path, "rb")
  local s = f and f:read("a")
  if f then f:close() end
  return s
end

-- ---- a line and a sine, 101 rows ----------------------------------------------------------
local rows = { "t,line,wave" }
for i = 0, 100 do
  local t = i / 10
  rows[#rows + 1] = string.format("%.17g,%.17g,%.17g", t, 2 * t, 3 * math.sin(t) + 5)
end
local csv = cmd.write("run.csv", table.concat(rows, "\n") .. "\n")
local W, H, XLO, XHI, YLO, YHI = 800, 500, 0, 10, -5, 25
local fixed = string.format(" --size %dx%d --xrange %g:%g --yrange %g:%g", W, H, XLO, XHI, YLO, YHI)
local png = tmp .. "/fig.png"
local code, out, err = plot(q(csv) .. " --y line --y 'wa*' -o " .. q(png) .. fixed)
tap.ok(code == 0, "plot of two series to PNG: status 0")
if code ~= 0 then tap.diag(out .. err) end
tap.has(out, "wrote " .. png .. ": 2 series of 101 rows", "says what it wrote")

local data = read(png) or ""
tap.is(data:sub(1, 8), "\137PNG\r\n\26\n", "PNG signature")
tap.ok(#data > 5000, "the PNG has some size (" .. #data .. " bytes)")

-- A PNG decoded to a binary PPM (P6) by netpbm's pngtopnm, with the data's axis ranges: its
-- pixels, where plot.c's plot area (fractions of the canvas from the left and the bottom)
-- puts a data point, and which rows of a pixel column are near a colour.
local LEFT, RIGHT, BOTTOM, TOP = 0.12, 0.96, 0.12, 0.90
local function decode(path, xlo, xhi, ylo, yhi)
  local pic = { ppm = io.popen("pngtopnm " .. q(path)):read("a") }
  local w, h, maxval, header = pic.ppm:match("^P6%s+(%d+)%s+(%d+)%s+(%d+)%s()")
  tap.ok(tonumber(w) == W and tonumber(h) == H and tonumber(maxval) == 255,
    string.format("%s decoded: %sx%s (max %s) as --size asked", path, w, h, maxval))
  function pic.to_pixel(x, y)
    return (LEFT + (x - xlo) / (xhi - xlo) * (RIGHT - LEFT)) * W,
      H - (BOTTOM + (y - ylo) / (yhi - ylo) * (TOP - BOTTOM)) * H
  end
  function pic.rows_of(rgb, px) -- antialiasing blends the edges: near, not equal
    local found = {}
    for py = 0, H - 1 do
      local at = header + (py * W + px) * 3
      local r, g, b = pic.ppm:byte(at, at + 2)
      if math.abs(r - rgb[1]) + math.abs(g - rgb[2]) + math.abs(b - rgb[3]) < 60 then
        found[#found + 1] = py
      end
    end
    return found
  end
  return pic
end
local pic = decode(png, XLO, XHI, YLO, YHI)
-- The curve y = f(x) in colour rgb is where the data puts it at each x of xs (clear of the
-- key, top right): every pixel of its colour in the column within 4 pixels of the point,
-- and some there.
local function curve_at(p, name, rgb, xs, f)
  local good, where = 0, {}
  for _, x in ipairs(xs) do
    local px, py = p.to_pixel(x, f(x))
    local found = p.rows_of(rgb, math.floor(px + 0.5))
    local near = #found > 0
    for _, row in ipairs(found) do near = near and math.abs(row - py) <= 4 end
    if near then good = good + 1 end
    where[#where + 1] = string.format("x=%g: want row %.1f, got {%s}", x, py, table.concat(found, ","))
  end
  tap.is(good, #xs, name .. ": the curve's pixels where the data puts them at " .. #xs .. " points")
  if good ~= #xs then tap.diag(table.concat(where, "\n")) end
end
local xs = { 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5 }
local BLUE, RED = { 0x1f, 0x77, 0xb4 }, { 0xd6, 0x27, 0x28 } -- plot.c's first two colours
curve_at(pic, "line y = 2t (first colour)", BLUE, xs, function(x) return 2 * x end)
curve_at(pic, "wave y = 3 sin t + 5 (second colour)", RED, xs,
  function(x) return 3 * math.sin(x) + 5 end)
-- Nothing of the first colour where no data is: the plot's lower right corner.
local stray = 0
for px = math.floor(pic.to_pixel(6, 0)), math.floor(pic.to_pixel(9.5, 0)) do
  for _, row in ipairs(pic.rows_of(BLUE, px)) do
    local _, top = pic.to_pixel(0, 0)
    if row > top + 5 then stray = stray + 1 end
  end
end
tap.is(stray, 0, "no pixel of the line's colour below y = 0 on the right")

-- ---- the same bytes again; SVG and PDF ----------------------------------------------------
plot(q(csv) .. " --y line --y 'wa*' -o " .. q(tmp .. "/again.png") .. fixed)
tap.ok(read(tmp .. "/again.png") == data, "the same plot twice: the same PNG bytes")
for _, ext in ipairs({ "svg", "pdf" }) do
  local a, b = tmp .. "/fig1." .. ext, tmp .. "/fig2." .. ext
  code, out, err = plot(q(csv) .. " --y line,wave -o " .. q(a) .. fixed)
  tap.ok(code == 0, ext .. ": status 0")
  if code ~= 0 then tap.diag(out .. err) end
  os.execute("sleep 1") -- a time stamp would differ
  plot(q(csv) .. " --y line,wave -o " .. q(b) .. fixed)
  local one = read(a) or ""
  tap.ok(one ~= "" and one == read(b), ext .. ": the same bytes a second later")
  if ext == "svg" then
    tap.ok(one:find("^<%?xml") and one:find("<svg", 1, true), "svg: an XML file with <svg")
    tap.ok(one:find('width="800"', 1, true) and one:find('height="500"', 1, true),
      "svg: 800 x 500 as --size asked")
    tap.has(one, "wave", "svg: the legend names the series")
  else
    tap.is(one:sub(1, 5), "%PDF-", "pdf: %PDF- signature")
    tap.ok(one:find("/MediaBox [ 0 0 800 500 ]", 1, true), "pdf: an 800 x 500 pt page")
  end
end

-- ---- names shown as written; units; an incomplete run's file -------------------------------
local odd = cmd.write("odd.incomplete.csv",
  "# incomplete: step size too small at t = 0.5\nt,p_1'q@x^2\n0,1\n0.5,2\n")
local svg = tmp .. "/odd.svg"
code, out, err = plot(q(odd) .. " --y 'p_1*' -o " .. q(svg))
tap.ok(code == 0, "a name with _ ' @ ^ and an incomplete file: status 0")
if code ~= 0 then tap.diag(out .. err) end
local text = read(svg) or ""
tap.has(text, "<text>p_1'q@x^2</text>", "the name shown literally (no enhanced-text subscript)")
tap.has(text, "odd.incomplete.csv (incomplete run: step size too small at t = 0.5)",
  "the title says the run was incomplete and why")
tap.has(out, "(an incomplete run's)", "so does the command's line")
tap.has(text, "<text>t</text>", "x axis labelled t")

local one = cmd.write("one.csv", "t,a\n0,1\n")
code, out, err = plot(q(one) .. " --y a -o " .. q(tmp .. "/one.svg"))
-- gnuplot widens the empty ranges around the point: it sits in the plot area's centre
tap.ok(code == 0 and (read(tmp .. "/one.svg") or ""):find(
  "translate(432.00,245.00) scale(5.62)' color='rgb( 31, 119, 180)'", 1, true),
  "one row: drawn as a point in the first colour, in the plot's centre")

-- ---- errors ---------------------------------------------------------------------------------
local function fails(args, status, part, name, env)
  local c2, o2, e2 = cmd.sh((env or "") .. q(cmd.exe) .. " plot " .. args)
  tap.ok(c2 == status and e2:find(part, 1, true), name .. " (status " .. tostring(c2) .. ")")
  if not e2:find(part, 1, true) then tap.diag(o2 .. e2) end
end
fails(q(csv) .. " --y lnie -o " .. q(tmp .. "/x.png"), 1,
  "--y 'lnie' matches no column of '" .. csv .. "' (did you mean 'line'?)", "a bad --y glob")
fails(q(csv) .. " --y line --x time -o " .. q(tmp .. "/x.png"), 1,
  "--x 'time' matches no column", "a bad --x")
fails(q(csv) .. " --y line --x '*e' -o " .. q(tmp .. "/x.png"), 1,
  "--x '*e' matches 2 columns", "an --x of two columns")
fails(q(csv) .. " --y line -o " .. q(tmp .. "/no/such/dir/x.png"), 1,
  "cannot write '" .. tmp .. "/no/such/dir/x.png': No such file or directory", "an unwritable -o")
fails(q(csv) .. " --y line -o " .. q(tmp .. "/x.jpg"), 2,
  "unknown picture type '.jpg' (.png, .svg or .pdf)", "an unknown extension")
fails(q(tmp .. "/none.csv") .. " --y line -o " .. q(tmp .. "/x.png"), 1,
  "cannot read '" .. tmp .. "/none.csv'", "a missing file")
fails(q(csv) .. " -o " .. q(tmp .. "/x.png"), 2, "needs --y GLOBS", "no --y")
fails(q(csv) .. " --y line --t-end 3", 2, "unknown argument '--t-end' (run's options go with a SCRIPT.lua)",
  "a run option with a CSV")
fails(q(csv) .. " --y line --size 10x10", 2, "--size expects WxH", "a bad --size")
fails(q(csv) .. " --y line --xrange 3:1", 2, "--xrange expects LO:HI with LO < HI", "a bad --xrange")
local bad_row = cmd.write("bad.csv", "t,a\n0,1\n1,x\n")
fails(q(bad_row) .. " --y a -o " .. q(tmp .. "/x.png"), 1,
  "'" .. bad_row .. "' line 3: 'x' in column 'a' is not a number", "a bad number, with its line")
local short = cmd.write("short.csv", "t,a\n0,1\n1\n")
fails(q(short) .. " --y a -o " .. q(tmp .. "/x.png"), 1, "line 3: 1 fields where the header names 2",
  "a short row")
local nans = cmd.write("nans.csv", "t,a,b\n0,nan,1\n1,nan,2\n")
fails(q(nans) .. " --y a,b -o " .. q(tmp .. "/x.png"), 1,
  "'a' of '" .. nans .. "' has no finite value to draw", "a series of NaN only")
fails(q(csv) .. " --y line -o " .. q(tmp .. "/x.png"), 1,
  "install Debian's gnuplot-nox", "no gnuplot: says what to install",
  "JOINERY_GNUPLOT=/nonexistent/gnuplot ")
fails(q(csv) .. " --y line -o " .. q(tmp .. "/x.png"), 1, "false failed (exit status 1)",
  "gnuplot failing: its exit status", "JOINERY_GNUPLOT=false ")
tap.ok(not tap.exists(tmp .. "/x.png"), "no picture after the failures")
code, out = plot("--help")
tap.ok(code == 0 and out:find("--y GLOBS", 1, true), "plot --help: status 0, the options")

-- ---- examples/four_bar.lua in one command ----------------------------------------------------
local fb = tmp .. "/four_bar.png"
code, out, err = cmd.sh("cd " .. q(tmp) .. " && " .. q(cmd.exe) .. " plot " ..
  q(cmd.root .. "/examples/four_bar.lua") .. " --y 'crank.theta' -o " .. q(fb) ..
  " --t-end 1 --quiet --size 800x500 --xrange 0:1 --yrange -3:3")
tap.ok(code == 0, "plot examples/four_bar.lua: runs the model and plots, status 0")
if code ~= 0 then tap.diag(out .. err) end
tap.has(out, "columns to four_bar.csv", "the run's CSV written as joinery run writes it")
tap.has(out, "wrote " .. fb .. ": 1 series of", "and the picture")
tap.is((read(fb) or ""):sub(1, 8), "\137PNG\r\n\26\n", "four_bar.png is a PNG")
tap.ok(tap.exists(tmp .. "/four_bar.csv"), "four_bar.csv left beside it")
-- crank.theta where four_bar.csv puts it, at rows t = 0.05, 0.15, ..., 0.75
local theta, col = {}, nil
for line in io.lines(tmp .. "/four_bar.csv") do
  if not col then
    local k = 0
    for name in line:gmatch("[^,]+") do
      k = k + 1
      if name == "crank.theta" then col = k end
    end
  else
    local fields = {}
    for v in line:gmatch("[^,]+") do fields[#fields + 1] = tonumber(v) end
    theta[string.format("%.2f", fields[1])] = fields[col]
  end
end
local fb_xs = { 0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75 }
curve_at(decode(fb, 0, 1, -3, 3), "four_bar crank.theta", BLUE, fb_xs,
  function(t) return theta[string.format("%.2f", t)] end)

-- ---- a model whose run fails: the rows it kept are plotted ------------------------------------
-- A block on a spring coming to rest on Coulomb friction (t_failures: the integrator gives up
-- at t = 2.51).
cmd.write("slide.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local wall = sys:add("ground", "wall", { dim = 3 })
local block = sys:add("mass", "block", { dim = 3, m = 1, init = { x = 0.5, y = 0 } })
sys:add("guide", "floor", { dim = 3, nx = 0, ny = 1, d = 0, mu = 0.3, pos = block.pos })
sys:add("spring", "spring", { dim = 3, k = 100, L = 0, a = wall.pos, b = block.pos })
sys:settings { t_end = 5, dt_out = 0.01 }
return sys
]])
code, out, err = cmd.sh("cd " .. q(tmp) .. " && " .. q(cmd.exe) .. " plot slide.lua --y block.x " ..
  "-o slide.svg --quiet")
tap.is(code, 1, "a failed run: the run's status")
tap.has(err, "drawing the rows the failed run kept in slide.incomplete.csv", "says what it plots")
tap.has(read(tmp .. "/slide.svg") or "", "slide.incomplete.csv (incomplete run: integrator failure at t = 2.51",
  "the plot of the kept rows, its title saying why the run stopped")

-- A script that fails before simulating: an earlier run's kept rows are not this run's.
cmd.write("broken.lua", "error('boom')\n")
cmd.write("broken.incomplete.csv", "# incomplete: an earlier run\nt,a\n0,1\n")
code, out, err = cmd.sh("cd " .. q(tmp) .. " && " .. q(cmd.exe) .. " plot broken.lua --y a -o b.svg")
tap.ok(code == 1 and err:find("boom", 1, true) and not err:find("drawing the rows", 1, true)
  and not tap.exists(tmp .. "/b.svg"), "a script's error: its status, no plot of an earlier run's rows")

os.execute("rm -rf " .. q(tmp))
tap.done()
