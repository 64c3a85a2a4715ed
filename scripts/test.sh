#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (CTest, output readable in a log).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
