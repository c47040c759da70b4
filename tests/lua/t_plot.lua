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

-- The PNG decoded to a binary PPM (P6).
local ppm = io.popen("pngtopnm " .. q(png)):read("a")
local w, h, maxval, header = ppm:match("^P6%s+(%d+)%s+(%d+)%s+(%d+)%s()")
tap.ok(tonumber(w) == W and tonumber(h) == H and tonumber(maxval) == 255,
  string.format("decoded: %sx%s (max %s) as --size asked", w, h, maxval))
local function pixel(px, py) -- 0-based from the top left
  local at = header + (py * W + px) * 3
  return ppm:byte(at, at + 2)
end
-- plot.c's plot area: fractions of the canvas from the left and the bottom.
local LEFT, RIGHT, BOTTOM, TOP = 0.12, 0.96, 0.12, 0.90
local function to_pixel(x, y)
  local px = (LEFT + (x - XLO) / (XHI - XLO) * (RIGHT - LEFT)) * W
  local py = H - (BOTTOM + (y - YLO) / (YHI - YLO) * (TOP - BOTTOM)) * H
  return px, py
end
-- The rows of pixel column px whose colour is near rgb (antialiasing blends the edges).
local function rows_of(rgb, px)
  local found = {}
  for py = 0, H - 1 do
    local r, g, b = pixel(px, py)
    if math.abs(r - rgb[1]) + math.abs(g - rgb[2]) + math.abs(b - rgb[3]) < 60 then
      found[#found + 1] = py
    end
  end
  return found
end
-- The curve f in colour rgb is where the data puts it at x = 0.5, 1.5, ..., 7.5 (the key,
-- top right, stays clear): every pixel of its colour in the column within 4 pixels of
-- the point, and some there.
local function curve_at(name, rgb, f)
  local good, where = 0, {}
  for x = 0.5, 7.5, 1 do
    local px, py = to_pixel(x, f(x))
    local found = rows_of(rgb, math.floor(px + 0.5))
    local near = #found > 0
    for _, row in ipairs(found) do near = near and math.abs(row - py) <= 4 end
    if near then good = good + 1 end
    where[#where + 1] = string.format("x=%g: want row %.1f, got {%s}", x, py, table.concat(found, ","))
  end
  tap.is(good, 8, name .. ": the curve's pixels where the data puts them at 8 points")
  if good ~= 8 then tap.diag(table.concat(where, "\n")) end
end
curve_at("line y = 2t (first colour #1f77b4)", { 0x1f, 0x77, 0xb4 }, function(x) return 2 * x end)
curve_at("wave y = 3 sin t + 5 (second colour #d62728)", { 0xd6, 0x27, 0x28 },
  function(x) return 3 * math.sin(x) + 5 end)
-- Nothing of the first colour where no data is: the plot's lower right corner.
local stray = 0
for px = math.floor(to_pixel(6, 0)), math.floor(to_pixel(9.5, 0)) do
  for _, row in ipairs(rows_of({ 0x1f, 0x77, 0xb4 }, px)) do
    local _, top = to_pixel(0, 0)
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
fails(q(csv) .. " --y line --size 10x10", 2, "--size expects WxH", "a bad --size")
fails(q(csv) .. " --y line --xrange 3:1", 2, "--xrange expects LO:HI with LO < HI", "a bad --xrange")
local bad_row = cmd.write("bad.csv", "t,a\n0,1\n1,x\n")
fails(q(bad_row) .. " --y a -o " .. q(tmp .. "/x.png"), 1,
  "'" .. bad_row .. "' line 3: 'x' in column 'a' is not a number", "a bad number, with its line")
local short = cmd.write("short.csv", "t,a\n0,1\n1\n")
fails(q(short) .. " --y a -o " .. q(tmp .. "/x.png"), 1, "line 3: 1 fields where the header names 2",
  "a short row")
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
  " --t-end 1 --quiet --size 800x500")
tap.ok(code == 0, "plot examples/four_bar.lua: runs the model and plots, status 0")
if code ~= 0 then tap.diag(out .. err) end
tap.has(out, "columns to four_bar.csv", "the run's CSV written as joinery run writes it")
tap.has(out, "wrote " .. fb .. ": 1 series of", "and the picture")
tap.is((read(fb) or ""):sub(1, 8), "\137PNG\r\n\26\n", "four_bar.png is a PNG")
tap.ok(tap.exists(tmp .. "/four_bar.csv"), "four_bar.csv left beside it")

os.execute("rm -rf " .. q(tmp))
tap.done()
