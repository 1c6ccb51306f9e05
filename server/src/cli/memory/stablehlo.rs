//! `hlo-lsp memory` on StableHLO (a `.mlir` file, as `jax.jit(f).lower(x).as_text()`
//! prints it): the arguments and outputs are exactly `@main`'s signature; the
//! temporaries and the peak are decided by XLA's pipeline (fusion, scheduling, buffer
//! assignment), so they are said to be unknown rather than printed as zeros.

use serde_json::{json, Value};

use crate::memory::human_bytes;
use crate::mlir::stablehlo::signature::{self, Part, Signature};

/// What the report says in place of the temporaries and the peak.
pub const TEMPORARIES: &str = "known after XLA's pipeline";

/// How to get them.
const HOW: &str = "compile with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" and run \
                   `hlo-lsp memory` on DIR/module_*.after_optimizations.txt";

/// The report of `text`, a StableHLO file at `path`.
pub fn report(path: &std::path::Path, text: &str, json: bool) -> Result<String, String> {
    let file = crate::mlir::read(text);
    if !crate::mlir::stablehlo::is_stablehlo(&file) {
        return Err(format!(
            "{}: no StableHLO op found (memory reads HLO dumps and StableHLO)",
            path.display()
        ));
    }
    let s = signature::entry(text, &file)
        .ok_or_else(|| format!("{}: no function with a body (@main)", path.display()))?;
    Ok(if json {
        format!("{:#}\n", to_json(&s))
    } else {
        to_text(path, &s)
    })
}

fn part_json(p: &Part) -> Value {
    json!({"name": p.name, "shape": p.shape, "bytes": p.bytes, "aliased_output": p.aliased_output})
}

fn to_json(s: &Signature) -> Value {
    json!({
        "source": "stablehlo-signature",
        "function": s.function,
        "argument_bytes": s.argument_bytes(),
        "output_bytes": s.output_bytes(),
        "alias_bytes": s.alias_bytes(),
        "temp_bytes": null,
        "temp": TEMPORARIES,
        "peak_bytes": null,
        "peak_at": null,
        "arguments": s.arguments.iter().map(part_json).collect::<Vec<_>>(),
        "outputs": s.results.iter().map(part_json).collect::<Vec<_>>(),
        "how_to_know_more": HOW,
    })
}

/// `1.5 MiB`, or `unknown (dynamic)` when a dimension is not fixed.
fn bytes_text(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unknown (a dynamic dimension)".to_string(), human_bytes)
}

fn to_text(path: &std::path::Path, s: &Signature) -> String {
    let mut out = format!(
        "{}: memory of StableHLO @{} (its signature; before XLA's pipeline)\n  arguments {} · \
         outputs {} · aliased {} · temps {TEMPORARIES}\n",
        path.display(),
        s.function,
        bytes_text(s.argument_bytes()),
        bytes_text(s.output_bytes()),
        bytes_text(s.alias_bytes()),
    );
    for (what, parts) in [("argument", &s.arguments), ("output", &s.results)] {
        for p in parts {
            let donated = p
                .aliased_output
                .map(|k| format!("  donated to output {k}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {what:<8} {:>10}  {}  {}{donated}\n",
                bytes_text(p.bytes),
                p.name,
                p.shape.as_deref().unwrap_or("?"),
            ));
        }
    }
    out.push_str(&format!(
        "  the peak and the temporaries are {TEMPORARIES}: {HOW}\n"
    ));
    out
}
