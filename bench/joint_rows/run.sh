#!/bin/sh
# bench/joint_rows/run.sh BUILD_DIR [LABEL] — instruction counts (valgrind's callgrind:
# repeatable on a loaded machine, unlike times) of two fixed short spatial runs: the
# 14-body tree (tree.lua, 0.5 s) and the Bricard linkage (examples/bricard.lua, 1 s). For
# each: the whole run, the part inside the joints' `constraints` (inclusive), and the
# steps and right-hand-side evaluations joinery reports. Run it before and after a change
# with the same build type (the default, debugoptimized) and compare.
#   bench/joint_rows/run.sh build before
set -eu
build=${1:?usage: run.sh BUILD_DIR [LABEL]}
label=${2:-run}
out=${TMPDIR:-/tmp}/joint_rows.$$
mkdir -p "$out"
for case in "tree bench/joint_rows/tree.lua 0.5" "bricard examples/bricard.lua 1"; do
  set -- $case
  valgrind --tool=callgrind --callgrind-out-file="$out/$1.cg" \
    "$build/lua/joinery" run "$2" --t-end "$3" --out "$out/$1.csv" >"$out/$1.log" 2>&1
  total=$(callgrind_annotate "$out/$1.cg" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  rows=$(callgrind_annotate --inclusive=yes "$out/$1.cg" |
    awk '/joint3d.c:constraints/ {gsub(",", "", $1); print $1; exit}')
  evals=$(grep -o '([0-9]* steps, [0-9]* right-hand-side evaluations)' "$out/$1.log")
  echo "$label $1: total Ir $total, joint constraints Ir ${rows:-0} $evals"
  tail -n 1 "$out/$1.csv" | cut -d, -f1-7 | sed "s/^/$label $1 end: /"
done
rm -rf "$out"
