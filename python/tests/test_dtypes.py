"""An array's dtype is checked wherever replayrt reads or writes it: a run's or launch's
argument against its parameter's dtype, a copy's host array against its device array's dtype,
and arrays of Python objects nowhere."""

import numpy as np
import pytest

import replayrt
from callables import scale


def test_an_argument_of_another_dtype_than_its_parameter_is_refused_and_nothing_runs():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(scale(4, 2.0))
    y = np.full(4, -1.0, dtype=np.float32)
    with pytest.raises(TypeError, match="parameter 0 is float32; the array is int32"):
        ctx.run(callable_, [np.arange(4, dtype=np.int32), y])
    with pytest.raises(TypeError, match="parameter 1 is float32; the array is float64"):
        ctx.run(callable_, [np.ones(4, dtype=np.float32), np.zeros(2, dtype=np.float64)])
    with pytest.raises(TypeError, match="parameter 0 is float32; the array is int32"):
        ctx.run(callable_, [ctx.empty([4], "int32"), y])
    with pytest.raises(TypeError, match="parameter 0 is float32"):
        ctx.prepare_run(callable_, [np.arange(4, dtype=np.int64), y])
    np.testing.assert_array_equal(y, np.full(4, -1.0))
    ctx.run(callable_, [np.ones(4, dtype=np.float32), y])
    np.testing.assert_array_equal(y, np.full(4, 2.0))


def test_a_copy_between_arrays_of_different_dtypes_is_refused():
    ctx = replayrt.Context()
    ctx.program_init()
    device = ctx.empty([4], "float32")
    with pytest.raises(TypeError, match="the device array is float32; the host array is int32"):
        device.upload(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="the device array is float32; the host array is float64"):
        device.upload(np.ones(2, dtype=np.float64))
    stream = ctx.stream()
    with pytest.raises(TypeError, match="the device array is float32; the host array is int32"):
        stream.upload(device, np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="the device array is float32; the host array is uint8"):
        stream.download(np.zeros(16, dtype=np.uint8), device)


def test_arrays_of_python_objects_are_refused_everywhere():
    ctx = replayrt.Context()
    ctx.program_init()
    with pytest.raises(TypeError, match="object"):
        ctx.empty([2], object)
    device = ctx.empty([2], "int64")
    stream = ctx.stream()
    with pytest.raises(TypeError, match="object"):
        stream.download(np.empty(2, dtype=object), device)
    with pytest.raises(TypeError, match="object"):
        stream.upload(device, np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="object"):
        device.upload(np.array([1, 2], dtype=object))
    stream.synchronize()
