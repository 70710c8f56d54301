"""The demo's decode step, built with the Python builder, captured once and replayed 1000
times in kernel mode, each replay checked against numpy."""

import numpy as np
import pytest

import replayrt

ROWS, DIM, HIDDEN = 4, 32, 64
EPS = 1e-5


def decode_step():
    b = replayrt.CallableBuilder()
    x = b.param("x", [ROWS, DIM])
    w_norm = b.param("w_norm", [1, DIM])
    w_up = b.param("w_up", [DIM, HIDDEN])
    w_down = b.param("w_down", [HIDDEN, DIM])
    out = b.param("out", [ROWS, DIM], direction="out")
    h = b.intermediate("h", [ROWS, DIM])
    u = b.intermediate("u", [ROWS, HIDDEN])
    s = b.intermediate("s", [ROWS, HIDDEN])
    y = b.intermediate("y", [ROWS, DIM])
    imm = replayrt.Operand.immediate
    b.task("rmsnorm", [x, w_norm, h, imm(DIM), replayrt.Operand.immediate_f32(EPS)])
    b.task("matmul", [h, w_up, u, imm(ROWS), imm(DIM), imm(HIDDEN)])
    b.task("silu", [u, s])
    b.task("matmul", [s, w_down, y, imm(ROWS), imm(HIDDEN), imm(DIM)])
    b.task("add", [x, y, out])
    return b


def reference(x, w_norm, w_up, w_down):
    x64 = x.astype(np.float64)
    h = x64 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + EPS) * w_norm
    u = h @ w_up
    s = u / (1.0 + np.exp(-u))
    return x64 + s @ w_down


def test_a_captured_decode_step_replays_1000_times_like_numpy():
    rng = np.random.default_rng(7)
    weights = [
        (1.0 + 0.1 * rng.standard_normal((1, DIM))).astype(np.float32),
        (0.2 * rng.standard_normal((DIM, HIDDEN))).astype(np.float32),
        (0.2 * rng.standard_normal((HIDDEN, DIM))).astype(np.float32),
    ]
    ctx = replayrt.Context()
    step = decode_step()
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x = ctx.empty([ROWS, DIM], np.float32)
    device_weights = []
    for w in weights:
        d = ctx.empty(list(w.shape), np.float32)
        d.upload(w)
        device_weights.append(d)
    out = ctx.empty([ROWS, DIM], np.float32)
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, *device_weights, out], stream)
    assert graph
    for step_index in range(1000):
        inputs = rng.standard_normal((ROWS, DIM)).astype(np.float32)
        x.upload(inputs)
        graph.replay(stream)
        stream.synchronize()
        np.testing.assert_allclose(
            out.numpy(), reference(inputs, *weights), rtol=1e-4, atol=1e-4,
            err_msg=f"replay {step_index}")
    assert ctx.stats()["replays"] == 1000
    assert ctx.stats()["device_alloc_calls"] == ctx.stats()["device_alloc_calls"]


def test_a_capture_whose_body_raises_is_discarded_and_the_stream_captures_again():
    ctx = replayrt.Context()
    step = decode_step()
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    arrays = [ctx.empty(shape, np.float32)
              for shape in ([ROWS, DIM], [1, DIM], [DIM, HIDDEN], [HIDDEN, DIM], [ROWS, DIM])]
    stream = ctx.stream()
    with pytest.raises(ZeroDivisionError):
        with stream.capture():
            ctx.launch(callable_, arrays, stream)
            1 / 0
    stream.synchronize()  # refused while capturing
    with stream.capture() as graph:
        ctx.launch(callable_, arrays, stream)
    graph.replay(stream)
    stream.synchronize()
