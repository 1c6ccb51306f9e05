//! MLIR text: the index maps of `.mlir` files (linalg ops, `affine_map` aliases,
//! XLA's `#xla.indexing_map` attributes, tensor reshapes and slices, transform
//! dialect tiling), read by a focused, tolerant scanner of our own (no MLIR
//! toolchain, no tree-sitter grammar: see ARCHITECTURE.md) and analyzed with the
//! [`crate::algebra`].
//!
//! Plain library code (no LSP types): [`reader::read`] finds the pieces with byte
//! ranges; [`analyze`] turns them into indexing maps and diagnostics. Never fails.

pub mod domain;
pub mod lexer;
pub mod maps;
pub mod ops;
pub mod reader;
pub mod reshape;
pub mod tiling;
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
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end, d.severity));
    MlirAnalysis {
        file,
        linalg,
        moves,
        tiles,
        diagnostics,
    }
}

/// Findings of one tiling op: sizes that do not divide a target's static loop
/// bounds (holes and the predicates that guard them), and more sizes than loops.
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
        let Some(splits) = transform::tile(t, target) else {
            continue;
        };
        let Some(extents) = target.extents() else {
            continue;
        };
        let bad: Vec<(usize, &tiling::LoopSplit)> = splits
            .iter()
            .enumerate()
            .filter_map(|(d, s)| s.as_ref().filter(|s| !s.divisible()).map(|s| (d, s)))
            .collect();
        if bad.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        for (d, s) in &bad {
            let mut p = format!(
                "d{d}: {} is not a multiple of {} → {} tiles, {} hole iterations; predicate {}",
                s.extent,
                s.tile,
                s.tiles,
                s.holes,
                s.predicate().unwrap_or_default()
            );
            if s.reduction {
                p.push_str("; reduction loop: holes must contribute the combiner's identity");
            }
            parts.push(p);
        }
        let total: u128 = extents.iter().map(|&e| e.max(0) as u128).product();
        let padded: u128 = extents
            .iter()
            .zip(&splits)
            .map(|(&e, s)| {
                s.as_ref()
                    .map_or(e.max(0) as u128, |s| (s.tiles * s.tile) as u128)
            })
            .product();
        let holes = padded - total;
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
                extents,
                parts.join("; ")
            ),
        );
        d.related.push((target_range, "tiled op".into()));
        out.push(d);
    }
    out
}
