#!/usr/bin/env python3
"""How fast `--numerics` computes values: the T1 v4 matmul (NKI, bfloat16, result[M, N] =
lhsT[K, M].T @ rhs[K, N]) run with and without `--numerics`, alternating, on one core.

Prints one Markdown table: wall and CPU seconds (min/median/max over the runs) with and without
values, and the rate of multiply-accumulates per CPU-second the values cost (M x K x N over the
extra CPU time). Not a test: numbers depend on the machine.

Usage: numerics_bench.py [--trnsim PATH] [--runs N] [--shape M,K,N]
  default shape 2048,1024,1024 (the smallest T1 v4's fixed blocks allow); the published
  problem is 4096,8192,8192."""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(trnsim, m, k, n, numerics):
    command = [trnsim, "run", os.path.join(ROOT, "examples/nki/matmul_t1_nki.py::matmul_v4_optimized"),
               "-c", "trn1", "-q", "--input", f"lhsT=bfloat16[{k},{m}]",
               "--input", f"rhs=bfloat16[{k},{n}]"]
    if numerics:
        command.append("--numerics")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def spread(values):
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trnsim", default=os.path.join(ROOT, "build/src/cli/trnsim"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shape", default="2048,1024,1024")
    args = parser.parse_args()
    m, k, n = (int(v) for v in args.shape.split(","))
    results = {False: [], True: []}
    for _ in range(args.runs):
        for numerics in (False, True):
            results[numerics].append(run(args.trnsim, m, k, n, numerics))
    macs = m * k * n
    extra = [cpu_on - cpu_off for (_, cpu_on), (_, cpu_off) in zip(results[True], results[False])]
    rates = [macs / e / 1e9 for e in extra if e > 0]
    print(f"T1 v4 matmul {m} x {k} x {n} (bfloat16, trn1), {args.runs} alternating runs "
          "(min / median / max)\n")
    print("| run | wall s | CPU s |")
    print("|---|---|---|")
    for numerics in (False, True):
        label = "with --numerics" if numerics else "timing only"
        print(f"| {label} | {spread([w for w, _ in results[numerics]])} | "
              f"{spread([c for _, c in results[numerics]])} |")
    if rates:
        print(f"\nvalues: {spread(rates)} G multiply-accumulates per CPU-second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
