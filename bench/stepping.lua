-- The stepping design measured (docs/numerics.md, "Integration"): every example at its own
-- settings with a row every 0.01 s and with one row at the end (steps, right-hand sides,
-- seconds; the integration must not depend on the rows), then four models at rtol 1e-6,
-- 1e-8 and 1e-10 (atol = rtol / 100) for every method: cost, and whether each ends right
-- or stops saying why. Runs under any joinery build (a method it lacks shows as refused).
--   build/lua/joinery bench/stepping.lua [examples|methods]
local which = arg and arg[1]
local function run(sys_fn, opts)
  local ok, res = pcall(function() return sys_fn():simulate(opts) end)
  if not ok then return nil, tostring(res):gsub("\n.*", ""):sub(1, 70) end
  return res
end

if which ~= "methods" then
  print(string.format("%-22s %18s %18s %10s %10s", "example", "steps dt 0.01 / 1", "rhs dt 0.01 / 1",
    "s dt 0.01", "s 1 row"))
  local names = {}
  for name in io.popen("ls examples/*.lua"):lines() do names[#names + 1] = name end
  for _, path in ipairs(names) do
    local loaded, sys = pcall(dofile, path)
    local span = loaded and sys:settings().t_end - sys:settings().t_start or 1
    local fine, why = nil, tostring(sys):gsub("\n.*", ""):sub(1, 70)
    if loaded then fine, why = run(function() return dofile(path) end, { dt_out = 0.01 }) end
    local coarse = fine and run(function() return dofile(path) end, { dt_out = span })
    local name = path:match("([^/]+)%.lua$")
    if fine and coarse then
      print(string.format("%-22s %8d / %-8d %8d / %-8d %10.3f %10.3f", name, fine.stats.steps,
        coarse.stats.steps, fine.stats.rhs_evals, coarse.stats.rhs_evals, fine.seconds,
        coarse.seconds))
    else
      print(string.format("%-22s failed: %s", name, why or "?"))
    end
  end
end

if which ~= "examples" then
  -- Accuracy: energy drift relative to the energy scale, and for the four-bar the crank's
  -- end angle against the branch it must stay on (-30.343945 rad at 10 s).
  local cases = {
    { "pendulum", "examples/pendulum.lua", 10 },
    { "double_pendulum", "examples/double_pendulum.lua", 10 },
    { "four_bar", "examples/four_bar.lua", 10 },
    { "bricard", "examples/bricard.lua", 10 },
  }
  print(string.format("%-16s %-6s %-6s %9s %9s %8s %10s  %s", "model", "method", "rtol", "steps",
    "rhs", "s", "energy", "outcome"))
  for _, case in ipairs(cases) do
    for _, method in ipairs { "auto", "bdf", "adams", "erk" } do
      for _, rtol in ipairs { 1e-6, 1e-8, 1e-10 } do
        local res, why = run(function() return dofile(case[2]) end,
          { method = method, rtol = rtol, atol = rtol / 100, t_end = case[3], dt_out = 0.01 })
        if res then
          local e0, drift, scale = res.energy[1], 0, math.abs(res.energy[1])
          for i = 1, res.rows do scale = math.max(scale, math.abs(res.kinetic[i])) end
          for i = 1, res.rows do drift = math.max(drift, math.abs(res.energy[i] - e0)) end
          local outcome = "ran"
          if case[1] == "four_bar" then -- another branch ends radians away
            local off = math.abs(res["crank.theta"][res.rows] + 30.343945)
            outcome = off < 0.5 and string.format("right branch (crank %.1e rad off)", off)
              or string.format("WRONG BRANCH: crank %.3f rad off", off)
          end
          print(string.format("%-16s %-6s %-6g %9d %9d %8.3f %10.2e  %s", case[1], method, rtol,
            res.stats.steps, res.stats.rhs_evals, res.seconds, drift / scale, outcome))
        else
          print(string.format("%-16s %-6s %-6g %9s %9s %8s %10s  stopped: %s", case[1], method,
            rtol, "-", "-", "-", "-", why))
        end
      end
    end
  end
end
