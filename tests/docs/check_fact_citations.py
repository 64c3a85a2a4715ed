#!/usr/bin/env python3
"""Fails when a citation of docs/sources/hardware-facts.md names a section it does not have.

Configs' `sources` entries and comments in the code cite the facts they rest on as
`hardware-facts.md §N` or `§N.M`, and further sections after a comma (`§8, §9`). Every cited
section must be a heading of the file ("## N." or "### N.M"), so a citation cannot point at
nothing after the file changes.

Usage: check_fact_citations.py ROOT
       check_fact_citations.py --self-test
"""
import os
import re
import sys
import tempfile

FACTS = os.path.join("docs", "sources", "hardware-facts.md")
HEADING = re.compile(r"^#{2,3}\s+(\d+(?:\.\d+)?)[.\s]")
CITATION = re.compile(r"hardware-facts\.md((?:,?\s*§\s*\d+(?:\.\d+)?)+)")
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)?)")
SCANNED = ("src", "include", "configs", "tests", "examples", "docs", "bench", "scripts")
SUFFIXES = (".cpp", ".hpp", ".json", ".md", ".py", ".txt", ".sh")


def sections(root):
    with open(os.path.join(root, FACTS), encoding="utf-8") as f:
        return {m.group(1) for line in f if (m := HEADING.match(line))}


def problems(root):
    known = sections(root)
    found = []
    for top in SCANNED:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SUFFIXES) or name == os.path.basename(__file__):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        for citation in CITATION.finditer(line):
                            for section in SECTION.findall(citation.group(1)):
                                if section not in known:
                                    found.append(f"{os.path.relpath(path, root)}:{number}: "
                                                 f"hardware-facts.md has no section {section}")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "sources"))
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, FACTS), "w") as f:
            f.write("# Facts\n## 1. One\n### 1.2 Sub\n## 9. Nine\n")
        with open(os.path.join(root, "src", "a.cpp"), "w") as f:
            f.write("// hardware-facts.md §1.2, §9\n// hardware-facts.md §1, §3\n"
                    "// hardware-facts.md §9.4\n")
        found = problems(root)
        expected = ["src/a.cpp:2: hardware-facts.md has no section 3",
                    "src/a.cpp:3: hardware-facts.md has no section 9.4"]
        if found != expected:
            print("self-test failed:", found)
            return 1
    print("self-test passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    found = problems(sys.argv[1])
    for problem in found:
        print(problem)
    if found:
        return 1
    print("every hardware-facts.md citation names a section of the file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
