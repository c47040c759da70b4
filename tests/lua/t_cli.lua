-- The joinery command: script mode, run (flags, output, exit codes), types, doc, --help.
-- Runs the binary that runs this test (arg[-1]) in child processes.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
-- 23 single checks, 8 usage errors, 2 systems with nothing to integrate
tap.plan(23 + 8 + 2 + 2)

local cmd = tap.command()
local quote, sh, joinery = cmd.quote, cmd.sh, cmd.run
local exe, root, tmp = cmd.exe, cmd.root, cmd.tmp

local write = cmd.write

local exists = tap.exists

local pendulum = root .. "/examples/pendulum.lua"

-- ---- help, types, doc ------------------------------------------------------------------
local code, out, err = joinery("--help")
tap.ok(code == 0 and out:find("usage: joinery", 1, true), "--help: usage on stdout, status 0")
code, out, err = joinery("")
tap.ok(code == 2 and err:find("usage", 1, true), "no arguments: usage on stderr, status 2")
code, out = joinery("types")
tap.ok(code == 0 and out:find("\nmass ", 1, true) and out:find("rod", 1, true),
  "types lists the part types")
code, out = joinery("doc rod")
tap.ok(code == 0 and out:find("L ", 1, true) and out:find("length", 1, true)
  and out:find("a (dim 3)", 1, true) and out:find("ax, ay, az", 1, true),
  "doc rod: parameters, terminals, coordinates")
code, out, err = joinery("doc rdo")
tap.ok(code == 1 and err:find("joinery: unknown part type 'rdo'", 1, true)
  and err:find("'rod'", 1, true), "doc of an unknown type: status 1 and a suggestion")
tap.diag(err)

-- ---- script mode -----------------------------------------------------------------------
local args_script = write("args.lua", [[
local j = require "joinery"
print(arg[0], arg[1], arg[2], select("#", ...), (...), type(j.system))
]])
code, out = joinery(quote(args_script) .. " one two")
tap.ok(code == 0 and out:find(args_script .. "\tone\ttwo\t2\tone\tfunction", 1, true),
  "SCRIPT ARGS: arg table, ... and require 'joinery'")
local failing = write("failing.lua", "local function f()\n  error('boom')\nend\nf()\n")
code, out, err = joinery(quote(failing))
tap.ok(code == 1 and err == "joinery: " .. failing .. ":2: boom\n",
  "a failing script: 'file:line: message' alone (no traceback), status 1")
tap.diag(err)
code, out, err = joinery("--traceback " .. quote(failing))
tap.ok(code == 1 and err:find(failing .. ":2: boom", 1, true)
  and err:find("stack traceback:", 1, true) and err:find(failing .. ":4: in main chunk", 1, true),
  "--traceback SCRIPT: the message and the Lua stack traceback")
tap.diag(err)

-- ---- run -------------------------------------------------------------------------------
local csv = tmp .. "/p.csv"
code, out, err = joinery("run " .. quote(pendulum) .. " --out " .. quote(csv)
  .. " --t-end 0.1 --dt-out=0.02 --rtol 1e-9 --atol 1e-11 --method bdf")
tap.ok(code == 0, "run with every flag: status 0")
tap.ok(out:find("model: 2 coordinates, 1 constraint rows", 1, true), "run prints the model size")
tap.ok(out:find("wrote 6 rows x 16 columns to " .. csv, 1, true), "run prints what it wrote (the default: 28 channels but the 8 eliminated copies and the eliminated glues' 4 forces)")
tap.ok(out:find("run time: wall %S+ s, CPU %S+ s %(%d+ steps"), "run prints the wall and CPU time")
tap.diag(out .. err)
-- progress lines when stderr is not a terminal (here every millisecond), none with --quiet
local run_p = "JOINERY_PROGRESS_SECONDS=0.001 " .. quote(exe) .. " run " .. quote(pendulum)
  .. " --out " .. quote(tmp .. "/progress.csv") .. " --t-end 20 --dt-out 0.001"
local _, _, err_p = sh(run_p)
tap.ok(err_p:find("progress: t = %S+ of 20 s %(%d+%.%d%%%), %d+ steps, %d+ s so far, about "),
  "run prints progress lines to a file: " .. (err_p:match("progress:[^\n]*") or err_p))
local _, _, err_q = sh(run_p .. " --quiet")
tap.ok(not err_q:find("progress:", 1, true), "run --quiet prints none")
local f = io.open(csv)
local lines = 0
if f then for _ in f:lines() do lines = lines + 1 end f:close() end
tap.is(lines, 7, "the CSV has a header and 6 rows")

code, out, err = sh("cd " .. quote(tmp) .. " && " .. quote(exe) .. " run " .. quote(pendulum)
  .. " --t-end 0.05")
tap.ok(code == 0 and exists(tmp .. "/pendulum.csv"),
  "default output: the script's name with .csv, here")

for _, case in ipairs {
  { "--bogus 1", "unknown option '--bogus'" },
  { "--t-edn 1", "unknown option '--t-edn' (did you mean --t-end?)" },
  { "--dtout=0.1", "unknown option '--dtout' (did you mean --dt-out?)" },
  { "--tracebak", "did you mean --traceback?" },
  { "--t-end", "--t-end" },
  { "--rtol abc", "--rtol" },
  { "--out --t-end 1", "--out" },
  { "--method rk4", "rk4" },
} do
  code, out, err = joinery("run " .. quote(pendulum) .. " " .. case[1])
  tap.ok(code == 2 and err:find(case[2], 1, true),
    "usage error '" .. case[1] .. "': status 2, names " .. case[2])
end
code, out, err = joinery("run")
tap.ok(code == 2 and err:find("SCRIPT", 1, true), "run without a script: status 2")
code, out, err = joinery("--hlep")
tap.ok(code == 2 and err:find("unknown option '--hlep' (did you mean --help?)", 1, true),
  "an unknown command option: status 2, did you mean")
code, out, err = joinery("--t-end 1 " .. quote(pendulum))
tap.ok(code == 2 and err:find("--t-end is an option of run: joinery run SCRIPT --t-end", 1, true),
  "a run option before the command: says where it goes")

local nothing = write("nothing.lua", "local x = 1\n")
local nocsv = tmp .. "/nothing.csv"
code, out, err = joinery("run " .. quote(nothing) .. " --out " .. quote(nocsv))
tap.ok(code == 1 and err:find("must return a system", 1, true) and not exists(nocsv),
  "a script that returns no system: status 1, no file")
tap.diag(err)

local stuck = write("stuck.lua", [[
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
sys:settings { t_end = 1, max_steps = 1 }
return sys
]])
local stuckcsv = tmp .. "/stuck.csv"
code, out, err = joinery("run " .. quote(stuck) .. " --out " .. quote(stuckcsv))
tap.ok(code == 1 and err:find("joinery: integrator failure at t =", 1, true)
  and not exists(stuckcsv), "a failing run: status 1, the engine's message, no output file")
tap.diag(err)

local broken = write("broken.lua",
  "local j = require 'joinery'\nlocal s = j.system()\ns:add('mas', 'x')\nreturn s\n")
code, out, err = joinery("run " .. quote(broken))
tap.ok(code == 1 and err:find(broken .. ":3: unknown part type 'mas'", 1, true)
  and not err:find("traceback", 1, true), "an API error in a run script: status 1, file:line")
code, out, err = joinery("run " .. quote(broken) .. " --traceback")
tap.ok(code == 1 and err:find(broken .. ":3: unknown part type 'mas'", 1, true)
  and err:find("stack traceback:", 1, true), "run SCRIPT --traceback: the traceback too")
code, out, err = joinery("--traceback run " .. quote(broken))
tap.ok(code == 1 and err:find("stack traceback:", 1, true), "--traceback run SCRIPT: the same")
code, out, err = joinery("--help")
tap.ok(out:find("--traceback", 1, true), "--help names --traceback")

-- Nothing to integrate: the model's terms on stderr, nothing from LAPACK on stdout.
for _, case in ipairs {
  { "empty", "", "the system is empty" },
  { "ground", "s:add('ground', 'g', { dim = 2 })\n", "no coordinates to integrate" },
} do
  local script = write(case[1] .. ".lua",
    "local j = require 'joinery'\nlocal s = j.system()\n" .. case[2] .. "return s\n")
  code, out, err = joinery("run " .. quote(script) .. " --out " .. quote(tmp .. "/none.csv"))
  tap.ok(code == 1 and err:find(case[3], 1, true) and not out:find("DPOTRF", 1, true)
    and not err:find("DPOTRF", 1, true), "run of a system with nothing to integrate (" .. case[1]
    .. "): '" .. case[3] .. "', nothing from LAPACK")
  tap.diag(out .. err)
end

os.execute("rm -rf " .. quote(tmp))
tap.done()
