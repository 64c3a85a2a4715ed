#!/usr/bin/env python3
"""Speed and memory of the NKI front end's tracer (numbers, not pass/fail).

Traces generated kernels in a fresh process each (so peak RSS is the trace's own) and prints,
per kernel: the instructions the traced program stands for (dynamic), the instruction
statements emitted into the lowered JSON (static), wall time, rates and peak RSS.

  bench/nki_trace_bench.py            # the 100k and 10M instruction kernels, both APIs
  bench/nki_trace_bench.py --quick    # small sizes (a smoke run)
  bench/nki_trace_bench.py --repeat 5 # min/median/max over 5 runs
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRONTEND = os.path.join(ROOT, "src", "frontend")

# A streaming kernel: per iteration two loads, an add, an exp and a store (5 instructions).
CLASSIC = """
from neuronxcc import nki
import neuronxcc.nki.language as nl

@nki.jit
def stream(a, b):
    T, P, F = a.shape
    out = nl.ndarray((T, P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(T):
        x = nl.load(a[t])
        y = nl.load(b[t])
        nl.store(out[t], value=nl.exp(nl.add(x, y)))
    return out
"""

NEW = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def stream(a, b):
    T, P, F = a.shape
    out = nl.ndarray((T, P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in range(T):
        x = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[t])
        nisa.dma_copy(dst=y, src=b[t])
        nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
        nisa.activation(dst=y, op=nl.exp, data=x)
        nisa.dma_copy(dst=out[t], src=y)
    return out
"""

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {frontend!r})
from trnsim_nki import api_language, driver, dtypes, emit
start = time.perf_counter()
doc, info = driver.trace_kernel({path!r}, "stream",
    {{"a": (dtypes.float32, ({T}, 128, 64)), "b": (dtypes.float32, ({T}, 128, 64))}},
    {{}}, (), api_language.DEFAULT_TARGET)
text = emit.dumps(doc)
seconds = time.perf_counter() - start
json.dump({{"seconds": seconds, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "static": info["instructions_traced"], "json_bytes": len(text),
           "dynamic": dynamic(doc["program"])}}, sys.stdout)
"""

DYNAMIC = """
def dynamic(body):
    n = 0
    for st in body:
        if "op" in st:
            n += 1
        elif "for" in st:
            r = st["range"]
            trips = r if isinstance(r, int) else len(range(*r))
            n += trips * dynamic(st["body"])
        else:
            n += dynamic(st.get("then", []))
    return n
"""


def run_case(source, T, workdir):
    path = os.path.join(workdir, f"stream_{abs(hash(source))}.py")
    with open(path, "w") as f:
        f.write(source)
    code = DYNAMIC + CHILD.format(frontend=FRONTEND, path=path, T=T)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (default 3)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    per_iteration = 5
    cases = [("classic affine_range, 100k", CLASSIC, 100_000 // per_iteration),
             ("classic affine_range, 10M", CLASSIC, 10_000_000 // per_iteration),
             ("new API (unrolled), 100k", NEW, 100_000 // per_iteration)]
    if args.quick:
        cases = [(name.rsplit(",", 1)[0] + ", 1k", src, 200) for name, src, _ in cases[::2]]
    print(f"{'kernel':32} {'dynamic':>10} {'static':>8} {'seconds (min/med/max)':>24} "
          f"{'dyn instr/s':>12} {'static/s':>10} {'peak RSS MiB':>12} {'JSON KiB':>9}")
    with tempfile.TemporaryDirectory() as workdir:
        for name, source, T in cases:
            runs = [run_case(source, T, workdir) for _ in range(args.repeat)]
            secs = sorted(r["seconds"] for r in runs)
            med = statistics.median(secs)
            first = runs[0]
            rss = max(r["rss_kib"] for r in runs) / 1024
            print(f"{name:32} {first['dynamic']:>10} {first['static']:>8} "
                  f"{secs[0]:>7.3f}/{med:.3f}/{secs[-1]:.3f} "
                  f"{first['dynamic'] / med:>12.3g} {first['static'] / med:>10.3g} "
                  f"{rss:>12.1f} {first['json_bytes'] / 1024:>9.1f}")


if __name__ == "__main__":
    main()
