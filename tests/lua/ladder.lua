-- tests/lua/ladder.lua — the tolerance ladder and the methods a physics test runs a model
-- under: local L = dofile(<dir> .. "ladder.lua"). L.ladder holds rtol, atol pairs (nil: the
-- defaults, L.DEFAULT_RTOL and L.DEFAULT_ATOL); L.name(tol) names a rung in a check.
local L = {
  ladder = { { 1e-4, 1e-6 }, { 1e-6, 1e-8 }, { 1e-8, 1e-10 }, { nil, nil } },
  methods = { "auto", "bdf", "adams", "erk" },
  DEFAULT_RTOL = 1e-11,
  DEFAULT_ATOL = 1e-13,
}

function L.name(tol)
  return tol[1] and string.format("%g", tol[1]) or "default"
end

return L
