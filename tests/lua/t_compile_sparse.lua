-- Compiling through the sparse factorizations (models of at least sparse_min_coords
-- coordinates: the initial state's Newton steps on J J^T, the no-dependent-rows check on
-- A A^T) against the dense rank-revealing path: the same consistent initial state, the same
-- values moved, the same dependent rows, on every example and on models whose initial values
-- must move (followers, unset values, a guess).
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local examples = {}
for name in io.popen("ls examples/*.lua"):lines() do examples[#examples + 1] = name end

local function pendulum_chain(links)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, links do
    prev = sys:add("pendulum", "p" .. i, { m = 1, l = 1, init = { theta = 0.1 * i }, pivot = prev }).bob
  end
  return sys
end
local function four_bar_guess()
  local sys = joinery.system()
  local A = sys:add("ground", "A", { dim = 2 })
  local D = sys:add("ground", "D", { dim = 2, x = 2 })
  local B = sys:add("mass", "B", { dim = 2, init = { x = 0.6, y = 0.8 } })
  local C = sys:add("mass", "C", { dim = 2, guess = { x = 2.5, y = 1.5 } })
  sys:add("rod", "AB", { dim = 2, L = 1, a = A.pos, b = B.pos })
  sys:add("rod", "BC", { dim = 2, L = 2, a = B.pos, b = C.pos })
  sys:add("rod", "DC", { dim = 2, L = 1.5, a = D.pos, b = C.pos })
  return sys
end
local cases = {
  { "30-pendulum chain from given angles (pivots follow their glue)", function() return pendulum_chain(30) end },
  { "four-bar with a guessed coupler end", four_bar_guess },
}
for _, file in ipairs(examples) do
  cases[#cases + 1] = { file, function() return dofile(file) end }
end
tap.plan(#cases)

local function moved_names(model)
  local names = {}
  for _, mv in ipairs(model:moved()) do names[#names + 1] = mv.name end
  return table.concat(names, ",")
end
local function redundant_line(model)
  return model:report():match("redundant constraints:[^\n]*") or ""
end

for _, case in ipairs(cases) do
  local name, build = case[1], case[2]
  local ok_d, dense = pcall(function() return build():compile { sparse_min_coords = 0 } end)
  local ok_s, sparse = pcall(function() return build():compile { sparse_min_coords = 1 } end)
  if not ok_d then
    -- a model that does not compile densely (a plugin not built) must fail the same way
    tap.ok(not ok_s, name .. ": fails to compile on both paths")
  elseif not ok_s then
    tap.ok(false, name .. ": sparse compile failed: " .. tostring(sparse))
  else
    local qd, vd = dense:initial()
    local qs, vs = sparse:initial()
    local worst = 0
    for i = 1, #qd do
      worst = math.max(worst, math.abs(qd[i] - qs[i]) / math.max(1, math.abs(qd[i])),
        math.abs(vd[i] - vs[i]) / math.max(1, math.abs(vd[i])))
    end
    -- Both Newton iterations stop at the assembly tolerance (1e-12 of the state's size);
    -- the two steps differ by rounding, so the states agree well within 1e-10.
    tap.ok(worst < 1e-10 and moved_names(dense) == moved_names(sparse)
      and redundant_line(dense) == redundant_line(sparse),
      string.format("%s: sparse compile = dense (worst %.2g, %d moved, %s)", name, worst,
        #dense:moved(), redundant_line(dense) ~= "" and "dependent rows agree" or "no dependent rows"))
  end
end
