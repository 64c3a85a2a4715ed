#!/usr/bin/env python3
"""`trnsim run --numerics` on the command line: located errors (exit 2) for every bad option,
exit 1 with the worst elements named when an output differs from its reference, warnings with
the kernel location for reads of unwritten memory and the first NaN, seeded inputs that repeat
byte for byte, and outputs written as .npy files NumPy reads.

Usage: numerics_cli_test.py TRNSIM EXAMPLES_KERNELS_DIR"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

FAILURES = []


def check(condition, what, detail=""):
    if not condition:
        FAILURES.append(f"{what}\n{detail}")


def run(trnsim, *args):
    return subprocess.run([trnsim, "run", *args, "-q"], capture_output=True, text=True,
                          timeout=300)


def main():
    trnsim, kernels = sys.argv[1], sys.argv[2]
    vector_add = os.path.join(kernels, "vector_add.json")
    small = ["-p", "T=2", "-p", "F=64"]
    with tempfile.TemporaryDirectory() as work:
        a = np.arange(2 * 128 * 64, dtype=np.float32).reshape(2, 128, 64) / 1024
        b = np.ones((2, 128, 64), dtype=np.float32)
        np.save(f"{work}/a.npy", a)
        np.save(f"{work}/b.npy", b)
        np.save(f"{work}/wrong_shape.npy", np.zeros((3,), dtype=np.float32))
        wrong = a + b
        wrong[1, 2, 3] += 1.0
        np.save(f"{work}/wrong.npy", wrong)

        # Options that need --numerics.
        for option in (["--expect", f"out={work}/a.npy"], ["--output-dir", work],
                       ["--input", f"a={work}/a.npy"], ["--rtol", "0.1"]):
            r = run(trnsim, vector_add, *small, *option)
            check(r.returncode == 2 and "needs --numerics" in r.stderr
                  and r.stderr.count("\n") == 1, f"{option} without --numerics", r.stderr)

        # Bad inputs and references, each one located message.
        cases = [
            (["--input", f"a={work}/wrong_shape.npy"],
             f"trnsim: error: --input a={work}/wrong_shape.npy: expected an array of tensor "
             "'a''s shape [2, 128, 64], found shape [3]"),
            (["--input", f"nope={work}/a.npy"],
             f"trnsim: error: --input nope={work}/a.npy: expected one of the kernel's HBM "
             "tensors (a, b, out), found 'nope'"),
            (["--input", f"a_sb={work}/a.npy"],
             f"trnsim: error: --input a_sb={work}/a.npy: expected one of the kernel's HBM "
             "tensors (a, b, out), found 'a_sb', which is an on-chip tensor"),
            (["--expect", f"out={work}/missing.npy"], "missing.npy"),
            (["--input", "a=float32[2,128,64]"], "is a JSON kernel, which declares its tensors"),
        ]
        for option, expected in cases:
            r = run(trnsim, vector_add, *small, "--numerics", *option)
            check(r.returncode == 2 and expected in r.stderr and r.stderr.count("\n") == 1,
                  f"bad {option}", r.stderr)

        # An op without a functional model: located at the instruction, before simulating.
        prelu = {
            "format": "trnsim-kernel/1", "name": "prelu",
            "tensors": {"sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]}},
            "program": [{"op": "memset", "dst": "sb", "value": 1.0},
                        {"op": "activation", "name": "leaky", "dst": "sb", "src": "sb",
                         "func": "prelu"}]}
        with open(f"{work}/prelu.json", "w") as f:
            json.dump(prelu, f)
        r = run(trnsim, f"{work}/prelu.json", "--numerics")
        check(r.returncode == 2 and r.stderr == f"trnsim: error: {work}/prelu.json: leaky "
              "/program/1: --numerics: activation function prelu has no functional model yet "
              "(run without --numerics for its timing)\n", "op without semantics", r.stderr)

        # A match, then a mismatch: exit 1 naming the element.
        inputs = ["--input", f"a={work}/a.npy", "--input", f"b={work}/b.npy"]
        np.save(f"{work}/right.npy", a + b)
        r = run(trnsim, vector_add, *small, "--numerics", *inputs, "--expect",
                f"out={work}/right.npy")
        check(r.returncode == 0 and "all 16384 elements match" in r.stderr, "match", r.stderr)
        r = run(trnsim, vector_add, *small, "--numerics", *inputs, "--expect",
                f"out={work}/wrong.npy")
        expected_line = f"  out[1, 2, 3]: got {a[1, 2, 3] + 1:.9g}, expected {wrong[1, 2, 3]:.9g}"
        check(r.returncode == 1 and "1 of 16384 elements differ" in r.stderr
              and expected_line in r.stderr.splitlines(), "mismatch", r.stderr)

        # Seeded inputs: the same seed repeats them byte for byte, another seed does not; the
        # outputs are what NumPy computes from them.
        for seed, folder in (("7", "s7"), ("7", "s7again"), ("8", "s8")):
            r = run(trnsim, vector_add, *small, "--numerics", "--seed", seed, "--output-dir",
                    f"{work}/{folder}")
            check(r.returncode == 0, f"seeded run {seed}", r.stderr)
        same = all(open(f"{work}/s7/{n}.npy", "rb").read() ==
                   open(f"{work}/s7again/{n}.npy", "rb").read() for n in ("a", "b", "out"))
        check(same, "the same seed gives the same files")
        check(open(f"{work}/s7/a.npy", "rb").read() != open(f"{work}/s8/a.npy", "rb").read(),
              "another seed gives other inputs")
        sa, sb, sout = (np.load(f"{work}/s7/{n}.npy") for n in ("a", "b", "out"))
        check(sa.dtype == np.float32 and sa.shape == (2, 128, 64) and
              np.all(np.abs(sa) <= 1.0) and np.array_equal(sout, sa + sb),
              "seeded inputs and outputs as NumPy arrays")

        # A kernel bug: storing a tile nothing loaded, and a log of negative numbers.
        buggy = {
            "format": "trnsim-kernel/1", "name": "buggy",
            "tensors": {
                "out": {"memory": "hbm", "dtype": "float32", "shape": [128, 8]},
                "logs": {"memory": "hbm", "dtype": "float32", "shape": [128, 8]},
                "sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]},
                "neg": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]},
                "res": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]}},
            "program": [
                {"op": "dma_copy", "dst": "out", "src": "sb"},
                {"op": "memset", "dst": "neg", "value": -1.0},
                {"op": "activation", "name": "log_of_negative", "dst": "res", "src": "neg",
                 "func": "log"},
                {"op": "dma_copy", "dst": "logs", "src": "res"}]}
        with open(f"{work}/buggy.json", "w") as f:
            json.dump(buggy, f)
        r = run(trnsim, f"{work}/buggy.json", "--numerics", "--json")
        lines = r.stderr.splitlines()
        check(r.returncode == 0 and any(
            f"{work}/buggy.json: dma_copy /program/0: dma_copy reads sbuf tensor 'sb' "
            "(partition 0, byte 0), which nothing wrote" in line for line in lines),
            "unwritten read located", r.stderr)
        check(any(f"{work}/buggy.json: log_of_negative /program/2: activation makes the first "
                  "non-finite value from finite inputs" in line for line in lines),
              "first NaN located", r.stderr)
        stats = json.loads(r.stdout) if r.returncode == 0 else {}
        check(stats.get("numerics", {}).get("unwritten_reads") == 1 and
              stats.get("numerics", {}).get("non_finite_results") == 1,
              "findings counted in the statistics", r.stdout[-2000:])

        # Timing does not change with --numerics.
        plain = json.loads(run(trnsim, vector_add, *small, "--json").stdout)
        with_values = json.loads(run(trnsim, vector_add, *small, "--json", "--numerics").stdout)
        check(plain["time"] == with_values["time"], "the same timing with --numerics")

    for failure in FAILURES:
        print("FAIL", failure)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
