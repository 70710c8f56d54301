"""Copies on a stream (stream.upload, stream.download): queued, and inside a capture part of
the graph, reading and writing the same host arrays at every replay."""

import numpy as np
import pytest

import replayrt
from callables import scale


def test_a_graph_uploads_computes_and_downloads_through_the_same_host_arrays():
    ctx = replayrt.Context()
    step = scale(16, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x, y = ctx.empty([16]), ctx.empty([16])
    host_in = np.zeros(16, dtype=np.float32)
    host_out = np.zeros(16, dtype=np.float32)
    stream = ctx.stream()
    with stream.capture() as graph:
        stream.upload(x, host_in)
        ctx.launch(callable_, [x, y], stream)
        stream.download(host_out, y)
    for start in (1.0, 50.0, -7.0):
        host_in[:] = np.arange(start, start + 16, dtype=np.float32)
        graph.replay(stream)
        stream.synchronize()
        np.testing.assert_array_equal(host_out, 2.0 * host_in)


def test_a_queued_copy_round_trips_and_a_wrong_copy_is_refused():
    ctx = replayrt.Context()
    ctx.program_init()
    device = ctx.empty([4], "int32")
    stream = ctx.stream()
    stream.upload(device, np.array([3, 1, 4, 1], dtype=np.int32))
    back = np.zeros(4, dtype=np.int32)
    stream.download(back, device)
    stream.synchronize()
    assert back.tolist() == [3, 1, 4, 1]
    with pytest.raises(ValueError, match="exactly the device array's 16 bytes, not 8"):
        stream.upload(device, np.zeros(2, dtype=np.int32))
    back.flags.writeable = False
    with pytest.raises(TypeError, match="a download's destination is written"):
        stream.download(back, device)
