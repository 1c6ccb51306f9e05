"""A softmax as a JAX user writes it, lowered with its source locations:
`python3 softmax_debug.py` writes softmax_debug.mlir
(`jax.jit(softmax).lower(x).as_text(debug_info=True)`, jax 0.10.2), with this
folder written as /home/user/project (as if lowered on another machine: the
editor finds this file by its trailing path). The hover's `Source:` line and the
document links are tested on it (server/tests/mlir_stablehlo.rs)."""
import os

import jax
import jax.numpy as jnp


def norm(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m


def softmax(x):
    e = jnp.exp(norm(x))
    return e / e.sum(axis=-1, keepdims=True)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    text = jax.jit(softmax).lower(jnp.ones((4, 8))).as_text(debug_info=True)
    text = text.replace(here, "/home/user/project")
    with open(os.path.join(here, "softmax_debug.mlir"), "w") as f:
        f.write(text)
