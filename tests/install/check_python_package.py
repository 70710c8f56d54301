"""Imports replayrt from an installed prefix (argv[1]) and runs a callable with it.

check_install.cmake runs it with PYTHONPATH at the prefix's Python install directory and no
LD_LIBRARY_PATH: both the package and the libreplayrt its extension loads must come from the
prefix.
"""

import os
import sys

import numpy as np

import replayrt


def main():
    prefix = os.path.realpath(sys.argv[1])

    def in_prefix(path):
        return os.path.realpath(path).startswith(prefix + os.sep)

    if not in_prefix(replayrt._replayrt.__file__):
        sys.exit(f"replayrt._replayrt is {replayrt._replayrt.__file__}, not in {prefix}")
    with open("/proc/self/maps", encoding="utf-8") as maps:
        loaded = {line.split()[-1] for line in maps if "/libreplayrt.so" in line}
    if not loaded or not all(in_prefix(path) for path in loaded):
        sys.exit(f"libreplayrt loaded from {sorted(loaded)}, not from {prefix}")

    n = 8
    step = replayrt.CallableBuilder()
    x = step.param("x", [n])
    y = step.param("y", [n], direction="out")
    step.task("scale", [x, y, replayrt.Operand.immediate_f32(3.0)])
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(step)
    x_dev, y_dev = ctx.empty([n], "float32"), ctx.empty([n], "float32")
    x_dev.upload(np.arange(n, dtype=np.float32))
    ctx.run(callable_, [x_dev, y_dev])
    expected = 3.0 * np.arange(n, dtype=np.float32)
    if not np.array_equal(y_dev.numpy(), expected):
        sys.exit(f"scale by 3 gave {y_dev.numpy()}, expected {expected}")
    print(f"replayrt Python package from {os.path.dirname(replayrt.__file__)} ran a callable")


if __name__ == "__main__":
    main()
