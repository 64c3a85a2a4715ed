#!/bin/bash
# examples/slurm/submit.sh, with a stand-in `sbatch` that prints job ids, on a sweep whose
# --dry-run listing is far larger than a pipe's buffer: the script must print the listing's
# first line and submit, not die of SIGPIPE under `set -o pipefail` (exit 141).
# Usage: submit_script_test.sh TRNSIM SOURCE_DIR
set -euo pipefail
trnsim=$1
source_dir=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

mkdir "$scratch/bin"
cat >"$scratch/bin/sbatch" <<'SBATCH'
#!/bin/bash
echo "sbatch $*" >>"$SBATCH_LOG"
echo 4242
SBATCH
chmod +x "$scratch/bin/sbatch"

cat >"$scratch/big.json" <<SPEC
{"format": "trnsim-sweep/1", "name": "big",
 "kernel": {"file": "$source_dir/examples/kernels/vector_add.json"}, "config": "trn2",
 "axes": [{"set": "dma.fixed_cost_ns", "range": {"from": 1, "to": 5000, "step": 1}}],
 "metrics": ["time_us"]}
SPEC

for run in 1 2 3; do
  : >"$scratch/sbatch.log"
  status=0
  output=$(cd "$scratch" && PATH="$scratch/bin:$PATH" SBATCH_LOG="$scratch/sbatch.log" \
    TRNSIM="$trnsim" OUT="$scratch/out" "$source_dir/examples/slurm/submit.sh" big.json 4) ||
    status=$?
  if [[ $status -ne 0 ]]; then
    echo "run $run: submit.sh exited $status; output: $output" >&2
    exit 1
  fi
  if [[ "$output" != "sweep big: 5000 points"*"submitted array job 4242 (4 shards) and merge job 4242"* ]]; then
    echo "run $run: unexpected output: $output" >&2
    exit 1
  fi
  if [[ $(wc -l <"$scratch/sbatch.log") -ne 2 ]]; then
    echo "run $run: expected two sbatch calls, got:" >&2
    cat "$scratch/sbatch.log" >&2
    exit 1
  fi
done
echo "submit.sh: 3 runs, each printed the plan's first line and submitted 2 jobs"
