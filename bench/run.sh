#!/usr/bin/env bash
# Benchmarks: time per simulated second of the example models, as ratios against the
# spring chain in the same run, the drift-control table of docs/numerics.md, and the global
# error against each reference across rtol (bench/tolerances.lua).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
export OPENBLAS_NUM_THREADS=1
build/lua/joinery bench/models.lua
build/lua/joinery bench/lua_parts.lua
build/lua/joinery bench/drift.lua
build/lua/joinery bench/formulations.lua
build/lua/joinery --trust bench/stepping.lua  # it lists examples/ with io.popen
build/lua/joinery bench/tolerances.lua
build/lua/joinery bench/scaling.lua
build/lua/joinery bench/contacts.lua
build/lua/joinery --trust bench/methods.lua  # issue 41: the defaults against the cheapest fixed method
# joinery beside MuJoCo, Simbody and a hand-written floor (long; docs/bench.md): opt in
if [ "${BENCH_PEERS:-}" = 1 ]; then bash bench/peers/run.sh --quick; fi
