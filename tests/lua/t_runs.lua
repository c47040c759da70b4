-- Running and writing output under abuse (issue 14, defects 1, 3, 4, 5, 6, 7):
--   - sim:close(), sim:advance, sim:set_state and sim:channels called on a simulation from
--     inside its own step (a Lua part's force, a sys:channel function) are refused with a
--     message naming the call; the simulation stays usable (the ASan build catches a
--     use-after-free here, the plain build exited 139);
--   - a t_end and dt_out that would give more than 1e8 output rows are refused before the
--     run with the estimate (--dt-out 1e-300 and 1e-18 "wrote 0 rows" and exited 0);
--   - two runs with the same --out each write a whole file (they shared "<out>.partial");
--   - SIGINT / SIGTERM stop `joinery run` (and a `joinery SCRIPT` run writing a file) with status 130 / 143, naming the signal, keep the
--     rows so far in <stem>.incomplete.csv and leave no temporary file;
--   - joinery run streams its rows: 1e6 rows raise the peak memory by less than 50 MB
--     (it kept every row: 94 MB at the last of 1e6 rows of 10 channels, before the Lua
--     arrays were even built);
--   - a write error names the file and the system's reason (a file size limit: "File too
--     large"; /dev/full: "No space left on device").
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"
-- 3 calls from inside a step (2 checks each), 2 single checks, 3 too many rows, 4 for two
-- runs at once, 2 signals (3 checks each), 7 single checks (peak memory and /dev/full skip
-- where the system has none)
tap.plan(3 * 2 + 2 + 3 + 4 + 2 * 3 + 7)

local cmd = tap.command()
local quote, sh, run = cmd.quote, cmd.sh, cmd.run
local tmp = cmd.tmp
local exists = tap.exists

local write = cmd.write

local read = tap.read

local partial_files = cmd.partial_files

-- ---- 1. closing or stepping a simulation from inside its own step ------------------------
local sim -- reached by the part's force through this upvalue
local action = "close"
joinery.part_type {
  name = "runs_closer",
  doc = "1-D oscillator whose force calls back into the simulation running it",
  params = { { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" } },
  coords = { "x" },
  terminals = { { name = "pos", coords = { "x" } } },
  mass = function(q, t, p) return { { p.m } } end,
  force = function(q, v, t, p)
    if sim and t > 0.05 then
      if action == "close" then sim:close()
      elseif action == "advance" then sim:advance(0.9)
      else sim:set_state(0, { 1 }, { 0 }) end
    end
    return { -q.x }
  end,
}
local osc = joinery.system()
osc:add("runs_closer", "c", { init = { x = 1 } })
local osc_model = osc:compile()
for _, what in ipairs { "close", "advance", "set_state" } do
  action = what
  sim = osc_model:sim { t_end = 1 }
  local ok, err = pcall(sim.advance, sim, 0.5)
  local name = what == "close" and "sim:close()" or "sim:" .. what
  tap.ok(not ok and tostring(err):find(name .. " called on a simulation from inside its own step", 1, true),
    what .. " from the simulation's own part function: refused, naming " .. name)
  tap.diag(tostring(err))
  local s = sim
  sim = nil
  tap.ok(tostring(s):find("joinery.Sim (t = 0", 1, true) and pcall(s.close, s),
    what .. ": the simulation is still open afterwards and closes normally")
end

local chan = joinery.system { gravity = { 0, 0, 0 } }
chan:add("mass", "m", { dim = 1, m = 1, init = { x = 0 }, vel = { x = 1 } })
local chan_sim
chan:channel("closes", function(s)
  if chan_sim then chan_sim:close() end
  return s.t
end)
chan_sim = chan:compile():sim { t_end = 1 }
local ok, err = pcall(chan_sim.channels, chan_sim)
tap.ok(not ok and tostring(err):find("sim:close() called on a simulation from inside", 1, true),
  "sim:close() from a sys:channel function during sim:channels: refused")
tap.diag(tostring(err))
local s = chan_sim
chan_sim = nil
tap.ok(s:advance(0.5) == 0.5 and s:channels().closes == 0.5,
  "the simulation goes on after the refused close")
s:close()

-- ---- models for the CLI runs ---------------------------------------------------------------
-- A free mass: 10 channels, cheap rows (no constraints to project on).
local free = write("free.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, 0, 0 } }
sys:add("mass", "m", { dim = 1, m = 1, init = { x = 0 }, vel = { x = 1 } })
return sys
]])
local pendulum = cmd.root .. "/examples/pendulum.lua"

-- ---- 3. too many output rows --------------------------------------------------------------
for _, case in ipairs {
  { "--dt-out 1e-300", "1e+301 output rows" },
  { "--dt-out 1e-18", "1e+19 output rows" },
  { "--t-end 1e9", "1e+11 output rows" },
} do
  local out = tmp .. "/rows.csv"
  local code, _, err = run("run " .. quote(free) .. " --out " .. quote(out) .. " " .. case[1])
  tap.ok(code == 1 and err:find(case[2], 1, true) and err:find("more than the limit of 1e+08", 1, true)
    and err:find("make dt_out larger than", 1, true) and not exists(out)
    and partial_files() == "",
    case[1] .. ": refused before the run with the estimate; no file written")
  tap.diag(err)
end

-- ---- 4. two runs with the same --out ------------------------------------------------------
do
  local out = tmp .. "/shared.csv"
  -- The first (1e6 rows, about 0.7 s alone; 3e5 rows took 0.2 s, and on a machine loaded
  -- with other jobs the second once finished after it) is under way, its temporary file
  -- made, before the second (1e3 rows, 0.04 s) starts, so the two overlap however the
  -- machine schedules them, and the second finishes first. (Started side by side, a loaded machine once ran them one
  -- after the other, and neither warned.)
  local both = string.format("%s run %s --out %s --t-end 10 --dt-out 1e-5 >%s 2>%s & a=$!; "
    .. "i=0; while [ $i -lt 1200 ] && ! ls %s/ | grep -q 'shared\\.csv\\..*\\.partial$'; "
    .. "do sleep 0.05; i=$((i+1)); done; "
    .. "%s run %s --out %s --t-end 0.1 --dt-out 1e-4 >%s 2>%s & b=$!; "
    .. "wait $a; x=$?; wait $b; echo $x $?",
    quote(cmd.exe), quote(free), quote(out), quote(tmp .. "/a.out"), quote(tmp .. "/a.err"),
    quote(tmp),
    quote(cmd.exe), quote(pendulum), quote(out), quote(tmp .. "/b.out"), quote(tmp .. "/b.err"))
  local _, status = sh(both)
  tap.is(status, "0 0\n", "two runs with the same --out at once: both succeed")
  -- The one that finished first saw the other's temporary file (or its file replaced): its
  -- "wrote ..." line says its file will not stay; the last one's says nothing more.
  local said = { read(tmp .. "/a.out") or "", read(tmp .. "/b.out") or "" }
  local warned = 0
  for _, text in ipairs(said) do
    if text:find("to " .. out .. " (but another run with the same output ", 1, true) then
      warned = warned + 1
    end
  end
  local second = said[2]:find("to " .. out .. " (but another run with the same output ", 1, true)
  tap.ok(warned == 1 and second, "exactly one of the two, the one that finished first, says "
    .. "its file is (or will be) replaced by the other run's")
  tap.diag(said[1]:match("wrote[^\n]*") or "a: no 'wrote' line")
  tap.diag(said[2]:match("wrote[^\n]*") or "b: no 'wrote' line")
  local header, width, rows, bad = nil, nil, 0, 0
  for line in (read(out) or ""):gmatch("[^\n]+") do
    local cols = select(2, line:gsub(",", ",")) + 1
    if not header then header, width = line, cols
    else
      rows = rows + 1
      if cols ~= width then bad = bad + 1 end
    end
  end
  tap.ok(header and bad == 0 and rows == 1000001,
    "the file is one whole run, the last to finish: 1000001 rows, each as wide as its header")
  tap.diag(string.format("%d columns, %d rows, %d of another width", width or 0, rows, bad))
  tap.is(partial_files(), "", "no temporary file is left")
end

-- Runs `command` in the background and sends it `signal` once its temporary file
-- <tmp>/<stem>.csv.*.partial exists (the run has started; at most 60 s later), `pause` s
-- after that; returns sh's results, the command's exit status on stdout.
local function signal_when_started(command, stem, signal, pause)
  return sh(string.format("(%s >/dev/null & pid=$!; i=0; while [ $i -lt 1200 ] && ! ls %s/ "
    .. "| grep -q '%s\\.csv\\..*\\.partial$'; do sleep 0.05; i=$((i+1)); done; sleep %s; "
    .. "kill -%s $pid; wait $pid; echo $?)", command, quote(tmp), stem, pause, signal))
end

-- ---- 7. SIGINT and SIGTERM -----------------------------------------------------------------
-- A rerun over a good result: the interrupted run leaves that result as it was.
for _, sig in ipairs { { "INT", 130 }, { "TERM", 143 } } do
  local out = tmp .. "/sig.csv"
  local good_code = run("run " .. quote(free) .. " --out " .. quote(out) .. " --t-end 0.1")
  local good = read(out)
  local _, status, err = signal_when_started(quote(cmd.exe) .. " run " .. quote(free) .. " --out "
    .. quote(out) .. " --t-end 1 --dt-out 1e-6", "sig", sig[1], 0.2)
  local kept = read(tmp .. "/sig.incomplete.csv") or ""
  tap.ok(tonumber(status) == sig[2] and err:find("interrupted by SIG" .. sig[1], 1, true),
    "SIG" .. sig[1] .. ": exit status " .. sig[2] .. " and the message names the signal")
  tap.diag(err)
  tap.ok(good_code == 0 and good and read(out) == good and partial_files() == ""
    and kept:find("^# incomplete: interrupted by SIG" .. sig[1] .. " at t = ")
    and kept:find("\nt,m.x,", 1, true),
    "SIG" .. sig[1] .. ": the earlier good output left as it was, no temporary file, the "
    .. "rows so far in sig.incomplete.csv under '# incomplete: interrupted by SIG" .. sig[1] .. "'")
  tap.has(err, "'" .. out .. "' was not written (the file of that name is an earlier run's, "
    .. "left as it was)", "SIG" .. sig[1] .. ": and the message says whose that file is")
  os.remove(tmp .. "/sig.incomplete.csv")
  os.remove(out)
end

-- A run killed by SIGKILL cannot remove its temporary file: the next run with the same
-- output removes it (and never one of a process still running: t_io_csv).
do
  local out = tmp .. "/killed.csv"
  local _, status = signal_when_started(quote(cmd.exe) .. " run " .. quote(free) .. " --out "
    .. quote(out) .. " --t-end 1 --dt-out 1e-6", "killed", "KILL", 0)
  local left = partial_files()
  local code = run("run " .. quote(free) .. " --out " .. quote(out) .. " --t-end 0.1")
  tap.ok(tonumber(status) == 137 and left:find("killed.csv.", 1, true) and code == 0
    and partial_files() == "" and exists(out),
    "SIGKILL leaves a .partial; the next run with the same output removes it")
  tap.diag("left by SIGKILL: " .. left)
  os.remove(out)
end

-- `joinery --trust SCRIPT`: a script's own sys:simulate{out = ...} stops the same way.
do
  local script = write("sig_script.lua", string.format([[
local sys = dofile(%q)
sys:simulate { out = %q, t_end = 1, dt_out = 1e-6 }
]], free, tmp .. "/sigs.csv"))
  local _, status, err = signal_when_started(quote(cmd.exe) .. " --trust " .. quote(script), "sigs",
    "TERM", 0.2)
  tap.ok(tonumber(status) == 143 and err:find("interrupted by SIGTERM", 1, true),
    "joinery SCRIPT, SIGTERM inside sys:simulate{out}: exit status 143, the signal named")
  tap.diag(err)
  tap.ok(not exists(tmp .. "/sigs.csv") and partial_files() == ""
    and (read(tmp .. "/sigs.incomplete.csv") or ""):find("^# incomplete: "),
    "joinery SCRIPT: no output file, no temporary file, the rows so far kept")
  os.remove(tmp .. "/sigs.incomplete.csv")
end

-- ---- 5. joinery run streams its rows --------------------------------------------------------
-- The channel "hwm" is the process's peak resident memory (VmHWM, kB) at the last row.
if read("/proc/self/status") then
  local hwm = write("hwm.lua", [[
local sys = dofile(]] .. string.format("%q", free) .. [[)
sys:channel("hwm", function(s)
  if s.t < 1 then return 0 end
  for line in io.lines("/proc/self/status") do
    local kb = line:match("^VmHWM:%s*(%d+)")
    if kb then return tonumber(kb) end
  end
  return -1
end)
return sys
]])
  local function peak(dt)
    local out = tmp .. "/hwm.csv"
    local code, stdout, err = run("run " .. quote(hwm) .. " --out " .. quote(out)
      .. " --t-end 1 --dt-out " .. dt)
    local last = (read(out) or ""):match("([^\n]+)\n$") or ""
    os.remove(out)
    return code, tonumber(last:match("([^,]+)$")), stdout .. err
  end
  local code_small, small = peak("0.1")
  local code_big, big, said = peak("1e-6")
  -- 50 MB = 51200 kB: keeping the rows cost 86 MB more here; streaming costs nothing per row.
  tap.ok(code_small == 0 and code_big == 0 and small and big and big - small < 51200
    and said:find("wrote 1000001 rows x 11 columns", 1, true),
    "1e6 rows raise the peak memory by less than 50 MB")
  tap.diag(string.format("VmHWM: %s kB with 11 rows, %s kB with 1e6 rows", small, big))
else
  tap.ok(true, "# SKIP no /proc/self/status")
end

-- ---- 6. write errors name the file and the reason -------------------------------------------
do
  local out = tmp .. "/limited.csv"
  -- A file size limit of 64 blocks: writes past it fail with EFBIG (SIGXFSZ ignored).
  local code, _, err = sh("ulimit -f 64; trap '' XFSZ; exec " .. quote(cmd.exe) .. " run "
    .. quote(free) .. " --out " .. quote(out) .. " --t-end 1 --dt-out 1e-4")
  tap.ok(code == 1 and err:find("cannot write output file '" .. out .. "'", 1, true)
    and err:find("File too large", 1, true) and not exists(out) and partial_files() == "",
    "a file size limit: the file named with the system's reason, nothing left behind")
  tap.diag(err)
end
if exists("/dev/full") then
  local code, _, err = run("run " .. quote(free) .. " --out /dev/full --t-end 1 --dt-out 1e-3")
  local _, kind = sh("stat -c %F /dev/full")
  tap.ok(code == 1 and err:find("cannot write output file '/dev/full'", 1, true)
    and err:find("No space left on device", 1, true) and kind:find("character special", 1, true),
    "--out /dev/full: the file named with 'No space left on device'; the device left alone")
  tap.diag(err)
else
  tap.ok(true, "# SKIP no /dev/full")
end

-- ---- many moved initial values: the first 20 warned, then how many more -------------------
do
  local stretched = write("stretched.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local prev = sys:add("ground", "ground", { dim = 2 }).pos
for i = 1, 30 do
  local b = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = 1.01 * i, y = 0 } })
  sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = b.pos })
  prev = b.pos
end
return sys
]])
  local code, _, err = run("run " .. quote(stretched) .. " --t-end 0.01 --out " .. quote(tmp .. "/s.csv"))
  local lines = select(2, err:gsub("warning: initial m%d+%.x moved", ""))
  tap.ok(code == 0 and lines == 20
    and err:find("warning: ... and 10 more initial values moved (model:moved() lists all)", 1, true),
    string.format("30 moved positions: 20 warning lines (%d), then '... and 10 more'", lines))
end

os.execute("rm -rf " .. quote(tmp))
tap.done()
