"""The package on a CUDA context: kernel-mode capture and replay, program-mode runs, and
DLPack exports that name the CUDA device. CI runs these on FakeCuda (conftest.py)."""

import numpy as np
import pytest

import replayrt
from callables import axpy, scale
from dlpack_capsule import describe

pytestmark = pytest.mark.cuda

KDL_CUDA = 2


def test_a_kernel_mode_capture_replays_new_inputs_on_cuda():
    ctx = replayrt.Context("cuda")
    step = axpy(16, 3.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x = ctx.empty([16], "float32")
    y = ctx.empty([16], "float32")
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    for start in (0.0, 100.0, -7.0):
        values = np.arange(start, start + 16, dtype=np.float32)
        x.upload(values)
        graph.replay(stream)
        stream.synchronize()
        np.testing.assert_array_equal(y.numpy(), 3.0 * values + values)
    assert ctx.stats()["replays"] == 3


def test_a_program_mode_run_writes_host_arrays_on_cuda():
    ctx = replayrt.Context("cuda")
    ctx.program_init()
    callable_ = ctx.prepare(scale(8, 0.5))
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    ctx.run(callable_, [x, y])
    np.testing.assert_array_equal(y, 0.5 * x)


def test_a_cuda_device_array_exports_itself_as_cuda_memory_through_dlpack():
    ctx = replayrt.Context("cuda")
    ctx.program_init()
    array = ctx.empty([3, 5], "int32")
    assert array.__dlpack_device__() == (KDL_CUDA, 0)
    first = describe(array.__dlpack__())
    assert first["device"] == (KDL_CUDA, 0)
    assert first["shape"] == (3, 5) and first["strides"] is None
    assert first["dtype"] == (0, 32, 1)  # kDLInt, 32 bits, one lane
    assert first["data"] != 0
    # Every export names the same memory: a view, not a copy.
    assert describe(array.__dlpack__(stream=None))["data"] == first["data"]
    # numpy takes CPU memory only, and is told this is not.
    with pytest.raises(RuntimeError, match="[Dd]evice"):
        np.from_dlpack(array)


def test_the_device_ordinal_names_the_cuda_device_and_a_missing_one_is_refused():
    ctx = replayrt.Context("cuda", device=0)
    assert (ctx.platform, ctx.device) == ("cuda", 0)
    with pytest.raises(replayrt.InvalidArgumentError, match="CUDA device 1000 does not exist"):
        replayrt.Context("cuda", device=1000)
