-- Tolerances that mean what they say (issue 41): the global error of every example with a
-- closed form or an independent reference (bench/tolerance_references.lua) against that
-- reference, at rtol 1e-4 ... 1e-13 with atol = rtol / 100 (atol_velocity at its default,
-- 10 atol), under each method. Per run: the error, its multiple of rtol, steps and seconds;
-- flagged where tightening rtol by 10 makes the error more than 1.5 times larger (and above
-- 1e-14, where rounding, not the tolerance, decides). Then per
-- method the largest multiple and the non-monotone cases. A method the build lacks, or a run
-- that stops, shows as `stops: <reason>`.
--   build/lua/joinery bench/tolerances.lua        plain text
--   build/lua/joinery bench/tolerances.lua md     markdown tables (docs/numerics.md)
local markdown = arg and arg[1] == "md"
local models = dofile("bench/tolerance_references.lua")
local methods = { "adams", "bdf", "erk", "auto" }
local rtols = {}
for e = 4, 13 do rtols[#rtols + 1] = 10.0 ^ -e end
local ATOL_RATIO = 1 / 100
local WORSE = 1.5 -- a tighter rtol whose error grows by more than this is flagged
local ROUNDING = 1e-14 -- errors below this (a tenth of the tightest rtol) are never flagged

-- One run: its numbers, or nil and the first line of why it stopped (without the Lua
-- location and a parenthesis cut off at 100 characters).
local function run(model, case, method, rtol)
  local ok, res = pcall(model.simulate, model, { method = method, rtol = rtol,
    atol = rtol * ATOL_RATIO, t_end = case.t_end, dt_out = case.dt_out })
  if not ok then
    local why = tostring(res):gsub("\n.*", ""):gsub("^[^:]*:%d+: ", ""):sub(1, 100)
    return nil, (why:gsub("%s*%([^)]*$", ""))
  end
  return { error = case.error(res), steps = res.stats.steps, seconds = res.seconds }
end

-- A series: one model under one method at every rtol, tightest last. r.grew is the factor
-- over the previous (10x looser) rtol's error when it is above WORSE.
local series = {}
for _, case in ipairs(models) do
  local model = dofile(case.path):compile()
  for _, method in ipairs(methods) do
    local runs, previous = {}, nil
    for _, rtol in ipairs(rtols) do
      local r, why = run(model, case, method, rtol)
      r = r or { stops = why }
      r.rtol = rtol
      if r.error then
        r.multiple = r.error / rtol
        if previous and previous.error and r.error > WORSE * previous.error
          and r.error > ROUNDING then
          r.grew = r.error / previous.error
        end
      end
      runs[#runs + 1], previous = r, r
    end
    series[#series + 1] = { case = case, method = method, runs = runs }
  end
end

-- The reason every run of a series stopped for, when it is one reason (a refused method).
local function refused(one)
  local why = one.runs[1].stops
  for _, r in ipairs(one.runs) do
    if r.stops ~= why then return nil end
  end
  return why
end

-- Per method: the largest multiple (and where), the runs that stopped; and the flagged runs.
local summary, flagged = {}, {}
for _, method in ipairs(methods) do summary[method] = { stops = 0, runs = 0 } end
for _, one in ipairs(series) do
  local s = summary[one.method]
  for _, r in ipairs(one.runs) do
    s.runs = s.runs + 1
    if r.stops then s.stops = s.stops + 1 end
    if r.multiple and (not s.worst or r.multiple > s.worst.multiple) then
      s.worst, s.where = r, one.case.name
    end
    if r.grew then flagged[#flagged + 1] = { case = one.case, method = one.method, run = r } end
  end
end

local function grew_note(case, r)
  if not r.grew then return "" end
  local at_floor = r.error < 10 * case.floor and " (within 10x the reference's floor)" or ""
  return string.format("error x%.2f vs rtol %.0e%s", r.grew, r.rtol * 10, at_floor)
end

local span = string.format("rtol %.0e .. %.0e, atol = rtol / %g", rtols[1], rtols[#rtols],
  1 / ATOL_RATIO)

if markdown then
  local function cell(text) return (tostring(text):gsub("|", "\\|")) end
  print(string.format("References (%s):\n", span))
  print("| model | reference | error in | reference floor | span |")
  print("|---|---|---|---|---|")
  for _, case in ipairs(models) do
    print(string.format("| %s | %s | %s | %.1e | %g s |", case.name, cell(case.reference),
      case.unit, case.floor, case.t_end))
  end

  -- The multiples at a glance: a star marks an error more than WORSE x the looser rtol's.
  print(string.format("\nerror / rtol (* error grew more than %gx from the 10x looser rtol):\n",
    WORSE))
  local head, rule = { "model", "method" }, { "---", "---" }
  for _, rtol in ipairs(rtols) do
    head[#head + 1], rule[#rule + 1] = string.format("%.0e", rtol), "---"
  end
  print("| " .. table.concat(head, " | ") .. " |")
  print("|" .. table.concat(rule, "|") .. "|")
  for _, one in ipairs(series) do
    local why = refused(one)
    local cells = { one.case.name, one.method }
    for i, r in ipairs(one.runs) do
      if why then cells[i + 2] = i == 1 and "stops: " .. cell(why) or ""
      elseif r.stops then cells[i + 2] = "stops"
      else cells[i + 2] = string.format("%.3g%s", r.multiple, r.grew and "*" or "") end
    end
    print("| " .. table.concat(cells, " | ") .. " |")
  end

  print("\nEvery run:\n")
  print("| model | method | rtol | error | error / rtol | steps | s | note |")
  print("|---|---|---|---|---|---|---|---|")
  for _, one in ipairs(series) do
    local why = refused(one)
    if why then
      print(string.format("| %s | %s | all | – | – | – | – | stops: %s |", one.case.name,
        one.method, cell(why)))
    else
      for _, r in ipairs(one.runs) do
        if r.stops then
          print(string.format("| %s | %s | %.0e | – | – | – | – | stops: %s |", one.case.name,
            one.method, r.rtol, cell(r.stops)))
        else
          print(string.format("| %s | %s | %.0e | %.2e | %.3g | %d | %.3f | %s |", one.case.name,
            one.method, r.rtol, r.error, r.multiple, r.steps, r.seconds, grew_note(one.case, r)))
        end
      end
    end
  end

  print(string.format("\nPer method (%s):\n", span))
  print("| method | largest error / rtol | where | runs stopped |")
  print("|---|---|---|---|")
  for _, method in ipairs(methods) do
    local s = summary[method]
    local largest = s.worst and string.format("%.3g", s.worst.multiple) or "–"
    local where = s.worst and string.format("%s, rtol %.0e", s.where, s.worst.rtol) or "–"
    print(string.format("| %s | %s | %s | %d of %d |", method, largest, where, s.stops, s.runs))
  end
  print(string.format("\nNon-monotone (error more than %gx larger at 10x tighter rtol):\n", WORSE))
  print("| model | method | rtol | error | error at 10x rtol | factor |")
  print("|---|---|---|---|---|---|")
  for _, f in ipairs(flagged) do
    print(string.format("| %s | %s | %.0e | %.2e | %.2e | %.2f |", f.case.name, f.method,
      f.run.rtol, f.run.error, f.run.error / f.run.grew, f.run.grew))
  end
  return
end

for _, one in ipairs(series) do
  local case = one.case
  if one.method == methods[1] then
    print(string.format("\n%s: %s, %g s; error in %s; reference floor %.1e", case.name,
      case.reference, case.t_end, case.unit, case.floor))
    print(string.format("  %-6s %-6s %10s %10s %8s %8s  %s", "method", "rtol", "error",
      "err/rtol", "steps", "s", "note"))
  end
  local why = refused(one)
  if why then
    print(string.format("  %-6s %-6s stops: %s", one.method, "all", why))
  else
    for _, r in ipairs(one.runs) do
      if r.stops then
        print(string.format("  %-6s %-6.0e stops: %s", one.method, r.rtol, r.stops))
      else
        print(string.format("  %-6s %-6.0e %10.2e %10.3g %8d %8.3f  %s", one.method, r.rtol,
          r.error, r.multiple, r.steps, r.seconds, grew_note(case, r)))
      end
    end
  end
end

print(string.format("\nSummary, %s:", span))
for _, method in ipairs(methods) do
  local s = summary[method]
  if s.worst then
    print(string.format("  %-6s largest error / rtol %9.3g (%s, rtol %.0e); %d of %d runs stopped",
      method, s.worst.multiple, s.where, s.worst.rtol, s.stops, s.runs))
  else
    print(string.format("  %-6s no run finished (%d stopped)", method, s.stops))
  end
end
print(string.format("Non-monotone (error more than %gx larger at 10x tighter rtol): %d", WORSE,
  #flagged))
for _, f in ipairs(flagged) do
  print(string.format("  %-16s %-6s rtol %.0e: %.2e against %.2e at %.0e, x%.2f", f.case.name,
    f.method, f.run.rtol, f.run.error, f.run.error / f.run.grew, f.run.rtol * 10, f.run.grew))
end
