#!/usr/bin/env python3
"""trnsim executes itself again once with glibc's huge-page heap tunables (src/util/huge_pages.hpp):
the running process has them in its environment and its own arguments, unless the user set
GLIBC_TUNABLES (kept as it is) or TRNSIM_HUGE_PAGES=0. Each case starts `trnsim check` on a FIFO,
reads the first tunable of the process's environment and its arguments from /proc while it waits
to open the FIFO, then writes a kernel and expects exit 0. Then `trnsim run --json` of an example kernel must print the
same bytes with and without huge pages.

Usage: huge_pages_test.py TRNSIM EXAMPLE_KERNEL"""

import os
import platform
import subprocess
import sys
import tempfile
import time

KERNEL = """{"format": "trnsim-kernel/1", "name": "tiny",
 "tensors": {"a": {"memory": "sbuf", "dtype": "float32", "shape": [128, 4]}},
 "program": [{"op": "memset", "dst": "a", "value": 0}]}"""
OPENAT = {"x86_64": "257", "aarch64": "56"}.get(platform.machine())
# glibc shows the first tunable of the list in the environment of the running process.
EXPECTED = "glibc.malloc.hugetlb=1"


def running_state(trnsim, fifo, environment):
    """The environment and arguments of `trnsim check FIFO` while it waits for the FIFO."""
    process = subprocess.Popen([trnsim, "check", fifo], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    try:
        while True:
            with open(f"/proc/{process.pid}/syscall") as syscall:
                if syscall.read().split(" ")[0] == OPENAT:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("trnsim did not reach the open of its kernel file")
            time.sleep(0.01)
        with open(f"/proc/{process.pid}/environ", "rb") as f:
            variables = dict(entry.split(b"=", 1) for entry in f.read().split(b"\0") if entry)
        with open(f"/proc/{process.pid}/cmdline", "rb") as f:
            arguments = f.read().split(b"\0")[:-1]
        with open(fifo, "w") as writer:
            writer.write(KERNEL)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    if process.returncode != 0:
        raise RuntimeError(f"trnsim check exited {process.returncode}: {stderr.decode()}")
    tunables = variables.get(b"GLIBC_TUNABLES")
    return (tunables.decode() if tunables is not None else None), arguments


def main():
    trnsim = sys.argv[1]
    if OPENAT is None:
        print(f"skipped: no openat number for {platform.machine()}")
        return 0
    base = {k: v for k, v in os.environ.items()
            if k not in ("GLIBC_TUNABLES", "TRNSIM_HUGE_PAGES", "LD_PRELOAD")}
    cases = [
        ("default", {}, EXPECTED),
        ("opted out", {"TRNSIM_HUGE_PAGES": "0"}, None),
        ("the user's tunables", {"GLIBC_TUNABLES": "glibc.malloc.check=0"}, "glibc.malloc.check=0"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        for number, (name, extra, expected) in enumerate(cases):
            fifo = os.path.join(directory, f"kernel{number}.json")
            os.mkfifo(fifo)
            tunables, arguments = running_state(trnsim, fifo, {**base, **extra})
            first = tunables.split(":")[0] if tunables is not None else None
            if first != expected or arguments != [trnsim.encode(), b"check", fifo.encode()]:
                print(f"FAIL {name}: GLIBC_TUNABLES {tunables!r} (expected {expected!r}), "
                      f"arguments {arguments}")
                failures += 1
            else:
                print(f"ok {name}: GLIBC_TUNABLES {tunables!r}")
    outputs = []
    for setting in ("1", "0"):
        run = subprocess.run([trnsim, "run", sys.argv[2], "--json", "-q"], capture_output=True,
                             env={**base, "TRNSIM_HUGE_PAGES": setting}, timeout=300)
        if run.returncode != 0:
            print(f"FAIL trnsim run exited {run.returncode}: {run.stderr.decode()}")
            return 1
        outputs.append(run.stdout)
    if outputs[0] != outputs[1]:
        print("FAIL trnsim run --json differs with and without huge pages")
        failures += 1
    else:
        print("ok trnsim run --json is the same with and without huge pages")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
