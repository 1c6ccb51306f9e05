"""Regenerates analysis.jsonl: XLA's indexing-analysis vectors
(`tests/data/conformance/xla/analysis.jsonl`, the output-to-input and
input-to-output records) with each record's HLO converted to MLIR by XLA's own
HLO importer, for the differential test in `server/tests/mlir_stablehlo.rs`
(our maps on the MLIR must equal XLA's expected maps).

The installed jax (0.10.x) has no HLO text parser in Python, so this runs in a
venv with jaxlib 0.4.30, which has `xla_client._xla.hlo_module_from_text` and
`_xla.mlir.xla_computation_to_mlir_module`:

    python3 -m venv /tmp/oldjax && /tmp/oldjax/bin/pip install 'jax[cpu]==0.4.30'
    /tmp/oldjax/bin/python generate_analysis.py

Each record is written as StableHLO when XLA's MHLO->StableHLO legalization
accepts it (`dialect: stablehlo`), else as MHLO (`dialect: mhlo`: a `fusion`
has no StableHLO op, XLA keeps it as `mhlo.fusion`). A record XLA's parser or
importer rejects is written with `error` and no `mlir` (the test counts them).
Generated with jaxlib 0.4.30."""
import json
import os

import jaxlib
from jax._src.lib import xla_client as xc

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "conformance", "xla", "analysis.jsonl")
KINDS = ("output_to_input", "input_to_output")


def convert(hlo):
    module = xc._xla.hlo_module_from_text(hlo)
    computation = xc.XlaComputation(module.as_serialized_hlo_module_proto())
    to_mlir = xc._xla.mlir.xla_computation_to_mlir_module
    try:
        return "stablehlo", to_mlir(computation, emit_stable_hlo=True)
    except Exception:  # noqa: BLE001 - XLA's legalization refused: keep MHLO
        return "mhlo", to_mlir(computation, emit_stable_hlo=False)


def main():
    out = []
    for line in open(SOURCE):
        if not line.strip():
            continue
        r = json.loads(line)
        if r["kind"] not in KINDS:
            continue
        rec = {k: v for k, v in r.items() if k not in ("hlo", "notes", "call", "setup")}
        try:
            rec["dialect"], rec["mlir"] = convert(r["hlo"])
        except Exception as e:  # noqa: BLE001 - recorded, counted by the test
            rec["error"] = str(e).splitlines()[0][:200]
        out.append(rec)
    with open(os.path.join(HERE, "analysis.jsonl"), "w") as f:
        for rec in out:
            f.write(json.dumps(rec) + "\n")
    ok = sum("mlir" in r for r in out)
    print(f"jaxlib {jaxlib.__version__}: {ok}/{len(out)} records converted")


if __name__ == "__main__":
    main()
