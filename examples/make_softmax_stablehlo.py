"""Writes softmax.stablehlo.mlir: the softmax of softmax.hlo (last dimension of
f32[2,65,125]) as JAX lowers it, StableHLO (`jax.jit(f).lower(x).as_text()`),
for the README's capture of `hlo-lsp maps` on StableHLO. Run: python3
make_softmax_stablehlo.py (written with jax 0.10.2)."""
import os

import jax
import jax.numpy as jnp

x = jnp.ones((2, 65, 125), jnp.float32)
text = jax.jit(lambda x: jax.nn.softmax(x, axis=-1)).lower(x).as_text()
header = (
    "// Softmax over the last dimension of f32[2,65,125] as JAX lowers it (StableHLO,\n"
    "// jax 0.10.2, make_softmax_stablehlo.py): `hlo-lsp maps examples/softmax.stablehlo.mlir`\n"
    "// prints the maps of the op @main returns, `hlo-lsp mlir` those of every op.\n"
)
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "softmax.stablehlo.mlir"), "w") as f:
    f.write(header + text)
