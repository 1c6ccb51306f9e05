# Differential test data for predicting, before XLA's SPMD partitioner, the collectives a
# sharding will need. Each case is a small program jit over an 8-device CPU mesh (JAX 0.10.2,
# XLA_FLAGS=--xla_force_host_platform_device_count=8) with NamedSharding on its arguments,
# result and (where said) a sharding constraint. For each case writes, from XLA's own dumps:
#   <case>.before.hlo  before_optimizations (global shapes, shardings on parameters/result)
#   <case>.after.hlo   after_optimizations (per-device shapes, the collectives XLA inserted)
# and <case>.gspmd.mlir (lowered StableHLO with mhlo.sharding, Shardy off).
# Run from this directory.
import glob, os, shutil, sys, tempfile
dump = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count=8 --xla_dump_to={dump}"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
line = Mesh(np.array(jax.devices()), ("d",))
S = lambda *spec: NamedSharding(mesh, P(*spec))
L = lambda *spec: NamedSharding(line, P(*spec))
wsc = jax.lax.with_sharding_constraint

def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2

CASES = {
    # the contracting dim split over y in both operands, the result replicated: all-reduce over y
    "contract": (lambda a, b: a @ b, [((32, 64), S(None, "y")), ((64, 16), S("y", None))], S()),
    # the contracting dim split over y, the result's rows over x: all-reduce over y
    "contract_rows": (lambda a, b: a @ b, [((32, 64), S("x", "y")), ((64, 16), S("y", None))], S("x", None)),
    # rows over y resharded to columns over y: all-to-all over y
    "reshard_transpose": (lambda a: wsc(jnp.sin(a), S(None, "y")) * 2, [((32, 32), S("y", None))], S(None, "y")),
    # rows over x and columns over y, the result replicated: all-gather over both
    "reshard_gather": (lambda a: jnp.sin(a), [((32, 32), S("x", "y"))], S()),
    # rows over x resharded to rows over y
    "reshard_axis": (lambda a: jnp.sin(a), [((32, 32), S("x", None))], S("y", None)),
    # a sum over the dim split over x: all-reduce over x
    "reduce_split": (lambda a: jnp.exp(a).sum(axis=0), [((32, 16), S("x", "y"))], S("y")),
    # a max over both dims, each split: all-reduce over both axes
    "reduce_all": (lambda a: jnp.max(a), [((32, 16), S("x", "y"))], S()),
    # Megatron: batch over x, hidden over y (w1 columns, w2 rows): one all-reduce over y
    "mlp_megatron": (mlp, [((16, 64), S("x", None)), ((64, 256), S(None, "y")), ((256, 64), S("y", None))], S("x", None)),
    # two operands split over different axes, added: one is resharded to the other
    "add_mixed": (lambda a, b: a + b, [((32, 32), S("x", None)), ((32, 32), S(None, "y"))], S("x", None)),
    # rows of the lhs and columns of the rhs both over y: XLA gathers one, chosen by cost
    "dot_conflict": (lambda a, b: a @ b, [((32, 64), S("y", None)), ((64, 16), S(None, "y"))], S()),
    # a transpose then a sum over the dim split over x: all-reduce over x
    "transpose_reduce": (lambda a: a.T.sum(axis=1), [((32, 16), S("x", "y"))], S("y")),
    # a reshape cutting the dim split 8 ways: Shardy's sub-axes
    "reshape_split": (lambda a: jnp.sin(a.reshape(2, 4, 16)).sum(axis=1), [((8, 16), L("d"))], L()),
    # FSDP: the weight's rows (the contracting dim) over y, the batch over x
    "fsdp": (lambda x, w: jnp.tanh(x @ w), [((16, 64), S("x", None)), ((64, 128), S("y", None))], S("x", None)),
    # one axis of 8 devices: the contracting dim split 8 ways
    "line_contract": (lambda a, b: a @ b, [((16, 64), L(None, "d")), ((64, 32), L("d", None))], L()),
    # one axis of 8, rows split then wanted whole: all-gather over d
    "line_gather": (lambda a: jnp.tanh(a), [((64, 8), L("d", None))], L()),
}

here = os.path.basename(__file__)
only = sys.argv[1:]
for name, (f, args, result) in CASES.items():
    if only and name not in only:
        continue
    f.__name__ = name  # XLA's dump files are named after the function
    xs = [jnp.ones(shape, jnp.float32) for shape, _ in args]
    shardings = tuple(s for _, s in args)
    jax.config.update("jax_use_shardy_partitioner", False)
    lowered = jax.jit(f, in_shardings=shardings, out_shardings=result).lower(*xs)
    open(f"{name}.gspmd.mlir", "w").write(lowered.as_text())
    jax.config.update("jax_use_shardy_partitioner", True)
    shutil.rmtree(dump); os.makedirs(dump)
    g = jax.jit(f, in_shardings=shardings, out_shardings=result)
    g.lower(*xs).compile()
    for stage in ("before_optimizations", "cpu_after_optimizations"):
        files = sorted(glob.glob(os.path.join(dump, f"*.jit_{name}.{stage}.txt")))
        text = open(files[-1]).read().replace(os.path.abspath(__file__), here)
        open(f"{name}.{'before' if stage.startswith('before') else 'after'}.hlo", "w").write(text)
    print(name)
shutil.rmtree(dump)
