-- An independent integration of the planar double pendulum, for t_double_pendulum.lua and
-- t_messages.lua: minimal coordinates (absolute angles from the downward vertical, as the
-- pendulum parts use) and classical Runge-Kutta with a fixed step (global error ~ h^4).
--   (m1+m2) l1 a1 + m2 l2 cos(d) a2 = -m2 l2 w2^2 sin(d) - (m1+m2) g sin(th1)
--   l1 cos(d) a1 + l2 a2 = l1 w1^2 sin(d) - g sin(th2),   d = th1 - th2
-- Returns reference(p, t_end, h) -> { th1, th2, w1, w2 } at t_end, p = { m1, l1, m2, l2, g,
-- th1, th2 } (starting at rest), and the right-hand side deriv(p, s) of s = { th1, th2, w1, w2 }.
local function deriv(p, s)
  local m1, l1, m2, l2, g = p.m1, p.l1, p.m2, p.l2, p.g
  local th1, th2, w1, w2 = s[1], s[2], s[3], s[4]
  local d = th1 - th2
  local a11, a12 = (m1 + m2) * l1, m2 * l2 * math.cos(d)
  local a21, a22 = l1 * math.cos(d), l2
  local r1 = -m2 * l2 * w2 * w2 * math.sin(d) - (m1 + m2) * g * math.sin(th1)
  local r2 = l1 * w1 * w1 * math.sin(d) - g * math.sin(th2)
  local det = a11 * a22 - a12 * a21
  return { w1, w2, (r1 * a22 - a12 * r2) / det, (a11 * r2 - a21 * r1) / det }
end

local function reference(p, t_end, h)
  local s = { p.th1, p.th2, 0, 0 }
  for _ = 1, math.floor(t_end / h + 0.5) do
    local k1 = deriv(p, s)
    local s2, s3, s4 = {}, {}, {}
    for i = 1, 4 do s2[i] = s[i] + h / 2 * k1[i] end
    local k2 = deriv(p, s2)
    for i = 1, 4 do s3[i] = s[i] + h / 2 * k2[i] end
    local k3 = deriv(p, s3)
    for i = 1, 4 do s4[i] = s[i] + h * k3[i] end
    local k4 = deriv(p, s4)
    for i = 1, 4 do s[i] = s[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
  end
  return s
end

return reference, deriv
