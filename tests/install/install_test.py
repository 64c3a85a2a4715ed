#!/usr/bin/env python3
"""Installs the build tree and builds examples/embed against it, as docs/embedding.md shows.

Runs the ```sh block of docs/embedding.md that follows MARKER, in a scratch directory where
`build` is the build tree under test, `examples` the source tree's, and $HOME the scratch
directory itself (so the documented prefix lands inside it). README.md's block after MARKER must
be lines of that block. Then checks that the embedded program prints what docs/embedding.md shows
after OUTPUT_MARKER, reports the same kernel time as the installed `trnsim run --json`, and with
--json prints the same statistics, and that its own fixed-latency HBM model replaces the
built-in one. The scratch directory carries the process id and is removed at the end.

Usage: install_test.py SOURCE_DIR BUILD_DIR CXX_COMPILER
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

MARKER = "<!-- tests/install runs the commands below, in one directory -->"
OUTPUT_MARKER = "<!-- tests/install checks that the program prints this -->"
PREFIX = "opt/trnsim"  # under $HOME, as docs/embedding.md installs
KERNEL = "examples/kernels/vector_add.json"


def block_after(path, marker, fence):
    """The lines of the block opened by `fence` right after the line `marker`."""
    with open(path, encoding="utf-8") as text:
        lines = text.read().split("\n")
    start = lines.index(marker)
    if lines[start + 1] != fence:
        raise SystemExit(f"{path}: expected a {fence} block right after {marker}")
    return lines[start + 2:lines.index("```", start + 2)]


def marked_block(path):
    """The command lines of the ```sh block after MARKER (continuations joined)."""
    commands = []
    for line in block_after(path, MARKER, "```sh"):
        if commands and commands[-1].endswith("\\"):
            commands[-1] = commands[-1][:-1] + line.strip()
        elif line.strip() and not line.startswith("#"):
            commands.append(line.split("  #")[0].rstrip())
    return commands


def run(command, scratch, env, show=True):
    """Standard output of `command` (bash, in `scratch`); its output and stderr are shown when
    `show` is set or it fails."""
    print("$", command, flush=True)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=scratch, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if show or done.returncode != 0:
        print(done.stdout, done.stderr, sep="", end="", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"exit {done.returncode}: {command}")
    return done.stdout


def main(source, build, cxx):
    documented = marked_block(os.path.join(source, "docs/embedding.md"))
    readme = marked_block(os.path.join(source, "README.md"))
    if not set(readme) <= set(documented):
        raise SystemExit("README.md's install commands are not all in docs/embedding.md's: "
                         f"{sorted(set(readme) - set(documented))}")
    scratch = os.path.join(tempfile.gettempdir(), f"trnsim_install_{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        os.symlink(os.path.abspath(build), os.path.join(scratch, "build"))
        os.symlink(os.path.join(source, "examples"), os.path.join(scratch, "examples"))
        env = dict(os.environ, HOME=scratch, CXX=cxx, SC_COPYRIGHT_MESSAGE="DISABLE")
        outputs = [run(command, scratch, env) for command in documented]

        prefix = os.path.join(scratch, PREFIX)
        for installed in ("bin/trnsim", "include/trnsim/trnsim.hpp",
                          "share/trnsim/python/trnsim_nki/__main__.py"):
            if not os.path.exists(os.path.join(prefix, installed)):
                raise SystemExit(f"not installed: {installed}")
        embedded = next(out for command, out in zip(documented, outputs)
                        if command.startswith("build-embed/embed_example"))
        reference = json.loads(run(f'"$HOME/{PREFIX}/bin/trnsim" run {KERNEL} --json', scratch,
                                   env, show=False))
        kernel_ns = reference["time"]["kernel_ns"]
        line = next(line for line in embedded.splitlines() if line.startswith("kernel_ns "))
        if float(line.split()[1]) != kernel_ns:
            raise SystemExit(f"embed_example says '{line}', trnsim run --json {kernel_ns}")
        shown = block_after(os.path.join(source, "docs/embedding.md"), OUTPUT_MARKER, "```")
        if embedded.splitlines() != shown:
            raise SystemExit("docs/embedding.md shows another output of embed_example than it "
                             "prints (after a timing-model change, update the document):\n" +
                             embedded)
        statistics = json.loads(run(f"build-embed/embed_example {KERNEL} trn2 --json", scratch,
                                    env, show=False))
        if statistics != reference:
            raise SystemExit("embed_example --json differs from trnsim run --json")
        # A kernel with collectives: their operations and links' use, the same both ways.
        collective = "examples/kernels/collective_all_reduce.json"
        collective_run = json.loads(run(f'"$HOME/{PREFIX}/bin/trnsim" run {collective} --json',
                                        scratch, env, show=False))
        if not collective_run["collectives"]["servers"]:
            raise SystemExit("trnsim run --json of a collective kernel reports no links' use")
        if json.loads(run(f"build-embed/embed_example {collective} trn2 --json", scratch, env,
                          show=False)) != collective_run:
            raise SystemExit("embed_example --json of a collective kernel differs from trnsim run")
        # The program's own HBM model (FixedLatencyHbm, registered as hbm.model=fixed_latency):
        # its statistics replace the banked model's, every HBM byte goes through it, and its
        # latency shows in the kernel time.
        fixed = {latency: json.loads(run(f"build-embed/embed_example {KERNEL} trn2 --json "
                                         f"--fixed-hbm-ns {latency}", scratch, env, show=False))
                 for latency in (0, 20000)}
        stacks = fixed[20000]["memory_system"]["hbm"]["stacks"]
        hbm_bytes = reference["system"]["hbm_bytes"]
        if [stack.get("latency_ns") for stack in stacks] != [20000.0] or \
                sum(stack["read_bytes"] + stack["write_bytes"] for stack in stacks) != hbm_bytes:
            raise SystemExit(f"embed_example --fixed-hbm-ns 20000: HBM stacks {stacks}, expected "
                             f"one fixed-latency stack that moved {hbm_bytes} bytes")
        times = [fixed[latency]["time"]["kernel_ns"] for latency in (0, 20000)]
        if not times[0] + 20000 <= times[1]:
            raise SystemExit(f"embed_example --fixed-hbm-ns 0 and 20000 give kernel times {times}: "
                             "the later one should be at least 20 us longer")
        # The program's own VectorE cost model (registered as vector.cost_model=scaled): the
        # built-in cycles times 2 double VectorE's busy time.
        scaled = json.loads(run(f"build-embed/embed_example {KERNEL} trn2 --json "
                                "--vector-cost-scale 2", scratch, env, show=False))
        busy = [run_stats["cores"][0]["engines"]["vector"]["active_ns"]
                for run_stats in (reference, scaled)]
        if not busy[0] > 0 or abs(busy[1] / busy[0] - 2) > 1e-6:
            raise SystemExit(f"embed_example --vector-cost-scale 2: VectorE busy {busy[1]} ns, "
                             f"expected twice {busy[0]} ns")
        # A C++20 program builds against the package too (SystemC's headers as the library's).
        run(f'cmake -S examples/embed -B build-embed20 -DCMAKE_PREFIX_PATH="$HOME/{PREFIX}" '
            "-DCMAKE_CXX_STANDARD=20 && cmake --build build-embed20", scratch, env, show=False)
        cxx20 = run(f"build-embed20/embed_example {KERNEL} trn2", scratch, env, show=False)
        if cxx20 != embedded:
            raise SystemExit("embed_example built as C++20 prints another output:\n" + cxx20)
        # Tracing through SimulateOptions::log: lines on stderr; a bad spec is InvalidInput.
        traced = subprocess.run(["build-embed/embed_example", KERNEL, "trn2", "--log", "dma=debug"],
                                cwd=scratch, env=env, capture_output=True, text=True)
        if traced.returncode != 0 or "trnsim: dma: debug: flow model: core 0 DMA #0" not in \
                traced.stderr:
            raise SystemExit(f"embed_example --log dma=debug: exit {traced.returncode}, stderr "
                             f"{traced.stderr[:500]!r}")
        wrong = subprocess.run(["build-embed/embed_example", KERNEL, "trn2", "--log", "dmaa=debug"],
                               cwd=scratch, env=env, capture_output=True, text=True)
        if wrong.returncode != 2 or "found 'dmaa'" not in wrong.stderr:
            raise SystemExit(f"embed_example --log dmaa=debug: exit {wrong.returncode}, stderr "
                             f"{wrong.stderr[:500]!r}")
        print(f"kernel_ns {kernel_ns} from both; the statistics are the same")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
