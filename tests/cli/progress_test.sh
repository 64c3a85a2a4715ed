#!/bin/bash
# Progress on stderr: silent for a short run; a line every TRNSIM_PROGRESS_INTERVAL seconds when
# stderr is not a terminal; a redrawn bar on a terminal (under `script`); nothing with --quiet;
# never anything on stdout.
# Usage: progress_test.sh TRNSIM SOURCE_DIR
set -euo pipefail
trnsim=$1
kernel=$2/examples/kernels/vector_add.json
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A short run prints no progress.
"$trnsim" run "$kernel" -c trn2 >"$scratch/out" 2>"$scratch/err"
[ ! -s "$scratch/err" ] || fail "a short run wrote to stderr: $(cat "$scratch/err")"

# A longer one (about a second with the packet model) writes lines with the instruction total.
TRNSIM_PROGRESS_INTERVAL=0.05 "$trnsim" run "$kernel" -c trn2 --param T=600 \
  --set dma.model=packet >"$scratch/out" 2>"$scratch/err"
grep -q "^trnsim run vector_add: [0-9/]* instructions" "$scratch/err" ||
  fail "no progress line: $(cat "$scratch/err")"
grep -q "^trnsim run vector_add: 2400/2400 instructions (100%), .* done in " "$scratch/err" ||
  fail "no final line with the total: $(cat "$scratch/err")"
if grep -q "instructions/s" "$scratch/out"; then fail "progress on stdout"; fi
grep -q "^time " "$scratch/out" || fail "no summary on stdout"

# --quiet and --progress none: nothing on stderr.
for quiet in --quiet "--progress none"; do
  # shellcheck disable=SC2086
  TRNSIM_PROGRESS_INTERVAL=0.05 "$trnsim" run "$kernel" -c trn2 --param T=600 \
    --set dma.model=packet $quiet \
    >"$scratch/out" 2>"$scratch/err"
  [ ! -s "$scratch/err" ] || fail "$quiet wrote to stderr: $(cat "$scratch/err")"
done

# On a terminal: a bar redrawn with carriage returns (it appears after a second).
if command -v script >/dev/null; then
  script -qfec "\"$trnsim\" run \"$kernel\" -c trn2 --param T=1500 --set dma.model=packet --progress bar >/dev/null" \
    /dev/null >"$scratch/tty"
  grep -q $'\r''trnsim run vector_add \[#' "$scratch/tty" || fail "no bar: $(cat -v "$scratch/tty")"
else
  echo "skipped the terminal case: util-linux 'script' is not installed"
fi
echo "progress: ok"
