#!/usr/bin/env bash
# Installs what is missing, checks the C sources' formatting, builds joinery twice (plain,
# and with AddressSanitizer + UndefinedBehaviorSanitizer), and runs the whole suite through prove in both, the
# threads test under ThreadSanitizer (a third build of that one target), then the
# plain suite again under the Haswell and Prescott OpenBLAS kernels, and last the two
# fuzzers of tests/fuzz for a minute each; each prove's closing line says whether
# everything passed.
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
configure build
configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export OPENBLAS_NUM_THREADS=1
suite() { # build dir: the whole suite through prove
  local dir=$1
  JOINERY="$PWD/$dir/lua/joinery" BUILD_DIR="$PWD/$dir" \
    JOINERY_PLUGIN_DIR="$PWD/$dir/examples/plugin" JOINERY_TEST_PLUGIN_DIR="$PWD/$dir/tests/plugins" \
    prove --exec tests/tap-exec $(find "$dir/tests" -maxdepth 1 -type f -name 't_*' -perm -u+x | sort) tests/lua/t_*.lua tests/lua/t_*.sh
}
status=0
for dir in build build-asan; do
  echo "== tests in $dir"
  suite "$dir" || status=1
done
# The thread contract (joinery.h) under ThreadSanitizer: only t_threads is built there, the
# rest of the suite being single-threaded. OPENBLAS_NUM_THREADS=1 (above): OpenBLAS's own
# worker threads are not instrumented, so TSan would see their memory pool race.
echo "== t_threads in build-tsan (ThreadSanitizer)"
if [ -d build-tsan ]; then meson setup --reconfigure build-tsan -Db_sanitize=thread -Dbuildtype=debug >/dev/null
else meson setup build-tsan -Db_sanitize=thread -Dbuildtype=debug >/dev/null; fi
meson compile -C build-tsan t_threads >/dev/null
TSAN_OPTIONS=halt_on_error=1 prove --exec tests/tap-exec build-tsan/tests/t_threads || status=1
# The plain suite again under other OpenBLAS kernels: their rounding differs, so a bound
# without margin over the method's error fails here rather than on a user's machine.
# Haswell needs AVX2; Prescott (SSE3) runs on any x86-64.
for kernel in Haswell Prescott; do
  if [ "$kernel" = Haswell ] && ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "== OPENBLAS_CORETYPE=$kernel skipped: this CPU has no AVX2"
    continue
  fi
  echo "== tests in build, OPENBLAS_CORETYPE=$kernel"
  OPENBLAS_CORETYPE=$kernel suite build || status=1
done
# The libFuzzer harnesses (tests/fuzz/): a minute each, side by side, in a clang build;
# a crash, leak or undefined behaviour fails.
echo "== fuzzing (tests/fuzz/run.sh, ${FUZZ_SECONDS:-60} s each)"
bash tests/fuzz/run.sh || status=1
exit $status
