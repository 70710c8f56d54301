"""Per-run scalars: a scalar declared with a dtype converts each argument to it (or refuses one
that does not fit), numpy scalars are scalars, and a refused argument runs nothing."""

import numpy as np
import pytest

import replayrt


def scale_by_scalar(n, dtype):
    """y = s * x over n floats, the factor s a per-run scalar declared with `dtype`."""
    b = replayrt.CallableBuilder()
    x = b.param("x", [n])
    y = b.param("y", [n], direction="out")
    b.task("scale", [x, y, b.scalar("s", dtype=dtype)])
    return b


def matmul_of_scalar_sizes(dtype):
    """out = a @ b over 2 x 2 floats, the sizes M, K and N per-run scalars of `dtype`."""
    b = replayrt.CallableBuilder()
    a = b.param("a", [2, 2])
    w = b.param("b", [2, 2])
    out = b.param("out", [2, 2], direction="out")
    b.task("matmul", [a, w, out] + [b.scalar(name, dtype=dtype) for name in ("M", "K", "N")])
    return b


@pytest.fixture
def ctx():
    context = replayrt.Context()
    context.program_init()
    return context


def scaled(ctx, callable_, factor):
    """y = factor * [0, 1, 2, 3] through `callable_` (scale_by_scalar(4, ...))."""
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    ctx.run(callable_, [x, y, factor])
    return y


def test_a_float32_scalar_converts_ints_floats_and_numpy_scalars(ctx):
    callable_ = ctx.prepare(scale_by_scalar(4, "float32"))
    expected = np.arange(4, dtype=np.float32) * 2
    for factor in (2, 2.0, np.int64(2), np.uint8(2), np.float32(2), np.float16(2)):
        np.testing.assert_array_equal(scaled(ctx, callable_, factor), expected, err_msg=repr(factor))


def test_an_untyped_scalar_takes_numpy_scalars_by_their_kind(ctx):
    callable_ = ctx.prepare(scale_by_scalar(4, None))
    expected = np.arange(4, dtype=np.float32) * 2.5
    for factor in (2.5, np.float32(2.5), np.float64(2.5)):
        np.testing.assert_array_equal(scaled(ctx, callable_, factor), expected, err_msg=repr(factor))
    sizes = ctx.prepare(matmul_of_scalar_sizes(None))
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    out = np.zeros((2, 2), dtype=np.float32)
    ctx.run(sizes, [a, np.eye(2, dtype=np.float32), out, np.int64(2), np.uint64(2), np.int32(2)])
    np.testing.assert_array_equal(out, a)


def test_an_integer_scalar_takes_integers_in_its_range(ctx):
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    for dtype in ("int32", "int64"):
        sizes = ctx.prepare(matmul_of_scalar_sizes(dtype))
        out = np.zeros((2, 2), dtype=np.float32)
        ctx.run(sizes, [a, np.eye(2, dtype=np.float32), out, 2, np.int16(2), np.uint64(2)])
        np.testing.assert_array_equal(out, a)


def test_a_float_for_an_integer_scalar_is_a_type_error_and_runs_nothing(ctx):
    sizes = ctx.prepare(matmul_of_scalar_sizes("int64"))
    out = np.zeros((2, 2), dtype=np.float32)
    ones = np.ones((2, 2), dtype=np.float32)
    for value in (2.0, np.float32(2)):
        with pytest.raises(TypeError, match=r"scalar 1 is int64; pass an int"):
            ctx.run(sizes, [ones, ones, out, 2, value, 2])
    np.testing.assert_array_equal(out, np.zeros((2, 2)))


@pytest.mark.parametrize(
    "dtype, outside, inside",
    [("int32", (2**31, -(2**31) - 1), (2**31 - 1, -(2**31))), ("int64", (2**63, -(2**63) - 1), ())],
)
def test_an_integer_outside_its_scalars_dtype_is_an_overflow_error(ctx, dtype, outside, inside):
    sizes = ctx.prepare(matmul_of_scalar_sizes(dtype))
    out = np.zeros((2, 2), dtype=np.float32)
    ones = np.ones((2, 2), dtype=np.float32)
    stream = ctx.stream()
    for value in outside:
        with pytest.raises(OverflowError, match=f"scalar 2 is {dtype}"):
            ctx.launch(sizes, [ones, ones, out, 2, 2, value], stream)
    for value in inside:  # in range, so taken: the sizes then disagree and the task fails
        with pytest.raises(replayrt.KernelFailedError):
            ctx.run(sizes, [ones, ones, out, 2, 2, value])
    stream.synchronize()
    np.testing.assert_array_equal(out, np.zeros((2, 2)))


def test_a_scalar_dtype_other_than_float32_int32_int64_is_a_value_error():
    b = replayrt.CallableBuilder()
    for dtype in ("float16", "uint8", "bfloat16", "f32"):
        with pytest.raises(ValueError, match="'float32', 'int32', 'int64'"):
            b.scalar("s", dtype=dtype)
    b.scalar("s", dtype="int32")  # the refusals declared nothing


def test_a_finite_number_beyond_float32s_range_is_an_overflow_error_and_nan_and_inf_pass(ctx):
    typed, untyped = ctx.prepare(scale_by_scalar(4, "float32")), ctx.prepare(scale_by_scalar(4, None))
    for callable_, values in ((typed, (2**200, -(2**2000), 1e300, np.float64(-1e39))), (untyped, (1e300,))):
        for value in values:
            with pytest.raises(OverflowError, match="scalar 0 is float32"):
                scaled(ctx, callable_, value)
    assert np.isnan(scaled(ctx, typed, float("nan"))).all()
    np.testing.assert_array_equal(scaled(ctx, untyped, float("-inf"))[1:], np.full(3, -np.inf))


def test_a_numpy_bool_is_an_integer_and_a_numpy_non_number_a_type_error_naming_the_scalar(ctx):
    callable_ = ctx.prepare(scale_by_scalar(4, "float32"))
    np.testing.assert_array_equal(scaled(ctx, callable_, np.bool_(True)), np.arange(4))
    sizes = ctx.prepare(matmul_of_scalar_sizes("int64"))
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    out = np.zeros((2, 2), dtype=np.float32)
    with pytest.raises(TypeError, match="scalar 1: numpy.timedelta64"):
        ctx.run(sizes, [a, a, out, 2, np.timedelta64(2), 2])
    np.testing.assert_array_equal(out, np.zeros((2, 2)))
