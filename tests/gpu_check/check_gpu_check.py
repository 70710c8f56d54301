#!/usr/bin/env python3
"""Runs scripts/gpu-check.sh without a GPU and checks what it leaves in $OUT (ctest label
no_hardware, tests/CMakeLists.txt).

  check_gpu_check.py --script gpu-check.sh --suite cuda_gpu_fake_test passing
      the self-test mode over the GPU suite on the fake CUDA platform: exit status 0, every
      case the suite lists is in summary.json as passed, results.tar.gz holds one log per
      case, log.txt starts with the environment, at most 8 files in $OUT.
  check_gpu_check.py --script gpu-check.sh failing
      three runs that must fail and still pack their results: the self-test over a stub suite
      whose cases pass, fail, skip and hang (each recorded as such, the hang as a timeout),
      plus a binary that does not exist; and a real check with neither a bundle nor GoogleTest
      sources to build from.
Exit status 0 when every check holds; otherwise each failed check is printed and it is 1.
"""
import argparse
import json
import os
import stat
import subprocess
import sys
import tarfile
import tempfile

OUT_LIMIT = 8

STUB_SUITE = """#!/usr/bin/env bash
# A GoogleTest-like binary: lists five cases and runs the one --gtest_filter names.
if [ "$1" = --gtest_list_tests ]; then
  printf 'Running main() from the stub\\nStub.\\n  Passes\\n  Fails\\n  Hangs\\n  Skips\\n'
  printf 'Param/Stub.\\n  Passes/0  # GetParam() = 0\\n'
  exit 0
fi
[ "$REPLAYRT_REQUIRE_GPU" = 1 ] || { echo "REPLAYRT_REQUIRE_GPU is not 1"; exit 1; }
case ${1#--gtest_filter=} in
  Stub.Passes | Param/Stub.Passes/0) echo "[  PASSED  ] 1 test." ;;
  Stub.Fails) echo "stub.cpp:1: Failure"; echo "[  FAILED  ] 1 test, listed below:"; exit 1 ;;
  Stub.Hangs) exec sleep 120 ;;
  Stub.Skips) echo "[  PASSED  ] 0 tests."; echo "[  SKIPPED ] 1 test, listed below:" ;;
  *) exit 3 ;;
esac
"""

STUB_EXPECTED = {
    "Stub.Passes": "pass",
    "Stub.Fails": "fail",
    "Stub.Hangs": "timeout",
    "Stub.Skips": "skipped",
    "Param/Stub.Passes/0": "pass",
}


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)
            print(f"FAILED: {what}")
        return condition


def list_cases(binary):
    """Suite.Case names from --gtest_list_tests, parsed independently of the script."""
    output = subprocess.run([binary, "--gtest_list_tests"], check=True, capture_output=True,
                            text=True).stdout
    cases, suite = [], None
    for line in output.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            first = line.split()[0]
            suite = first if first.endswith(".") else None
        elif suite and line.startswith("  "):
            cases.append(suite + line.split()[0])
    return cases


def run_check(script, out, env_extra, timeout):
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("REPLAYRT_GPU_CHECK_"):
            del env[name]
    env.update(env_extra)
    env["OUT"] = out
    env["TMPDIR"] = os.path.dirname(out)
    print(f"running {script} with {env_extra}, OUT={out}")
    result = subprocess.run(["bash", script], env=env, capture_output=True, text=True,
                            timeout=timeout)
    print(result.stdout[-4000:])
    return result.returncode


def check_packed(checks, out, label, finished=True):
    """The files every run leaves: at most 8, log.txt starting with the environment, a
    summary (saying whether the check ran to its end) and results.tar.gz. Returns (summary,
    tar member names)."""
    files = sorted(os.listdir(out))
    checks.expect(len(files) <= OUT_LIMIT, f"{label}: {len(files)} files in OUT: {files}")
    for name in ("log.txt", "summary.json", "results.tar.gz", "report.md"):
        checks.expect(name in files, f"{label}: {name} missing from OUT ({files})")
    log_path = os.path.join(out, "log.txt")
    if os.path.exists(log_path):
        with open(log_path) as log:
            first = log.readline()
        checks.expect(first.startswith("== environment"),
                      f"{label}: log.txt starts with {first!r}, not the environment")
    summary = {}
    try:
        with open(os.path.join(out, "summary.json")) as source:
            summary = json.load(source)
    except (OSError, ValueError) as error:
        checks.expect(False, f"{label}: summary.json unreadable: {error}")
    members = []
    try:
        with tarfile.open(os.path.join(out, "results.tar.gz")) as archive:
            members = archive.getnames()
    except (OSError, tarfile.TarError) as error:
        checks.expect(False, f"{label}: results.tar.gz unreadable: {error}")
    checks.expect(summary.get("finished") is finished,
                  f"{label}: summary says finished is {summary.get('finished')}")
    return summary, members


def case_log(binary, case):
    return f"results/cases/{binary}/{case.replace('/', '_')}.log"


def passing(checks, script, suite, scratch):
    out = os.path.join(scratch, "out")
    status = run_check(script, out, {"REPLAYRT_GPU_CHECK_SELF_TEST": "1",
                                     "REPLAYRT_GPU_CHECK_TEST_BINARIES": suite}, timeout=240)
    checks.expect(status == 0, f"self-test exit status {status}, expected 0")
    summary, members = check_packed(checks, out, "self-test")
    expected = list_cases(suite)
    checks.expect(len(expected) > 0, "the fake suite lists no case")
    binary = os.path.basename(suite)
    recorded = {c["name"]: c["status"] for c in summary.get("cases", [])
                if c.get("binary") == binary}
    checks.expect(sorted(recorded) == sorted(expected),
                  f"summary lists {sorted(recorded)}, the suite {sorted(expected)}")
    for case in expected:
        checks.expect(recorded.get(case) == "pass", f"{case}: {recorded.get(case)}, not pass")
        checks.expect(case_log(binary, case) in members, f"{case}: no log in results.tar.gz")
    checks.expect(summary.get("status") == "pass", f"summary status {summary.get('status')}")


def failing(checks, script, scratch):
    stub = os.path.join(scratch, "stub_gtest")
    with open(stub, "w") as out:
        out.write(STUB_SUITE)
    os.chmod(stub, os.stat(stub).st_mode | stat.S_IXUSR)
    missing = os.path.join(scratch, "missing_gtest")

    out = os.path.join(scratch, "stub-out")
    status = run_check(script, out, {"REPLAYRT_GPU_CHECK_SELF_TEST": "1",
                                     "REPLAYRT_GPU_CHECK_TEST_BINARIES": f"{stub} {missing}",
                                     "REPLAYRT_GPU_CHECK_CASE_TIMEOUT": "5"}, timeout=240)
    checks.expect(status != 0, "the stub self-test exited 0")
    summary, members = check_packed(checks, out, "stub self-test")
    recorded = {c["name"]: c["status"] for c in summary.get("cases", [])}
    checks.expect(recorded == STUB_EXPECTED, f"stub cases {recorded}, expected {STUB_EXPECTED}")
    for case in STUB_EXPECTED:
        checks.expect(case_log("stub_gtest", case) in members, f"{case}: no log in the tarball")
    steps = summary.get("steps", {})
    checks.expect(steps.get("tests:stub_gtest", {}).get("status") == "fail",
                  f"tests:stub_gtest is {steps.get('tests:stub_gtest')}")
    checks.expect(steps.get("tests:missing_gtest", {}).get("status") == "fail",
                  f"tests:missing_gtest is {steps.get('tests:missing_gtest')}")
    checks.expect(summary.get("status") == "fail", f"summary status {summary.get('status')}")
    checks.expect(summary.get("counts", {}).get("timeout") == 1,
                  f"counts {summary.get('counts')}")

    out = os.path.join(scratch, "nothing-out")
    status = run_check(script, out, {
        "REPLAYRT_GPU_CHECK_BUNDLE": os.path.join(scratch, "no-bundle"),
        "REPLAYRT_GPU_CHECK_DEPS": os.path.join(scratch, "no-deps")}, timeout=240)
    checks.expect(status != 0, "a check with nothing to build from exited 0")
    summary, _ = check_packed(checks, out, "nothing to build", finished=False)
    build = summary.get("steps", {}).get("build", {})
    checks.expect(build.get("status") == "fail", f"its build step is {build}")
    checks.expect(not summary.get("cases"), "it ran test cases without binaries")
    with open(os.path.join(out, "log.txt")) as log:
        checks.expect("FAILED: no usable prebuilt bundle" in log.read(),
                      "log.txt does not say why nothing was built")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--suite")
    parser.add_argument("mode", choices=("passing", "failing"))
    options = parser.parse_args()
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="gpu-check-test.") as scratch:
        if options.mode == "passing":
            if not options.suite:
                parser.error("passing needs --suite")
            passing(checks, os.path.abspath(options.script), os.path.abspath(options.suite),
                    scratch)
        else:
            failing(checks, os.path.abspath(options.script), scratch)
    if checks.failures:
        print(f"{len(checks.failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
