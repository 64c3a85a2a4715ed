#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest, output readable in a log).
# Usage: scripts/test.sh              Release build in ./build, the whole suite
#        scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in
#                                     ./build-sanitize (-O1, no debug info, no benchmarks), the
#                                     whole suite under it; any sanitizer report fails its test
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
case "${1:-}" in
  "") ;;
  --sanitize) sanitize=1 ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac
scripts/install-deps.sh --test
if (( sanitize == 0 )); then
  scripts/build.sh
  ctest --test-dir build --output-on-failure -j"$(nproc)"
  exit 0
fi

# -O1 without -g compiles about twice as fast as the Release build's -O2 under the sanitizers and
# keeps function names in the reports (symbols). The benchmarks are left out: they measure speed.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Sanitize "-DCMAKE_CXX_FLAGS_SANITIZE=-O1" \
  -DTRNSIM_SANITIZE=ON -DTRNSIM_BUILD_BENCH=OFF >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# halt_on_error and abort_on_error: a report ends the process abnormally, whatever the exit code
# a test expects. SystemC switches stacks between its threads, which ASan's fake stacks for
# use-after-return cannot follow, and LeakSanitizer's end-of-process scan crashes on SystemC's
# thread stacks ("Tracer caught signal 11"): both are off, so leaks are not checked.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=0:detect_stack_use_after_return=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
# The documented `trnsim validate` commands skip themselves, and the tests labelled `slow` (the
# whole calibration, minutes under the sanitizers) or `release_only` (determinism on three more
# generations, the Chromium rendering) are left out: the Release suite runs them.
export TRNSIM_SANITIZER_SUITE=1
ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)" -LE "slow|release_only"
