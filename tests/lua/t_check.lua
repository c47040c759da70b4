-- The model doctor: `joinery check` (text, --json, exit statuses) and model:check().
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local cmd = tap.command()
local root = cmd.root
local function check(script, flags)
  return cmd.run("check " .. cmd.quote(root .. "/" .. script) .. (flags or ""))
end
-- `joinery check --json` parses as JSON (python3's reader); returns the exit status
local function json_ok(script)
  local code = cmd.sh(cmd.quote(cmd.exe) .. " check " .. cmd.quote(root .. "/" .. script) ..
    " --json | python3 -c 'import json,sys; d = json.load(sys.stdin); print(d[\"findings\"])'")
  return code
end

-- ---- model:check() ---------------------------------------------------------------------
local function model_of(script, ...) return assert(loadfile(root .. "/" .. script))(...):compile() end

local c = model_of("examples/pendulum.lua"):check()
tap.is(c.coords, 2, "pendulum: 2 coordinates")
tap.is(c.rows, 1, "pendulum: 1 row")
tap.is(c.rank, 1, "pendulum: rank 1")
tap.is(c.dof, 1, "pendulum: 1 degree of freedom")
tap.is(c.findings, 0, "pendulum: no findings")
tap.ok(c.sound, "pendulum: sound")
tap.is_near(c.singular.sigma, 1, 1e-12, "pendulum: smallest singular value 1 (one unit row)")

c = model_of("examples/bricard.lua"):check()
tap.is(c.coords, 35, "bricard: 35 coordinates")
tap.is(c.rows, 35, "bricard: 35 rows")
tap.is(c.rank, 34, "bricard: rank 34")
tap.is(c.dof, 1, "bricard: 1 degree of freedom (Grubler counts 0)")
tap.is(#c.redundant, 1, "bricard: one redundant row")
tap.ok(c.redundant[1] and c.redundant[1].part and c.redundant[1].part:match("^h%d$"),
  "bricard: the redundant row belongs to a hinge")
tap.ok(not c.singular.near and c.singular.sigma > 0.01, "bricard: not near a singular configuration")

c = model_of("examples/four_bar_redundant.lua"):check()
tap.is(c.dof, 1, "four_bar_redundant: 1 degree of freedom")
tap.is(c.rank, 5, "four_bar_redundant: rank 5 of 6 rows")
tap.is(c.redundant[1] and c.redundant[1].name, "BC.length", "four_bar_redundant: BC.length is redundant")
tap.is(c.redundant[1] and c.redundant[1].part, "BC", "four_bar_redundant: ... a row of part BC")

c = model_of("tests/lua/check/broken.lua", "compiles"):check()
tap.is(#c.isolated, 1, "lone mass: one part not connected")
tap.is(c.isolated[1] and c.isolated[1].name, "lone", "lone mass: it is 'lone'")
tap.is(c.dof, 3, "lone mass: 3 degrees of freedom")

c = model_of("examples/rolling_disk.lua"):check()
tap.ok(c.velocity_rows > 0 and c.motion_dof == c.dof - c.velocity_rows,
  "rolling disk: nonholonomic rows counted apart")

-- sys:check(): what needs no compile
local sc = dofile(root .. "/tests/lua/check/broken.lua"):check()
tap.is(sc.findings, 2, "sys:check() of the broken model: 2 findings")
tap.ok(sc.unglued[1] and sc.unglued[1].part == "dangle" and sc.unglued[1].terminal == "b",
  "sys:check(): the spring's free end dangle.b")
tap.is(sc.isolated[1] and sc.isolated[1].name, "lone", "sys:check(): the lone mass")
tap.is(dofile(root .. "/examples/pendulum.lua"):check().findings, 0, "sys:check() of the pendulum: none")

-- ---- joinery check ----------------------------------------------------------------------
-- script, exit status, texts its report must hold, the script's arguments
local cases = {
  { "examples/pendulum.lua", 0, { "degrees of freedom: 1 ", "findings: 0 (sound)" } },
  { "examples/bricard.lua", 1, { "degrees of freedom: 1 (35 coordinates - rank 34" } },
  { "examples/four_bar_redundant.lua", 1, { "BC.length (part BC)" } },
  { "tests/lua/check/broken.lua", 1, { "parts not connected to anything: 1\n  lone",
    "degrees of freedom: 3 " }, " -- compiles" },
  { "tests/lua/check/broken.lua", 1, { "dangle.bx (part dangle)", "dangle.by (part dangle)",
    "terminals never glued: 1\n  dangle.b:", "parts not connected to anything: 1\n  lone",
    "findings: 4 (not sound)" } },
}
local code, out, err
for _, case in ipairs(cases) do
  code, out = check(case[1], case[4])
  local what = "check " .. case[1] .. (case[4] or "")
  tap.is(code, case[2], what .. ": exit " .. case[2])
  for _, text in ipairs(case[3]) do
    tap.has(out, text, what .. ": " .. text:gsub("\n", " / "))
  end
end
local broken = cmd.write("broken.lua", "error('no model here')\n")
code, out, err = cmd.run("check " .. cmd.quote(broken))
tap.is(code, 2, "check a script that fails: exit 2")
tap.has(err, "no model here", "check a script that fails: its message")
code = cmd.run("check " .. cmd.quote(cmd.write("nothing.lua", "return 1\n")))
tap.is(code, 2, "check a script returning no system: exit 2")
code = cmd.run("check")
tap.is(code, 2, "check without a script: usage error")

-- --json parses
tap.is(json_ok("examples/pendulum.lua"), 0, "check --json pendulum parses")
tap.is(json_ok("examples/four_bar_redundant.lua"), 0, "check --json four_bar_redundant parses")
tap.is(json_ok("tests/lua/check/broken.lua"), 0, "check --json of a model the compile refuses parses")
code, out = check("examples/four_bar_redundant.lua", " --json")
tap.is(code, 1, "check --json: the same exit status")
tap.has(out, '"name":"BC.length"', "check --json: the redundant row")
tap.has(out, '"dof":1', "check --json: the DOF")

-- ---- joinery run's line ------------------------------------------------------------------
code, out, err = cmd.run("run " .. cmd.quote(root .. "/examples/four_bar_redundant.lua") ..
  " --t-end 0.01 --out " .. cmd.quote(cmd.tmp .. "/fb.csv"))
tap.is(code, 0, "run four_bar_redundant")
tap.has(err, "model: 6 coordinates, 6 rows (1 redundant), 1 degree of freedom\n",
  "run prints the doctor's line on stderr")

tap.done()
