#!/usr/bin/env bash
# Regenerates the golden result files in tests/golden/ from the current build, then lists what
# changed. Run it after an intended change of the timing model, a config or an output format,
# and review the diff before committing.
# Usage: scripts/regen-golden.sh [BUILD_DIR]    (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
cmake --build "$build" --target trnsim report_cli_tests -j2
TRNSIM_REGEN_GOLDEN=1 SC_COPYRIGHT_MESSAGE=DISABLE \
  "$build/tests/report/report_cli_tests" --gtest_filter='GoldenOutputs.SmallKernelMatchesTheGoldenFiles'
git --no-pager diff --stat -- tests/golden || true
