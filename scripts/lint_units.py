#!/usr/bin/env python3
"""Prints the translation units scripts/lint.sh gives clang-tidy: lines "BUILD_DIR UNIT".

The units come from each BUILD_DIR's compile_commands.json, in the order given: each C++ source
of src/, tests/, bench/, examples/ and python/ that a database compiles on its own, and each
unity source (CMAKE_UNITY_BUILD, which the lint preset sets) that gathers such files. A file is
linted once, in the first translation unit that holds it: the ABI suites built for the simulator
and for FakeCuda, and the library in every preset, are not linted twice. Exits 1, naming them,
when a tracked C++ file of those folders is in no database, so no file goes unlinted;
tests/install/consumer/ is the one exception (an outside project's sources, which the install
test builds against the installed tree and which clang-format skips too).
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("src", "tests", "bench", "examples", "python")
NOT_LINTED = ("tests/install/consumer/",)
UNITY_INCLUDE = re.compile(r'^#include "(.+)"$', re.MULTILINE)


def repo_files(unit):
    """The files a translation unit compiles: itself, or the files a unity source includes."""
    if "Unity" in unit.parts and unit.name.startswith("unity_"):
        return [Path(p) for p in UNITY_INCLUDE.findall(unit.read_text())]
    return [unit]


def relative_source(path):
    """`path` relative to the repository when it is a C++ file of the linted folders, else None."""
    try:
        rel = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    if rel.endswith(".cpp") and rel.split("/", 1)[0] in FOLDERS:
        return rel
    return None


def main():
    if len(sys.argv) < 2:
        raise SystemExit(f"usage: {sys.argv[0]} BUILD_DIR...")
    lines = []
    covered = set()
    for build_dir in sys.argv[1:]:
        database = json.loads((Path(build_dir) / "compile_commands.json").read_text())
        for entry in database:
            unit = Path(entry["directory"], entry["file"])
            files = {rel for rel in map(relative_source, repo_files(unit)) if rel}
            if files - covered:
                lines.append(f"{build_dir} {unit}")
                covered |= files
    tracked = subprocess.run(["git", "ls-files", *(f"{folder}/*.cpp" for folder in FOLDERS)],
                             cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    missing = [rel for rel in tracked if rel not in covered and not rel.startswith(NOT_LINTED)]
    if missing:
        print("in no compile database, so not linted: " + ", ".join(missing), file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
