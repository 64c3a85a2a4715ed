#!/usr/bin/python3
"""Coverage-guided fuzzing of the NKI front end's tracing and lowering (src/frontend/trnsim_nki).

libFuzzer cannot drive Python code and no Python fuzzing engine is packaged for Debian, so this
is a small fuzzer of our own, run with python3 alone. A case is an NKI kernel source, the kernel
function's name, its --input specs, --kwarg values and --grid. The seeds are the NKI examples
(examples/nki/examples.json); a mutant changes the source's syntax tree (numbers, operators,
statements, names, calls, arguments), its bytes, its inputs, kwargs or grid. Each case is traced
by the front end's own command line (`trnsim_nki trace`) in a forked child, with line coverage
of the front end collected; a mutant that reaches new lines joins the corpus.

The contract checked (docs/nki-frontend.md): exit 0 with a trnsim-kernel/1 document, or exit 2
with a located "trnsim: error:" line. Anything else (exit 70, another exit code, a signal, a bad
document) is a finding, saved as a JSON case in the crash directory; tests/fuzz/regressions/nki
keeps the fixed ones, replayed by CTest. A case still tracing after --timeout seconds is counted
and reported but is not a finding: a kernel may loop forever in its own Python code.

  python3 tests/fuzz/nki_fuzz.py --seconds 600            # fuzz for 10 minutes
  python3 tests/fuzz/nki_fuzz.py --replay FILE_OR_DIR...  # replay cases, exit 1 on a finding
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import signal
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONTEND = os.path.join(ROOT, "src", "frontend")
EXAMPLES = os.path.join(ROOT, "examples", "nki")

INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 127, 128, 129, 255, 256, 511, 512, 513, 1024, 2047, 2048,
                    4096, 65536, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, -2**63, 10**30]
INTERESTING_FLOATS = [0.0, -0.0, 0.5, 1e-308, 1e308, float("inf"), float("-inf"), float("nan")]
DTYPES = ["float32", "bfloat16", "float16", "int8", "int32", "uint8", "float8_e4m3", "bool",
          "float64", "tfloat32", "nosuchtype"]
GRIDS = [None, "1", "2", "3", "2,2", "0", "-1", "nc(2)", "nc(2),2", "4096", "1,1,1", "x", ""]
KWARG_VALUES = ["0", "1", "-1", "128", "1000", "2**40", "None", "True", "'a'", "[1, 2]", "1.5",
                "float('nan')", "()", "{}"]


# ---- cases ---------------------------------------------------------------------------------------


def seed_cases():
    """One case per NKI example, with its golden (smaller) inputs when it has them."""
    with open(os.path.join(EXAMPLES, "examples.json")) as f:
        catalog = json.load(f)
    cases = []
    for entry in catalog["kernels"]:
        file, _, function = entry["kernel"].partition("::")
        with open(os.path.join(EXAMPLES, file)) as f:
            source = f.read()
        inputs = entry.get("golden_inputs", entry["inputs"])
        kwargs = {k: repr(v) for k, v in entry.get("kwargs", {}).items()}
        cases.append({"file": file, "source": source, "function": function,
                      "inputs": dict(inputs), "kwargs": kwargs, "grid": entry.get("grid")})
    return cases


def load_cases(paths):
    cases = []
    for path in paths:
        files = [path]
        if os.path.isdir(path):
            files = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".json"))
        for file in files:
            with open(file) as f:
                case = json.load(f)
            case["name"] = file
            cases.append(case)
    return cases


# ---- running one case ----------------------------------------------------------------------------


def _coverage_tracer(lines):
    prefix = FRONTEND + os.sep

    def local(frame, event, arg):
        if event == "line":
            lines.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(prefix) else None

    return global_


def run_case(case, workdir, timeout, coverage):
    """Traces `case` in a forked child. Returns (outcome, detail, lines): outcome "ok", "invalid"
    (exit 2 with a message), "timeout" or "finding"."""
    kernel_path = os.path.join(workdir, case["file"])
    with open(kernel_path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(case["source"])
    output = os.path.join(workdir, "out.json")
    stderr_path = os.path.join(workdir, "stderr.txt")
    lines_path = os.path.join(workdir, "lines.json")
    for path in (output, lines_path):
        if os.path.exists(path):
            os.remove(path)
    argv = ["trace", f"{case['file']}::{case['function']}", "-o", output]
    for name, spec in case.get("inputs", {}).items():
        argv += ["--input", f"{name}={spec}"]
    for name, value in case.get("kwargs", {}).items():
        argv += ["--kwarg", f"{name}={value}"]
    if case.get("grid") is not None:
        argv += ["--grid", case["grid"]]

    pid = os.fork()
    if pid == 0:  # child
        code = 71
        try:
            os.chdir(workdir)
            fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            signal.alarm(timeout)
            from trnsim_nki import __main__ as frontend

            lines = set()
            if coverage:
                sys.settrace(_coverage_tracer(lines))
            code = frontend.main(argv)
            sys.settrace(None)
            if coverage:
                with open(lines_path, "w") as f:
                    json.dump(sorted(lines), f)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 71
        except BaseException:  # noqa: BLE001 - an exception escaping main() is a finding
            import traceback

            traceback.print_exc()
            code = 71
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else 71)
    _, status = os.waitpid(pid, 0)
    with open(stderr_path, errors="replace") as f:
        stderr = f.read()
    lines = set()
    if coverage and os.path.exists(lines_path):
        with open(lines_path) as f:
            lines = {tuple(x) for x in json.load(f)}
    if os.WIFSIGNALED(status):
        if os.WTERMSIG(status) == signal.SIGALRM:
            return "timeout", f"still tracing after {timeout} s", lines
        return "finding", f"killed by signal {os.WTERMSIG(status)}\n{stderr}", lines
    code = os.WEXITSTATUS(status)
    if code == 0:
        try:
            with open(output) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            return "finding", f"exit 0 without a JSON document: {e}", lines
        if not isinstance(doc, dict) or doc.get("format") != "trnsim-kernel/1":
            return "finding", "exit 0 with a document that is not trnsim-kernel/1", lines
        return "ok", "", lines
    if code == 2:
        last = stderr.rstrip("\n").rsplit("\n", 1)[-1]
        if not last.startswith("trnsim: error: "):
            return "finding", f"exit 2 without a 'trnsim: error:' line:\n{stderr}", lines
        return "invalid", last, lines
    return "finding", f"exit {code}\n{stderr}", lines


# ---- mutation ------------------------------------------------------------------------------------


class _Collect(ast.NodeVisitor):
    def __init__(self):
        self.ints, self.floats, self.binops, self.compares, self.bodies = [], [], [], [], []
        self.names, self.attributes, self.calls, self.slices = [], [], [], []

    def generic_visit(self, node):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                pass
            elif isinstance(node.value, int):
                self.ints.append(node)
            elif isinstance(node.value, float):
                self.floats.append(node)
        elif isinstance(node, ast.BinOp):
            self.binops.append(node)
        elif isinstance(node, ast.Compare):
            self.compares.append(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self.names.append(node)
        elif isinstance(node, ast.Attribute):
            self.attributes.append(node)
        elif isinstance(node, ast.Call):
            self.calls.append(node)
        elif isinstance(node, ast.Slice):
            self.slices.append(node)
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                self.bodies.append(body)
        super().generic_visit(node)


def _mutate_tree(tree, rng):
    c = _Collect()
    c.visit(tree)
    choices = []
    if c.ints:
        choices.append("int")
    if c.floats:
        choices.append("float")
    if c.binops:
        choices.append("binop")
    if c.compares:
        choices.append("compare")
    if c.bodies:
        choices += ["delete", "duplicate", "swap"]
    if len(c.names) > 1:
        choices.append("name")
    if len(c.attributes) > 1:
        choices.append("attribute")
    if c.calls:
        choices += ["drop_arg", "keyword"]
    if c.slices:
        choices.append("slice")
    if not choices:
        return
    kind = rng.choice(choices)
    if kind == "int":
        node = rng.choice(c.ints)
        node.value = rng.choice(INTERESTING_INTS + [node.value + 1, node.value - 1, node.value * 2,
                                                    -node.value, node.value // 2])
    elif kind == "float":
        rng.choice(c.floats).value = rng.choice(INTERESTING_FLOATS)
    elif kind == "binop":
        ops = [ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div, ast.Pow, ast.LShift]
        rng.choice(c.binops).op = rng.choice(ops)()
    elif kind == "compare":
        node = rng.choice(c.compares)
        ops = [ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq]
        node.ops = [rng.choice(ops)() for _ in node.ops]
    elif kind in ("delete", "duplicate", "swap"):
        body = rng.choice(c.bodies)
        i = rng.randrange(len(body))
        if kind == "delete" and len(body) > 1:
            del body[i]
        elif kind == "duplicate":
            body.insert(i, copy.deepcopy(body[i]))
        elif kind == "swap" and len(body) > 1:
            j = rng.randrange(len(body))
            body[i], body[j] = body[j], body[i]
    elif kind == "name":
        rng.choice(c.names).id = rng.choice(c.names).id
    elif kind == "attribute":
        rng.choice(c.attributes).attr = rng.choice(c.attributes).attr
    elif kind == "drop_arg":
        call = rng.choice(c.calls)
        if call.args and (not call.keywords or rng.random() < 0.5):
            del call.args[rng.randrange(len(call.args))]
        elif call.keywords:
            del call.keywords[rng.randrange(len(call.keywords))]
    elif kind == "keyword":
        call = rng.choice(c.calls)
        value = rng.choice([ast.Constant(rng.choice(INTERESTING_INTS)), ast.Constant(None),
                            ast.Constant("x"), ast.Constant(rng.choice(INTERESTING_FLOATS))])
        if call.keywords and rng.random() < 0.7:
            rng.choice(call.keywords).value = value
        else:
            call.args.append(value)
    elif kind == "slice":
        node = rng.choice(c.slices)
        field = rng.choice(["lower", "upper", "step"])
        setattr(node, field, rng.choice([None, ast.Constant(rng.choice(INTERESTING_INTS))]))


def _mutate_bytes(source, rng):
    data = bytearray(source.encode("utf-8", errors="surrogateescape"))
    kind = rng.choice(["truncate", "insert", "flip", "nesting"])
    at = rng.randrange(len(data) + 1)
    if kind == "truncate":
        del data[at:]
    elif kind == "insert":
        data[at:at] = rng.choice([b"(", b")", b"[", b"]", b":", b"\x00", b"\xff\xfe", b"\n    ",
                                  b"1e999", b"nan", b"-", b"**", b"'"])
    elif kind == "flip" and data:
        data[min(at, len(data) - 1)] = rng.randrange(256)
    elif kind == "nesting":
        depth = rng.choice([100, 1000, 10000])
        data[at:at] = b"(" * depth + b"1" + b")" * depth
    return data.decode("utf-8", errors="surrogateescape")


def _mutate_shape(spec, rng):
    dtype, _, rest = spec.partition("[")
    dims = [d for d in rest.rstrip("]").split(",") if d.strip()]
    kind = rng.choice(["dim", "dim", "add", "drop", "dtype"])
    if kind == "dim" and dims:
        i = rng.randrange(len(dims))
        dims[i] = str(rng.choice([1, 2, 3, 64, 127, 128, 129, 4096, 100000, 2**31, 0, -1,
                                  int(dims[i]) * 2 if dims[i].strip().isdigit() else 2]))
    elif kind == "add":
        dims.insert(rng.randrange(len(dims) + 1), str(rng.choice([1, 2, 128])))
    elif kind == "drop" and len(dims) > 1:
        del dims[rng.randrange(len(dims))]
    elif kind == "dtype":
        dtype = rng.choice(DTYPES)
    return f"{dtype}[{','.join(dims)}]"


def mutate(case, rng):
    case = copy.deepcopy(case)
    case.pop("name", None)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        kind = rng.choices(["tree", "bytes", "input", "kwarg", "grid"], [70, 6, 14, 5, 5])[0]
        if kind == "tree":
            try:
                tree = ast.parse(case["source"])
            except (SyntaxError, ValueError):
                kind = "bytes"
            else:
                _mutate_tree(tree, rng)
                try:
                    case["source"] = ast.unparse(tree)
                except (ValueError, TypeError, AttributeError, RecursionError, SyntaxError):
                    pass
                continue
        if kind == "bytes":
            case["source"] = _mutate_bytes(case["source"], rng)
        elif kind == "input" and case["inputs"]:
            name = rng.choice(sorted(case["inputs"]))
            case["inputs"][name] = _mutate_shape(case["inputs"][name], rng)
        elif kind == "kwarg":
            names = sorted(case["kwargs"]) + ["free_dim", "tile", "n"]
            case["kwargs"][rng.choice(names)] = rng.choice(KWARG_VALUES)
        elif kind == "grid":
            case["grid"] = rng.choice(GRIDS)
    return case


# ---- driver ----------------------------------------------------------------------------------------


def save_case(case, directory, tag):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{tag}.json")
    with open(path, "w") as f:
        json.dump({k: v for k, v in case.items() if k != "name"}, f, indent=1)
        f.write("\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=None, help="fuzz for this long")
    parser.add_argument("--cases", type=int, default=None, help="fuzz this many mutants")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--timeout", type=int, default=10, help="seconds per case")
    parser.add_argument("--crashes", default="nki-fuzz-findings",
                        help="directory for the cases of findings")
    parser.add_argument("--replay", nargs="+", metavar="PATH",
                        help="run these case files (or directories of them) only")
    parser.add_argument("--no-coverage", action="store_true", help="no coverage guidance")
    parser.add_argument("--regressions", default=None, metavar="DIR",
                        help="also run the cases in DIR before fuzzing (exit 1 on a finding)")
    args = parser.parse_args()
    sys.path.insert(0, FRONTEND)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True
    try:
        import numpy  # noqa: F401 - imported once here, not in every child
    except ImportError:
        pass
    import trnsim_nki.__main__  # noqa: F401

    workdir = tempfile.mkdtemp(prefix="trnsim-nki-fuzz-")
    try:
        if args.replay:
            return replay(load_cases(args.replay), workdir, args.timeout)
        return fuzz(args, workdir)
    finally:
        for name in os.listdir(workdir):
            path = os.path.join(workdir, name)
            if os.path.isfile(path):
                os.remove(path)
        os.rmdir(workdir)


def replay(cases, workdir, timeout):
    findings = 0
    for case in cases:
        outcome, detail, _ = run_case(case, workdir, timeout, False)
        print(f"{case.get('name', '?')}: {outcome} {detail.splitlines()[0] if detail else ''}")
        if outcome == "finding":
            print(detail)
            findings += 1
    print(f"{len(cases)} cases replayed, {findings} findings")
    return 1 if findings else 0


def fuzz(args, workdir):
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    coverage = not args.no_coverage
    corpus = seed_cases()
    covered = set()
    counts = {"ok": 0, "invalid": 0, "timeout": 0, "finding": 0}
    start = time.monotonic()
    kept = load_cases([args.regressions]) if args.regressions else []
    for case in corpus + kept:
        outcome, detail, lines = run_case(case, workdir, args.timeout, coverage)
        covered |= lines
        counts[outcome] += 1
        if outcome == "finding":
            print(f"{case.get('name', 'seed')} {case['file']}::{case['function']}: {detail}",
                  flush=True)
    print(f"seed {seed}: {len(corpus)} seeds and {len(kept)} kept cases run, "
          f"cov {len(covered)} lines", flush=True)
    executed = 0
    last_report = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        if args.seconds is not None and elapsed >= args.seconds:
            break
        if args.cases is not None and executed >= args.cases:
            break
        if args.seconds is None and args.cases is None and executed >= 100:
            break
        case = mutate(rng.choice(corpus), rng)
        outcome, detail, lines = run_case(case, workdir, args.timeout, coverage)
        executed += 1
        counts[outcome] += 1
        new = lines - covered
        if new:
            covered |= new
            corpus.append(case)
        if outcome == "finding":
            path = save_case(case, args.crashes, f"finding-{seed}-{executed}")
            print(f"FINDING ({path}): {detail}", flush=True)
        if time.monotonic() - last_report >= 30:
            last_report = time.monotonic()
            rate = executed / (last_report - start)
            print(f"#{executed} cov {len(covered)} lines corpus {len(corpus)} "
                  f"exec/s {rate:.2f} {counts}", flush=True)
    elapsed = time.monotonic() - start
    print(f"done: {executed} mutants in {elapsed:.0f} s ({executed / max(elapsed, 1e-9):.2f} "
          f"exec/s), cov {len(covered)} lines, corpus {len(corpus)}, outcomes {counts}", flush=True)
    return 1 if counts["finding"] else 0


if __name__ == "__main__":
    sys.exit(main())
