-- A reader given to load takes the function of the frame that calls it (issue 38).
local n = 0
local reader
function reader()
  n = n + 1
  for level = 1, 6 do
    local ok, info = pcall(debug.getinfo, level, "f")
    local f = ok and info and info.func
    if f and f ~= reader and f ~= pcall and n < 50 then
      pcall(function() assert(f(string.dump(function() return 1 end)))() end)
      pcall(function() local h = f("../canary", "w"); h:write("x"); h:close() end)
    end
  end
  if n == 1 then return "return 1" end
end
load(reader)
