"""Regenerates programs.jsonl: real JAX programs lowered twice, as StableHLO
(`lower(...).as_text()`) and as HLO (`lower(...).as_text(dialect='hlo')`), for the
differential test `server/tests/mlir_stablehlo.rs` (every StableHLO op with an HLO
counterpart must have the HLO instruction's maps). Run: python3 generate.py
(jax on CPU; written with jax 0.10.2)."""
import json
import os

# shard_map needs a mesh of several devices: eight host devices (before jax loads).
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax
import jax.numpy as jnp
from jax import lax, shard_map
from jax.sharding import NamedSharding, PartitionSpec

f32 = jnp.float32
x48 = jnp.ones((4, 8), f32)
x3 = jnp.ones((2, 4, 8), f32)
img = jnp.ones((1, 8, 8, 3), f32)
ker = jnp.ones((3, 3, 3, 4), f32)
idx = jnp.array([0, 2], jnp.int32)

PROGRAMS = {
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), (x48,)),
    "log_softmax": (lambda x: jax.nn.log_softmax(x, axis=0), (x48,)),
    "relu": (lambda x: jax.nn.relu(x), (x48,)),
    "gelu": (lambda x: jax.nn.gelu(x), (x48,)),
    "layer_norm": (
        lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5),
        (x48,),
    ),
    "matmul": (lambda a, b: a @ b, (x48, jnp.ones((8, 16), f32))),
    "batched_matmul": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (x3, jnp.ones((2, 8, 3), f32))),
    "transpose": (lambda x: x.T + 1, (x48,)),
    "transpose3": (lambda x: jnp.transpose(x, (2, 0, 1)) * 2, (x3,)),
    "reshape": (lambda x: x.reshape(8, 4) - 1, (x48,)),
    "sum_rows": (lambda x: x.sum(axis=1), (x48,)),
    "max_cols": (lambda x: x.max(axis=0), (x48,)),
    "mean_all": (lambda x: x.mean(), (x3,)),
    "argmax": (lambda x: jnp.argmax(x, axis=1), (x48,)),
    "slice": (lambda x: x[1:3, ::2], (x48,)),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (1, 2), (2, 3)), (x48,)),
    "dynamic_update_slice": (
        lambda x, u: lax.dynamic_update_slice(x, u, (1, 2)),
        (x48, jnp.ones((2, 3), f32)),
    ),
    "concatenate": (lambda a, b: jnp.concatenate([a, b], axis=1), (x48, x48)),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 3))), (x48,)),
    "iota": (lambda x: x + jnp.arange(8, dtype=f32), (x48,)),
    "broadcast": (lambda v, x: x * v[:, None], (jnp.ones((4,), f32), x48)),
    "take": (lambda x, i: jnp.take(x, i, axis=0), (x48, idx)),
    "gather_cols": (lambda x, i: x[:, i], (x48, idx)),
    "scatter_add": (lambda x, i: x.at[i].add(1.0), (x48, idx)),
    "sort": (lambda x: jnp.sort(x, axis=1), (x48,)),
    "cumsum": (lambda x: jnp.cumsum(x, axis=0), (x48,)),
    "avg_pool": (
        lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4,
        (img,),
    ),
    "max_pool": (
        lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
        (img,),
    ),
    "where": (lambda x: jnp.where(x > 0.5, x, -x), (x48,)),
    "clip": (lambda x: jnp.clip(x, 0.1, 0.9), (x48,)),
    "convert": (lambda x: (x * 3).astype(jnp.int32) + 1, (x48,)),
    "reverse": (lambda x: jnp.flip(x, axis=1) + x, (x48,)),
    "mlp": (
        lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2,
        (x48, jnp.ones((8, 16), f32), jnp.ones((16, 2), f32)),
    ),
    "attention": (
        lambda q, k, v: jax.nn.softmax(q @ k.T / 2.0, axis=-1) @ v,
        (x48, x48, x48),
    ),
    "outer": (lambda a, b: jnp.outer(a, b), (jnp.ones((4,), f32), jnp.ones((5,), f32))),
    "expand_squeeze": (lambda x: jnp.squeeze(x[:, None, :], 1) * 2, (x48,)),
    "tanh_exp_log": (lambda x: jnp.tanh(x) + jnp.exp(x) - jnp.log1p(x), (x48,)),
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + x, x), (x48,)),
    "cond": (
        lambda p, x: lax.cond(p > 0, lambda x: x.T + 1.0, lambda x: x.T * 2.0, x),
        (jnp.int32(1), x48),
    ),
    "switch": (
        lambda i, x: lax.switch(i, [lambda x: x + 1, lambda x: x * 2, lambda x: -x], x),
        (jnp.int32(1), x48),
    ),
    "conv": (
        lambda x, k: lax.conv_general_dilated(
            x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        ),
        (img, ker),
    ),
    # Ops with several named results (`%values, %indices = ...`) and ops HLO has
    # under another name (issue 46).
    "top_k": (lambda x: tuple(r + 1 for r in lax.top_k(x, 3)), (x48,)),
    "rng_bit_generator": (
        lambda k: tuple(r + 1 for r in lax.rng_bit_generator(k, (4, 8))),
        (jnp.zeros((4,), jnp.uint32),),
    ),
    "fft": (lambda x: jnp.fft.fft(x, axis=-1), (jnp.ones((4, 8), jnp.complex64),)),
    "reduce_precision": (
        lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10) * 2,
        (x48,),
    ),
    "optimization_barrier": (
        lambda x: sum(lax.optimization_barrier((x, x + 1))),
        (x48,),
    ),
}


# Programs with regions (issue 46): a while whose cond and body hold ~50 ops (a
# Newton iteration vmapped, so the predicate is reduced over the batch), a scan,
# a cond on several operands, a shard_map (`sdy.manual_computation`, its body on
# per-shard shapes), a sort's comparator and a variadic reduce's reducer.
def newton(a):
    def cond(s):
        x, it = s
        return (jnp.abs(x * x * x - a) > 1e-5) & (it < 20)

    def body(s):
        x, it = s
        return x - (x * x * x - a) / (3 * x * x), it + 1

    return lax.while_loop(cond, body, (a / 3 + 1.0, 0))[0]


def scan_rows(x):
    def step(c, row):
        c = jnp.tanh(c * 0.5 + row)
        return c, c.sum()

    return lax.scan(step, jnp.zeros((8,), f32), x)


MESH = jax.make_mesh((8,), ("i",))


def sharded_sum(x):
    body = lambda b: lax.psum(jnp.sin(b).sum(0) * 2, "i")
    spec = PartitionSpec("i")
    return shard_map(body, mesh=MESH, in_specs=spec, out_specs=PartitionSpec())(x)


def sharded(shape):
    return jax.ShapeDtypeStruct(shape, f32, sharding=NamedSharding(MESH, PartitionSpec("i")))


PROGRAMS.update(
    {
        "newton_vmap": (jax.vmap(newton), (jnp.ones((16,), f32),)),
        "scan": (scan_rows, (jnp.ones((5, 8), f32),)),
        "cond_two_operands": (
            lambda p, x, y: lax.cond(p, lambda x, y: x @ y, lambda x, y: x @ y.T @ y.T @ y, x, y),
            (True, jnp.ones((4, 8), f32), jnp.ones((8, 8), f32)),
        ),
        "switch_reduce": (
            lambda i, x: lax.switch(i, [lambda x: x.sum(0), lambda x: x.max(0) * 2], x),
            (jnp.int32(0), x48),
        ),
        "shard_map": (sharded_sum, (sharded((64, 4)),)),
        "sort_two_keys": (lambda a, b: lax.sort((a, b), dimension=1, num_keys=2), (x48, x48)),
        "argmin_rows": (lambda x: jnp.argmin(x, axis=0) + 1, (x48,)),
    }
)


def scoped_mlp(x, w1, w2):
    with jax.named_scope("layer1"):
        h = jax.nn.relu(x @ w1)
    with jax.named_scope("layer2"):
        y = h @ w2
        with jax.named_scope("norm"):
            y = y / jnp.sum(y, axis=-1, keepdims=True)
    return y


def write_scopes():
    """scopes.mlir: an MLP under `jax.named_scope`s, with its locations (the name
    scopes `graph` groups ops by); this script's folder is written as
    /home/user/project."""
    args = (x48, jnp.ones((8, 16), f32), jnp.ones((16, 2), f32))
    text = jax.jit(scoped_mlp).lower(*args).as_text(debug_info=True)
    here = os.path.dirname(os.path.abspath(__file__))
    with open("scopes.mlir", "w") as out:
        out.write(text.replace(here, "/home/user/project"))


def main():
    with open("programs.jsonl", "w") as out:
        for name, (f, args) in PROGRAMS.items():
            lowered = jax.jit(f).lower(*args)
            record = {
                "name": name,
                "stablehlo": lowered.as_text(),
                "hlo": lowered.as_text(dialect="hlo"),
            }
            out.write(json.dumps(record) + "\n")
    print(len(PROGRAMS), "programs")
    write_scopes()


if __name__ == "__main__":
    main()
