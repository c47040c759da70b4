-- CPU time of sys:compile() alone for the spatial ball-joint chain (bench/compile/chain3d.lua)
-- at N = 100, 1000, 3000: the best of several compiles of freshly built systems, os.clock.
-- Issue 44's target: under 0.05 s at N = 1000. Run: build/lua/joinery bench/compile/run.lua
local here = (arg and arg[0] or "bench/compile/run.lua"):match("^(.*)/[^/]*$") or "."
local Ns = {}
for i = 1, #arg do Ns[#Ns + 1] = tonumber(arg[i]) end
if #Ns == 0 then Ns = { 100, 1000, 3000 } end
local chunk = assert(loadfile(here .. "/chain3d.lua"))
local _, build = chunk(1)
print(string.format("%6s %6s %6s %10s %12s", "N", "coords", "rows", "compile s", "s per body"))
for _, N in ipairs(Ns) do
  local reps = N <= 1000 and 5 or 3
  local best, model = math.huge, nil
  for _ = 1, reps do
    local sys = build(N)
    collectgarbage()
    local t0 = os.clock()
    model = sys:compile()
    local t = os.clock() - t0
    if t < best then best = t end
  end
  print(string.format("%6d %6d %6d %10.4f %12.2e", N, model:num_coords(), model:num_rows(), best,
    best / N))
end
