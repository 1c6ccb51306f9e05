# Shardy sub-axes from a real program (JAX 0.10.2, 8 CPU devices): a reshape splits a sharded
# dimension in two, so Shardy's propagation shards each half over a piece of the axis
# ("d":(1)2 and "d":(2)4 of a one-axis mesh of 8; "y":(1)2 and "y":(2)2 of a 2x4 mesh).
# Writes, from XLA's dumps of each compile:
#   <case>.propagated.mlir  Shardy's module after propagation (shardy/.../02.after_propagation.mlir)
#   <case>.shardy_xla.hlo   the HLO XLA's partitioner reads after shardy-xla (v2 shardings)
# Run from this directory.
import glob, os, shutil, tempfile
dump = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = (f"--xla_force_host_platform_device_count=8 --xla_dump_to={dump} "
                           "--xla_dump_hlo_pass_re=shardy-xla")
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np
line = Mesh(np.array(jax.devices()), ("d",))
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))

def line_split(a):
    return jnp.sin(a.reshape(2, 4, 16)).sum(axis=1)

def mesh_split(a):
    return jnp.sin(a.reshape(2, 2, 16)).sum(axis=1)

for f, shape, arg, out in [(line_split, (8, 16), NamedSharding(line, P("d")), NamedSharding(line, P())),
                           (mesh_split, (4, 16), NamedSharding(mesh, P("y")), NamedSharding(mesh, P()))]:
    jax.jit(f, in_shardings=arg, out_shardings=out).lower(jnp.ones(shape)).compile()
    name = f.__name__
    prop = glob.glob(os.path.join(dump, "shardy", f"*jit_{name}", "*after_propagation.mlir"))[0]
    shutil.copy(prop, f"{name}.propagated.mlir")
    hlo = glob.glob(os.path.join(dump, f"*jit_{name}.*after_shardy-xla*.txt"))[0]
    text = open(hlo).read().replace(os.path.abspath(__file__), os.path.basename(__file__))
    open(f"{name}.shardy_xla.hlo", "w").write(text)
    print(name)
shutil.rmtree(dump)
