#!/usr/bin/env python3
"""Negative controls: each control here re-introduces one defect a guard exists to prevent.

A control is a `NN-name.control` file: a header naming the defect and the tests that must fail
with it, then one or more anchored edits. The runner copies the tree to a scratch folder, checks
that every named test passes there unedited, then for each control applies its edits, rebuilds
only the targets it names, and requires every named test to fail (a crash or a hang counts as
failing). A named test is a gtest case of a test binary, or a ctest test that is not a gtest
case (a CMake script check over the sources or the built library). Each worker (--jobs, default
2) has its own scratch tree and build folder, which it reuses, so each control rebuilds only
what its edits touch; a control occupies about one core (one edited file compiles, then one test
binary runs), so two workers keep two cores busy. When `ccache` is on PATH the scratch build
compiles through it, so the files a control restores are not compiled again. The first worker's
scratch build sits at `tree/build/default` (the second's at `tree-2/build/default`) and each is
configured like the `default` preset, so its compile commands match the repository's own
`build/default` once ccache rewrites paths under CCACHE_BASEDIR (the repository root unless
set): with a shared CCACHE_DIR (CI sets one), the baseline build is served from what `make test`
compiled. Without CCACHE_DIR the cache lives in the work folder. `--check-anchors` only checks
that every anchor occurs exactly once in the current tree, without building anything.

File format (README.md in this folder has an example):
    Control: <one line saying which defect it re-introduces>
    Must-fail: <test executable> <Suite.Test> ...   (one or more lines; gtest names)
    Must-fail-ctest: <target | -> <ctest name> ...  (a ctest test; the target it reads, or -)
    @@ edit <path relative to the repository root>
    @@ anchor
    <lines that occur exactly once in the file, at the start of a line>
    @@ replacement
    <the lines that take their place; none deletes the anchor>
    @@ end
Blank lines and lines starting with `#` outside edit blocks are ignored. Edits apply in
order; a later edit's anchor is looked up in the file as the earlier edits left it.
"""
import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUFFIX = ".control"
TEST_TIMEOUT_S = 300
# The liveness bound of the tests that wait for a wake-up (tests/support/liveness_bound.h), in
# milliseconds: the defects of several controls make those waits run out, and the tests' own
# 20 s would be most of those controls' time. It stays generous for the unedited baseline.
LIVENESS_BOUND_MS = "3000"


LOG_LOCK = threading.Lock()


def log(message):
    with LOG_LOCK:
        print(f"[controls] {message}", flush=True)


def run(cmd, cwd=None, quiet=False, timeout=None):
    try:
        result = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"timed out after {timeout} s: {' '.join(cmd[:2])}")
        return subprocess.CompletedProcess(cmd, 124, "", "")
    if result.returncode != 0 and not quiet:
        with LOG_LOCK:
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
            sys.stdout.flush()
    return result


class ControlError(Exception):
    """A control file that cannot be read, or an edit whose anchor does not match once."""


class Edit:
    def __init__(self, path, anchor, replacement, line):
        self.path = path
        self.anchor = anchor
        self.replacement = replacement
        self.line = line  # where the edit block starts in the control file


def parse_control(path):
    """Returns (title, {binary: [tests]}, {target: [ctest names]}, [Edit]) or raises ControlError.

    A ctest test's target is the one CMake target it reads (built before it runs); "" when it
    reads only the sources.
    """
    title = ""
    must_fail = {}
    must_fail_ctest = {}
    edits = []
    lines = path.read_bytes().decode().splitlines()
    i = 0

    def fail(number, message):
        raise ControlError(f"{path.name}:{number}: {message}")

    def read_block(start, terminator):
        """Collects lines from `start` up to the line `terminator`; returns (text, next)."""
        body = []
        j = start
        while j < len(lines) and lines[j] != terminator:
            if lines[j].startswith("@@ "):
                fail(j + 1, f"expected '{terminator}', found '{lines[j]}'")
            body.append(lines[j] + "\n")
            j += 1
        if j == len(lines):
            fail(start, f"missing '{terminator}'")
        return "".join(body), j + 1

    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            i += 1
        elif line.startswith("Control:"):
            title = line.partition(":")[2].strip()
            i += 1
        elif line.startswith("Must-fail:"):
            binary, *tests = line.partition(":")[2].split() or [""]
            if not binary or not tests:
                fail(i + 1, "Must-fail needs a test binary and at least one Suite.Test")
            must_fail.setdefault(binary, []).extend(tests)
            i += 1
        elif line.startswith("Must-fail-ctest:"):
            target, *tests = line.partition(":")[2].split() or [""]
            if not target or not tests:
                fail(i + 1, "Must-fail-ctest needs a target (or -) and at least one ctest name")
            must_fail_ctest.setdefault("" if target == "-" else target, []).extend(tests)
            i += 1
        elif line.startswith("@@ edit "):
            start = i + 1
            target = line[len("@@ edit "):].strip()
            if not target or Path(target).is_absolute() or ".." in Path(target).parts:
                fail(start, "'@@ edit' needs a path relative to the repository root")
            if i + 1 >= len(lines) or lines[i + 1] != "@@ anchor":
                fail(start + 1, "'@@ edit' must be followed by '@@ anchor'")
            anchor, i = read_block(i + 2, "@@ replacement")
            replacement, i = read_block(i, "@@ end")
            if not anchor.strip():
                fail(start, "the anchor is empty")
            if anchor == replacement:
                fail(start, "the replacement equals the anchor")
            edits.append(Edit(target, anchor, replacement, start))
        else:
            fail(i + 1, f"unexpected line: {line!r}")
    if not title:
        raise ControlError(f"{path.name}: needs a 'Control:' line")
    if not must_fail and not must_fail_ctest:
        raise ControlError(f"{path.name}: needs at least one 'Must-fail:' or 'Must-fail-ctest:' "
                           "line")
    if not edits:
        raise ControlError(f"{path.name}: needs at least one '@@ edit' block")
    return title, must_fail, must_fail_ctest, edits


def anchor_offsets(text, anchor):
    """Every offset where `anchor` starts a line of `text`, overlapping matches included."""
    offsets = []
    start = text.find(anchor)
    while start != -1:
        if start == 0 or text[start - 1] == "\n":
            offsets.append(start)
        start = text.find(anchor, start + 1)
    return offsets


class Control:
    def __init__(self, path):
        self.path = path
        self.name = path.name[: -len(SUFFIX)]
        self.title, self.must_fail, self.must_fail_ctest, self.edits = parse_control(path)

    @property
    def binaries(self):
        return sorted(self.must_fail)

    @property
    def targets(self):
        """Everything to build before the named tests run: the binaries and the ctest targets."""
        return sorted(set(self.must_fail) | {t for t in self.must_fail_ctest if t})

    @property
    def ctest_names(self):
        return sorted({name for names in self.must_fail_ctest.values() for name in names})

    def count(self):
        return (sum(len(tests) for tests in self.must_fail.values()) +
                sum(len(names) for names in self.must_fail_ctest.values()))

    def edited_files(self, tree):
        """Applies the edits in memory to the files under `tree`.

        Returns {relative path: (original text, edited text)}; raises ControlError naming the
        control, the file, the edit and the number of matches when an anchor does not occur
        exactly once.
        """
        files = {}
        for number, edit in enumerate(self.edits, start=1):
            if edit.path not in files:
                source = tree / edit.path
                if not source.is_file():
                    raise ControlError(f"{self.name}: edit {number} (line {edit.line}): "
                                       f"{edit.path} does not exist")
                original = source.read_bytes().decode()
                files[edit.path] = (original, original)
            original, current = files[edit.path]
            offsets = anchor_offsets(current, edit.anchor)
            if len(offsets) != 1:
                first = edit.anchor.splitlines()[0].strip()
                raise ControlError(
                    f"{self.name}: edit {number} (line {edit.line}): the anchor starting "
                    f"'{first}' occurs {len(offsets)} times in {edit.path}; it must occur "
                    "exactly once")
            at = offsets[0]
            current = current[:at] + edit.replacement + current[at + len(edit.anchor):]
            files[edit.path] = (original, current)
        return files


def load_controls(only):
    paths = sorted(HERE.glob(f"*{SUFFIX}"))
    errors = []
    controls = []
    for path in paths:
        try:
            controls.append(Control(path))
        except ControlError as error:
            errors.append(str(error))
    if errors:
        raise SystemExit("\n".join(f"[controls] FAIL {e}" for e in errors))
    if only:
        known = {c.name for c in controls}
        unknown = [name for name in only if name not in known]
        if unknown:
            raise SystemExit(f"[controls] no such control: {', '.join(unknown)}")
        controls = [c for c in controls if c.name in only]
    if not controls:
        raise SystemExit("[controls] no controls selected")
    return controls


def check_anchors(controls, tree):
    """Returns the list of anchor failures over `controls`, checked against `tree`."""
    failures = []
    for control in controls:
        try:
            control.edited_files(tree)
        except ControlError as error:
            failures.append(str(error))
    return failures


def sync_tree(dest):
    """Makes `dest` a copy of the working tree's tracked and untracked, unignored files.

    A file whose content already matches is left alone, so its timestamp keeps the reused
    build incremental; every other file is written anew and so is newer than any object built
    from an earlier (possibly edited) version of it.
    """
    listed = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.split("\n")
    wanted = set()
    for rel in listed:
        if not rel or rel.startswith("build/"):
            continue
        src = ROOT / rel
        if not src.is_file():
            continue
        wanted.add(rel)
        target = dest / rel
        data = src.read_bytes()
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(src.stat().st_mode & 0o777)
    if dest.exists():
        for path in sorted(dest.rglob("*"), reverse=True):
            rel = path.relative_to(dest).as_posix()
            if rel == "build" or rel.startswith("build/"):
                continue
            if path.is_file() and rel not in wanted:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()


def build(build_dir, targets):
    if not targets:
        return True
    result = run(["cmake", "--build", str(build_dir), "-j", "2", "--target", *targets])
    return result.returncode == 0


def ctest_outcomes(build_dir, names):
    """Runs the ctest tests `names` one by one; returns {name: passed}.

    A name that ctest does not know counts as failed, as does a run past the timeout.
    """
    outcomes = {}
    for name in names:
        result = run(["ctest", "--test-dir", str(build_dir), "-R", f"^{re.escape(name)}$",
                      "--no-tests=error"], quiet=True, timeout=TEST_TIMEOUT_S)
        outcomes[name] = result.returncode == 0
    return outcomes


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
        quiet=True, timeout=TEST_TIMEOUT_S)
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


def run_control(control, tree, build_dir):
    """Applies `control`, rebuilds and runs its tests, restores the tree; returns a failure or None."""
    edited = control.edited_files(tree)
    try:
        for rel, (_, text) in edited.items():
            (tree / rel).write_bytes(text.encode())
        if not build(build_dir, control.targets):
            return f"{control.name}: the edited tree does not build"
        # A named test missing from the report crashed the binary: that counts as failing.
        # Every name was seen passing in the baseline, so a missing name is no typo.
        still_passing = []
        for binary in control.binaries:
            named = control.must_fail[binary]
            outcomes = test_outcomes(build_dir, binary, named)
            still_passing += [t for t in named if outcomes.get(t, False)]
        outcomes = ctest_outcomes(build_dir, control.ctest_names)
        still_passing += [name for name, passed in outcomes.items() if passed]
        if still_passing:
            return f"{control.name}: still passing with the defect: {still_passing}"
        return None
    finally:
        # Written anew, so the restored files are newer than the objects built from the edit.
        for rel, (original, _) in edited.items():
            (tree / rel).write_bytes(original.encode())


def configure_tree(tree, launcher):
    """Makes `tree` a copy of the working tree and configures its build folder; returns it."""
    build_dir = tree / "build" / "default"
    sync_tree(tree)
    configure = run(["cmake", "-S", str(tree), "-B", str(build_dir), "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_COMPILER=gcc",
                     "-DCMAKE_CXX_COMPILER=g++", "-DREPLAYRT_BUILD_BENCHMARKS=OFF",
                     "-DREPLAYRT_BUILD_EXAMPLES=OFF", *launcher])
    if configure.returncode != 0:
        raise SystemExit(f"configure failed in {tree}")
    return build_dir


def run_controls(controls, workers):
    """Runs `controls` on `workers` ((tree, build folder) pairs), one thread per worker, each
    taking the next control when it is done with one; returns the failures in control order."""
    pending = queue.Queue()
    for control in controls:
        pending.put(control)
    failures = {}
    failures_lock = threading.Lock()

    def work(tree, build_dir):
        while True:
            try:
                control = pending.get_nowait()
            except queue.Empty:
                return
            log(f"{control.name}: {control.title}")
            started = time.monotonic()
            try:
                failure = run_control(control, tree, build_dir)
            except (ControlError, SystemExit) as error:
                failure = f"{control.name}: {error}"
            except Exception as error:  # a thread that raised would end without a word
                failure = f"{control.name}: {error!r}"
            if failure:
                log(f"{control.name}: FAILED")
                with failures_lock:
                    failures[control.name] = failure
            else:
                log(f"{control.name}: all {control.count()} named tests fail, as they must "
                    f"({time.monotonic() - started:.0f} s)")

    threads = [threading.Thread(target=work, args=worker) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [failures[c.name] for c in controls if c.name in failures]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work-dir", default=str(ROOT / "build" / "controls"))
    parser.add_argument("--check-anchors", action="store_true",
                        help="only check that every anchor occurs exactly once; build nothing")
    parser.add_argument("--jobs", type=int, default=2,
                        help="workers, each with its own scratch tree (default 2)")
    parser.add_argument("only", nargs="*", help="run only these controls (file names without .control)")
    args = parser.parse_args()

    controls = load_controls(args.only)
    failures = check_anchors(controls, ROOT)
    if failures:
        for failure in failures:
            print(f"[controls] FAIL {failure}", file=sys.stderr)
        return 1
    edits = sum(len(c.edits) for c in controls)
    log(f"anchors: all {edits} edits of {len(controls)} controls match exactly once")
    if args.check_anchors:
        return 0
    if args.jobs < 1:
        raise SystemExit("[controls] --jobs needs at least 1")

    work = Path(args.work_dir)
    os.environ.setdefault("REPLAYRT_TEST_LIVENESS_BOUND_MS", LIVENESS_BOUND_MS)
    launcher = []
    if shutil.which("ccache"):
        os.environ.setdefault("CCACHE_DIR", str(work / "ccache"))
        os.environ.setdefault("CCACHE_BASEDIR", str(ROOT))
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        log(f"compiling through ccache (cache: {os.environ['CCACHE_DIR']})")
    jobs = min(args.jobs, len(controls))
    trees = [work / ("tree" if worker == 0 else f"tree-{worker + 1}") for worker in range(jobs)]
    workers = [(tree, configure_tree(tree, launcher)) for tree in trees]

    binaries = sorted({b for c in controls for b in c.binaries})
    targets = sorted({t for c in controls for t in c.targets})
    for tree, build_dir in workers:
        log(f"baseline: building in {tree.name}: {', '.join(targets) or 'nothing'}")
        if not build(build_dir, targets):
            raise SystemExit("baseline build failed")
    # The trees are copies of one another, so the named tests run unedited in the first.
    build_dir = workers[0][1]
    for binary in binaries:
        wanted = tests_of(controls, binary)
        outcomes = test_outcomes(build_dir, binary, wanted)
        bad = [t for t in wanted if not outcomes.get(t, False)]
        if bad:
            raise SystemExit(f"baseline: these tests must pass unedited but did not: {bad}")
    ctest_names = sorted({name for c in controls for name in c.ctest_names})
    bad = [name for name, passed in ctest_outcomes(build_dir, ctest_names).items() if not passed]
    if bad:
        raise SystemExit(f"baseline: these ctest tests must pass unedited but did not: {bad}")
    log("baseline: every named test passes unedited")

    started = time.monotonic()
    failures = run_controls(controls, workers)
    if failures:
        for failure in failures:
            print(f"[controls] FAIL {failure}", file=sys.stderr)
        return 1
    log(f"all {len(controls)} controls caught their defect ({jobs} workers, "
        f"{time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
