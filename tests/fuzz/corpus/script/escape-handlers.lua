-- The routes out of the sandbox that once worked (issue 38): a message handler takes the
-- original of the erroring guard from its frame with debug.getinfo(2, "f"), then writes
-- outside the run's directory and loads bytecode with it.
local handler, use
function use(f)
  if type(f) ~= "function" or f == handler or f == use then return end
  pcall(function() local h = f("../canary", "w"); h:write("escaped\n"); h:close() end)
  pcall(function() f("../escaped-output.txt"); io.write("escaped\n") end)
  pcall(function() f(string.dump(function() return 1 end))() end)
end
function handler(m)
  for level = 1, 4 do
    local ok, info = pcall(debug.getinfo, level, "f")
    if ok and info then use(info.func) end
  end
  return m
end
xpcall(io.open, handler, "x", "bad mode")
xpcall(io.output, handler, {})
xpcall(load, handler, {})
xpcall(loadfile, handler, {})
io.output(12345)
