-- joinery.math: hyper-dual numbers in Lua. Code written for plain numbers, run on
-- hyper(x, 1, 1, 0), yields f(x), f'(x) (e1, e2) and f''(x) (e12).
local tap = dofile("tests/lua/tap.lua")
local M = require("joinery").math
local hyper, sin, cos, exp = M.hyper, M.sin, M.cos, M.exp
-- f at 3 points (5 checks each), 13 functions on a hyper, 56 single checks
tap.plan(3 * 5 + 13 + 56)

local function rel(got, want, name)
  return tap.is_near(got, want, 1e-12 * math.max(1, math.abs(want)), name)
end

-- f written for plain numbers; also run on plain numbers.
local function f(x) return x * x * sin(x) + exp(x) / x end
local function df(x) return 2 * x * math.sin(x) + x * x * math.cos(x) + math.exp(x) / x - math.exp(x) / (x * x) end
local function d2f(x)
  return 2 * math.sin(x) + 4 * x * math.cos(x) - x * x * math.sin(x)
    + math.exp(x) * (1 / x - 2 / (x * x) + 2 / (x * x * x))
end

for _, x0 in ipairs({ 0.7, 1.3, 2.9 }) do
  local y = f(hyper(x0, 1, 1, 0))
  tap.ok(math.type(f(x0)) == "float", "f on a plain number gives a plain number")
  rel(y.v, x0 * x0 * math.sin(x0) + math.exp(x0) / x0, "f(" .. x0 .. ") value")
  rel(y.e1, df(x0), "f'(" .. x0 .. ") in e1")
  rel(y.e2, df(x0), "f'(" .. x0 .. ") in e2")
  rel(y.e12, d2f(x0), "f''(" .. x0 .. ") in e12")
end

-- plain numbers in, plain numbers out (math library semantics)
tap.is(M.sin(0.5), math.sin(0.5), "sin on a number")
tap.is(M.sqrt(4), 2.0, "sqrt(4)")
tap.ok(math.type(M.abs(-3)) == "integer" and M.abs(-3) == 3, "abs keeps integers")
tap.is(M.atan2(1, 2), math.atan(1, 2), "atan2 on numbers")
tap.is(M.atan(1, 2), math.atan(1, 2), "atan(y, x) on numbers")
tap.is(M.log(8, 2), 3.0, "log with base 2")
tap.is(M.hypot(3, 4), 5.0, "hypot on numbers")
tap.is(M.pi, math.pi, "pi")
for _, name in ipairs({ "sqrt", "exp", "log", "sin", "cos", "tan", "atan", "asin", "acos",
  "sinh", "cosh", "tanh", "abs" }) do
  local h = M[name](hyper(0.4, 1, 0, 0))
  tap.ok(getmetatable(h) ~= nil and math.abs(h.v - M[name](0.4)) < 1e-15,
    name .. " on a hyper gives a hyper with the plain value")
end

-- constructor defaults and fields
local h = hyper(1.5)
tap.ok(h.v == 1.5 and h.e1 == 0 and h.e2 == 0 and h.e12 == 0, "missing parts are 0")

-- mixed operands
local x = hyper(2, 1, 1, 0)
local r = 3 + x; rel(r.v, 5, "number + hyper"); rel(r.e1, 1, "number + hyper e1")
r = x + 3; rel(r.v, 5, "hyper + number")
r = 3 - x; rel(r.v, 1, "number - hyper"); rel(r.e1, -1, "number - hyper e1")
r = x - 3; rel(r.v, -1, "hyper - number")
r = 3 * x; rel(r.e1, 3, "number * hyper e1")
r = x * 3; rel(r.e2, 3, "hyper * number e2")
r = 3 / x; rel(r.e1, -3 / 4, "number / hyper e1"); rel(r.e12, 6 / 8, "number / hyper e12")
r = x / 4; rel(r.v, 0.5, "hyper / number")
r = -x; rel(r.e1, -1, "unary minus")
r = x ^ 3; rel(r.e1, 12, "hyper ^ number e1"); rel(r.e12, 12, "hyper ^ number e12")
r = 2 ^ x; rel(r.e1, 4 * math.log(2), "number ^ hyper e1")
rel(r.e12, 4 * math.log(2) ^ 2, "number ^ hyper e12")
r = x ^ x -- d/dx x^x = x^x (ln x + 1); d2 = x^x ((ln x + 1)^2 + 1/x)
rel(r.e1, 4 * (math.log(2) + 1), "hyper ^ hyper e1")
rel(r.e12, 4 * ((math.log(2) + 1) ^ 2 + 0.5), "hyper ^ hyper e12")
r = "1" + x; rel(r.v, 3, "numeric string + hyper")

-- atan2 mixed partial: ε1 on y, ε2 on x
local y0, x0 = 0.8, -1.7
local a = M.atan2(hyper(y0, 1, 0, 0), hyper(x0, 0, 1, 0))
local r2 = x0 * x0 + y0 * y0
rel(a.v, math.atan(y0, x0), "atan2 value")
rel(a.e1, x0 / r2, "atan2 d/dy")
rel(a.e2, -y0 / r2, "atan2 d/dx")
rel(a.e12, (y0 * y0 - x0 * x0) / (r2 * r2), "atan2 d2/dydx")
a = M.atan2(y0, hyper(x0, 1, 0, 0))
rel(a.e1, -y0 / r2, "atan2 with a number y")
local hy = M.hypot(hyper(3, 1, 0, 0), hyper(4, 0, 1, 0))
rel(hy.e12, -12 / 125, "hypot mixed partial")

-- comparisons on the real part
tap.ok(hyper(1, 5) < hyper(2, -5), "hyper < hyper")
tap.ok(hyper(1) < 2 and 0 < hyper(1), "mixed <")
tap.ok(hyper(2) <= 2 and 2 <= hyper(2, 1) and not (hyper(3) <= 2), "mixed <=")
tap.ok(hyper(2, 1) == hyper(2, 7), "== compares real parts")
tap.ok(hyper(2) ~= hyper(3), "~=")
tap.ok(hyper(1) > 0.5 and hyper(1) >= 1, "> and >=")

-- tostring
local s = tostring(hyper(1.5, 2, 0, -0.25))
tap.has(s, "hyper(", "tostring names the type")
tap.has(s, "1.5", "tostring shows v")
tap.has(s, "-0.25", "tostring shows e12")

-- errors
tap.raises(function() local v = M.sin("a"); return v end, { "joinery.math.sin", "string" }, "sin of a string")
tap.raises(function() local v = M.atan2(1, {}); return v end, { "#2", "joinery.math.atan2", "table" }, "atan2 of a table")
tap.raises(function() local v = hyper(1) + {}; return v end, { "arithmetic", "joinery.Hyper", "table" }, "hyper + table")
tap.raises(function() local v = hyper(1).w; return v end, { "no field 'w'" }, "unknown field")
tap.done()
