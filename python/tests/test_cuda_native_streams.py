"""Native streams on CUDA: Stream.native_handle and Context.wrap_stream. The native stream a
test wraps belongs to a second context on the same device, standing in for a torch.cuda.Stream
(an int handle, or an object with a cuda_stream attribute, as torch's streams have). CI runs
these on FakeCuda (conftest.py)."""

import gc
import weakref

import numpy as np
import pytest

import replayrt
from callables import scale

pytestmark = pytest.mark.cuda

N = 16


class TorchLikeStream:
    """What Context.wrap_stream reads from a torch.cuda.Stream: its cuda_stream attribute."""

    def __init__(self, handle):
        self.cuda_stream = handle


def scaling_context(factor):
    ctx = replayrt.Context("cuda")
    step = scale(N, factor)
    ctx.kernel_init([step])
    return ctx, ctx.prepare(step)


def test_a_stream_has_a_native_handle_of_its_own():
    ctx = replayrt.Context("cuda")
    first, second = ctx.stream(), ctx.stream()
    assert isinstance(first.native_handle, int) and first.native_handle != 0
    assert first.native_handle != second.native_handle


def test_a_wrapped_native_stream_captures_and_replays_and_outlives_its_wrapper():
    owner_ctx = replayrt.Context("cuda")
    owner = owner_ctx.stream()
    native = owner.native_handle
    ctx, callable_ = scaling_context(2.0)
    x, y = ctx.empty([N], "float32"), ctx.empty([N], "float32")
    wrapped = ctx.wrap_stream(native)
    assert wrapped.native_handle == native
    with wrapped.capture() as graph:
        ctx.launch(callable_, [x, y], wrapped)
    for start in (0.0, 50.0):
        values = np.arange(start, start + N, dtype=np.float32)
        wrapped.upload(x, values)  # a queued copy on the native stream, then the replay
        graph.replay(wrapped)
        result = np.zeros(N, dtype=np.float32)
        wrapped.download(result, y)
        wrapped.synchronize()
        np.testing.assert_array_equal(result, 2.0 * values)
    del graph, wrapped
    gc.collect()
    # Dropping the wrapper left the native stream to its owner, which still runs work on it.
    z = owner_ctx.empty([N], "float32")
    owner.upload(z, np.ones(N, dtype=np.float32))
    owner.synchronize()
    np.testing.assert_array_equal(z.numpy(), np.ones(N))
    assert owner.native_handle == native


def test_work_on_a_wrapped_stream_is_ordered_after_the_owners_work_on_it():
    # The interop a torch user wants: torch writes a tensor on its stream, replayrt reads it on
    # the same stream with no host synchronization in between.
    owner_ctx = replayrt.Context("cuda")
    owner = owner_ctx.stream()
    tensor = owner_ctx.empty([N], "float32")
    ctx, callable_ = scaling_context(3.0)
    y = ctx.empty([N], "float32")
    wrapped = ctx.wrap_stream(TorchLikeStream(owner.native_handle))
    with ctx.register(tensor) as x:
        for start in (1.0, 20.0):
            values = np.arange(start, start + N, dtype=np.float32)
            owner.upload(tensor, values)  # the owner's write, queued
            ctx.launch(callable_, [x, y], wrapped)  # queued behind it on the same stream
            wrapped.synchronize()
            np.testing.assert_array_equal(y.numpy(), 3.0 * values)
        owner.synchronize()


def test_a_wrapped_stream_holds_the_object_its_handle_came_from():
    owner = replayrt.Context("cuda").stream()
    ctx = replayrt.Context("cuda")
    native = TorchLikeStream(owner.native_handle)
    held = weakref.ref(native)
    wrapped = ctx.wrap_stream(native)
    del native
    gc.collect()
    assert held() is not None, "the wrapper let go of its native stream's owner"
    assert wrapped.native_handle == owner.native_handle
    del wrapped
    gc.collect()
    assert held() is None


def test_what_is_not_a_native_stream_is_refused():
    ctx = replayrt.Context("cuda")
    with pytest.raises(replayrt.InvalidArgumentError, match="cudaStream_t"):
        ctx.wrap_stream(0)  # null
    with pytest.raises(replayrt.InvalidArgumentError, match="cudaStream_t"):
        ctx.wrap_stream(TorchLikeStream(1))  # the legacy default stream cannot be captured
    with pytest.raises(TypeError, match="cuda_stream"):
        ctx.wrap_stream("stream")
