#!/usr/bin/env python3
"""Simulator speed per DMA model and core count: runs bench/sim_bench on
bench/kernels/mixed_multicore.json (C cores of the mixed benchmark on trn2-48xl, or --config)
for every (model, cores) row, --runs times, the rows alternating within each round so that drift
of the machine spreads over all of them, and prints one Markdown table: simulated instructions per
CPU-second (min-max, median), per wall-second (median), peak RSS and the RSS per core beyond the
first (against the 1-core row of the same model).

Each row simulates about --instructions instructions (the packet model a tenth of them: it is
~50x slower), T = instructions / 5 / cores tiles per core.

`--huge-pages on,off` measures each row with and without the heap in huge pages (sim_bench with
TRNSIM_HUGE_PAGES=0 for `off`; docs/performance.md, "Huge pages"), alternating too, in a column
of its own.

Usage: bench/speed_table.py [--sim-bench build/bench/sim_bench] [--runs 5] [--config trn2-48xl]
                            [--models packet,transfer,flow] [--cores 1,8,64]
                            [--instructions 100000] [--huge-pages on|off|on,off]"""

import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL = os.path.join(HERE, "kernels", "mixed_multicore.json")
LINE = re.compile(r": (\d+) instructions in [\d.]+ s wall = ([\d.]+) M instr/s \([\d.]+ s CPU = "
                  r"([\d.]+) M instr/CPU-s\).*peak RSS ([\d.]+) MiB")


def run_once(sim_bench, config, model, cores, tiles, huge_pages):
    environment = {k: v for k, v in os.environ.items() if k != "TRNSIM_HUGE_PAGES"}
    if huge_pages == "off":
        environment["TRNSIM_HUGE_PAGES"] = "0"
    out = subprocess.run([sim_bench, KERNEL, config, "--param", f"C={cores}",
                          "--param", f"T={tiles}", "--set", f"dma.model={model}"],
                         capture_output=True, text=True, timeout=3600, env=environment)
    match = LINE.search(out.stdout)
    if out.returncode != 0 or match is None:
        raise SystemExit(f"speed_table: sim_bench failed for {model} on {cores} cores: "
                         f"{out.stderr.strip() or out.stdout.strip()}")
    return (int(match.group(1)), float(match.group(2)), float(match.group(3)),
            float(match.group(4)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim-bench", default=os.path.join(HERE, "..", "build", "bench",
                                                            "sim_bench"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--config", default="trn2-48xl")
    parser.add_argument("--models", default="packet,transfer,flow")
    parser.add_argument("--cores", default="1,8,64")
    parser.add_argument("--instructions", type=int, default=100000)
    parser.add_argument("--huge-pages", default="on")
    args = parser.parse_args()
    settings = args.huge_pages.split(",")
    if any(setting not in ("on", "off") for setting in settings):
        parser.error(f"--huge-pages: expected on, off or on,off; found {args.huge_pages!r}")
    rows = [(model, int(cores), setting) for model in args.models.split(",")
            for cores in args.cores.split(",") for setting in settings]
    samples = {row: [] for row in rows}
    for _ in range(args.runs):
        for model, cores, setting in rows:
            budget = args.instructions // (10 if model == "packet" else 1)
            tiles = max(1, budget // 5 // cores)
            samples[(model, cores, setting)].append(
                run_once(args.sim_bench, args.config, model, cores, tiles, setting))
    both = len(settings) > 1
    print("| DMA model | cores | " + ("huge pages | " if both else "") + "instructions | "
          "M instr/CPU-s (min-max) | median | M instr/s wall, median | peak RSS | "
          "per core beyond the first |")
    print("|---|---|" + ("---|" if both else "") + "---|---|---|---|---|---|")
    for model, cores, setting in rows:
        runs = samples[(model, cores, setting)]
        per_cpu = [r[2] for r in runs]
        rss = statistics.median(r[3] for r in runs)
        single = samples.get((model, 1, setting))
        extra = "-"
        if single and cores > 1:
            extra = f"{(rss - statistics.median(r[3] for r in single)) / (cores - 1):.2f} MiB"
        print(f"| {model} | {cores} | " + (f"{setting} | " if both else "") +
              f"{runs[0][0]:,} | {min(per_cpu):.3f}-{max(per_cpu):.3f} | "
              f"{statistics.median(per_cpu):.3f} | {statistics.median(r[1] for r in runs):.3f} | "
              f"{rss:.1f} MiB | {extra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
