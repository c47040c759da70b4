#!/usr/bin/env bash
# Installs what is missing, checks the C sources' formatting, builds joinery twice (plain,
# and with AddressSanitizer + UndefinedBehaviorSanitizer), and runs the whole suite (every
# test registered in tests/meson.build, through meson test) in both, the threads test under
# ThreadSanitizer (a third build of that one target), then the plain suite again under the
# Haswell and Prescott OpenBLAS kernels, an install into a temporary prefix used as a user
# would (tests/install/check.sh), and last the two fuzzers of tests/fuzz for a minute each. Each meson test prints a line per test, the log of every test that failed, and a
# closing count of what passed and failed (the logs: DIR/meson-logs/testlog.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
# The sources are as clang-format (Debian's, under .clang-format) writes them.
bash .ci/format-check

configure() { # dir, meson options...
  local dir=$1; shift
  if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null
  else meson setup "$dir" "$@" >/dev/null; fi
  meson compile -C "$dir" >/dev/null
}
configure build -Dtests=true
configure build-asan -Dtests=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export OPENBLAS_NUM_THREADS=1
suite() { # build dir, meson test options...: the whole suite (tests/meson.build sets each
  # test's environment: the build's joinery command and plugins)
  local dir=$1; shift
  meson test -C "$dir" --print-errorlogs "$@" ||
    { echo "(each test's whole output, its diagnostics included: $dir/meson-logs/testlog.txt)"; return 1; }
}
status=0
echo "== tests in build"
suite build || status=1
# The sanitizers slow some tests several times over: four times the timeouts there. The
# suite 'tools' (external programs: gnuplot, h5py, h5dump) runs in the plain build only.
echo "== tests in build-asan"
suite build-asan --timeout-multiplier 4 --no-suite tools || status=1
# The thread contract (joinery.h) under ThreadSanitizer: only t_threads is built there, the
# rest of the suite being single-threaded. OPENBLAS_NUM_THREADS=1 (above): OpenBLAS's own
# worker threads are not instrumented, so TSan would see their memory pool race.
echo "== t_threads in build-tsan (ThreadSanitizer)"
if [ -d build-tsan ]; then meson setup --reconfigure build-tsan -Dtests=true -Db_sanitize=thread -Dbuildtype=debug >/dev/null
else meson setup build-tsan -Dtests=true -Db_sanitize=thread -Dbuildtype=debug >/dev/null; fi
meson compile -C build-tsan t_threads >/dev/null
TSAN_OPTIONS=halt_on_error=1 suite build-tsan --no-rebuild engine/t_threads.c || status=1
# The plain suite again under other OpenBLAS kernels: their rounding differs, so a bound
# without margin over the method's error fails here rather than on a user's machine.
# Haswell needs AVX2; Prescott (SSE3) runs on any x86-64.
for kernel in Haswell Prescott; do
  if [ "$kernel" = Haswell ] && ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "== OPENBLAS_CORETYPE=$kernel skipped: this CPU has no AVX2"
    continue
  fi
  echo "== tests in build, OPENBLAS_CORETYPE=$kernel"
  OPENBLAS_CORETYPE=$kernel suite build --no-suite tools || status=1
done
# Installed as a user installs it, into a temporary prefix, and used from there alone.
echo "== install (tests/install/check.sh)"
sh tests/install/check.sh || status=1
# The libFuzzer harnesses (tests/fuzz/): a minute each, side by side, in a clang build;
# a crash, leak or undefined behaviour fails.
echo "== fuzzing (tests/fuzz/run.sh, ${FUZZ_SECONDS:-60} s each)"
bash tests/fuzz/run.sh || status=1
exit $status
