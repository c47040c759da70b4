local joinery = require "joinery"
local sim, model, sys2
local step = 0
local actions = {
  function() sim:close() end,
  function() sim:advance(0.9) end,
  function() sim:set_state(0, { 1 }, { 0 }) end,
  function() return sim:state(), sim:time(), sim:stats(), sim:channels() end,
  function() model:close() end,
  function() return model:sim { t_end = 0.1 }:advance(0.01) end,
  function() return model:simulate { t_end = 0.02, dt_out = 0.01 } end,
  function() collectgarbage() end,
  function() return sys2:compile() end,
  function() coroutine.yield() end,
  function() error({}) end,
  function() return joinery.eval_part { type = "reent", q = { 0.1 }, v = { 0 } } end,
}
joinery.part_type {
  name = "reent",
  doc = "1-D oscillator whose force calls back into the simulation running it",
  params = { { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" } },
  coords = { "x" },
  terminals = { { name = "pos", coords = { "x" } } },
  mass = function(q, t, p) return { { p.m } } end,
  force = function(q, v, t, p)
    step = step + 1
    if sim and t > 0.01 then pcall(actions[step % #actions + 1]) end
    return { -q.x }
  end,
}
local sys = joinery.system()
local c = sys:add("reent", "c", { init = { x = 1 } })
sys:channel("calls", function(s)
  if sim then pcall(actions[(step + 3) % #actions + 1]) end
  return s.t
end)
sys2 = joinery.system { gravity = { 0, 0, -9.81 } }
sys2:add("mass", "m", { dim = 3, m = 1, init = { x = 0 }, vel = { x = 1 } })
model = sys:compile()
for _ = 1, 3 do
  local ok, s = pcall(model.sim, model, { t_end = 1 })
  if not ok then model = sys:compile(); s = model:sim { t_end = 1 } end
  sim = s
  pcall(sim.advance, sim, 0.05)
  local co = coroutine.wrap(function() return sim:advance(0.1) end)
  pcall(co)
  pcall(sim.channels, sim)
  pcall(sim.close, sim)
end
sim = nil
return sys
