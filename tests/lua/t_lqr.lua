-- joinery.lqr(A, B, Q, R) -> K, P (lua/control.c over jy_lqr, engine/src/lqr.c): the double
-- integrator's closed form; random systems whose Riccati residual is below 1e-12 of its
-- terms (where well conditioned) and whose closed loop A - B K is stable, proved twice: by Lyapunov (P positive
-- definite, and (A - BK)'P + P(A - BK) = -(Q + K'RK) negative definite) and by Routh-Hurwitz
-- on its characteristic polynomial; bad input, each an error at the script line.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

tap.plan(6 + 5 + 14 + 16) -- each raises: the location and every part of its message

local function zeros(r, c)
  local M = {}
  for i = 1, r do
    M[i] = {}
    for j = 1, c do M[i][j] = 0 end
  end
  return M
end
local function mul(X, Y)
  local Z = zeros(#X, #Y[1])
  for i = 1, #X do
    for j = 1, #Y[1] do
      local s = 0
      for k = 1, #Y do s = s + X[i][k] * Y[k][j] end
      Z[i][j] = s
    end
  end
  return Z
end
local function transpose(X)
  local Z = zeros(#X[1], #X)
  for i = 1, #X do for j = 1, #X[1] do Z[j][i] = X[i][j] end end
  return Z
end
local function add(X, Y, s)
  local Z = zeros(#X, #X[1])
  for i = 1, #X do for j = 1, #X[1] do Z[i][j] = X[i][j] + (s or 1) * Y[i][j] end end
  return Z
end
local function fnorm(X)
  local s = 0
  for i = 1, #X do for j = 1, #X[1] do s = s + X[i][j] ^ 2 end end
  return math.sqrt(s)
end
local function maxabs(X)
  local s = 0
  for i = 1, #X do for j = 1, #X[1] do s = math.max(s, math.abs(X[i][j])) end end
  return s
end
-- Cholesky succeeds: X (symmetric) is positive definite.
local function positive_definite(X)
  local n, L = #X, zeros(#X, #X)
  for j = 1, n do
    local d = X[j][j]
    for k = 1, j - 1 do d = d - L[j][k] ^ 2 end
    if not (d > 0) then return false end
    L[j][j] = math.sqrt(d)
    for i = j + 1, n do
      local s = X[i][j]
      for k = 1, j - 1 do s = s - L[i][k] * L[j][k] end
      L[i][j] = s / L[j][j]
    end
  end
  return true
end
-- det(sI - A) by Faddeev-LeVerrier: c[k + 1] the coefficient of s^(n - k), c[1] = 1.
local function charpoly(A)
  local n, Mk, c = #A, zeros(#A, #A), { 1 }
  for k = 1, n do
    local AM = mul(A, Mk)
    for i = 1, n do AM[i][i] = AM[i][i] + c[k] end
    Mk = AM
    local AMk = mul(A, Mk)
    local tr = 0
    for i = 1, n do tr = tr + AMk[i][i] end
    c[k + 1] = -tr / k
  end
  return c
end
-- Routh-Hurwitz: every root of the polynomial c (c[1] > 0) in the open left half plane.
local function hurwitz(c)
  local n = #c - 1
  local rows = { {}, {} }
  for k = 1, n + 1 do
    local r = (k % 2 == 1) and 1 or 2
    rows[r][#rows[r] + 1] = c[k]
  end
  for _, x in ipairs(c) do if not (x > 0) then return false end end
  local a, b = rows[1], rows[2]
  for _ = 1, n - 1 do
    if not (b[1] and b[1] > 0) then return false end
    local nxt = {}
    for k = 1, #a - 1 do nxt[k] = ((b[1] * (a[k + 1] or 0)) - a[1] * (b[k + 1] or 0)) / b[1] end
    a, b = b, nxt
    if #b == 0 then break end
  end
  return true
end

-- ---- the double integrator, Q = I, R = 1: P = [[sqrt3, 1], [1, sqrt3]], K = [1, sqrt3] --
local s3 = math.sqrt(3)
local K, P = joinery.lqr({ { 0, 1 }, { 0, 0 } }, { { 0 }, { 1 } }, { { 1, 0 }, { 0, 1 } }, 1)
tap.is(#K .. "x" .. #K[1] .. " " .. #P .. "x" .. #P[1], "1x2 2x2", "K is 1 x 2, P 2 x 2")
tap.is_near(K[1][1], 1, 1e-14, "k1 = 1")
tap.is_near(K[1][2], s3, 1e-14, "k2 = sqrt3")
tap.is_near(P[1][1], s3, 1e-14, "p11 = sqrt3")
tap.ok(P[1][2] == P[2][1] and math.abs(P[1][2] - 1) < 1e-15, "p12 = p21 = 1")
-- Q and R as numbers: times the identity.
local K2 = joinery.lqr({ { 0, 1 }, { 0, 0 } }, { { 0 }, { 1 } }, 1, { { 1 } })
tap.ok(K2[1][1] == K[1][1] and K2[1][2] == K[1][2], "Q = 1 is the identity")

-- ---- random systems ---------------------------------------------------------------------
-- A in [-1, 1)^(n x n), B in [-1, 1)^(n x m), Q = C'C + 0.1 I, R = D'D + 0.5 I; n = 2..6.
local seed = 12345
local function uniform() -- a linear congruential generator of its own: the same everywhere
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 1073741824 - 1
end
local function random(r, c)
  local M = zeros(r, c)
  for i = 1, r do for j = 1, c do M[i][j] = uniform() end end
  return M
end
local worst_res, worst_scaled, well, lyapunov, routh, count = 0, 0, 0, 0, 0, 0
for n = 2, 6 do
  for m = 1, 2 do
    for _ = 1, 4 do
      count = count + 1
      local A, B, C, D = random(n, n), random(n, m), random(n, n), random(m, m)
      local Q, R = mul(transpose(C), C), mul(transpose(D), D)
      for i = 1, n do Q[i][i] = Q[i][i] + 0.1 end
      for i = 1, m do R[i][i] = R[i][i] + 0.5 end
      local Kr, Pr = joinery.lqr(A, B, Q, R)
      local AtP, PA, KRK = mul(transpose(A), Pr), mul(Pr, A), mul(mul(transpose(Kr), R), Kr)
      local res = add(add(add(AtP, PA), KRK, -1), Q)
      local scale = fnorm(AtP) + fnorm(PA) + fnorm(KRK) + fnorm(Q)
      local kappa = math.max(1, maxabs(Pr) / maxabs(Q))
      if kappa <= 100 then
        well = well + 1
        worst_res = math.max(worst_res, fnorm(res) / scale)
      end
      worst_scaled = math.max(worst_scaled, fnorm(res) / scale / kappa)
      local Acl = add(A, mul(B, Kr), -1)
      local lyap = add(mul(transpose(Acl), Pr), mul(Pr, Acl))
      local W = add(Q, KRK)
      for i = 1, n do for j = 1, n do lyap[i][j] = -lyap[i][j] end end
      if positive_definite(Pr) and positive_definite(W) and maxabs(add(lyap, W, -1))
          < 1e-10 * maxabs(W) then
        lyapunov = lyapunov + 1
      end
      if hurwitz(charpoly(Acl)) then routh = routh + 1 end
    end
  end
end
-- The Schur method's error grows with the problem's conditioning: below 1e-12 where
-- max|P| <= 100 max|Q|, and below 1e-14 max|P| / max|Q| everywhere (tests/engine/t_lqr.c).
tap.ok(worst_res < 1e-12 and well > count / 2, string.format(
  "%d of %d random systems well conditioned: Riccati residual at most %.3g of its terms",
  well, count, worst_res))
tap.ok(worst_scaled < 1e-14, string.format(
  "all: the residual over max(1, max|P| / max|Q|) at most %.3g", worst_scaled))
tap.is(lyapunov, count, "Lyapunov: P > 0 and (A - BK)'P + P(A - BK) = -(Q + K'RK) < 0")
tap.is(routh, count, "Routh-Hurwitz: every closed-loop eigenvalue in the left half plane")
tap.ok(not hurwitz(charpoly({ { 0, 1 }, { 0, 0 } })) and hurwitz(charpoly({ { 0, 1 }, { -1, -1 } })),
  "the Routh-Hurwitz check itself: the double integrator fails, a damped oscillator passes")

-- ---- bad input ----------------------------------------------------------------------------
local A2, B2 = { { 0, 1 }, { 0, 0 } }, { { 0 }, { 1 } }
tap.raises(function() joinery.lqr(A2, B2, 1, -1) end, { "R is not positive definite" }, "R < 0")
tap.raises(function() joinery.lqr(A2, B2, 0, 1) end, { "no stabilizing solution", "imaginary axis" }, "Q = 0")
tap.raises(function() joinery.lqr({ { 1 } }, { { 0 } }, 1, 1) end, { "not stabilizable" }, "B = 0")
tap.raises(function() joinery.lqr(A2, B2, { { 1, 1 }, { 0, 1 } }, 1) end, { "Q is not symmetric" }, "Q not symmetric")
tap.raises(function() joinery.lqr(A2, { { 0 }, { 0 / 0 } }, 1, 1) end, { "B (2 x 1)", "not finite" }, "NaN")
tap.raises(function() joinery.lqr({ { 0, 1 } }, B2, 1, 1) end, { "A is 1 x 2, must be square" }, "A not square")
tap.raises(function() joinery.lqr(A2, { { 0 }, { 1 }, { 2 } }, 1, 1) end, { "B has 3 rows, A has 2" }, "B rows")
tap.raises(function() joinery.lqr(A2, B2, 1, { { 1, 0 } }) end, { "R is 1 x 2, must be 1 x 1" }, "R shape")
tap.raises(function() joinery.lqr(A2, B2, 1, "1") end, { "R must be a table of rows or a number" }, "R a string")
tap.raises(function() joinery.lqr(A2, { { 0 }, { "x" } }, 1, 1) end, { "B[2][1] must be a number" }, "a string entry")
tap.raises(function() joinery.lqr({ { 0, 1 }, { 0 } }, B2, 1, 1) end, { "row 2 of A has 1 entries" }, "ragged A")
tap.raises(function() joinery.lqr({}, B2, 1, 1) end, { "A has no rows" }, "empty A")
tap.raises(function() joinery.lqr(A2, nil, 1, 1) end, { "B must be a table of rows" }, "no B")
tap.raises(function() joinery.lqr({ { 0, 1 }, { -1, 0 } }, { { 0 }, { 0 } }, 1, 1) end, { "imaginary axis" }, "undamped, unreached")
tap.done()
