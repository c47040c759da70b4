-- A finalizer that runs during a collection inside a guard takes the guard's callee from
-- the frames below it, with no error at all (issue 38); at the top level the frame above
-- the script is the command's own main function (calling it crashed).
collectgarbage("incremental", 10, 1000, 1) -- collect often: inside the guards too
local stolen = {}
local function steal()
  for level = 1, 6 do
    local ok, info = pcall(debug.getinfo, level)
    if ok and info and info.func and info.what == "C" and info.func ~= pcall then
      stolen[#stolen + 1] = info.func
    end
  end
end
for i = 1, 2000 do
  setmetatable({}, { __gc = steal })
  pcall(io.open, string.rep("x", 100) .. i)
  pcall(io.output, "../x" .. i)
end
collectgarbage()
steal()
local tried = {}
for _, f in ipairs(stolen) do
  if not tried[f] then
    tried[f] = true
    pcall(function() f("../canary", "w"):write("escaped\n") end)
    pcall(f, "escaped.txt")
  end
end
