"""Small callables the tests share."""

import replayrt


def scale(n, factor):
    """y = factor * x over n floats, one task."""
    b = replayrt.CallableBuilder()
    x = b.param("x", [n])
    y = b.param("y", [n], direction="out")
    b.task("scale", [x, y, replayrt.Operand.immediate_f32(factor)])
    return b


def axpy(n, factor):
    """y = factor * x + x over n floats, through one intermediate: two tasks."""
    b = replayrt.CallableBuilder()
    x = b.param("x", [n])
    y = b.param("y", [n], direction="out")
    scaled = b.intermediate("scaled", [n])
    b.task("scale", [x, scaled, replayrt.Operand.immediate_f32(factor)])
    b.task("add", [scaled, x, y])
    return b


def matmuls(n, count):
    """out = a @ w applied `count` times over n x n floats: from n = 768 on, work long enough
    (tens of milliseconds on the simulator) for another thread to see a call waiting on it."""
    b = replayrt.CallableBuilder()
    imm = replayrt.Operand.immediate
    a = b.param("a", [n, n])
    w = b.param("w", [n, n])
    out = b.param("out", [n, n], direction="out")
    current = a
    for step in range(count):
        target = out if step == count - 1 else b.intermediate(f"t{step}", [n, n])
        b.task("matmul", [current, w, target, imm(n), imm(n), imm(n)])
        current = target
    return b
