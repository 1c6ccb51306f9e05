//! MLIR text: the index maps of `.mlir` files (linalg ops, `affine_map` aliases,
//! XLA's `#xla.indexing_map` attributes, tensor reshapes and slices, transform
//! dialect tiling), read by a focused, tolerant scanner of our own (no MLIR
//! toolchain, no tree-sitter grammar: see docs/contracts.md) and analyzed with the
//! [`crate::algebra`].
//!
//! Plain library code (no LSP types): [`reader::read`] finds the pieces with byte
//! ranges; [`analyze`] turns them into indexing maps and diagnostics. Never fails.

pub mod combiner;
pub mod domain;
pub mod lexer;
pub mod linalg_ext;
pub mod location;
pub mod maps;
pub mod ops;
pub mod reader;
pub mod refactor;
pub mod reshape;
pub mod stablehlo;
pub mod transform;
pub mod types;

use crate::model::{Diagnostic, Severity};
pub use domain::{codes, LinalgAnalysis};
pub use maps::MapKind;
pub use reader::{read, MlirFile};
pub use reshape::DataMove;
pub use transform::TileOp;

/// Everything known about one MLIR document.
#[derive(Clone, Debug)]
pub struct MlirAnalysis {
    pub file: MlirFile,
    pub linalg: Vec<LinalgAnalysis>,
    pub moves: Vec<DataMove>,
    pub tiles: Vec<TileOp>,
    /// Sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and analyzes `src` with the default utilization budget.
pub fn analyze(src: &str) -> MlirAnalysis {
    analyze_with_budget(src, domain::UTILIZATION_BUDGET)
}

pub fn analyze_with_budget(src: &str, budget: u128) -> MlirAnalysis {
    let file = read(src);
    let linalg = domain::analyze_file(src, &file, budget);
    let moves = reshape::data_moves(src, &file);
    let tiles = transform::tile_ops(src, &file, &linalg);
    let mut diagnostics = file.diagnostics.clone();
    for u in &file.alias_uses {
        // Dialect attributes without `<...>` have dots (`#gpu.block`); aliases do not.
        if u.target.is_none() && !u.name.contains('.') {
            diagnostics.push(Diagnostic::error(
                u.range.clone(),
                codes::UNDEFINED_ALIAS,
                format!("undefined attribute alias {}", u.name),
            ));
        }
    }
    for a in &linalg {
        diagnostics.extend(
            a.diagnostics
                .iter()
                .filter(|d| d.code != codes::UNDEFINED_ALIAS)
                .cloned(),
        );
    }
    for t in &tiles {
        diagnostics.extend(tile_diagnostics(src, &file, t, &linalg));
    }
    diagnostics.extend(refactor::simplification_hints(&file, &linalg));
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end, d.severity));
    MlirAnalysis {
        file,
        linalg,
        moves,
        tiles,
        diagnostics,
    }
}

/// What the holes of a tiled reduction loop of `target` must contribute: the identity
/// of the combiner read from the op's body, when it is a known one.
fn reduction_note(file: &MlirFile, target: &LinalgAnalysis) -> String {
    if let Some(holes) = target.op.ext.as_ref().and_then(|e| e.holes.clone()) {
        return holes;
    }
    let element = target
        .op
        .operands
        .iter()
        .rev()
        .find(|o| o.is_output)
        .and_then(|o| o.ty.as_ref())
        .map(|t| t.element.clone());
    match (combiner::combiner(file, target), element) {
        (Some((name, reducer)), Some(element)) => format!(
            " (a reduction loop: masked loads must fill holes with {}, the identity of {name})",
            combiner::identity(reducer, &element)
        ),
        _ => " (a reduction loop: holes must contribute the combiner's identity)".to_string(),
    }
}

/// Findings of one tiling op: sizes that do not divide a target's static loop
/// bounds (holes and the predicates that guard them, from [`crate::tiling`]), and
/// more sizes than loops.
fn tile_diagnostics(
    src: &str,
    file: &MlirFile,
    t: &TileOp,
    linalg: &[LinalgAnalysis],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for &k in &t.targets {
        let target = &linalg[k];
        let target_range = file.ops[target.op.op].name_range.clone();
        let (line, _) = crate::syntax::line_col(src, target_range.start);
        if t.tile_sizes.len() > target.loops.len() {
            let mut d = Diagnostic::warning(
                t.sizes_range.clone(),
                codes::TILE_SIZES_COUNT,
                format!(
                    "{} tile sizes for the {} loops of {} (line {line})",
                    t.tile_sizes.len(),
                    target.loops.len(),
                    target.op.name
                ),
            );
            d.related.push((target_range.clone(), "tiled op".into()));
            out.push(d);
        }
        let tiling = match transform::tile(t, target) {
            None => continue,
            Some(Err(e)) => {
                out.push(Diagnostic::error(
                    t.sizes_range.clone(),
                    codes::INVALID_TILE,
                    format!("cannot tile {} (line {line}): {e}", target.op.name),
                ));
                continue;
            }
            Some(Ok(tiling)) => tiling,
        };
        let space = &tiling.space;
        let bad = space.indivisible_dims();
        if bad.is_empty() {
            continue;
        }
        let parts: Vec<String> = bad
            .iter()
            .map(|&d| {
                let s = &space.splits[d];
                let mut p = format!(
                    "d{d}: {} is not a multiple of {} → {} tiles, {} hole iterations, the last tile has {} valid; predicate {}",
                    s.extent,
                    s.tile,
                    s.tile_count(),
                    s.holes(),
                    s.last_tile_valid(),
                    s.predicate(d).map(|p| p.to_string()).unwrap_or_default()
                );
                if tiling.reduction[d] {
                    p.push_str(&reduction_note(file, target));
                }
                p
            })
            .collect();
        let holes = space.hole_elements();
        let padded = space.padded_elements();
        let pct = if padded > 0 {
            100.0 * holes as f64 / padded as f64
        } else {
            0.0
        };
        let mut d = Diagnostic::new(
            t.sizes_range.clone(),
            Severity::Warning,
            codes::INDIVISIBLE_TILE,
            format!(
                "tile sizes {:?} do not divide the loops of {} (line {line}, domain {:?}): {}; {holes} of {padded} tiled iterations ({pct:.1}%) are holes",
                t.tile_sizes,
                target.op.name,
                space.extents(),
                parts.join("; ")
            ),
        );
        d.related.push((target_range, "tiled op".into()));
        out.push(d);
    }
    out
}
