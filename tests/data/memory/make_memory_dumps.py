"""Regenerates the XLA dumps and memory_analysis() totals in this folder.

Run from this folder:  python make_memory_dumps.py
Needs JAX (CPU). Each program below is jitted, lowered and compiled once with
XLA_FLAGS=--xla_dump_to=DIR; for each we keep, under XLA's own file names in a folder
named after the program:

  module_NNNN.jit_NAME.cpu_after_optimizations.txt                    the module
  module_NNNN.jit_NAME.cpu_after_optimizations-buffer-assignment.txt  XLA's allocations
  module_NNNN.jit_NAME.cpu_after_optimizations-live-range.txt         schedule, live ranges
  module_NNNN.jit_NAME.cpu_after_optimizations-memory-usage-report.txt

and write `memory_analysis.json`: for every program, what
`jax.jit(f).lower(...).compile().memory_analysis()` said (argument, output, alias and
temp bytes). hlo-lsp's tests compare `hlo-lsp memory` against these numbers, read from
the files and estimated from the module text alone.

The absolute path of this script in the modules' FileNames table is replaced by
`make_memory_dumps.py`, so stack frames point here.
"""

import glob
import json
import os
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-memory-dumps-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

f32 = jnp.float32
i32 = jnp.int32


def spec(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


# ---------------------------------------------------------------- building blocks
def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def mlp_params(sizes):
    return [(spec(m, n), spec(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def xent(logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def attn(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def layer_norm(x):
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.var(x, -1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5)


def block(p, x):
    h = layer_norm(x)
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    x = x + attn(q, k, v) @ p["wo"]
    h = layer_norm(x)
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def block_params(d, f):
    return {"wq": spec(d, d), "wk": spec(d, d), "wv": spec(d, d), "wo": spec(d, d), "w1": spec(d, f), "w2": spec(f, d)}


# ---------------------------------------------------------------- the programs
def mlp_train_step(params, x, y):
    g = jax.grad(lambda p: xent(mlp(p, x), y))(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, g)


def mlp_deep_train_step(params, x, y):
    g = jax.grad(lambda p: jnp.mean((mlp(p, x) - y) ** 2))(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, g)


def mlp_adam_step(params, m, v, x, y):
    g = jax.grad(lambda p: xent(mlp(p, x), y))(params)
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
    params = jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return params, m, v


def mlp_donated_step(params, x, y):
    return mlp_train_step(params, x, y)


def mlp_forward(params, x):
    return mlp(params, x)


def mlp_remat_grad(params, x, y):
    f = jax.checkpoint(lambda p, x: mlp(p, x))
    return jax.grad(lambda p: jnp.mean((f(p, x) - y) ** 2))(params)


def mlp_vmap_grads(params, xs, ys):
    per_example = jax.vmap(jax.grad(lambda p, x, y: jnp.sum((mlp(p, x) - y) ** 2)), in_axes=(None, 0, 0))
    return per_example(params, xs, ys)


def conv_forward(x, w1, w2):
    return conv(jax.nn.relu(conv(x, w1)), w2)


def conv_train_step(w1, w2, x, y):
    def loss(w1, w2):
        return jnp.mean((conv(jax.nn.relu(conv(x, w1)), w2) - y) ** 2)

    g1, g2 = jax.grad(loss, (0, 1))(w1, w2)
    return w1 - 0.1 * g1, w2 - 0.1 * g2


def conv_pool_classifier_step(w, fc, x, y):
    def loss(w, fc):
        h = jax.nn.relu(conv(x, w))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return xent(h.reshape(h.shape[0], -1) @ fc, y)

    return jax.grad(loss, (0, 1))(w, fc)


def conv_batchnorm_step(w, x):
    def loss(w):
        h = conv(x, w)
        m = jnp.mean(h, (0, 1, 2))
        v = jnp.var(h, (0, 1, 2))
        return jnp.sum(jax.nn.relu((h - m) * lax.rsqrt(v + 1e-5)) ** 2)

    return jax.grad(loss)(w)


def attention_forward(q, k, v):
    return attn(q, k, v)


def attention_grad(q, k, v):
    return jax.grad(lambda q, k, v: jnp.sum(attn(q, k, v) ** 2), (0, 1, 2))(q, k, v)


def multihead_attention(x, wq, wk, wv):
    def heads(t):
        return t.reshape(x.shape[0], x.shape[1], 4, -1).transpose(0, 2, 1, 3).reshape(x.shape[0] * 4, x.shape[1], -1)

    o = attn(heads(x @ wq), heads(x @ wk), heads(x @ wv))
    return o.reshape(x.shape[0], 4, x.shape[1], -1).transpose(0, 2, 1, 3).reshape(x.shape)


def transformer_forward(p, x):
    return block(p, x)


def transformer_train_step(p, x):
    g = jax.grad(lambda p: jnp.mean(block(p, x) ** 2))(p)
    return jax.tree.map(lambda p, g: p - 0.1 * g, p, g)


def layer_norm_grad(x):
    return jax.grad(lambda x: jnp.sum(layer_norm(x) ** 3))(x)


def softmax_xent_grad(logits, labels):
    return jax.grad(xent)(logits, labels)


def scan_cumulative(xs):
    return lax.scan(lambda c, x: (c + jnp.tanh(x), c * x), jnp.zeros(xs.shape[1:]), xs)


def scan_rnn(w, h0, xs):
    return lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h), h0, xs)


def scan_rnn_grad(w, h0, xs):
    def loss(w):
        h, _ = lax.scan(lambda h, x: (jnp.tanh(h @ w + x), None), h0, xs)
        return jnp.sum(h**2)

    return jax.grad(loss)(w)


def lstm_scan(wx, wh, xs):
    def cell(carry, x):
        h, c = carry
        z = x @ wx + h @ wh
        i, f, o, g = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    n = wh.shape[0]
    z = jnp.zeros((xs.shape[1], n))
    return lax.scan(cell, (z, z), xs)[1]


def fori_matrix_power(a):
    return lax.fori_loop(0, 8, lambda i, x: x @ a, a)


def while_converge(x):
    def cond(s):
        return (s[1] < 20) & (jnp.max(jnp.abs(s[0])) > 1e-3)

    return lax.while_loop(cond, lambda s: (jnp.tanh(s[0] @ s[0].T) * 0.5, s[1] + 1), (x, 0))[0]


def cond_branches(p, x):
    return lax.cond(p > 0, lambda x: jnp.tanh(x @ x.T), lambda x: jnp.exp(x) @ x.T, x)


def switch_branches(i, x):
    return lax.switch(i, [lambda x: x @ x.T, lambda x: jnp.sin(x) @ jnp.cos(x).T, lambda x: jnp.outer(x[0], x[0])], x)


def cond_in_scan(xs):
    def step(c, x):
        c = lax.cond(jnp.sum(x) > 0, lambda c: c + x @ x.T, lambda c: c - 1.0, c)
        return c, jnp.sum(c)

    return lax.scan(step, jnp.zeros((xs.shape[1], xs.shape[1])), xs)


def kv_cache_update(cache, x, i):
    def step(cache, j):
        row = jnp.tanh(x[j] * 2.0)
        return lax.dynamic_update_slice(cache, row[None], (i + j, 0)), jnp.sum(cache)

    return lax.scan(step, cache, jnp.arange(x.shape[0]))


def embedding_grad(table, ids, y):
    return jax.grad(lambda t: jnp.mean((jnp.take(t, ids, axis=0) - y) ** 2))(table)


def top_k_sort(x):
    return lax.top_k(x, 8), jnp.sort(x, axis=0)


def cumsum_scan(x):
    return jnp.cumsum(x, axis=0), jnp.cumprod(x * 0.5, axis=1)


def matmul_chain(a, b, c, d):
    return ((a @ b) @ c) @ d


def transpose_copy(x):
    return (x.T @ x).T, jnp.transpose(x.reshape(16, 32, 32), (2, 0, 1)).reshape(32, 512) * 2.0


def concat_pad_ops(a, b):
    c = jnp.concatenate([a, b, a * 2], axis=0)
    return jnp.pad(c, ((1, 2), (0, 3))) @ jnp.ones((c.shape[1] + 3, 64))


def pooling_grad(x):
    def f(x):
        return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") ** 2)

    return jax.grad(f)(x)


def einsum_contractions(a, b, c):
    return jnp.einsum("ij,jk,kl->il", a, b, c) + jnp.einsum("ik,kj->ij", a, jnp.einsum("ij,jk->ik", b, c))


def outer_broadcast(u, v):
    o = u[:, None] * v[None, :]
    return jnp.sum(jnp.exp(o), 0), jnp.max(o, 1)


def gelu_mlp_grad(w1, w2, x):
    return jax.grad(lambda w1, w2: jnp.sum(jax.nn.gelu(x @ w1) @ w2), (0, 1))(w1, w2)


def conv_transpose_forward(x, w):
    return lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def fft_filter(x):
    return jnp.real(jnp.fft.ifft(jnp.fft.fft(x) * jnp.exp(-jnp.arange(x.shape[-1]) / 10.0)))


def argmax_onehot(x):
    i = jnp.argmax(x, -1)
    return jax.nn.one_hot(i, x.shape[-1]) * x


def nested_scan(xs):
    def outer(c, x):
        inner = lax.scan(lambda d, y: (d * 0.9 + y, d), c, x)
        return inner[0], inner[1]

    return lax.scan(outer, jnp.zeros(xs.shape[2:]), xs)


# Programs where a copy holds a large share of the peak (the information finding
# `copy-at-memory-peak` fires on these, and on none of the small programs above).
def transpose_at_peak(x, w):
    # openxla/xla#26987: a transpose kept beside its operand doubles the memory.
    t = jnp.transpose(x, (0, 2, 1))
    return jnp.tanh(t) @ w, jnp.sum(x * 2.0, axis=0)


def loop_carry_copy(x):
    # openxla/xla#5335: copies of a loop's state hold a second buffer at the peak.
    y = lax.fori_loop(0, 4, lambda i, c: jnp.roll(c, 1, axis=0) * 1.01, x)
    return y, x * 2.0


P = mlp_params([128, 256, 10])
DEEP = mlp_params([64, 128, 128, 128, 32])
BLOCK = block_params(64, 256)
CASES = {
    "mlp_train_step": (mlp_train_step, [P, spec(32, 128), spec(32, 10)], {}),
    "mlp_deep_train_step": (mlp_deep_train_step, [DEEP, spec(64, 64), spec(64, 32)], {}),
    "mlp_adam_step": (mlp_adam_step, [P, P, P, spec(32, 128), spec(32, 10)], {}),
    "mlp_donated_step": (mlp_donated_step, [P, spec(32, 128), spec(32, 10)], {"donate_argnums": (0,)}),
    "mlp_forward": (mlp_forward, [DEEP, spec(256, 64)], {}),
    "mlp_remat_grad": (mlp_remat_grad, [DEEP, spec(64, 64), spec(64, 32)], {}),
    "mlp_vmap_grads": (mlp_vmap_grads, [mlp_params([16, 32, 4]), spec(8, 16), spec(8, 4)], {}),
    "conv_forward": (conv_forward, [spec(4, 16, 16, 8), spec(3, 3, 8, 16), spec(3, 3, 16, 8)], {}),
    "conv_train_step": (conv_train_step, [spec(3, 3, 4, 8), spec(3, 3, 8, 4), spec(2, 16, 16, 4), spec(2, 16, 16, 4)], {}),
    "conv_pool_classifier_step": (conv_pool_classifier_step, [spec(3, 3, 3, 8), spec(8 * 8 * 8, 10), spec(4, 16, 16, 3), spec(4, 10)], {}),
    "conv_batchnorm_step": (conv_batchnorm_step, [spec(3, 3, 4, 16), spec(4, 12, 12, 4)], {}),
    "attention_forward": (attention_forward, [spec(4, 64, 32)] * 3, {}),
    "attention_grad": (attention_grad, [spec(2, 64, 32)] * 3, {}),
    "multihead_attention": (multihead_attention, [spec(2, 32, 64), spec(64, 64), spec(64, 64), spec(64, 64)], {}),
    "transformer_forward": (transformer_forward, [BLOCK, spec(2, 32, 64)], {}),
    "transformer_train_step": (transformer_train_step, [BLOCK, spec(2, 32, 64)], {}),
    "layer_norm_grad": (layer_norm_grad, [spec(64, 256)], {}),
    "softmax_xent_grad": (softmax_xent_grad, [spec(64, 1000), spec(64, 1000)], {}),
    "scan_cumulative": (scan_cumulative, [spec(16, 64, 32)], {}),
    "scan_rnn": (scan_rnn, [spec(64, 64), spec(8, 64), spec(12, 8, 64)], {}),
    "scan_rnn_grad": (scan_rnn_grad, [spec(64, 64), spec(8, 64), spec(12, 8, 64)], {}),
    "lstm_scan": (lstm_scan, [spec(32, 128), spec(32, 128), spec(10, 4, 32)], {}),
    "fori_matrix_power": (fori_matrix_power, [spec(64, 64)], {}),
    "while_converge": (while_converge, [spec(32, 32)], {}),
    "cond_branches": (cond_branches, [spec(dtype=f32), spec(64, 32)], {}),
    "switch_branches": (switch_branches, [spec(dtype=i32), spec(48, 48)], {}),
    "cond_in_scan": (cond_in_scan, [spec(6, 32, 16)], {}),
    "kv_cache_update": (kv_cache_update, [spec(64, 32), spec(8, 32), spec(dtype=i32)], {}),
    "embedding_grad": (embedding_grad, [spec(500, 32), spec(64, dtype=i32), spec(64, 32)], {}),
    "top_k_sort": (top_k_sort, [spec(64, 128)], {}),
    "cumsum_scan": (cumsum_scan, [spec(128, 64)], {}),
    "matmul_chain": (matmul_chain, [spec(64, 128), spec(128, 256), spec(256, 32), spec(32, 64)], {}),
    "transpose_copy": (transpose_copy, [spec(512, 32)], {}),
    "concat_pad_ops": (concat_pad_ops, [spec(40, 61), spec(24, 61)], {}),
    "pooling_grad": (pooling_grad, [spec(2, 16, 16, 8)], {}),
    "einsum_contractions": (einsum_contractions, [spec(64, 96), spec(96, 48), spec(48, 64)], {}),
    "outer_broadcast": (outer_broadcast, [spec(256), spec(384)], {}),
    "gelu_mlp_grad": (gelu_mlp_grad, [spec(64, 256), spec(256, 64), spec(32, 64)], {}),
    "conv_transpose_forward": (conv_transpose_forward, [spec(2, 8, 8, 16), spec(3, 3, 16, 8)], {}),
    "fft_filter": (fft_filter, [spec(16, 128)], {}),
    "argmax_onehot": (argmax_onehot, [spec(64, 100)], {}),
    "nested_scan": (nested_scan, [spec(4, 5, 16, 16)], {}),
    "transpose_at_peak": (transpose_at_peak, [spec(8, 512, 512), spec(512, 512)], {}),
    "loop_carry_copy": (loop_carry_copy, [spec(1024, 1024)], {}),
}

SIBLINGS = ("", "-buffer-assignment", "-live-range", "-memory-usage-report")


def newest(pattern):
    files = sorted(glob.glob(os.path.join(DUMP, pattern)), key=os.path.getmtime)
    return files[-1] if files else None


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    totals = {}
    for name, (fn, args, jit_args) in CASES.items():
        stats = jax.jit(fn, **jit_args).lower(*args).compile().memory_analysis()
        totals[name] = {
            "argument_bytes": stats.argument_size_in_bytes,
            "output_bytes": stats.output_size_in_bytes,
            "alias_bytes": stats.alias_size_in_bytes,
            "temp_bytes": stats.temp_size_in_bytes,
        }
        module = newest(f"module_*.jit_{fn.__name__}.cpu_after_optimizations.txt")
        if module is None:
            sys.exit(f"no after_optimizations dump for {name}")
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        stem = module[: -len(".txt")]
        for sibling in SIBLINGS:
            src = f"{stem}{sibling}.txt"
            if not os.path.exists(src):
                sys.exit(f"XLA wrote no {src}")
            text = open(src).read().replace(os.path.abspath(__file__), "make_memory_dumps.py")
            with open(os.path.join(folder, os.path.basename(src)), "w") as f:
                f.write(text)
    with open(os.path.join(out, "memory_analysis.json"), "w") as f:
        json.dump({"jax": jax.__version__, "programs": totals}, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(DUMP)
    print("jax", jax.__version__, len(totals), "programs")


if __name__ == "__main__":
    main()
