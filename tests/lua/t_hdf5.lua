-- tests/lua/t_hdf5.lua — `joinery run --out run.h5` (engine/src/io_hdf5.c), read back by the
-- tools a user has: h5py (Debian's python3) and h5dump (hdf5-tools). Suite 'tools'.
--   - the four-bar with --every 3 to CSV and to HDF5: h5py finds the CSV header as the
--     table's 'columns', every number equal to the CSV's bit for bit (the CSV is written
--     round-trip exact), units, a chunked, shuffled, deflated, extensible table, the
--     settings and the report as attributes; h5dump reads it, and its numbers printed with
--     %.17g equal the CSV's too;
--   - a run whose event action raises an error: exit status 1, no file at --out, the rows
--     so far in a valid <stem>.incomplete.h5 that h5py and h5dump read, equal to the first
--     rows of the complete run bit for bit, with the attribute 'incomplete' naming the
--     error; the message says where the rows went; no temporary file is left;
--   - SIGINT on a rerun over a good file: exit status 130, that file left as it was, the
--     rows so far in <stem>.incomplete.h5 marked "interrupted by SIGINT at t = ...";
--   - unwritable outputs (a missing directory, /dev/null) are errors naming the file;
--   - sys:simulate{ out = "x.h5" } from a script writes the same file format;
--   - a model of 6,008 channels: their names (96 KB) fit as an attribute (the original file
--     format refused any over 64 KB: "object header message is too large");
--   - joinery plot reads an .h5 (labels with its units: "energy [J]", "t [s]") and an
--     .incomplete.h5 (says so); joinery animate's page from an .h5 is the page from the CSV;
--   - joinery.read_h5 gives back the complete file's names, units and every number as the
--     CSV has them, only the columns asked for, the incomplete file's mark; nil and a
--     message for a missing file; an error for an unknown name; refused in the sandbox.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local cmd = tap.command()
local quote, sh, run, tmp = cmd.quote, cmd.sh, cmd.run, cmd.tmp
local python = "/usr/bin/python3"
local checker = cmd.root .. "/tests/lua/hdf5_check.py"

-- 5 (complete) + 1 h5dump, 4 (failure) + 3, 2 SIGINT, 4 bad outputs, 1 simulate, 1 wide, 2 plot, 1 animate,
-- 6 read_h5
tap.plan(6 + 7 + 2 + 4 + 1 + 1 + 2 + 1 + 6)

local read = tap.read

-- The checker's lines as tests.
local function checked(args)
  local code, out, err = sh(python .. " " .. quote(checker) .. " " .. args)
  local count = 0
  for status, what in out:gmatch("(%u+) ([^\n]*)") do
    tap.ok(status == "PASS", "h5py: " .. what)
    count = count + 1
  end
  if code ~= 0 then tap.diag("hdf5_check.py: exit " .. tostring(code) .. "\n" .. err) end
  return count
end

-- The numbers of the dataset /table as h5dump prints them with %.17g, in row order.
local function dumped(path)
  local code, out, err = sh("h5dump -d /table -A 0 -m '%.17g' -y -w 0 " .. quote(path))
  if code ~= 0 then
    tap.diag("h5dump: " .. err)
    return nil
  end
  local data = out:match("DATA%s*{(.*)}")
  local values = {}
  for x in (data or ""):gmatch("[^,%s]+") do values[#values + 1] = tonumber(x) end
  return values
end

-- The CSV's numbers in row order (comment lines and the header skipped), the first
-- `count` of them when given.
local function csv_values(path, count)
  local values = {}
  for line in io.lines(path) do
    if not line:find("^#") and not line:find("^t,") then
      for x in line:gmatch("[^,]+") do values[#values + 1] = tonumber(x) end
      if count and #values >= count then break end
    end
  end
  return values
end

local function same(a, b)
  if not a or not b or #a ~= #b or #a == 0 then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end

local partial_files = cmd.partial_files

-- ---- a complete run ------------------------------------------------------------------------
do
  local model = cmd.root .. "/examples/four_bar.lua"
  local flags = " --t-end 2 --dt-out 0.001 --every 3 --method bdf"
  local c1, _, e1 = run("run " .. quote(model) .. " --out " .. quote(tmp .. "/fb.csv") .. flags)
  local c2, out, e2 = run("run " .. quote(model) .. " --out " .. quote(tmp .. "/fb.h5") .. flags)
  if c1 ~= 0 or c2 ~= 0 then tap.diag(e1 .. e2) end
  local n = checked("complete " .. quote(tmp .. "/fb.csv") .. " " .. quote(tmp .. "/fb.h5")
    .. " bdf 3")
  if n ~= 5 then tap.ok(false, "h5py: 5 checks of the complete file (ran " .. n .. ")") end
  local values = dumped(tmp .. "/fb.h5")
  tap.ok(out:find("to " .. tmp .. "/fb.h5", 1, true) and same(values, csv_values(tmp .. "/fb.csv")),
    "h5dump reads the table; its numbers (%.17g) equal the CSV's (" .. #(values or {}) .. ")")
end

-- ---- a failed run ----------------------------------------------------------------------
do
  local model = cmd.write("fails.lua", [[
local joinery = require "joinery"
local fail = arg[1] == "fail"
local sys = joinery.system { gravity = { 0, 0, 0 } }
sys:add("mass", "m", { dim = 1, m = 1, init = { x = 0 }, vel = { x = 1 } })
sys:event { name = "wall", when = function(s) return s["m.x"] - 0.5 end,
  action = function(s) if fail then error("the wall is not there") end end }
return sys
]])
  local flags = " --t-end 1 --dt-out 0.01"
  local c1, _, e1 = run("run " .. quote(model) .. " --out " .. quote(tmp .. "/f.csv") .. flags)
  local out = tmp .. "/f.h5"
  local code, _, err = run("run " .. quote(model) .. " --out " .. quote(out) .. flags .. " -- fail")
  if c1 ~= 0 then tap.diag(e1) end
  tap.ok(code == 1 and err:find("the wall is not there", 1, true)
    and err:find("before the failure are in '" .. tmp .. "/f.incomplete.h5' (marked by the file "
      .. "attribute 'incomplete'); '" .. out .. "' was not written", 1, true),
    "an event action's error: exit status 1, the message says where the rows went")
  tap.diag(err)
  tap.ok(not tap.exists(out) and partial_files() == "", "no file at --out, no temporary file")
  local n = checked("incomplete " .. quote(tmp .. "/f.csv") .. " "
    .. quote(tmp .. "/f.incomplete.h5")
    .. " " .. quote("the wall is not there"))
  if n ~= 4 then tap.ok(false, "h5py: 4 checks of the incomplete file (ran " .. n .. ")") end
  local values = dumped(tmp .. "/f.incomplete.h5")
  local _, attr = sh("h5dump -a /incomplete " .. quote(tmp .. "/f.incomplete.h5"))
  tap.ok(values and #values > 0 and same(values, csv_values(tmp .. "/f.csv", #values))
    and attr:find("the wall is not there", 1, true),
    "h5dump reads the incomplete file: its rows, and the attribute 'incomplete'")
end

-- ---- SIGINT ---------------------------------------------------------------------------------
do
  local model, out = tmp .. "/fails.lua", tmp .. "/s.h5"
  local good_code = run("run " .. quote(model) .. " --t-end 0.1 --out " .. quote(out))
  local good = read(out)
  -- 1e6 rows, signalled 0.2 s after its temporary file appeared
  local _, status, err = sh(string.format("(%s run %s --t-end 1 --dt-out 1e-6 --out %s >/dev/null "
    .. "& pid=$!; i=0; while [ $i -lt 1200 ] && ! ls %s/ | grep -q 's\\.h5\\..*\\.partial$'; "
    .. "do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -INT $pid; wait $pid; echo $?)",
    quote(cmd.exe), quote(model), quote(out), quote(tmp)))
  tap.ok(good_code == 0 and tonumber(status) == 130 and err:find("interrupted by SIGINT", 1, true)
    and read(out) == good and partial_files() == "",
    "SIGINT: exit status 130, the earlier good file left as it was, no temporary file")
  tap.diag(err)
  local kept = require("joinery").read_h5(tmp .. "/s.incomplete.h5", { "t" })
  tap.ok(kept and kept.rows > 0 and kept.incomplete:find("^interrupted by SIGINT at t = "),
    "SIGINT: the rows so far in s.incomplete.h5, marked 'interrupted by SIGINT at t = ...'")
end

-- ---- outputs that cannot be written --------------------------------------------------------
do
  local model = cmd.root .. "/examples/pendulum.lua"
  local missing = tmp .. "/no/such/dir/run.h5"
  local code, _, err = run("run " .. quote(model) .. " --t-end 0.1 --out " .. quote(missing))
  tap.ok(code == 1 and err:find("cannot write output file '" .. missing
    .. "': No such file or directory", 1, true), "a missing directory: exit 1, naming the file")
  tap.diag(err)
  code, _, err = run("run " .. quote(model) .. " --t-end 0.1 --out /proc/joinery-run.h5")
  tap.ok(code == 1 and err:find("cannot write output file '/proc/joinery-run.h5': ", 1, true),
    "a directory where no file can be created (/proc, even for root): exit 1, named")
  tap.diag(err)
  local link = tmp .. "/dev.h5"
  sh("ln -s /dev/null " .. quote(link))
  code, _, err = run("run " .. quote(model) .. " --t-end 0.1 --out " .. quote(link))
  tap.ok(code == 1 and err:find("cannot write output file '" .. link
    .. "': HDF5 output needs a regular file", 1, true),
    "a device: exit 1, HDF5 needs a regular file")
  tap.diag(err)
  tap.ok(read("/dev/null") == "", "... and the device is left alone")
end

-- ---- sys:simulate{ out = "x.h5" } -----------------------------------------------------------
do
  local joinery = require "joinery"
  local sys = dofile(cmd.root .. "/examples/pendulum.lua")
  local res = sys:simulate { t_end = 0.2, out = tmp .. "/sim.h5" }
  local code, out = sh("h5dump -H " .. quote(tmp .. "/sim.h5"))
  tap.ok(joinery and res.out == tmp .. "/sim.h5" and code == 0
    and out:find('DATASET "table"', 1, true), "sys:simulate{ out = 'x.h5' } writes an HDF5 table")
end

-- ---- a wide model ----------------------------------------------------------------------------
do
  local model = cmd.write("wide.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, 0, 0 } }
for i = 1, 3000 do sys:add("mass", "m" .. i, { dim = 1, m = 1, init = { x = i } }) end
return sys
]])
  local code, _, err = run("run " .. quote(model) .. " --t-end 0.02 --out " .. quote(tmp .. "/w.h5"))
  local res = code == 0 and require("joinery").read_h5(tmp .. "/w.h5", { "m3000.x" })
  tap.ok(res and res.rows == 3 and res["m3000.x"][3] == 3000,
    "3000 masses, 6,008 channels: written, and read back")
  if code ~= 0 then tap.diag(err) end
end

-- ---- joinery plot ----------------------------------------------------------------------------
do
  local svg = tmp .. "/fb.svg"
  local code, out, err = run("plot " .. quote(tmp .. "/fb.h5") .. " --y 'energy,crank.theta' -o "
    .. quote(svg))
  local text = read(svg) or ""
  tap.ok(code == 0 and out:find("2 series of 667 rows", 1, true)
    and text:find("energy [J]", 1, true) and text:find("t [s]", 1, true),
    "joinery plot run.h5: drawn, labelled with the file's units")
  if code ~= 0 then tap.diag(err) end
  code, out, err = run("plot " .. quote(tmp .. "/f.incomplete.h5") .. " --y m.x -o " .. quote(svg))
  tap.ok(code == 0 and out:find("(an incomplete run's)", 1, true),
    "joinery plot of an .incomplete.h5: drawn, and says the run was incomplete")
  if code ~= 0 then tap.diag(err) end
end

-- ---- joinery animate -------------------------------------------------------------------------
do
  local model = quote(cmd.root .. "/examples/four_bar.lua")
  local c1, _, e1 = run("animate " .. model .. " " .. quote(tmp .. "/fb.h5") .. " -o " .. quote(tmp .. "/h5.html"))
  local c2, _, e2 = run("animate " .. model .. " " .. quote(tmp .. "/fb.csv") .. " -o " .. quote(tmp .. "/csv.html"))
  local h5page, csvpage = read(tmp .. "/h5.html"), read(tmp .. "/csv.html")
  tap.ok(c1 == 0 and c2 == 0 and h5page and #h5page > 0 and h5page == csvpage,
    "joinery animate of run.h5: the page of the same run's CSV, byte for byte")
  if c1 ~= 0 or c2 ~= 0 then tap.diag(e1 .. e2) end
end

-- ---- joinery.read_h5 ---------------------------------------------------------------------
do
  local joinery = require "joinery"
  local res = joinery.read_h5(tmp .. "/fb.h5")
  local header = io.lines(tmp .. "/fb.csv")()
  local names, values = {}, {}
  for r = 1, res and res.rows or 0 do
    for _, name in ipairs(res.channels) do values[#values + 1] = res[name][r] end
  end
  for name in header:gmatch("[^,]+") do names[#names + 1] = name end
  tap.ok(res and table.concat(res.channels, ",") == header and res.rows == 667
    and same(values, csv_values(tmp .. "/fb.csv")) and res.incomplete == nil,
    "read_h5: the CSV's names and every number, 667 rows, not incomplete")
  tap.ok(res and res.units.t == "s" and res.units.energy == "J" and res.units[names[2]] == ""
    and type(res.report) == "string", "read_h5: units (t s, energy J, a coordinate \"\"), report")
  local some = joinery.read_h5(tmp .. "/fb.h5", { "energy", "t" })
  tap.ok(some and table.concat(some.channels, ",") == "energy,t" and #some.energy == 667
    and some.t[667] == res.t[667] and some[names[2]] == nil, "read_h5 with names: only those")
  local inc = joinery.read_h5(tmp .. "/f.incomplete.h5")
  tap.ok(inc and inc.incomplete and inc.incomplete:find("the wall is not there", 1, true)
    and inc.rows > 0, "read_h5 of the incomplete file: res.incomplete says why")
  local none, msg = joinery.read_h5(tmp .. "/none.h5")
  local ok, err = pcall(joinery.read_h5, tmp .. "/fb.h5", { "t", "nothing" })
  tap.ok(none == nil and msg:find(tmp .. "/none.h5", 1, true) and not ok
    and tostring(err):find("has no column 'nothing'", 1, true),
    "read_h5: a missing file nil and a message naming it; an unknown name an error")
  local script = cmd.write("reads.lua",
    "return require('joinery').read_h5(" .. string.format("%q", tmp .. "/fb.h5") .. ")\n")
  local code, _, e = sh(quote(cmd.exe) .. " " .. quote(script))
  tap.ok(code ~= 0 and e:find("joinery.read_h5 is disabled for model scripts", 1, true),
    "read_h5 is refused in the sandbox")
  tap.diag(e)
end

os.execute("rm -rf " .. quote(tmp))
tap.done()
