-- Reproducers of what the fuzzers of tests/fuzz found (issue 14, item 3), each a model or
-- call the fuzzer built, reduced by hand, with the behaviour it should have had.
--   1. fuzz_params, spring_chain with init x = 1e300 (a finite, valid number): Adams and
--      ERK size their first step from norms of the state that overflow, and called the
--      right-hand side at t = NaN; the run failed with "part 'left' (spring_mass), force:
--      returned a value that is not finite at t = -nan", blaming the part. It now says the
--      step size overflowed, from which time, on which coordinate, and what to do.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local function huge_spring_chain()
  local sys = joinery.system()
  local wall = sys:add("ground", "wall", { dim = 1 })
  local left = sys:add("spring_mass", "left",
    { m = 1, k = 100, X = 1, init = { x = 1e300 }, base = wall.pos })
  sys:add("spring_mass", "right", { m = 2, k = 50, X = 1, init = { x = 0 }, base = left.tip })
  return sys
end

local methods = { "adams", "erk" }
tap.plan(#methods * 6)
for _, method in ipairs(methods) do
  local ok, err = pcall(function()
    return huge_spring_chain():simulate { t_end = 0.05, dt_out = 0.01, method = method }
  end)
  err = tostring(err)
  tap.ok(not ok, method .. ", a state of 1e300: the run fails")
  tap.diag("  " .. err)
  tap.has(err, "step size overflowed", method .. ": the message says the step size overflowed")
  tap.has(err, "after t = 0", method .. ": and from which time")
  tap.has(err, "1e+300", method .. ": and the size of the largest coordinate")
  tap.has(err, "rescale", method .. ": and what to do")
  tap.ok(not err:find("returned a value that is not finite", 1, true),
    method .. ": no part is said to return a non-finite value at t = nan")
end

tap.done()
