-- The settings are one list per kind (joinery.h: JY_RUN_SETTINGS, JY_SOLVER_SETTINGS), and
-- everything else follows from it: `joinery settings` prints the table docs/cli.md holds,
-- as the command prints it; docs/lua-api.md gives every setting with the default
-- sys:settings() reports; every setting, solver settings too, is a flag of `joinery run`,
-- whose value reaches the run and whose range is the list's.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local cmd = tap.command()
local quote, run, tmp, root = cmd.quote, cmd.run, cmd.tmp, cmd.root
local pendulum = root .. "/examples/pendulum.lua"

local function read(path)
  local f = assert(io.open(root .. "/" .. path))
  local text = f:read("a")
  f:close()
  return text
end

local defaults = joinery.system():settings()
local names = {}
for k in pairs(defaults) do names[#names + 1] = k end
table.sort(names)
tap.plan(4 + #names + 6)

-- ---- joinery settings and docs/cli.md --------------------------------------------------
local code, table_md = run("settings")
tap.ok(code == 0 and table_md:find("| flag | setting | default | meaning |", 1, true) == 1,
  "joinery settings prints a markdown table")
tap.ok(read("docs/cli.md"):find(table_md, 1, true) ~= nil,
  "docs/cli.md holds the table joinery settings prints (regenerate it from there)")
local rows, flagged = 0, true
for _, name in ipairs(names) do
  local flag = ("--" .. name:gsub("_", "-")):gsub("%-", "%%-")
  if not table_md:find("\n| `" .. flag .. " [^`]*` | `" .. name .. "` |") then
    flagged = false
    tap.diag(name .. " has no row " .. flag)
  end
  rows = rows + 1
end
tap.ok(flagged and rows > 20, "every setting has a flag in the table, '-' for '_'")
local _, usage = run("--help")
local in_help = true
for _, name in ipairs(names) do
  if not usage:find("\n  --" .. name:gsub("_", "-") .. " ", 1, true) then
    in_help = false
    tap.diag(name .. " is not in --help")
  end
end
tap.ok(in_help, "--help lists every setting")

-- ---- docs/lua-api.md: every setting with its default -----------------------------------
local api = read("docs/lua-api.md")
for _, name in ipairs(names) do
  local cell = api:match("\n| `" .. name .. "` | ([^|]*) |") or ""
  local want, v = defaults[name], nil
  if type(want) == "number" then
    v = tonumber(cell:match("^(%S+)"))
  elseif type(want) == "string" then
    v = cell:match('^`"([^"]*)"`')
  else
    v = cell:match("^(%a+)") == "true"
  end
  tap.ok(v == want, "docs/lua-api.md: " .. name .. " defaults to " .. tostring(want)
    .. " (the doc says '" .. cell .. "')")
end

-- ---- joinery run: the solver settings are flags too ------------------------------------
local csv = tmp .. "/p.csv"
local err
code, _, err = run("run " .. quote(pendulum) .. " --t-end 0.02 --out " .. quote(csv)
  .. " --rank-rcond 1e-12 --dependent-rcond=1e-2 --sparse-min-coords 0 --eliminate-glue false"
  .. " --tree-recursion true --max-steps 5000 --baumgarte-rate 2 --atol-velocity 1e-12")
tap.ok(code == 0, "run with solver flags and the run settings that had none: status 0")
if code ~= 0 then tap.diag(err) end
code, _, err = run("run " .. quote(pendulum) .. " --rank-rcond 2")
tap.ok(code == 1 and err:find("rank_rcond", 1, true) and err:find("between 0 and 1", 1, true),
  "--rank-rcond 2 is out of its range: the list's words")
tap.diag(err)
code, _, err = run("run " .. quote(pendulum) .. " --sparse-min-coords 1.5")
tap.ok(code == 1 and err:find("sparse_min_coords", 1, true) and err:find("whole number", 1, true),
  "--sparse-min-coords 1.5 is no whole number")
code, _, err = run("run " .. quote(pendulum) .. " --eliminate-glue maybe")
tap.ok(code == 2 and err:find("--eliminate-glue expects true or false, got 'maybe'", 1, true),
  "a flag takes true or false (usage error)")
code, _, err = run("run " .. quote(pendulum) .. " --max-steps 0 --out " .. quote(csv))
tap.ok(code == 1 and err:find("max_steps = 0 must be > 0", 1, true),
  "--max-steps 0: the engine's range check names it")
code, _, err = run("run " .. quote(pendulum) .. " --rank-rcnd 1")
tap.ok(code == 2 and err:find("did you mean --rank-rcond?", 1, true),
  "a misspelt solver flag: did you mean")

os.execute("rm -rf " .. quote(tmp))
tap.done()
