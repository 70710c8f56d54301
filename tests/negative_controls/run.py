#!/usr/bin/env python3
"""Negative controls: each patch here re-introduces one defect a guard exists to prevent.

For every `*.patch` in this folder the runner applies the patch to a scratch copy of the
tree, rebuilds only the test binaries the patch names, and runs the named tests. A control
passes only if every named test now fails. Before any patch, the same tests must pass on the
unpatched tree, and a patch that no longer applies fails the run. One scratch build folder is
reused, so each control rebuilds only what its patch touches.

Patch header (the text before the first `diff`):
    Control: <one line saying which defect it re-introduces>
    Must-fail: <test executable> <Suite.Test> ...   (one or more lines; gtest names)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def log(message):
    print(f"[controls] {message}", flush=True)


def run(cmd, cwd=None, quiet=False, timeout=None):
    try:
        result = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"timed out after {timeout} s: {' '.join(cmd[:2])}")
        return subprocess.CompletedProcess(cmd, 124, "", "")
    if result.returncode != 0 and not quiet:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
    return result


class Control:
    def __init__(self, path):
        self.path = path
        self.name = path.stem
        self.title = ""
        self.must_fail = {}  # binary -> [Suite.Test]
        for line in path.read_text().splitlines():
            if line.startswith("diff "):
                break
            key, _, value = line.partition(":")
            if key == "Control":
                self.title = value.strip()
            elif key == "Must-fail":
                binary, *tests = value.split()
                self.must_fail.setdefault(binary, []).extend(tests)
        if not self.title or not self.must_fail or not all(self.must_fail.values()):
            raise SystemExit(f"{path.name}: header needs a Control line and Must-fail lines")

    @property
    def binaries(self):
        return sorted(self.must_fail)

    def count(self):
        return sum(len(tests) for tests in self.must_fail.values())


def copy_tree(dest):
    files = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.split("\n")
    if dest.exists():
        shutil.rmtree(dest)
    for rel in files:
        if not rel or rel.startswith("build/"):
            continue
        src = ROOT / rel
        if not src.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def build(build_dir, targets):
    result = run(["cmake", "--build", str(build_dir), "-j", "2", "--target", *targets])
    return result.returncode == 0


def test_outcomes(build_dir, binary, tests):
    """Runs `tests` of `binary`; returns {test: passed}."""
    report = build_dir / f"{binary}.controls.json"
    if report.exists():
        report.unlink()
    exe = next(build_dir.rglob(binary), None)
    if exe is None:
        raise SystemExit(f"test binary {binary} not found under {build_dir}")
    # A defect may deadlock a test; a killed run writes no report, so its tests count as failed.
    run([str(exe), f"--gtest_filter={':'.join(tests)}", f"--gtest_output=json:{report}"],
        quiet=True, timeout=300)
    outcomes = {}
    if report.exists():
        data = json.loads(report.read_text())
        for suite in data.get("testsuites", []):
            for case in suite.get("testsuite", []):
                full = f"{case['classname']}.{case['name']}"
                outcomes[full] = not case.get("failures") and case.get("result") == "COMPLETED"
    return outcomes


def tests_of(controls, binary):
    return sorted({t for c in controls for t in c.must_fail.get(binary, [])})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work-dir", default=str(ROOT / "build" / "controls"))
    parser.add_argument("only", nargs="*", help="run only these controls (patch stems)")
    args = parser.parse_args()

    controls = [Control(p) for p in sorted(HERE.glob("*.patch"))]
    if args.only:
        controls = [c for c in controls if c.name in args.only]
    if not controls:
        raise SystemExit("no controls selected")

    work = Path(args.work_dir)
    tree, build_dir = work / "tree", work / "build"
    copy_tree(tree)
    configure = run(["cmake", "-S", str(tree), "-B", str(build_dir), "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DREPLAYRT_BUILD_BENCHMARKS=OFF",
                     "-DREPLAYRT_BUILD_EXAMPLES=OFF"])
    if configure.returncode != 0:
        raise SystemExit("configure failed")

    binaries = sorted({b for c in controls for b in c.binaries})
    log(f"baseline: building {', '.join(binaries)}")
    if not build(build_dir, binaries):
        raise SystemExit("baseline build failed")
    for binary in binaries:
        wanted = tests_of(controls, binary)
        outcomes = test_outcomes(build_dir, binary, wanted)
        bad = [t for t in wanted if not outcomes.get(t, False)]
        if bad:
            raise SystemExit(f"baseline: these tests must pass unpatched but did not: {bad}")
    log("baseline: every named test passes unpatched")

    failures = []
    for control in controls:
        log(f"{control.name}: {control.title}")
        # `patch`, not `git apply`: the scratch tree lives inside this repository's work tree,
        # and git would resolve the paths against the repository instead.
        check = run(["patch", "-p1", "--dry-run", "--batch", "--fuzz=0", "-i", str(control.path)], cwd=tree)
        if check.returncode != 0:
            failures.append(f"{control.name}: patch no longer applies")
            continue
        run(["patch", "-p1", "--batch", "--fuzz=0", "-i", str(control.path)], cwd=tree)
        try:
            if not build(build_dir, control.binaries):
                failures.append(f"{control.name}: patched tree does not build")
                continue
            # A named test missing from the report crashed the binary: that counts as failing.
            # Every name was seen passing in the baseline, so a missing name is no typo.
            still_passing = []
            for binary in control.binaries:
                named = control.must_fail[binary]
                outcomes = test_outcomes(build_dir, binary, named)
                still_passing += [t for t in named if outcomes.get(t, False)]
            if still_passing:
                failures.append(f"{control.name}: still passing with the defect: {still_passing}")
            else:
                log(f"{control.name}: all {control.count()} named tests fail, as they must")
        finally:
            run(["patch", "-p1", "-R", "--batch", "--fuzz=0", "-i", str(control.path)], cwd=tree)

    if failures:
        for failure in failures:
            print(f"[controls] FAIL {failure}", file=sys.stderr)
        return 1
    log(f"all {len(controls)} controls caught their defect")
    return 0


if __name__ == "__main__":
    sys.exit(main())
