#!/usr/bin/env bash
# Fuzzes one input reader of trnsim for a while (docs/fuzzing.md).
# Usage: scripts/fuzz.sh TARGET [MINUTES]   TARGET: kernel, config, sweep_spec or nki (default 10 minutes)
# kernel, config and sweep_spec are libFuzzer targets built with clang, ASan and UBSan into
# ./build-fuzz; nki runs tests/fuzz/nki_fuzz.py. The corpus grows in build-fuzz/corpus/TARGET
# (seeded from examples/ and configs/); findings are written to build-fuzz/findings/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/fuzz.sh kernel|config|sweep_spec|nki [MINUTES]"
if (( $# < 1 || $# > 2 )); then
  echo "$usage" >&2
  exit 2
fi
target=$1
minutes=${2:-10}
if ! [[ "$minutes" =~ ^[0-9]+$ ]] || (( minutes == 0 )); then
  echo "scripts/fuzz.sh: MINUTES must be a positive whole number, found '$minutes'" >&2
  exit 2
fi
seconds=$((minutes * 60))
findings=build-fuzz/findings/$target

case "$target" in
  kernel) seeds=(examples/kernels tests/core/kernels) ;;
  config) seeds=(configs) ;;
  sweep_spec) seeds=(examples/sweeps) ;;
  nki)
    mkdir -p "$findings"
    exec /usr/bin/python3 tests/fuzz/nki_fuzz.py --seconds "$seconds" --crashes "$findings" ;;
  *) echo "scripts/fuzz.sh: unknown target '$target'; $usage" >&2; exit 2 ;;
esac

clangxx=$(command -v clang++-14 || command -v clang++ || true)
clangc=$(command -v clang-14 || command -v clang || true)
if [[ -z "$clangxx" || -z "$clangc" ]]; then
  echo "scripts/fuzz.sh: needs clang with libFuzzer: apt-get install clang-14 libclang-rt-14-dev" >&2
  exit 2
fi
if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
  CC=$clangc CXX=$clangxx cmake -S . -B build-fuzz -DTRNSIM_FUZZ=ON -DTRNSIM_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=Fuzz "-DCMAKE_CXX_FLAGS_FUZZ=-O1 -gline-tables-only" >/dev/null
fi
cmake --build build-fuzz --target "fuzz_$target" -j"$(nproc)"

corpus=build-fuzz/corpus/$target
mkdir -p "$corpus" "$findings"
# -timeout: an input taking longer is a finding (a hang); -rss_limit_mb: so is one that
# needs more memory than this.
exec "build-fuzz/tests/fuzz/fuzz_$target" "$corpus" "${seeds[@]}" \
  "-dict=tests/fuzz/$target.dict" "-max_total_time=$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 "-artifact_prefix=$findings/" -print_final_stats=1
