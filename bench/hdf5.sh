#!/usr/bin/env bash
# HDF5 against CSV output (issue 43, item 3): 1e6 output rows of a small model written by
# `joinery run --out run.csv` and `--out run.h5`, each timed under /usr/bin/time -v: wall
# and CPU time, the file's size and the peak resident memory. The runs integrate the same
# way, so the difference is the writer's. Also a run to /dev/null (the CSV's formatting
# without the disk) and, for memory flat in the rows, the same models at 1e5 rows. Each line
# is the run of least CPU time of REPEAT (default 3): on a shared machine the others carry
# the load of the rest.
# Usage: [REPEAT=N] bash bench/hdf5.sh [BUILD_DIR]   (results: bench/results/hdf5.md)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
joinery=$build/lua/joinery
export OPENBLAS_NUM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A free 1-D mass (10 channels: no constraint, cheap rows) and the pendulum of examples/
# (20 channels, one constraint row to project on).
cat >"$dir/mass.lua" <<'LUA'
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, 0, 0 } }
sys:add("mass", "m", { dim = 1, m = 1, init = { x = 0 }, vel = { x = 1 } })
return sys
LUA
cp examples/pendulum.lua "$dir/pendulum.lua"

repeat=${REPEAT:-3}
measure() { # model, out, t_end: one line of the table, the run of least CPU time of $repeat
  local model=$1 out=$2 t_end=$3
  local wall cpu=999999 rss size rows
  for ((k = 0; k < repeat; k++)); do
    [ -c "$out" ] || rm -f "$out"
    /usr/bin/time -v "$joinery" run "$dir/$model.lua" --quiet --t-end "$t_end" --dt-out 1e-5 \
      --out "$out" >"$dir/stdout" 2>"$dir/time"
    local w c
    w=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
      for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$dir/time")
    c=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$dir/time")
    if awk -v c="$c" -v m="$cpu" 'BEGIN {exit !(c < m)}'; then
      cpu=$c wall=$w
      rss=$(awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$dir/time")
    fi
  done
  rows=$(sed -n 's/^wrote \([0-9]*\) rows x \([0-9]*\) columns.*/\1 x \2/p' "$dir/stdout")
  if [ -f "$out" ] && [ ! -c "$out" ]; then size=$(awk -v b="$(stat -c %s "$out")" \
    'BEGIN {printf "%.1f", b / 1e6}'); else size=-; fi
  printf '| %-9s | %-12s | %-14s | %7.2f | %7.2f | %8s | %12s |\n' "$model" "${out##*/}" \
    "$rows" "$wall" "$cpu" "$size" "$rss"
  [ -c "$out" ] || rm -f "$out"
}

echo "| model     | output       | rows x columns | wall, s |  CPU, s | size, MB | peak RSS, MB |"
echo "|-----------|--------------|----------------|---------|---------|----------|--------------|"
for model in mass pendulum; do
  measure $model /dev/null 10
  measure $model "$dir/run.csv" 10
  measure $model "$dir/run.h5" 10
  measure $model "$dir/small.csv" 1
  measure $model "$dir/small.h5" 1
done
