"""Regenerates transformer.after.hlo: the after-optimization HLO of a
transformer training step (8 layers by default; LAYERS=48 gives a 43 MB dump): forward,
backward and SGD update, as XLA writes it through JAX on the CPU backend. The
benchmarks replicate it (32 renamed copies in one module, 56 MB) for issue 13; it

Run from this folder:  python make_transformer.py      (needs `pip install jax`)
"""

import glob
import os
import shutil
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-transformer-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

LAYERS = int(os.environ.get("LAYERS", "8"))
BATCH, SEQ, MODEL, HEADS, HIDDEN = 2, 64, 128, 4, 512


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def block(p, x):
    h = layer_norm(x, p["g1"], p["b1"])
    q, k, v = (jnp.einsum("bsd,de->bse", h, p[n]) for n in ("wq", "wk", "wv"))
    split = lambda t: t.reshape(BATCH, SEQ, HEADS, MODEL // HEADS).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(MODEL // HEADS)
    a = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)
    a = a.transpose(0, 2, 1, 3).reshape(BATCH, SEQ, MODEL)
    x = x + jnp.einsum("bsd,de->bse", a, p["wo"])
    h = layer_norm(x, p["g2"], p["b2"])
    h = jax.nn.gelu(jnp.einsum("bsd,dh->bsh", h, p["w1"]))
    return x + jnp.einsum("bsh,hd->bsd", h, p["w2"])


def loss(params, x):
    for p in params:
        x = block(p, x)
    return jnp.mean(x * x)


@jax.jit
def step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree_util.tree_map(lambda w, g: w - 1e-3 * g, params, grads)


def params(key):
    shapes = {"g1": (MODEL,), "b1": (MODEL,), "g2": (MODEL,), "b2": (MODEL,),
              "wq": (MODEL, MODEL), "wk": (MODEL, MODEL), "wv": (MODEL, MODEL),
              "wo": (MODEL, MODEL), "w1": (MODEL, HIDDEN), "w2": (HIDDEN, MODEL)}
    out = []
    for _ in range(LAYERS):
        key, *ks = jax.random.split(key, len(shapes) + 1)
        out.append({n: jax.random.normal(k, s) * 0.02 for k, (n, s) in zip(ks, shapes.items())})
    return out


def main():
    key = jax.random.PRNGKey(0)
    step(params(key), jnp.ones((BATCH, SEQ, MODEL))).__len__()
    files = [f for f in glob.glob(os.path.join(DUMP, "*jit_step*after_optimizations.txt"))]
    biggest = max(files, key=os.path.getsize)
    text = open(biggest).read().replace(os.path.abspath(__file__), "make_transformer.py")
    with open("transformer.after.hlo", "w") as f:
        f.write(text)
    shutil.rmtree(DUMP)
    print(f"transformer.after.hlo: {len(text)} bytes")


if __name__ == "__main__":
    main()
