#!/usr/bin/env bash
# Byte-compares `trnsim run --json` of every example kernel on trn1..trn4 between two trnsim
# binaries (a change meant to leave results alone must give 0 differences).
# Usage: bench/compare_outputs.sh OLD_TRNSIM NEW_TRNSIM [EXTRA RUN ARGUMENTS...]
#   e.g. bench/compare_outputs.sh ../main/build/src/cli/trnsim build/src/cli/trnsim --set dma.model=transfer
set -u
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_TRNSIM NEW_TRNSIM [EXTRA RUN ARGUMENTS...]" >&2
  exit 2
fi
old=$1
new=$2
shift 2
kernels="$(cd "$(dirname "$0")/.." && pwd)/examples/kernels"
same=0
different=0
for kernel in "$kernels"/*.json; do
  for config in trn1 trn2 trn3 trn4; do
    old_out=$("$old" run "$kernel" -c "$config" --json "$@" 2>&1)
    old_status=$?
    new_out=$("$new" run "$kernel" -c "$config" --json "$@" 2>&1)
    new_status=$?
    if [[ "$old_out" == "$new_out" && $old_status == "$new_status" ]]; then
      same=$((same + 1))
    else
      different=$((different + 1))
      echo "different: $(basename "$kernel") on $config (exit $old_status vs $new_status)"
    fi
  done
done
echo "identical: $same, different: $different"
[[ $different == 0 ]]
