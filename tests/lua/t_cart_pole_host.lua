-- examples/embed/cart_pole_host.c (a C host: jy_model_linearize and jy_lqr for the gains, a
-- 100 Hz loop through jy_sim_set_input_index) against examples/cart_pole_lqr.lua (the same
-- model built in Lua, model:linearize and joinery.lqr, a sys:controller at 100 Hz): for each
-- method the host's gains, its steps and its final state (q and v, printed with %.17g) equal
-- the Lua run's bit for bit.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")

local host = os.getenv("CART_POLE_HOST")
if not host then
  tap.plan(0)
  tap.diag("CART_POLE_HOST is not set (run through meson test)")
  return tap.done()
end
local methods = { "auto", "bdf", "adams", "erk" }
tap.plan(1 + 4 * #methods)

local function numbers(text)
  local list = {}
  for x in (text or ""):gmatch("%S+") do list[#list + 1] = tonumber(x) end
  return list
end
local function same(a, b)
  if #a ~= #b or #a == 0 then return false end
  for i = 1, #a do
    if a[i] ~= b[i] then return false end
  end
  return true
end
local function show(a)
  local parts = {}
  for i = 1, #a do parts[i] = string.format("%.17g", a[i]) end
  return table.concat(parts, " ")
end

local sys, info = dofile("examples/cart_pole_lqr.lua")
local model = sys:compile()
local gains_checked = false
for _, method in ipairs(methods) do
  local pipe = assert(io.popen(string.format("'%s' %s 2>&1", host, method)))
  local out = pipe:read("a")
  local okay = pipe:close()
  tap.ok(okay, method .. ": cart_pole_host ran")
  if not okay then tap.diag(out) end
  if not gains_checked then
    local K = numbers(out:match("K = ([^\n]*)"))
    tap.ok(same(K, info.K[1]), string.format(
      "the host's gains equal the Lua script's bit for bit: %s", show(K)))
    gains_checked = true
  end
  local q, v = numbers(out:match("q%(T%) = ([^\n]*)")), numbers(out:match("v%(T%) = ([^\n]*)"))
  local steps = tonumber(out:match("(%d+) steps"))
  local sim = model:sim { method = method, t_end = 5 }
  sim:advance(5)
  local lq, lv = sim:state()
  tap.ok(same(q, lq), string.format("%s: q(T) equals the Lua controller's bit for bit", method))
  tap.ok(same(v, lv), string.format("%s: v(T) equals the Lua controller's bit for bit", method))
  if not same(q, lq) or not same(v, lv) then
    tap.diag("host q " .. show(q) .. "\n#  Lua q " .. show(lq))
  end
  tap.is(steps, sim:stats().steps, method .. ": the same steps")
  sim:close()
end
tap.done()
