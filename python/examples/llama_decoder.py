#!/usr/bin/env python3
"""The llama example's decoder (examples/llama) in Python: greedy decoding of a llama2.c
checkpoint with replayrt's built-in kernels, one captured decode step replayed per token in
kernel mode, and one run per token in program mode. Both must produce the same tokens.

    PYTHONPATH=build/default/python /usr/bin/python3 python/examples/llama_decoder.py \\
        CHECKPOINT [--tokens N] [--token ID]

Prints the tokens as `tokens: <first input> <next> ...`, as llama-decoder does. Exit status: 0
when both modes agree, 1 otherwise.
"""

import argparse
import sys

import numpy as np

import replayrt

RMS_EPSILON = 1e-5
ROPE_THETA = 10000.0
HEADER = ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len")


def load_checkpoint(path):
    """The config, whether the classifier is the embedding table, and the float32 weights in
    llama2.c order without the RoPE tables (the rope kernel computes them)."""
    with open(path, "rb") as file:
        header = np.frombuffer(file.read(4 * len(HEADER)), dtype=np.int32)
        data = np.frombuffer(file.read(), dtype=np.float32)
    config = dict(zip(HEADER, (abs(int(v)) for v in header)))
    config["head_dim"] = config["dim"] // config["n_heads"]
    config["kv_dim"] = config["n_kv_heads"] * config["head_dim"]
    shared = int(header[5]) > 0
    layout = weight_layout(config, shared)
    before_tables = layout["rms_final"] + config["dim"]
    tables = config["seq_len"] * config["head_dim"]
    weights = np.concatenate([data[:before_tables],
                              data[before_tables + tables:layout["total"] + tables]])
    if weights.size != layout["total"]:
        raise ValueError(f"{path}: the file ends before its weights do")
    return config, layout, weights


def weight_layout(config, shared_classifier):
    """Element offsets of every weight in the one float array, in the checkpoint's order."""
    dim, kv_dim, hidden = config["dim"], config["kv_dim"], config["hidden_dim"]
    layers, vocab = config["n_layers"], config["vocab_size"]
    sizes = [("embedding", vocab * dim), ("rms_att", layers * dim), ("wq", layers * dim * dim),
             ("wk", layers * kv_dim * dim), ("wv", layers * kv_dim * dim),
             ("wo", layers * dim * dim), ("rms_ffn", layers * dim),
             ("w1", layers * hidden * dim), ("w2", layers * dim * hidden),
             ("w3", layers * hidden * dim), ("rms_final", dim)]
    if not shared_classifier:
        sizes.append(("classifier", vocab * dim))
    layout, offset = {}, 0
    for name, size in sizes:
        layout[name] = offset
        offset += size
    layout.setdefault("classifier", layout["embedding"])
    layout["total"] = offset
    return layout


def decoder_step(config, layout):
    """One decode step: params weights, kv_cache, state (token, position) and logits."""
    dim, kv_dim, hidden = config["dim"], config["kv_dim"], config["hidden_dim"]
    seq, layers, vocab = config["seq_len"], config["n_layers"], config["vocab_size"]
    b = replayrt.CallableBuilder()
    weights = b.param("weights", [layout["total"]])
    kv_cache = b.param("kv_cache", [2 * layers * seq * kv_dim], direction="inout")
    state = b.param("state", [2], dtype="int32")
    logits = b.param("logits", [vocab], direction="out")
    views = iter(range(1 << 30))

    def view(base, offset, rows, cols):
        return b.view(f"view{next(views)}", base, [rows, cols], offset)

    def imm(value):
        return replayrt.Operand.immediate(value)

    x, xb, q, attended, projected = (b.intermediate(n, [dim]) for n in
                                     ("x", "xb", "q", "attended", "projected"))
    k, v = b.intermediate("k", [kv_dim]), b.intermediate("v", [kv_dim])
    h1, h3 = b.intermediate("h1", [hidden]), b.intermediate("h3", [hidden])
    token, pos = view(state, 0, 1, 1), view(state, 1, 1, 1)
    eps = replayrt.Operand.immediate_f32(RMS_EPSILON)
    theta = replayrt.Operand.immediate_f32(ROPE_THETA)
    one, f32 = imm(1), imm(replayrt.dtype_value("float32"))

    def linear(source, weight, in_size, out_size, output):
        b.task("linear", [source, view(weights, weight, out_size, in_size), output, one,
                          imm(in_size), imm(out_size), f32])

    b.task("embedding", [view(weights, layout["embedding"], vocab, dim), token, x, imm(vocab),
                         imm(dim), one, f32])
    for layer in range(layers):
        keys = view(kv_cache, layer * seq * kv_dim, seq, kv_dim)
        values = view(kv_cache, (layers + layer) * seq * kv_dim, seq, kv_dim)
        b.task("rmsnorm", [x, view(weights, layout["rms_att"] + layer * dim, 1, dim), xb,
                           imm(dim), eps])
        linear(xb, layout["wq"] + layer * dim * dim, dim, dim, q)
        linear(xb, layout["wk"] + layer * kv_dim * dim, dim, kv_dim, k)
        linear(xb, layout["wv"] + layer * kv_dim * dim, dim, kv_dim, v)
        b.task("rope", [pos, q, one, imm(config["n_heads"]), imm(config["head_dim"]), theta])
        b.task("rope", [pos, k, one, imm(config["n_kv_heads"]), imm(config["head_dim"]), theta])
        b.task("kv_store", [k, pos, keys, one, imm(kv_dim), imm(seq)])
        b.task("kv_store", [v, pos, values, one, imm(kv_dim), imm(seq)])
        b.task("attention", [q, keys, values, pos, attended, one, imm(config["n_heads"]),
                             imm(config["n_kv_heads"]), imm(config["head_dim"]), imm(seq)])
        linear(attended, layout["wo"] + layer * dim * dim, dim, dim, projected)
        b.task("add", [x, projected, x])
        b.task("rmsnorm", [x, view(weights, layout["rms_ffn"] + layer * dim, 1, dim), xb,
                           imm(dim), eps])
        linear(xb, layout["w1"] + layer * hidden * dim, dim, hidden, h1)
        linear(xb, layout["w3"] + layer * hidden * dim, dim, hidden, h3)
        b.task("silu", [h1, h1])
        b.task("mul", [h1, h3, h1])
        linear(h1, layout["w2"] + layer * dim * hidden, hidden, dim, projected)
        b.task("add", [x, projected, x])
    b.task("rmsnorm", [x, view(weights, layout["rms_final"], 1, dim), xb, imm(dim), eps])
    linear(xb, layout["classifier"], dim, vocab, logits)
    return b


def step_buffers(ctx, config, weights):
    """The device arrays behind the step's params: the weights uploaded, the cache zeroed."""
    kv_elements = 2 * config["n_layers"] * config["seq_len"] * config["kv_dim"]
    buffers = [ctx.empty([weights.size]), ctx.empty([kv_elements]), ctx.empty([2], "int32"),
               ctx.empty([config["vocab_size"]])]
    buffers[0].upload(weights)
    buffers[1].upload(np.zeros(kv_elements, dtype=np.float32))
    return buffers


def decode(config, layout, weights, first_token, tokens, kernel_mode):
    ctx = replayrt.Context()
    step = decoder_step(config, layout)
    if kernel_mode:
        ctx.kernel_init([step])
    else:
        ctx.program_init()
    callable_ = ctx.prepare(step)
    buffers = step_buffers(ctx, config, weights)
    state, logits = buffers[2], buffers[3]
    stream = ctx.stream()
    host_state = np.zeros(2, dtype=np.int32)
    host_logits = np.zeros(config["vocab_size"], dtype=np.float32)
    graph = None
    if kernel_mode:
        # The graph reads host_state and writes host_logits at every replay.
        with stream.capture() as graph:
            stream.upload(state, host_state)
            ctx.launch(callable_, buffers, stream)
            stream.download(host_logits, logits)
    out = [first_token]
    for pos in range(tokens):
        host_state[:] = (out[-1], pos)
        if kernel_mode:
            graph.replay(stream)
            stream.synchronize()
        else:
            state.upload(host_state)
            ctx.run(callable_, buffers)
            host_logits = logits.numpy()
        out.append(int(np.argmax(host_logits)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--token", type=int, default=1, help="the first input token")
    args = parser.parse_args()
    config, layout, weights = load_checkpoint(args.checkpoint)
    if not 0 < args.tokens <= config["seq_len"] or args.token >= config["vocab_size"]:
        parser.error(f"--tokens must be in 1..{config['seq_len']} and --token below "
                     f"{config['vocab_size']}")
    program = decode(config, layout, weights, args.token, args.tokens, kernel_mode=False)
    kernel = decode(config, layout, weights, args.token, args.tokens, kernel_mode=True)
    print("tokens: " + " ".join(str(t) for t in kernel))
    print("program and kernel mode " + ("agree" if program == kernel else "DISAGREE"))
    return 0 if program == kernel else 1


if __name__ == "__main__":
    sys.exit(main())
