-- A part written in C, loaded at run time: the hardening spring of
-- examples/plugin/cubic_spring.c (tension k1 s + k3 s^3 at stretch s), built by meson as
-- build/examples/plugin/cubic_spring.so. A 1 kg mass on it is the Duffing oscillator
-- m x'' + k1 s + k3 s^3 = 0: released 0.5 m from rest length, it oscillates faster than the
-- linear spring alone would (period 1.18 s instead of 2 pi / sqrt(k1 / m) = 1.99 s).
--
--   joinery run --trust examples/plugin_model.lua
--   (--trust: loading native code is what the sandbox refuses to a model script; see the
--   README, "Running models you did not write")
--   (JOINERY_PLUGIN_DIR=DIR selects another build's plugin directory)
local joinery = require "joinery"

local dir = os.getenv("JOINERY_PLUGIN_DIR") or "build/examples/plugin"
joinery.load_plugin(dir .. "/cubic_spring.so") -- registers "cubic_spring"

local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local bob = sys:add("mass", "bob", { dim = 1, m = 1, init = { x = 1.5 } })
sys:add("cubic_spring", "spring", { dim = 1, k1 = 10, k3 = 100, L = 1, a = wall.pos, b = bob.pos })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
