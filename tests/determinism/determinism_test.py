#!/usr/bin/python3
"""Determinism of trnsim's outputs: every example kernel (examples/kernels/*.json and the NKI
kernels of examples/nki/examples.json) on one generation, run twice, gives byte-identical
--json output, --trace, --profile, --dma-profile and --stats files; and a sweep run with -j 1 and
with -j 2 gives byte-identical results (JSON Lines and CSV).

  determinism_test.py TRNSIM GENERATION      # the kernels on trn1, trn2, trn3 or trn4
  determinism_test.py TRNSIM sweep           # the sweep, -j 1 against -j 2

Sizes are reduced where the examples' own are slow to simulate (--param for JSON kernels,
smaller --input shapes for NKI kernels). A kernel that needs an op the generation lacks (its
message: "... needs NeuronCore-vN or later") is listed and left out; any other failure to run
fails. Exit 0 when all outputs are equal, 1 otherwise. With TRNSIM_SANITIZER_SUITE set (the
sanitizer suite) each kernel runs once: every output is written under the sanitizers, and the
Release suite compares.
"""

from __future__ import annotations

import filecmp
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Reduced sizes for the examples that take seconds at their own (docs/kernel-format.md params).
JSON_PARAMS = {
    "matmul_t1_v1_tiled.json": ["M=256", "K=512", "N=1024"],
    "matmul_t1_v2_hoisted.json": ["M=256", "K=512", "N=1024"],
    "matmul_t1_v3_blocked.json": ["M=512", "K=512", "N=2048"],
    "matmul_t1_v4_optimized.json": ["M=2048", "K=1024", "N=1024"],
    "matmul_bf16_large.json": ["M=2048", "K=1024", "N=1024"],
    "layernorm_v1.json": ["ROWS=512", "D=2048"],
    "layernorm_v2.json": ["ROWS=512", "D=2048"],
}
# Reduced inputs for the NKI examples that take seconds at their own (by "kernel" entry).
NKI_INPUTS = {
    "matmul_t1.py::matmul_v1_tiled": {"lhsT": "bfloat16[1024,2048]", "rhs": "bfloat16[1024,1024]"},
    "matmul_t1.py::matmul_v2_hoisted": {"lhsT": "bfloat16[1024,2048]", "rhs": "bfloat16[1024,1024]"},
    "matmul_t1.py::matmul_v3_blocked": {"lhsT": "bfloat16[1024,2048]", "rhs": "bfloat16[1024,1024]"},
    "matmul_t1.py::matmul_v4_optimized": {"lhsT": "bfloat16[1024,2048]",
                                          "rhs": "bfloat16[1024,1024]"},
    "flash_attention_fwd.py::flash_attention_fwd": {"q": "bfloat16[1,128,1024]",
                                                    "k": "bfloat16[1,128,1024]",
                                                    "v": "bfloat16[1,1024,128]"},
}


def json_kernels():
    return [(os.path.basename(path), [path] + sum((["--param", p] for p in
                                                  JSON_PARAMS.get(os.path.basename(path), [])), []))
            for path in sorted(glob.glob(os.path.join(ROOT, "examples", "kernels", "*.json")))]


def nki_kernels():
    with open(os.path.join(ROOT, "examples", "nki", "examples.json")) as f:
        catalog = json.load(f)
    kernels = []
    for i, entry in enumerate(catalog["kernels"]):
        argv = [os.path.join(ROOT, "examples", "nki", entry["kernel"])]
        inputs = NKI_INPUTS.get(entry["kernel"], entry.get("golden_inputs", entry["inputs"]))
        for name, spec in inputs.items():
            argv += ["--input", f"{name}={spec}"]
        for name, value in entry.get("kwargs", {}).items():
            argv += ["--kwarg", f"{name}={value!r}"]
        if "grid" in entry:
            argv += ["--grid", str(entry["grid"])]
        kernels.append((f"nki[{i}] {entry['kernel']}", argv))
    return kernels


# The sanitizer suite (scripts/test.sh --sanitize) runs each kernel once, with every output
# file, for the sanitizers' sake; the Release suite compares two runs.
RUNS = 1 if os.environ.get("TRNSIM_SANITIZER_SUITE") else 2


def run_and_compare(trnsim, generation, index, argv, scratch):
    """None when the runs (RUNS of them) succeeded and agree, "rejected: ..." when the
    generation rejects the kernel, else the problem."""
    outputs = []
    for attempt in range(RUNS):
        directory = os.path.join(scratch, f"{index}-{attempt}")
        os.makedirs(directory)
        files = {flag: os.path.join(directory, flag.lstrip("-") + ext)
                 for flag, ext in (("--trace", ".json"), ("--profile", ".csv"),
                                   ("--dma-profile", ".csv"), ("--stats", ".json"))}
        command = [trnsim, "run"] + argv + ["-c", generation, "--json"]
        for flag, path in files.items():
            command += [flag, path]
        done = subprocess.run(command, capture_output=True, cwd=directory,
                              env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
        if done.returncode == 2 and attempt == 0:
            return "rejected: " + done.stderr.decode(errors="replace").strip()
        if done.returncode != 0:
            return (f"exit {done.returncode} on run {attempt + 1}: "
                    f"{done.stderr.decode(errors='replace')[-1000:]}")
        stdout = os.path.join(directory, "stdout.json")
        with open(stdout, "wb") as f:
            f.write(done.stdout)
        outputs.append(dict(files, stdout=stdout))
    differing = [key for key in outputs[0] for other in outputs[1:]
                 if not filecmp.cmp(outputs[0][key], other[key], shallow=False)]
    if differing:
        return "differs between two runs: " + ", ".join(differing)
    if os.path.getsize(outputs[0]["--trace"]) == 0 or os.path.getsize(outputs[0]["stdout"]) == 0:
        return "an output is empty"
    return None


def check_generation(trnsim, generation):
    kernels = json_kernels() + nki_kernels()
    failures, ran = 0, 0
    with tempfile.TemporaryDirectory(prefix="trnsim-determinism-") as scratch:
        for index, (name, argv) in enumerate(kernels):
            problem = run_and_compare(trnsim, generation, index, argv, scratch)
            if problem is None:
                ran += 1
                print(f"same: {name}", flush=True)
            elif problem.startswith("rejected: ") and "needs NeuronCore-v" in problem:
                print(f"left out: {name} ({problem})", flush=True)
            else:
                failures += 1
                print(f"FAIL: {name} on {generation}: {problem}", flush=True)
    if RUNS == 1:
        print(f"{generation}: {ran} kernels ran once (sanitizer suite), {failures} failed")
    else:
        print(f"{generation}: {ran} kernels gave the same outputs twice, {failures} did not")
    return 1 if failures or ran == 0 else 0


def check_sweep(trnsim):
    spec = os.path.join(ROOT, "examples", "sweeps", "vector_add_dma.json")
    with tempfile.TemporaryDirectory(prefix="trnsim-determinism-") as scratch:
        paths = {}
        for jobs in ("1", "2"):
            results = os.path.join(scratch, f"j{jobs}.jsonl")
            csv = os.path.join(scratch, f"j{jobs}.csv")
            done = subprocess.run([trnsim, "sweep", spec, "-j", jobs, "-o", results, "--csv", csv],
                                  capture_output=True,
                                  env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
            if done.returncode != 0:
                print(f"FAIL: sweep -j {jobs}: exit {done.returncode}: "
                      f"{done.stderr.decode(errors='replace')[-1000:]}")
                return 1
            paths[jobs] = (results, csv)
        for a, b in zip(paths["1"], paths["2"]):
            if not filecmp.cmp(a, b, shallow=False):
                print(f"FAIL: {os.path.basename(a)} and {os.path.basename(b)} differ")
                return 1
            if os.path.getsize(a) == 0:
                print(f"FAIL: {os.path.basename(a)} is empty")
                return 1
        with open(paths["1"][0]) as f:
            lines = sum(1 for _ in f)
    print(f"sweep {os.path.basename(spec)}: -j 1 and -j 2 give the same {lines} result lines and CSV")
    return 0


def main():
    if len(sys.argv) != 3:
        print("usage: determinism_test.py TRNSIM GENERATION|sweep", file=sys.stderr)
        return 2
    trnsim, what = sys.argv[1], sys.argv[2]
    return check_sweep(trnsim) if what == "sweep" else check_generation(trnsim, what)


if __name__ == "__main__":
    sys.exit(main())
