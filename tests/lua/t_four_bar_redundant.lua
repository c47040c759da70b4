-- examples/four_bar_redundant.lua: a redundant bar is named, the motion stays exact, the
-- reported rod forces balance every mass, and they are the minimum-norm ones.
local tap = dofile("tests/lua/tap.lua")
tap.plan(5)
local g = 9.81
local model = dofile("examples/four_bar_redundant.lua"):compile()
local report = model:report()
tap.ok(report:find("rank 5 of 6 rows", 1, true) and report:find("dependent rows: BC.length", 1, true),
  "the report names the dependent row")
tap.diag(report)

local res = model:simulate { rtol = 1e-11, atol = 1e-12, t_end = 10, columns = "*" } -- pull.tension: a spring's
local e0, drift = res.energy[1], 0
for i = 1, #res.t do drift = math.max(drift, math.abs(res.energy[i] - e0) / math.abs(e0)) end
tap.ok(drift < 1e-8, string.format("energy conserved to 1e-8 relative over 10 s (%.2g)", drift))

-- Rod forces: a rod of tension T pulls its end b towards a with T (unit vector a -> b).
-- The balance is exact up to the solver's rounding: 1e-9 N on forces of ~10 N.
local coords = model:coords()
local function point(name, i)
  if name == "A" then return 0, 0 elseif name == "E" then return 0.5, 0
  elseif name == "D" then return 1, 0 elseif name == "S" then return 2.5, res["C.y"][1] end
  return res[name .. ".x"][i], res[name .. ".y"][i]
end
local rods = { { "AB", "A", "B" }, { "EF", "E", "F" }, { "DC", "D", "C" }, { "BF", "B", "F" },
  { "FC", "F", "C" }, { "BC", "B", "C" }, { "pull", "S", "C" } }
local worst_balance, worst_null, scale = 0, 0, 0
for i = 1, #res.t, 50 do
  local q, v = {}, {}
  for k, name in ipairs(coords) do q[k], v[k] = res[name][i], res["der(" .. name .. ")"][i] end
  local acc = model:acceleration(q, v, res.t[i])
  local force = { B = { 0, -g }, F = { 0, -g }, C = { 0, -g } } -- m = 1 kg each
  for _, r in ipairs(rods) do
    local ax, ay = point(r[2], i)
    local bx, by = point(r[3], i)
    local len = math.sqrt((bx - ax) ^ 2 + (by - ay) ^ 2)
    local t = res[r[1] .. ".tension"][i]
    local ux, uy = (bx - ax) / len, (by - ay) / len
    if force[r[3]] then force[r[3]][1], force[r[3]][2] = force[r[3]][1] - t * ux, force[r[3]][2] - t * uy end
    if force[r[2]] then force[r[2]][1], force[r[2]][2] = force[r[2]][1] + t * ux, force[r[2]][2] + t * uy end
    scale = math.max(scale, math.abs(t))
  end
  for _, m in ipairs { "B", "F", "C" } do
    for k, axis in ipairs { "x", "y" } do
      local a = acc[(function() for j, n in ipairs(coords) do if n == m .. "." .. axis then return j end end end)()]
      worst_balance = math.max(worst_balance, math.abs(a - force[m][k]))
    end
  end
  worst_null = math.max(worst_null, math.abs(res["BF.tension"][i] + res["FC.tension"][i] - res["BC.tension"][i]))
end
-- (The spring's tension k (len - L) follows the same convention as a rod's.)
tap.ok(worst_balance < 1e-9, string.format("m a = m g + rod and spring forces at every mass (worst %.2g N)", worst_balance))
tap.ok(scale > 0.1, string.format("the coupler bars carry load (largest force %.3g N)", scale))
tap.ok(worst_null < 1e-9 * scale, string.format("the forces are minimum-norm: T_BF + T_FC - T_BC = 0 (worst %.2g N)", worst_null))
tap.done()
