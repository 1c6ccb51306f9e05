"""Regenerates the pass-by-pass XLA dumps in this folder (JAX, CPU backend) and,
for each, `expected.json`: the history of every instruction of the
after-optimizations module computed by brute force from the files.

Run from this folder:  python make_history.py
Needs JAX (`pip install jax`). Each program below is jitted with

    XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*"

which makes XLA write the module after every pass that changed it (and at the start
of every pipeline), as `module_<id>.<name>.<step>.<pipeline>.after_<pass>.before_<pass>.txt`
(or `<step>.<pass>.<what>` for a dump made during a pass). We keep, under XLA's own
names, the HLO text of the program's module (before optimizations, every pass
snapshot, after optimizations) and drop the rest. The absolute path of this script in
the `FileNames` tables is replaced by `make_history.py`.

`expected.json` is what the Rust history (`hlo_lsp::dump::history`) must agree with,
computed here independently, the slow way: for every instruction of the
after-optimizations file (computation, name, opcode), the first snapshot of the
unbroken run of snapshots (ending with the last) that hold an instruction of that
computation, name and opcode; and the snapshots after it where its line, without
`metadata={...}`, differs from the snapshot before.
"""

import glob
import json
import os
import re
import shutil
import sys
import tempfile

DUMP = tempfile.mkdtemp(prefix="hlo-history-")
os.environ["XLA_FLAGS"] = (
    f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def attention(q, k, v):
    s = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(q.shape[-1])
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, axis=-1), v)


def transformer_block(x, wq, wk, wv, wo, w1, w2, g, b):
    h = layer_norm(x, g, b)
    split = lambda t: t.reshape(t.shape[0], 2, -1).transpose(1, 0, 2)
    a = attention(split(h @ wq), split(h @ wk), split(h @ wv))
    x = x + a.transpose(1, 0, 2).reshape(x.shape) @ wo
    return x + jax.nn.gelu(layer_norm(x, g, b) @ w1) @ w2


def mlp_train_step(w1, w2, x, y):
    def loss(ws):
        return jnp.mean((jax.nn.relu(x @ ws[0]) @ ws[1] - y) ** 2)

    grads = jax.grad(loss)((w1, w2))
    return w1 - 0.1 * grads[0], w2 - 0.1 * grads[1]


def attention_backward(q, k, v):
    return jax.grad(lambda q, k, v: attention(q, k, v).sum(), argnums=(0, 1, 2))(q, k, v)


def layer_norm_backward(x, g, b):
    return jax.grad(lambda x, g, b: jnp.sum(layer_norm(x, g, b) ** 2), argnums=(0, 1))(
        x, g, b
    )


def conv_backward(x, w):
    def f(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.sum(jnp.tanh(y))

    return jax.grad(f, argnums=(0, 1))(x, w)


def scan(xs, h):
    def cell(h, x):
        h = jnp.tanh(h * 0.5 + x)
        return h, h.sum()

    return lax.scan(cell, h, xs)


f32 = lambda *shape: jnp.ones(shape, jnp.float32)
PROGRAMS = {
    "transformer_block": (
        transformer_block,
        (f32(8, 16), f32(16, 16), f32(16, 16), f32(16, 16), f32(16, 16), f32(16, 32), f32(32, 16), f32(16), f32(16)),
    ),
    "mlp_train_step": (mlp_train_step, (f32(16, 32), f32(32, 8), f32(4, 16), f32(4, 8))),
    "attention_backward": (attention_backward, (f32(2, 8, 8), f32(2, 8, 8), f32(2, 8, 8))),
    "layer_norm_backward": (layer_norm_backward, (f32(8, 16), f32(16), f32(16))),
    "conv_backward": (conv_backward, (f32(1, 8, 8, 3), f32(3, 3, 3, 4))),
    "scan": (scan, (f32(6, 4), f32(4))),
}

# Kept: XLA's HLO text of the program's module, nothing else.
HLO = re.compile(
    r"module_\d+\.jit_(?P<name>\w+)\.("
    r"before_optimizations|\d{4,}\.[^.]+\..+|cpu_after_optimizations"
    r")\.txt$"
)


def ordered(paths):
    """XLA's order: before optimizations, the pass dumps by step, after optimizations."""

    def key(path):
        name = os.path.basename(path)
        if name.endswith(".before_optimizations.txt"):
            return (0, 0)
        if name.endswith("after_optimizations.txt"):
            return (2, 0)
        return (1, int(re.search(r"\.(\d{4,})\.", name).group(1)))

    return sorted(paths, key=key)


def without_metadata(line):
    """The line with `, metadata={...}` cut out (braces inside strings skipped)."""
    at = line.find(", metadata={")
    if at < 0:
        return line.rstrip()
    depth, k, in_string = 0, at + len(", metadata="), False
    while k < len(line):
        c = line[k]
        if in_string:
            if c == "\\":
                k += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        k += 1
    return (line[:at] + line[k + 1 :]).rstrip()


OPCODE = re.compile(r"[\]\}\)] ([a-z][a-z0-9\-]*)\(")
INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = (.*)$")
COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) .*\{\s*$")


def instructions(path):
    """{(computation, name): (opcode, line without metadata)} of one snapshot."""
    found, computation = {}, None
    for line in open(path):
        header = COMPUTATION.match(line)
        if header and not line.startswith("HloModule"):
            computation = header.group(1)
            continue
        if line.startswith("}"):
            computation = None
            continue
        m = INSTRUCTION.match(line)
        if computation is None or not m:
            continue
        opcode = OPCODE.search(m.group(2))
        found[(computation, m.group(1))] = (
            opcode.group(1) if opcode else "",
            without_metadata(line).strip(),
        )
    return found


def expected(files):
    snapshots = [instructions(f) for f in files]
    names = [os.path.basename(f) for f in files]
    history = []
    for (computation, name), (opcode, _) in sorted(snapshots[-1].items()):
        first = len(snapshots) - 1
        while first > 0 and snapshots[first - 1].get((computation, name), ("",))[0] == opcode:
            first -= 1
        changed = [
            names[k]
            for k in range(first + 1, len(snapshots))
            if snapshots[k][(computation, name)][1] != snapshots[k - 1][(computation, name)][1]
        ]
        history.append(
            {
                "computation": computation,
                "name": name,
                "opcode": opcode,
                "introduced_in": names[first],
                "changed_in": changed,
            }
        )
    return history


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for program, (fn, args) in PROGRAMS.items():
        fn.__name__ = program
        jax.jit(fn).lower(*args).compile()
    for program in PROGRAMS:
        out = os.path.join(here, program)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        kept = []
        for path in glob.glob(os.path.join(DUMP, f"module_*.jit_{program}.*.txt")):
            m = HLO.match(os.path.basename(path))
            if not m or m.group("name") != program:
                continue
            text = open(path).read().replace(os.path.abspath(__file__), "make_history.py")
            target = os.path.join(out, os.path.basename(path))
            with open(target, "w") as f:
                f.write(text)
            kept.append(target)
        if len(kept) < 10:
            sys.exit(f"{program}: expected a pass-by-pass dump, kept {len(kept)} files")
        with open(os.path.join(out, "expected.json"), "w") as f:
            entries = [json.dumps(e) for e in expected(ordered(kept))]
            f.write("[\n" + ",\n".join(entries) + "\n]\n")
        print(program, len(kept), "snapshots")
    shutil.rmtree(DUMP)
    print("jax", jax.__version__)


if __name__ == "__main__":
    main()
