-- The run settings are written once (lua/settings.c) and read by both doors: sys:settings
-- accepts every choice and gives it back by name, a misspelt one lists them all; `joinery
-- --help` lists every choice of each flag with the default first, every flag is a setting's
-- name, and `joinery run` accepts each choice and refuses a bad one listing them all.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local cmd = tap.command()
local quote, run, tmp = cmd.quote, cmd.run, cmd.tmp
local pendulum = cmd.root .. "/examples/pendulum.lua"

-- The choices as docs/numerics.md and docs/formulations.md name them.
local choices = {
  { "method", "M", { "adams", "bdf", "erk", "auto" }, "bd", "bdf" },
  { "formulation", "F", { "udwadia-kalaba", "natsiavas-paraskevopoulos" }, "udwadia-kalaga",
    "udwadia-kalaba" },
  { "drift", "D", { "baumgarte", "projection", "none" }, "projektion", "projection" },
  { "newton", "S", { "auto", "dense", "krylov" }, "krylow", "krylov" },
}
local nchoices = 0
for _, c in ipairs(choices) do nchoices = nchoices + #c[3] end
tap.plan(3 * nchoices + 5 * #choices + 1)

local defaults = joinery.system():settings()

-- ---- sys:settings ----------------------------------------------------------------------
for _, c in ipairs(choices) do
  local key, names, typo, near = c[1], c[3], c[4], c[5]
  for _, name in ipairs(names) do
    local sys = joinery.system()
    sys:settings { [key] = name }
    tap.is(sys:settings()[key], name, "sys:settings{" .. key .. " = '" .. name .. "'} reads back")
  end
  local parts = { "'" .. typo .. "'", "did you mean '" .. near .. "'" }
  for _, name in ipairs(names) do parts[#parts + 1] = name end
  tap.raises(function() joinery.system():settings { [key] = typo } end, parts,
    "a misspelt " .. key .. " lists every choice")
end

-- ---- joinery --help --------------------------------------------------------------------
local _, usage = run("--help")
local flags_are_settings = true
for flag in usage:gmatch("\n  %-%-([%w-]+)") do
  local key = flag:gsub("-", "_")
  if defaults[key] == nil and key ~= "out" and key ~= "trust" -- --trust: lua/sandbox.c
    and key ~= "columns_from" -- a file of the setting columns' patterns
    and key ~= "quiet" then -- no progress lines (the command's, not the run's)
    flags_are_settings = false
    tap.diag("--" .. flag .. " is no setting")
  end
end
tap.ok(flags_are_settings, "every flag of joinery run is a setting's name, '-' for '_'")
for _, c in ipairs(choices) do
  local key, arg_name, names = c[1], c[2], c[3]
  local line = usage:match("\n  %-%-" .. key .. " " .. arg_name .. " +([^\n]*)") or ""
  local lists_all = true
  for _, name in ipairs(names) do lists_all = lists_all and line:find(name, 1, true) ~= nil end
  tap.ok(lists_all and line:find(defaults[key] .. " (default", 1, true) == 1,
    "--help lists every " .. key .. ", the default (" .. defaults[key] .. ") first: " .. line)
end

-- ---- joinery run -----------------------------------------------------------------------
for _, c in ipairs(choices) do
  local key, names = c[1], c[3]
  for _, name in ipairs(names) do
    local code, out, err = run("run " .. quote(pendulum) .. " --t-end 0.02 --out "
      .. quote(tmp .. "/p.csv") .. " --" .. key .. " " .. name)
    tap.ok(code == 0, "joinery run --" .. key .. " " .. name)
    if code ~= 0 then tap.diag(out .. err) end
  end
  local code, _, err = run("run " .. quote(pendulum) .. " --" .. key .. "=bogus")
  local lists_all = true
  for _, name in ipairs(names) do lists_all = lists_all and err:find(name, 1, true) ~= nil end
  tap.ok(code == 2 and lists_all and err:find("'bogus'", 1, true),
    "a bad --" .. key .. " is a usage error listing every choice")
end

os.execute("rm -rf " .. quote(tmp))
tap.done()
