"""Makes the programs of this folder: XLA's dump of each (text, .hlo.pb, buffer
assignment, live ranges), what `memory_analysis()` says, and what XProf's memory viewer
shows for it (`xprof.json`: peakHeapMib, peak_op, the indefinite allocations).

Run from this folder:  python make_xprof_samples.py [NAME ...]
Needs JAX (CPU; made with 0.10.2) and XProf (made with 2.24.2). Each program is jitted,
compiled with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_as_proto,
run once on zeros under `jax.profiler.trace` (XProf reads the module's HloProto from the
profile), and XProf's `memory_viewer` tool is asked for the module, as in
`shared/samples/profiles`. The profile itself is not kept.
"""

import glob
import json
import os
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-xprof-dumps-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from xprof.convert import raw_to_tool_data  # noqa: E402

f32 = jnp.float32
i32 = jnp.int32


def spec(*shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def xent(logits, labels):
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


def convnet_step(w1, w2, fc, x, y):
    def loss(w1, w2, fc):
        h = jax.nn.relu(conv(x, w1))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jax.nn.relu(conv(h, w2))
        return xent(h.reshape(h.shape[0], -1) @ fc, y)

    return jax.grad(loss, (0, 1, 2))(w1, w2, fc)


def xent_vocab(h, w, labels):
    def loss(w):
        logits = h @ w
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1))

    return jax.grad(loss)(w)


def causal_attention(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
    n = q.shape[2]
    s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def row_sort(x):
    return jnp.sort(x, axis=-1)


def scatter_add(x, idx, upd):
    return x.at[idx].add(upd)


def blockwise_attention(q, k, v):
    nb = k.shape[0] // 64

    def body(i, carry):
        m, l, o = carry
        kb = lax.dynamic_slice_in_dim(k, i * 64, 64)
        vb = lax.dynamic_slice_in_dim(v, i * 64, 64)
        s = q @ kb.T
        m2 = jnp.maximum(m, s.max(-1))
        p = jnp.exp(s - m2[:, None])
        scale = jnp.exp(m - m2)
        return m2, l * scale + p.sum(-1), o * scale[:, None] + p @ vb

    n = q.shape[0]
    m, l, o = lax.fori_loop(0, nb, body, (jnp.full((n,), -jnp.inf), jnp.zeros((n,)), jnp.zeros_like(q)))
    return o / l[:, None]


def sort_four(a, b, c, d):
    return lax.sort((a, b, c, d), dimension=0, num_keys=1, is_stable=True)


def switch_in_scan(xs, w):
    def step(c, x):
        i = jnp.argmax(x[0]) % 4
        c = lax.switch(i, [lambda c: c @ w, lambda c: jnp.tanh(c), lambda c: c * x, lambda c: jnp.sort(c, 0)], c)
        return c, c.sum()

    return lax.scan(step, jnp.zeros(xs.shape[1:]), xs)


def cholesky_solve(a, b):
    a = a @ jnp.swapaxes(a, -1, -2) + 64.0 * jnp.eye(a.shape[-1])
    l = jnp.linalg.cholesky(a)
    return jax.scipy.linalg.solve_triangular(l, b, lower=True)


def layer_norm_mlp_step(w1, w2, x):
    def loss(w1, w2):
        m = x.mean(-1, keepdims=True)
        h = (x - m) * lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
        return jnp.mean(jax.nn.gelu(h @ w1) @ w2)

    return jax.grad(loss, (0, 1))(w1, w2)


def argsort_gather(x):
    i = jnp.argsort(x, axis=-1)
    return jnp.take_along_axis(x, i, axis=-1) * 2.0, i


def top_k_rows(x):
    return lax.top_k(x, 16)


def while_newton(x):
    def cond(s):
        return s[1] < 10

    def body(s):
        y, i = s
        return y - (y @ y - x) @ jnp.linalg.inv(2.0 * y + jnp.eye(y.shape[0])), i + 1

    return lax.while_loop(cond, body, (jnp.eye(x.shape[0]), 0))[0]


def gather_embed_grad(table, ids, y):
    return jax.grad(lambda t: jnp.sum((t[ids] * y) ** 2))(table)


def cumsum_rows(x):
    return jnp.cumsum(x, axis=1), jnp.cumsum(x[::-1], axis=0)


def conv_batch64(x, w):
    return jax.nn.relu(conv(jax.nn.relu(conv(x, w)), jnp.swapaxes(w, 2, 3)))


def qr_solve(a, b):
    q, r = jnp.linalg.qr(a)
    return jax.scipy.linalg.solve_triangular(r, q.T @ b)


def rnn_scan_grad(w, xs):
    def loss(w):
        h, _ = lax.scan(lambda h, x: (jnp.tanh(h @ w + x), None), jnp.zeros(xs.shape[1:]), xs)
        return jnp.sum(h ** 2)

    return jax.grad(loss)(w)


def dus_loop(buf, rows):
    def body(i, b):
        return lax.dynamic_update_slice_in_dim(b, jnp.tanh(rows[i])[None], i, 0)

    return lax.fori_loop(0, rows.shape[0], body, buf)


CASES = {
    "convnet_batch64": (convnet_step, [spec(3, 3, 3, 16), spec(3, 3, 16, 16), spec(8 * 8 * 16, 10), spec(64, 16, 16, 3), spec(64, 10)]),
    "xent_vocab_32k": (xent_vocab, [spec(64, 128), spec(128, 32768), spec(64, dtype=i32)]),
    "causal_attention_2048": (causal_attention, [spec(1, 4, 2048, 64)] * 3),
    "softmax_rows": (softmax, [spec(512, 4096)]),
    "row_sort": (row_sort, [spec(256, 1024)]),
    "scatter_add": (scatter_add, [spec(4096, 64), spec(1024, dtype=i32), spec(1024, 64)]),
    "blockwise_attention_fori": (blockwise_attention, [spec(256, 64), spec(1024, 64), spec(1024, 64)]),
    "sort_four_operands": (sort_four, [spec(4096, 16), spec(4096, 16, dtype=i32), spec(4096, 16), spec(4096, 16)]),
    "switch_in_scan": (switch_in_scan, [spec(8, 64, 64), spec(64, 64)]),
    "cholesky_triangular": (cholesky_solve, [spec(16, 64, 64), spec(16, 64, 8)]),
    "layer_norm_mlp_step": (layer_norm_mlp_step, [spec(128, 512), spec(512, 128), spec(256, 128)]),
    "argsort_gather": (argsort_gather, [spec(128, 512)]),
    "top_k_rows": (top_k_rows, [spec(512, 1024)]),
    "while_newton": (while_newton, [spec(32, 32)]),
    "gather_embed_grad": (gather_embed_grad, [spec(2000, 64), spec(512, dtype=i32), spec(512, 64)]),
    "cumsum_rows": (cumsum_rows, [spec(256, 512)]),
    "conv_batch64": (conv_batch64, [spec(64, 16, 16, 8), spec(3, 3, 8, 8)]),
    "qr_solve": (qr_solve, [spec(128, 64), spec(128, 4)]),
    "rnn_scan_grad": (rnn_scan_grad, [spec(64, 64), spec(16, 8, 64)]),
    "dus_loop": (dus_loop, [spec(64, 256), spec(64, 256)]),
}

SUFFIXES = ("", "-buffer-assignment", "-live-range", "-memory-usage-report")


def zeros(s):
    return jnp.zeros(s.shape, s.dtype)


def main(names):
    out = os.path.dirname(os.path.abspath(__file__))
    for name in names or CASES:
        fn, args = CASES[name]
        before = set(glob.glob(os.path.join(DUMP, "*")))
        jitted = jax.jit(fn)
        compiled = jitted.lower(*args).compile()
        stats = compiled.memory_analysis()
        new = sorted(set(glob.glob(os.path.join(DUMP, "*"))) - before)
        after = [p for p in new if p.endswith("after_optimizations.txt")]
        prefix = after[-1][: -len(".txt")]
        values = [zeros(a) for a in args]
        logdir = tempfile.mkdtemp(prefix="hlo-xprof-profile-")
        with jax.profiler.trace(logdir):
            jax.block_until_ready(compiled(*values))
        xplane = glob.glob(os.path.join(logdir, "plugins/profile/*/*.xplane.pb"))
        modules = [t for t in raw_to_tool_data.xspace_to_tool_names(xplane) if t]
        del modules
        module_id = os.path.basename(prefix).split(".")[0].split("_")[1]
        module_name = os.path.basename(prefix).split(".")[1]
        viewer, _ = raw_to_tool_data.xspace_to_tool_data(
            xplane, "memory_viewer", {"module_name": f"{module_name}({int(module_id)})"})
        v = json.loads(viewer)
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for suffix in SUFFIXES:
            shutil.copy(prefix + suffix + ".txt", folder)
        shutil.copy(prefix + ".hlo.pb", folder)
        position = v.get("peakHeapSizePosition", 0)
        names = v.get("hloInstructionNames", [])
        with open(os.path.join(folder, "xprof.json"), "w") as f:
            json.dump({
                "xprof_module_name": f"{module_name}({int(module_id)})",
                "memory_viewer": {
                    "peakHeapMib": v.get("peakHeapMib"),
                    "peakHeapSizePosition": position,
                    "peak_op": names[position] if position < len(names) else None,
                    "indefiniteBufferAllocationMib": v.get("indefiniteBufferAllocationMib"),
                    "entryComputationParametersMib": v.get("entryComputationParametersMib"),
                    "maybeLiveOutMib": v.get("maybeLiveOutMib"),
                    "heap_events": len(v.get("heapSizes", [])),
                },
            }, f, indent=1)
        with open(os.path.join(folder, "memory_analysis.json"), "w") as f:
            json.dump({k: getattr(stats, k) for k in (
                "argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
                "temp_size_in_bytes")}, f, indent=1)
        print(name, v.get("peakHeapMib"), names[position] if position < len(names) else None, flush=True)
        shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
