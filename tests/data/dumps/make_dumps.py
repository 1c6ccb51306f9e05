"""Regenerates the XLA dump directory in `step/` (JAX, CPU backend).

Run from this folder:  python make_dumps.py
Needs JAX (`pip install jax`). One function with a while loop, a conditional, a
nested jit (a `call` before optimization), reductions (`to_apply=`) and fusions is
jitted with XLA_FLAGS asking XLA to dump HLO text before optimization, around the
`fusion` pass, and after optimization. We keep those files under their XLA names
(`module_<id>.<name>.<step>.<pipeline>.after_<pass>.before_<pass>.txt`) and drop
the rest (LLVM IR, object files, buffer assignments). The absolute path of this
script in the `FileNames` tables is replaced by `make_dumps.py`, so that the stack
frames resolve to this file in the repository (the document-link tests use that).
"""

import glob
import os
import re
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-dump-dir-")
os.environ["XLA_FLAGS"] = (
    f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^fusion$"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


@jax.jit
def attention(x):
    return jax.nn.softmax(x, axis=-1) * 2.0


def step(x, n):
    def body(i, acc):
        return lax.cond(acc.sum() > 0, lambda a: a * 0.5, lambda a: a + 1.0, acc)

    y = lax.fori_loop(0, n, body, x)
    return attention(y)


KEEP = re.compile(
    r"module_\d+\.jit_step\.("
    r"before_optimizations|\d+\.[^.]+\.after_[^.]+\.before_[^.]+|cpu_after_optimizations"
    r")\.txt$"
)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "step")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    jax.jit(step).lower(jnp.ones((8, 16), jnp.float32), 3).compile()
    kept = 0
    for path in sorted(glob.glob(os.path.join(DUMP, "module_*.txt"))):
        name = os.path.basename(path)
        if not KEEP.match(name):
            continue
        text = open(path).read().replace(os.path.abspath(__file__), "make_dumps.py")
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
        kept += 1
    shutil.rmtree(DUMP)
    if kept < 3:
        sys.exit(f"expected at least 3 dumps of jit_step, kept {kept}")
    print("jax", jax.__version__, "kept", kept)


if __name__ == "__main__":
    main()
