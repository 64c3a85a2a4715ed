#!/bin/bash
# Submits a sweep as a Slurm job array of SHARDS tasks and a merge job that runs after all of
# them succeed. Usage: examples/slurm/submit.sh SPEC [SHARDS]   (default 8 shards)
# Environment: OUT (results directory), TRNSIM (the trnsim binary; default: trnsim on PATH).
set -euo pipefail

SPEC=${1:?usage: submit.sh SPEC [SHARDS]}
SHARDS=${2:-8}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SPEC
export OUT=${OUT:-results/$(basename "${SPEC%.json}")}
export TRNSIM=${TRNSIM:-trnsim}

# The whole listing is read before its first line is printed: `| head -n 1` would close the pipe
# early, and under pipefail the SIGPIPE that trnsim gets would stop this script (exit 141).
plan=$("$TRNSIM" sweep "$SPEC" --dry-run)
echo "${plan%%$'\n'*}"
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) "$HERE/sweep.sbatch")
merge=$(sbatch --parsable --dependency=afterok:"${array%%;*}" "$HERE/merge.sbatch")
echo "submitted array job $array ($SHARDS shards) and merge job $merge; results in $OUT/"
