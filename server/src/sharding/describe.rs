//! A sharding over a shape said in words, for a hover or a terminal: which
//! dimensions are split how many ways, how many devices hold each tile and
//! why, and the per-device buffer beside the global array.

use super::{Kind, Leaf, ShapeTiles};

/// Whether a module's written shapes are the global arrays (before XLA's SPMD
/// partitioner) or each device's buffer (after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    Global,
    PerDevice,
}

impl Written {
    /// As the command line and JSON write it.
    pub fn name(self) -> &'static str {
        match self {
            Written::Global => "global",
            Written::PerDevice => "partitioned",
        }
    }
}

/// `ELEMENT[d0,d1]`.
fn shape_text(element: &str, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{element}[{}]", dims.join(","))
}

/// One line: "dim 1 split 4 ways, each tile on 2 devices (replicated); per
/// device f32[64,32] of global f32[64,128]".
pub fn describe(leaf: &Leaf, element: &str, tiles: &ShapeTiles) -> String {
    let whole = match leaf.kind {
        Kind::Replicated => Some("replicated: every device holds the whole array".to_string()),
        Kind::Maximal(d) => Some(format!("on device {d} only")),
        Kind::Manual => Some("manual: each device runs its own part (shard_map)".to_string()),
        Kind::Unknown => Some("unknown: left to sharding propagation".to_string()),
        Kind::Unreduced => {
            Some("unreduced: every device holds a partial sum of the whole array".to_string())
        }
        Kind::Tiled { .. } => None,
    };
    if let Some(words) = whole {
        return format!("{words}; {}", shape_text(element, &tiles.global));
    }
    let splits: Vec<String> = tiles
        .splits
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 1)
        .map(|(d, n)| format!("dim {d} split {n} ways"))
        .collect();
    let mut out = if splits.is_empty() {
        "no dimension split".to_string()
    } else {
        splits.join(", ")
    };
    let kinds: Vec<(i64, &str)> = [
        (tiles.manual, "manual"),
        (tiles.unreduced, "partial sums"),
        (tiles.replicated, "replicated"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 1)
    .collect();
    let per_tile = tiles.replicated * tiles.unreduced * tiles.manual;
    if per_tile > 1 {
        let how = match kinds[..] {
            [(_, only)] => only.to_string(),
            _ => kinds
                .iter()
                .map(|(n, k)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(" x "),
        };
        out.push_str(&format!(", each tile on {per_tile} devices ({how})"));
    }
    out.push_str(&format!(
        "; per device {} of global {}",
        shape_text(element, &tiles.shard),
        shape_text(element, &tiles.global)
    ));
    let uneven: Vec<String> = tiles
        .global
        .iter()
        .zip(&tiles.splits)
        .enumerate()
        .filter(|(_, (&d, &n))| n > 0 && d % n != 0)
        .map(|(k, _)| k.to_string())
        .collect();
    if !uneven.is_empty() {
        out.push_str(&format!(
            " (dim {} does not divide: the last tiles are padded)",
            uneven.join(", ")
        ));
    }
    out
}
