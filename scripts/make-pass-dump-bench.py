"""Makes the pass-by-pass dump directory the `history` benchmark reads: about 300
snapshots of a module of about 2 MB (JAX, CPU backend).

    python scripts/make-pass-dump-bench.py DIR [LAYERS]

The gradient of a transformer of LAYERS (24) blocks, unrolled, is jitted with
`XLA_FLAGS="--xla_dump_to=... --xla_dump_hlo_pass_re=.*"`; on CPU XLA writes about
46 snapshots of it (1.9 MB on average, 5.9 MB after optimizations). To reach a
directory of the size an accelerator's pipeline writes, each pass snapshot is
written again under the following step numbers (as a pass that changed nothing
would be), evenly, in order, up to 300 files: every real change is there once. Then

    HLO_LSP_PASS_DUMP=DIR cargo bench --bench history
"""

import glob
import os
import re
import shutil
import sys
import tempfile

TARGET = 300


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    dump = tempfile.mkdtemp(prefix="hlo-pass-bench-")
    os.environ["XLA_FLAGS"] = (
        f"--xla_dump_to={dump} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*"
    )
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax import lax

    def ln(x):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5)

    def block(x, w):
        h = ln(x)
        s = jax.nn.softmax((h @ w[0]) @ (h @ w[1]).T / 8.0, -1)
        x = x + (s @ (h @ w[2])) @ w[3]
        return x + jax.nn.gelu(ln(x) @ w[4]) @ w[5]

    def model(ws, x):
        for w in ws:
            x = block(x, w)
        return jnp.sum(x**2)

    ws = [[jnp.ones((64, 64))] * 6 for _ in range(layers)]
    jax.jit(jax.grad(model)).lower(ws, jnp.ones((16, 64))).compile()

    files = glob.glob(os.path.join(dump, "module_*.jit_model.*.txt"))
    passes = sorted(
        (int(m.group(1)), f)
        for f in files
        if (m := re.search(r"\.jit_model\.(\d{4,})\.", os.path.basename(f)))
    )
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in files:
        name = os.path.basename(f)
        if name.endswith(("before_optimizations.txt", "cpu_after_optimizations.txt")):
            shutil.copy(f, os.path.join(out, name))
    step = 0
    for k, (_, f) in enumerate(passes):
        name = os.path.basename(f)
        copies = (k + 1) * (TARGET - 2) // len(passes) - k * (TARGET - 2) // len(passes)
        for _ in range(copies):
            renamed = re.sub(r"\.jit_model\.\d{4,}\.", f".jit_model.{step:04d}.", name)
            shutil.copy(f, os.path.join(out, renamed))
            step += 1
    shutil.rmtree(dump)
    print(out, step + 2, "snapshots")


if __name__ == "__main__":
    main()
