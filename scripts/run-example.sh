#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a real example kernel on the
# embedded default config (trn2), printing the result.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/src/cli/trnsim run examples/kernels/vector_add.json "$@"
