#!/usr/bin/env python3
"""Fails on any #include "..." in src/ or include/ that runs up the layer order.

The layers, lowest first, are those of docs/architecture.md ("Layers"). A file may include
headers of its own block and of blocks in lower layers; blocks of one layer do not include each
other. A block is a folder of src/ (core/cost and core/deps count apart from core, whose
engines/ belong to it); "trnsim/..." is the public API (include/trnsim), which is the api
layer's, except the interfaces in PUBLIC_INTERFACES: public headers that blocks below the api
implement or use (an HBM target, the statistics tree), which include nothing of ours but each
other and form the lowest layer. Public
headers may include only other public headers. An include of a folder the table
does not know is an error, so a new block gets its place in the table.

Usage: check_layers.py ROOT     check the tree at ROOT (the repository)
       check_layers.py --self-test
"""
import os
import re
import sys
import tempfile

# Lowest first; the blocks of one entry are one layer.
LAYERS = [
    ["public-interfaces"],
    ["util", "address"],
    ["config"],
    ["kernel"],
    ["core/cost", "core/deps", "memory", "fabric", "nki", "numerics"],
    ["core"],
    ["dma"],
    ["system"],
    ["collective", "report"],
    ["api", "sweep"],
    ["validation"],
    ["cli"],
]

# Public headers that lower blocks implement or use: the block "public-interfaces".
PUBLIC_INTERFACES = {"trnsim/hbm_target.hpp", "trnsim/stats.hpp"}

# Known includes that run up the order: (including file, included header), both relative to
# src/. The test fails when one of them disappears, so the list only shrinks.
KNOWN_EXCEPTIONS = set()

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
LAYER_OF = {block: rank for rank, blocks in enumerate(LAYERS) for block in blocks}


def block_of(path):
    """The block of a path relative to src/ ("core/engines/engine.hpp" -> "core")."""
    parts = path.split("/")
    if path in PUBLIC_INTERFACES:
        return "public-interfaces"
    if parts[0] == "trnsim":
        return "api"
    if parts[0] == "core" and len(parts) > 2 and "/".join(parts[:2]) in LAYER_OF:
        return "/".join(parts[:2])
    return parts[0]


def sources(root):
    """(path relative to its top folder, top folder, full path) of every C++ file."""
    for top in ("src", "include"):
        base = os.path.join(root, top)
        for directory, _, files in os.walk(base):
            for name in sorted(files):
                if name.endswith((".hpp", ".cpp", ".h", ".cc")):
                    full = os.path.join(directory, name)
                    yield os.path.relpath(full, base).replace(os.sep, "/"), top, full


def check(root):
    """The violations (one line each) and the known exceptions seen."""
    problems = []
    seen = set()
    for relative, top, full in sources(root):
        with open(full, encoding="utf-8") as text:
            for number, line in enumerate(text, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                header = match.group(1)
                where = f"{top}/{relative}:{number}: #include \"{header}\""
                target = block_of(header)
                if top == "include":
                    if target not in ("api", "public-interfaces"):
                        problems.append(f"{where}: a public header includes a private one")
                    elif relative in PUBLIC_INTERFACES and target != "public-interfaces":
                        problems.append(f"{where}: an interface of the lowest layer includes "
                                        f"a header of a higher one")
                    continue
                source = block_of(relative)
                if source not in LAYER_OF:
                    problems.append(f"{where}: src/{source}/ has no layer in {__file__}")
                    continue
                if target not in LAYER_OF:
                    problems.append(f"{where}: {target}/ has no layer in {__file__}")
                    continue
                if target == source or LAYER_OF[target] < LAYER_OF[source]:
                    continue
                if (relative, header) in KNOWN_EXCEPTIONS:
                    seen.add((relative, header))
                    continue
                direction = "a block of the same layer" if LAYER_OF[target] == LAYER_OF[
                    source] else "a higher layer"
                problems.append(f"{where}: {source} includes {target}, {direction}")
    for relative, header in sorted(KNOWN_EXCEPTIONS - seen):
        problems.append(f"src/{relative}: no longer includes \"{header}\": remove it from "
                        f"KNOWN_EXCEPTIONS in {__file__}")
    return problems


def self_test():
    """The check finds an upward include, a sibling include and an unknown block."""
    with tempfile.TemporaryDirectory() as root:
        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        for source in sorted({source for source, _ in KNOWN_EXCEPTIONS}):
            write(f"src/{source}", "".join(f'#include "{header}"\n' for including, header
                                           in sorted(KNOWN_EXCEPTIONS) if including == source))
        write("src/kernel/ok.cpp", '#include "util/error.hpp"\n#include "kernel/expr.hpp"\n')
        write("include/trnsim/ok.hpp", '#include "trnsim/config.hpp"\n')
        write("src/memory/target.cpp", '#include "trnsim/hbm_target.hpp"\n')
        write("src/util/stats.cpp", '#include "trnsim/stats.hpp"\n')
        if check(root):
            print("self-test: a clean tree was reported:", *check(root), sep="\n  ")
            return 1
        write("src/kernel/up.cpp", '#include "core/neuron_core.hpp"\n')
        write("src/memory/side.cpp", '#include "fabric/fabric.hpp"\n')
        write("src/newblock/x.cpp", '#include "util/error.hpp"\n')
        write("src/memory/api.cpp", '#include "trnsim/hbm_target.hpp"\n#include "trnsim/config.hpp"\n')
        write("include/trnsim/hbm_target.hpp", '#include "trnsim/config.hpp"\n')
        write("include/trnsim/leak.hpp", '#include "core/simulation.hpp"\n')
        problems = check(root)
        expected = ["kernel/up.cpp", "memory/side.cpp", "newblock/x.cpp", "trnsim/leak.hpp",
                    "memory/api.cpp", "trnsim/hbm_target.hpp"]
        missing = [name for name in expected if not any(name in p for p in problems)]
        if missing or len(problems) != len(expected):
            print("self-test: expected one violation in each of", expected, "found:",
                  *problems, sep="\n  ")
            return 1
    print("self-test: the check reports upward, sibling, unknown and public-to-private includes")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) against the layer order (docs/architecture.md, Layers)")
        return 1
    print("every #include follows the layer order")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
