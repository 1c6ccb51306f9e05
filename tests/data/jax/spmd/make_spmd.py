# SPMD programs for the sharding tests: each collective XLA's partitioner inserts,
# jit over a 2x4 mesh ("x"=2, "y"=4) of 8 CPU devices (JAX 0.10.2). For each case writes
#   <case>.after.hlo   compiled (per-device shapes, the collective), Shardy on (JAX's default)
#   <case>.sdy.mlir    lowered StableHLO with Shardy: sdy.mesh, #sdy.sharding, sdy.manual_computation
#   <case>.gspmd.mlir  lowered StableHLO without Shardy: mhlo.sharding strings
# and indices.json: JAX's own devices_indices_map of every argument and result, with
# the HloSharding text it lowers to. Run from this directory.
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import numpy as np

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
S = lambda *spec: NamedSharding(mesh, P(*spec))

def ring(a):
    shift = [(i, (i + 1) % 4) for i in range(4)]
    body = lambda b: jax.lax.ppermute(b, "y", shift)
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(a)

CASES = {
    # rows over y, result wanted whole: all-gather over y
    "all_gather": (lambda a: jnp.sin(a) * 2.0, [((32, 16), S("y", None))], S()),
    # the contracting dim over y, the result's rows over y: partial sums (XLA:CPU writes an
    # all-reduce and keeps each device's rows with a dynamic-slice, not a reduce-scatter)
    "partial_sums": (lambda a, b: a @ b, [((32, 64), S(None, "y")), ((64, 16), S("y", None))], S("y", None)),
    # rows over y resharded to columns over y: all-to-all
    "all_to_all": (lambda a: jax.lax.with_sharding_constraint(jnp.sin(a), S(None, "y")) * 2,
                   [((32, 32), S("y", None))], S(None, "y")),
    # shard_map over both axes, each block sent to the next device along y: collective-permute
    "permute": (ring, [((16, 32), S("x", "y"))], S("x", "y")),
    # both mesh axes on one dimension (rows over all 8 devices), columns summed: all-reduce over both
    "both_axes": (lambda a: jnp.cos(a).sum(axis=0), [((16, 6), S(("x", "y"), None))], S()),
}

def indices(sharding, shape):
    out = {}
    for device, slices in sharding.devices_indices_map(shape).items():
        out[str(device.id)] = [[s.start or 0, d if s.stop is None else s.stop] for s, d in zip(slices, shape)]
    return out

here = os.path.basename(__file__)
record = {}
for name, (f, args, result) in CASES.items():
    xs = [jnp.ones(shape, jnp.float32) for shape, _ in args]
    shardings = [s for _, s in args]
    entry = {"mesh": {"x": 2, "y": 4}, "values": []}
    for k, ((shape, s), tag) in enumerate(zip(args + [(None, result)], [f"arg{i}" for i in range(len(args))] + ["result"])):
        shape = shape if shape is not None else jax.eval_shape(f, *xs).shape
        entry["values"].append({"value": tag, "shape": list(shape),
                                "hlo_sharding": str(s._to_xla_hlo_sharding(len(shape))),
                                "devices_indices_map": indices(s, tuple(shape))})
    record[name] = entry
    for shardy in (True, False):
        jax.config.update("jax_use_shardy_partitioner", shardy)
        lowered = jax.jit(f, in_shardings=tuple(shardings), out_shardings=result).lower(*xs)
        open(f"{name}.{'sdy' if shardy else 'gspmd'}.mlir", "w").write(lowered.as_text())
        if shardy:
            compiled = lowered.compile().as_text().replace(os.path.abspath(__file__), here)
            open(f"{name}.after.hlo", "w").write(compiled)
with open("indices.json", "w") as out:
    out.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in record.items()) + "\n}\n")
