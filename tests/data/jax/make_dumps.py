"""Regenerates the small XLA HLO text dumps in this folder.

Run from this folder:  python make_dumps.py
Needs JAX (CPU). Each function is jitted once with XLA_FLAGS set so that XLA dumps
its HLO text before and after optimization; we keep every after_optimizations file
and a few before_optimizations files, renamed to <case>.after.hlo / <case>.before.hlo.
"""

import glob
import os
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-dumps-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

KEEP_BEFORE = {"softmax", "attention", "scatter"}


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def convolution(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def pooling(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def gather(x, idx):
    return x[idx]


def scatter(x, idx, upd):
    return x.at[idx].add(upd)


def dynamic_slices(x, i):
    s = lax.dynamic_slice(x, (i, 0), (2, 8))
    return lax.dynamic_update_slice(x, s * 2.0, (i + 1, 0))


def concat_pad(a, b):
    c = jnp.concatenate([a, b], axis=0)
    return jnp.pad(c, ((1, 2), (0, 3)), constant_values=-1.0)


def reshape_transpose(x):
    y = x.reshape(4, 6, 5).transpose(2, 0, 1).reshape(5, 24)
    return jnp.tanh(y.T.reshape(6, 4, 5).transpose(1, 0, 2))


def sort(x):
    return jnp.sort(x, axis=-1)


def argmax(x):
    return jnp.argmax(x, axis=-1)


f32 = jnp.float32
CASES = {
    "softmax": (softmax, [jnp.ones((8, 128), f32)]),
    "layer_norm": (layer_norm, [jnp.ones((4, 256), f32), jnp.ones((256,), f32), jnp.zeros((256,), f32)]),
    "attention": (attention, [jnp.ones((2, 16, 32), f32)] * 3),
    "convolution": (convolution, [jnp.ones((1, 8, 8, 3), f32), jnp.ones((3, 3, 3, 4), f32)]),
    "pooling": (pooling, [jnp.ones((1, 8, 8, 3), f32)]),
    "gather": (gather, [jnp.ones((16, 8), f32), jnp.array([3, 1, 4], jnp.int32)]),
    "scatter": (scatter, [jnp.ones((16, 8), f32), jnp.array([3, 1, 4], jnp.int32), jnp.ones((3, 8), f32)]),
    "dynamic_slice": (dynamic_slices, [jnp.ones((10, 8), f32), jnp.int32(2)]),
    "concat_pad": (concat_pad, [jnp.ones((3, 4), f32), jnp.ones((5, 4), f32)]),
    "reshape_transpose": (reshape_transpose, [jnp.ones((120,), f32)]),
    "sort": (sort, [jnp.ones((4, 33), f32)]),
    "argmax": (argmax, [jnp.ones((4, 100), f32)]),
}


def newest(pattern):
    files = sorted(glob.glob(os.path.join(DUMP, pattern)), key=os.path.getmtime)
    return files[-1] if files else None


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    for name, (fn, args) in CASES.items():
        jax.jit(fn).lower(*args).compile()
        for stage, suffix in (("after_optimizations", "after"), ("before_optimizations", "before")):
            if stage.startswith("before") and name not in KEEP_BEFORE:
                continue
            src = newest(f"*.jit_{fn.__name__}.*{stage}.txt")
            if src is None:
                sys.exit(f"no {stage} dump for {name}")
            text = open(src).read().replace(os.path.abspath(__file__), "make_dumps.py")
            with open(os.path.join(out, f"{name}.{suffix}.hlo"), "w") as f:
                f.write(text)
    shutil.rmtree(DUMP)
    print("jax", jax.__version__)


if __name__ == "__main__":
    main()
