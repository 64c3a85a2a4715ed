#!/usr/bin/python3
"""Mutation test of the trnsim command line: hostile variants of the example kernels, the
built-in configs and the example sweep specs must each end in exit 0, 1 or 2 within the time
limit, never in exit 70 (internal error), a signal or a hang.

A case takes one input (examples/kernels/*.json, configs/*.json, examples/sweeps/*.json) and
changes it: a value somewhere in the document becomes a deeply nested array, a huge or negative
number, 1e999, NaN, a value of the wrong type or an expression nested thousands deep; a key is
dropped or added; or the text is truncated, has bytes flipped or garbage inserted; or the file is
replaced by a directory, a missing file, /dev/null, or a FIFO a writer feeds a mutant through.
Then it runs the command that reads that input: `trnsim check` (kernels, on a random
generation; sometimes `run --json`), `trnsim config show` and a `check` on the config
(configs), `trnsim sweep --dry-run` (sweep specs). Exit 2 must also leave stdout empty and say
"trnsim: error:" on stderr. A `run` still simulating after the time limit a kernel that `check`
accepts within it is counted as "long" (a valid kernel that takes long to simulate), not a
failure.

  python3 tests/fuzz/mutate_inputs.py --trnsim build/src/cli/trnsim --cases 5000
  python3 tests/fuzz/mutate_inputs.py --trnsim build/src/cli/trnsim --cases 60 --seed 1

Exit 0 when every case met the contract, 1 otherwise (each failing case is printed and, with
--keep DIR, saved there).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATIONS = ["trn1", "trn2", "trn3", "trn4"]

# Raw JSON texts put in place of a value (some are not valid JSON on purpose).
NUMBERS = ["1e999", "-1e999", "NaN", "Infinity", "-1", "0", "-0.0", "1e308", "-1e308", "4.9e-324",
           "9223372036854775807", "9223372036854775808", "-9223372036854775809",
           "18446744073709551616", "340282366920938463463374607431768211456", "1.5", "2147483648",
           "4294967296", "1e18", "0.1"]
WRONG_TYPES = ['"x"', '""', "true", "false", "null", "{}", "[]", '[1, 2]', '{"a": 1}',
               '"' + "A" * 100000 + '"', '"\\u0000"', '"\\ud800"']


def expression_texts(rng):
    depth = rng.choice([150, 250, 1000, 10000, 100000])
    terms = rng.choice([1000, 100000])
    return rng.choice([
        '"' + "(" * depth + "1" + ")" * depth + '"',
        '"' + "-" * depth + "1" + '"',
        '"' + "+".join(["1"] * terms) + '"',
        '"' + "1-(" * min(depth, 5000) + "1" + ")" * min(depth, 5000) + '"',
        '"' + "min(" * min(depth, 5000) + "1" + ",1)" * min(depth, 5000) + '"',
        '"9223372036854775807 * 9223372036854775807"',
        '"1 / 0"', '"1 % 0"', '"-9223372036854775807 - 2"', '"(-9223372036854775807 - 1) / -1"',
        '"N ** 99"', '"a["', '"]"',
    ])


def nesting_text(rng):
    depth = rng.choice([300, 513, 5000, 100000])
    kind = rng.choice(["[]", "{}"])
    if kind == "[]":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


# ---- document mutation ---------------------------------------------------------------------------


def paths_of(value, path=()):
    """Every path (tuple of keys and indices) to a value in the document."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths_of(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from paths_of(child, path + (i,))


PLACEHOLDER = "@@TRNSIM_MUTANT@@"


def replace_at(document, path, replacement):
    if not path:
        return replacement
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    return document


def mutate_document(text, rng):
    """A new text: the document with one value replaced by a raw JSON text, or a key removed or
    added."""
    document = json.loads(text)
    paths = list(paths_of(document))
    path = rng.choice(paths)
    kind = rng.choices(["number", "type", "expression", "nesting", "drop", "add", "scale"],
                       [25, 15, 15, 10, 10, 5, 20])[0]
    if kind == "drop" and path:
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        return json.dumps(document, indent=1)
    if kind == "add":
        containers = [p for p in paths if isinstance(get(document, p), dict)]
        target = get(document, rng.choice(containers)) if containers else document
        if isinstance(target, dict):
            target[rng.choice(["unknown", "zz", ""])] = 1
        return json.dumps(document, indent=1)
    if kind == "scale":
        numbers = [p for p in paths if isinstance(get(document, p), (int, float))
                   and not isinstance(get(document, p), bool)]
        strings = [p for p in paths if isinstance(get(document, p), str)]
        if numbers and (not strings or rng.random() < 0.6):
            p = rng.choice(numbers)
            v = get(document, p)
            return json.dumps(replace_at(document, p, rng.choice(
                [v * 1000, v * 10**9, -v, v + 1, v - 1, 0, v * 2**40])), indent=1)
        if strings:
            p = rng.choice(strings)
            v = get(document, p)
            return json.dumps(replace_at(document, p, rng.choice(
                [f"({v}) * 1000000", f"-({v})", f"({v}) * 4294967296", f"({v}) / 0", v[:len(v) // 2],
                 f"{v}{v}", f"({v}) - 100000"])), indent=1)
        kind = "number"
    raw = {"number": lambda: rng.choice(NUMBERS), "type": lambda: rng.choice(WRONG_TYPES),
           "expression": lambda: expression_texts(rng), "nesting": lambda: nesting_text(rng)}[
        kind if kind in ("number", "type", "expression", "nesting") else "number"]()
    mutated = json.dumps(replace_at(document, path, PLACEHOLDER), indent=1)
    return mutated.replace(json.dumps(PLACEHOLDER), raw, 1)


def get(document, path):
    for key in path:
        document = document[key]
    return document


def mutate_bytes(text, rng):
    data = bytearray(text.encode())
    kind = rng.choice(["truncate", "flip", "insert", "garbage", "empty", "bom"])
    at = rng.randrange(len(data) + 1)
    if kind == "truncate":
        return bytes(data[:at])
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == "insert":
        data[at:at] = rng.choice([b"\x00", b"\xff\xfe\xfd", b"]", b"}", b",", b'"', b"\\",
                                  b"\xc3\x28", b"1e999", b"-"])
        return bytes(data)
    if kind == "garbage":
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 100, 10000])))
    if kind == "empty":
        return b""
    return b"\xef\xbb\xbf" + bytes(data)


# ---- cases -----------------------------------------------------------------------------------------


def make_case(rng, sources, scratch, index):
    """(argv, description); writes the mutated input under `scratch`."""
    kind = rng.choice(["kernel", "kernel", "config", "sweep"])
    original = rng.choice(sources[kind])
    with open(original) as f:
        text = f.read()
    how = rng.choices(["document", "bytes", "special"], [80, 15, 5])[0]
    directory = os.path.join(scratch, f"case-{index}")
    os.makedirs(directory)
    # Relative references (a sweep's kernels) resolve as in the original's directory.
    path = os.path.join(directory, os.path.basename(original))
    if kind == "sweep":
        sweep_dir = os.path.join(directory, "sweeps")
        os.makedirs(sweep_dir)
        os.symlink(os.path.join(ROOT, "examples", "kernels"), os.path.join(directory, "kernels"))
        path = os.path.join(sweep_dir, os.path.basename(original))
    if how == "document":
        data = mutate_document(text, rng).encode("utf-8", errors="surrogatepass")
        what = "document"
    elif how == "bytes":
        data = mutate_bytes(text, rng)
        what = "bytes"
    else:
        data = None
        what = rng.choice(["directory", "fifo", "missing", "devnull"])
    fifo = None
    if what == "fifo":
        # A named pipe is read as a file is: a writer feeds it a mutant (run_case).
        fifo = (path, mutate_document(text, rng).encode("utf-8", errors="surrogatepass"))
    if data is not None:
        with open(path, "wb") as f:
            f.write(data)
    elif what == "directory":
        os.makedirs(path)
    elif what == "fifo":
        os.mkfifo(path)
    elif what == "devnull":
        path = "/dev/null"
    generation = rng.choice(GENERATIONS)
    kernel = os.path.join(ROOT, "examples", "kernels", "vector_add.json")
    if kind == "kernel":
        # `run` only on examples that simulate in well under a second (matmul_t1_* model full
        # 8192-wide matmuls and take seconds).
        if rng.random() < 0.25 and "matmul_t1_" not in original:
            argv = ["run", path, "-c", generation, "--json"]
        else:
            argv = ["check", path, "-c", generation]
    elif kind == "config":
        argv = rng.choice([["config", "show", path], ["check", kernel, "-c", path]])
    else:
        argv = ["sweep", path, "--dry-run"]
    return argv, f"{kind} {os.path.relpath(original, ROOT)} ({what})", directory, fifo


def is_special(path):
    """A FIFO or device: copying it would block or fail."""
    return os.path.exists(path) and not os.path.islink(path) and not (
        os.path.isfile(path) or os.path.isdir(path))


def feed_fifo(path, data, deadline):
    """Writes `data` into the FIFO `path` once a reader has opened it (until `deadline`)."""
    while time.monotonic() < deadline:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.01)
            continue
        os.set_blocking(fd, True)
        try:
            os.write(fd, data)
        except OSError:  # the reader went away: its exit code tells
            pass
        finally:
            os.close(fd)
        return


def run_case(trnsim, argv, timeout, fifo=None):
    """(problem or None, seconds, note): a `run` that outlasts the timeout on a kernel that
    `check` accepts within it is a valid kernel that is long to simulate (note "long")."""
    start = time.monotonic()
    if fifo is not None:
        writer = threading.Thread(target=feed_fifo, args=(*fifo, start + timeout), daemon=True)
        writer.start()
    try:
        done = subprocess.run([trnsim] + argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, env=dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE"))
    except subprocess.TimeoutExpired:
        if argv[0] == "run":
            problem, _, _ = run_case(trnsim, ["check"] + argv[1:-1], timeout, fifo)
            if problem is None:
                return None, time.monotonic() - start, "long"
        return f"no exit within {timeout} s", time.monotonic() - start, ""
    elapsed = time.monotonic() - start
    code = done.returncode
    stderr = done.stderr.decode(errors="replace")
    if code < 0:
        return f"killed by signal {-code}: {stderr[-2000:]}", elapsed, ""
    if code not in (0, 1, 2):
        return f"exit {code}: {stderr[-2000:]}", elapsed, ""
    if code == 2 and (done.stdout or "trnsim: error:" not in stderr):
        return f"exit 2 with stdout {done.stdout[:200]!r} and stderr {stderr[:500]!r}", elapsed, ""
    return None, elapsed, f"exit {code}"


def main():
    parser = argparse.ArgumentParser(description="Mutation test of trnsim's inputs")
    parser.add_argument("--trnsim", required=True, help="the trnsim binary")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds allowed per case")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="cases run at once")
    parser.add_argument("--keep", default=None, help="copy failing cases into this directory")
    args = parser.parse_args()
    if not os.access(args.trnsim, os.X_OK):
        print(f"mutate_inputs.py: {args.trnsim}: not an executable", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    sources = {
        "kernel": sorted(glob.glob(os.path.join(ROOT, "examples", "kernels", "*.json"))),
        "config": sorted(glob.glob(os.path.join(ROOT, "configs", "*.json"))),
        "sweep": sorted(glob.glob(os.path.join(ROOT, "examples", "sweeps", "*.json"))),
    }
    scratch = tempfile.mkdtemp(prefix="trnsim-mutate-")
    failures = 0
    slowest = (0.0, "")
    counts = {}
    outcomes = {}
    try:
        cases = [make_case(rng, sources, scratch, i) for i in range(args.cases)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = pool.map(lambda c: run_case(args.trnsim, c[0], args.timeout, c[3]), cases)
            for (argv, description, directory, _), (problem, elapsed, note) in zip(cases, results):
                if note != "long":
                    slowest = max(slowest, (elapsed, f"{description}: trnsim {' '.join(argv)}"))
                kind = description.split()[0]
                counts[kind] = counts.get(kind, 0) + 1
                outcome = note if problem is None else "failed"
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if problem is None:
                    continue
                failures += 1
                print(f"FAIL {description}: trnsim {' '.join(argv)}\n  {problem}", flush=True)
                if args.keep:
                    target = os.path.join(args.keep, os.path.basename(directory))
                    shutil.copytree(directory, target, symlinks=True, dirs_exist_ok=True,
                                    ignore=lambda d, names: [n for n in names if is_special(
                                        os.path.join(d, n))])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"seed {seed}: {args.cases} cases {counts}, outcomes {outcomes} ('long': a valid kernel "
          f"`check` accepts, longer than {args.timeout:g} s to simulate), {failures} failed, "
          f"slowest {slowest[0]:.2f} s ({slowest[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
