#!/bin/bash
# The example sweep on a real single-node Slurm, with the shipped scripts: starts munged,
# slurmctld and slurmd (Debian's munge and slurm-wlm) as root on this host with a generated
# slurm.conf (select/cons_tres) in a temporary directory, submits examples/slurm/submit.sh's job
# array and merge job, waits for them, and compares the merged results with the same sweep run
# locally, byte for byte (JSON Lines and CSV).
# Usage: slurm_sweep_test.sh TRNSIM SOURCE_DIR [SPEC] [SHARDS]
# Exit 0: equal; 1: a difference or a failed job; 77 (skipped): Slurm cannot start here (not
# root, a program missing, or a daemon that does not come up), with the reason on stdout.
set -euo pipefail

TRNSIM=$(realpath "${1:?usage: slurm_sweep_test.sh TRNSIM SOURCE_DIR [SPEC] [SHARDS]}")
SOURCE_DIR=$(realpath "${2:?usage: slurm_sweep_test.sh TRNSIM SOURCE_DIR [SPEC] [SHARDS]}")
SPEC=$(realpath "${3:-$SOURCE_DIR/examples/sweeps/vector_add_tile_shape.json}")
SHARDS=${4:-3}

skip() {
  echo "SKIPPED: Slurm cannot start here: $*"
  exit 77
}

[[ $(id -u) -eq 0 ]] || skip "slurmctld and slurmd run as root and this test is not root"
for program in munged slurmctld slurmd sbatch squeue scontrol python3; do
  command -v "$program" >/dev/null || skip "no $program (scripts/install-deps.sh installs munge and slurm-wlm)"
done

work=$(mktemp -d /tmp/trnsim-slurm-XXXXXX)
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
show_logs() {
  for log in "$work"/*.log "$work"/slurm-*.out; do
    [[ -f "$log" ]] || continue
    echo "---- $log"
    tail -n 30 "$log"
  done
}

# munged with its own key and socket, so that nothing of the host's munge is used or changed.
mkdir -m 0711 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 0400 "$work/munge/munge.key"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$work/munge/socket" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/seed" \
  --log-file="$work/munged.log" >>"$work/munged.log" 2>&1 &
pids+=($!)

# Free TCP ports for the two daemons (another instance of this test may be running).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
# The node is declared with 16 CPUs, what sweep.sbatch asks of each shard (config_overrides:
# slurmd takes the declared figures, whatever this machine has).
cat >"$work/slurm.conf" <<EOF
ClusterName=trnsim-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf

for _ in $(seq 50); do [[ -S "$work/munge/socket" ]] && break; sleep 0.2; done
[[ -S "$work/munge/socket" ]] || { show_logs; skip "munged did not start"; }
slurmctld -D -i >"$work/slurmctld.stdout.log" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >"$work/slurmd.stdout.log" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 60); do
  if scontrol show node "$host" 2>/dev/null | grep -Eq "State=(IDLE|MIXED|ALLOCATED)"; then
    ready=1
    break
  fi
  sleep 0.5
done
(( ready )) || { show_logs; skip "slurmctld and slurmd did not bring the node up within 30 s"; }

# Submit as a user would: from a working directory, with the shipped scripts.
cd "$work"
export OUT=$work/results TRNSIM
"$SOURCE_DIR/examples/slurm/submit.sh" "$SPEC" "$SHARDS" | tee submit.txt
merge=$(sed -n 's/.*and merge job \([0-9]*\);.*/\1/p' submit.txt)
[[ -n "$merge" ]] || { echo "FAIL: submit.sh printed no merge job id"; exit 1; }

# Wait until the merge job has ended (it depends on the whole array).
state=""
for _ in $(seq 600); do
  job=$(scontrol show job "$merge" 2>/dev/null || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$job")
  # A failed shard leaves the merge job pending for ever.
  if grep -q "Reason=DependencyNeverSatisfied" <<<"$job"; then state=DEPENDENCY_NEVER_SATISFIED; fi
  case "$state" in
    COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE|\
    DEPENDENCY_NEVER_SATISFIED) break ;;
  esac
  sleep 0.5
done
if [[ "$state" != COMPLETED ]]; then
  echo "FAIL: merge job $merge ended in state '${state:-unknown}'"
  squeue --all || true
  show_logs
  exit 1
fi
shards=("$OUT"/shard-*-of-"$SHARDS".jsonl)
echo "merge job $merge completed; ${#shards[@]} shard files"
[[ ${#shards[@]} -eq $SHARDS ]] || { echo "FAIL: expected $SHARDS shard files"; exit 1; }

# The same sweep run locally.
"$TRNSIM" sweep "$SPEC" -j 2 -o "$work/local.jsonl" --csv "$work/local.csv" 2>"$work/local.log"
status=0
cmp "$work/local.jsonl" "$OUT/results.jsonl" || status=1
cmp "$work/local.csv" "$OUT/results.csv" || status=1
if (( status )); then
  echo "FAIL: the Slurm results differ from the local run"
  diff <(head -c 3000 "$work/local.jsonl") <(head -c 3000 "$OUT/results.jsonl") || true
  exit 1
fi
echo "OK: $(wc -l <"$work/local.jsonl") result lines, equal byte for byte to the local run"
