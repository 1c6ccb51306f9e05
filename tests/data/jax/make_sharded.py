# A small SPMD program for the sharding tests: jit over a 2x4 mesh of 8 CPU devices.
# Writes sharded_mlp.before.hlo (lowered, global shapes) and sharded_mlp.after.hlo
# (compiled: per-device shapes, a mesh-form all-reduce). Run from this directory.
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
x_s = NamedSharding(mesh, P("x", None))     # f32[16,64]: rows over x
w_s = NamedSharding(mesh, P(None, "y"))     # f32[64,128]: cols over y
def f(x, w):
    h = jnp.tanh(x @ w)
    return h.sum(axis=1)
x = jnp.ones((16, 64), jnp.float32); w = jnp.ones((64, 128), jnp.float32)
jf = jax.jit(f, in_shardings=(x_s, w_s), out_shardings=NamedSharding(mesh, P("x")))
low = jf.lower(x, w)
open("sharded_mlp.before.hlo", "w").write(low.as_text(dialect="hlo"))
after = low.compile().as_text().replace(__file__, "make_sharded.py")
open("sharded_mlp.after.hlo", "w").write(after)
