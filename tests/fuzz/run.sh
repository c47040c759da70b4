#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
# coverage on every C file) in build-fuzz and runs each for FUZZ_SECONDS (default 60) of
# fuzzing, from its checked-in seeds (tests/fuzz/corpus/<name>; fuzz_script also the
# examples), side by side. A finding (crash, leak, undefined behaviour, or a sandboxed
# script that wrote a file, removed one or loaded bytecode: fuzz_cli.c) fails, with the
# sanitizer's report; its input is kept in build-fuzz/findings/. A timeout (60 s on one
# input) or running out of memory stops that harness and is reported, without failing.
#   bash tests/fuzz/run.sh                     # both, a minute each (CI)
#   FUZZ_SECONDS=3600 bash tests/fuzz/run.sh fuzz_params     # one harness, an hour
#   build-fuzz/tests/fuzz/fuzz_script build-fuzz/findings/fuzz_script-crash-...  # rerun one
# New inputs that found coverage accumulate in build-fuzz/corpus/<name> between runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(fuzz_script fuzz_params)

if ! command -v clang >/dev/null; then
  echo "fuzz: clang is not installed (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi
if [ -d build-fuzz ]; then
  meson setup --reconfigure build-fuzz >/dev/null
else
  CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
meson compile -C build-fuzz "${harnesses[@]}" >/dev/null

export OPENBLAS_NUM_THREADS=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
mkdir -p build-fuzz/findings
# One harness: fuzzes for $seconds into build-fuzz/<name>.log; its exit status is libFuzzer's.
fuzz_one() {
  local name=$1 corpus=build-fuzz/corpus/$1
  local seeds=(tests/fuzz/corpus/${name#fuzz_}) opts=()
  if [ "$name" = fuzz_script ]; then
    # the examples but four_bar_chain (10 s per input under the sanitizers)
    rm -rf build-fuzz/seeds-examples
    mkdir -p build-fuzz/seeds-examples
    cp examples/*.lua build-fuzz/seeds-examples/
    rm build-fuzz/seeds-examples/four_bar_chain.lua
    seeds+=(build-fuzz/seeds-examples)
    opts+=(-dict=tests/fuzz/script.dict -max_len=8192)
  else # two bytes and one per number: the examples pass up to a few hundred
    opts+=(-max_len=300 -len_control=0)
  fi
  mkdir -p "$corpus"
  # -close_fd_mask=3: the runs' own output is silenced; libFuzzer's and the sanitizers'
  # reports still reach the log. The artifact prefix is absolute: a run's working
  # directory is the harness's scratch (fuzz_cli.c, the sandbox oracle).
  build-fuzz/tests/fuzz/$name -max_total_time="$seconds" -timeout=60 -rss_limit_mb=3072 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$PWD/build-fuzz/findings/$name-" \
    "${opts[@]}" "$corpus" "${seeds[@]}" >"build-fuzz/$name.log" 2>&1
}
# The harnesses run side by side (one core each).
pids=()
for name in "${harnesses[@]}"; do
  fuzz_one "$name" &
  pids+=($!)
done
status=0
for k in "${!harnesses[@]}"; do
  name=${harnesses[$k]} log=build-fuzz/${harnesses[$k]}.log
  if wait "${pids[$k]}"; then
    echo "== $name: $(grep -m 1 '^stat::number_of_executed_units' "$log" | sed 's/.*: //') inputs in ${seconds} s, no finding"
  elif grep -qE 'ERROR: libFuzzer: (timeout|out-of-memory)' "$log"; then
    # A model too large or too stiff for the caps is not a defect of the kind this looks
    # for (crash, leak, undefined behaviour): reported, kept, not failed.
    echo "== $name: stopped early: $(grep -m 1 -oE 'ERROR: libFuzzer: [a-z-]+' "$log") (input kept in build-fuzz/findings/, log $log)"
  else
    grep -B 2 -A 40 -m 1 -E 'fuzz: sandbox oracle|ERROR: |runtime error|==[0-9]+==' "$log" >&2 || tail -n 40 "$log" >&2
    echo "fuzz: $name found a defect; the input is in build-fuzz/findings/ (log: $log)" >&2
    status=1
  fi
done
exit $status
