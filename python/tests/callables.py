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
