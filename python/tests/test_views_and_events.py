"""Views, device values and events through the Python builder and streams."""

import numpy as np

import replayrt

ROWS, COLS = 4, 16


def test_a_replayed_view_reads_the_row_a_device_value_names_at_each_replay():
    b = replayrt.CallableBuilder()
    table = b.param("table", [ROWS, COLS])
    which = b.param("which", [1], dtype="int32")
    out = b.param("out", [COLS], direction="out")
    row_index = b.device_value("row_index", which, 0)
    row = b.view("row", table, [COLS], 0, offset_value=row_index, stride=COLS, max=ROWS - 1)
    b.task("copy", [row, out])
    assert b["row"] is not None and b.task_count == 1
    ctx = replayrt.Context()
    ctx.kernel_init([b])
    callable_ = ctx.prepare(b)
    values = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    table_dev = ctx.empty([ROWS, COLS])
    which_dev = ctx.empty([1], "int32")
    out_dev = ctx.empty([COLS])
    table_dev.upload(values)
    stream = ctx.stream()
    done = ctx.event()
    with stream.capture() as graph:
        ctx.launch(callable_, [table_dev, which_dev, out_dev], stream)
        stream.record(done)
    for r in (2, 0, 3, 1):
        which_dev.upload(np.array([r], dtype=np.int32))
        graph.replay(stream)
        done.synchronize()
        assert done.query()
        np.testing.assert_array_equal(out_dev.numpy(), values[r])
