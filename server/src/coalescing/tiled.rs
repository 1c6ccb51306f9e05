//! The tiled family: a fusion executed one output tile at a time (Triton's
//! `output_tiles`, or sizes the user gives). The tiling module propagates the
//! output tile to the tile each parameter reads (offset, size and stride per
//! dimension); laid out in the parameter's physical layout, the tile's
//! contiguous part is the product of its extents from the most minor dimension
//! up to the first one that is strided or only partly covered (masked-off
//! elements of a padded tile do not count). XLA's rules:
//!
//! * coalesced when the contiguous part fills a DRAM-to-L2 transaction
//!   (`IsTiledReadCoalescedHeuristic`);
//! * bandwidth utilization: its bytes over the whole transactions they need
//!   (`BandwidthUtilizationRateHeuristicForTiledMemoryAccess`; `s8[256,16]`
//!   tiled `6x16` uses 96 of 128 bytes: 0.75).

use super::subject::{Operand, Subject};
use super::{warp, Device, Evidence, Family, OperandVerdict, Report};
use crate::algebra::VarKind;
use crate::analysis::{contiguity, ArrayShape};
use crate::tiling::propagate::{FusionMaps, TilingOptions};
use crate::tiling::symbolic::{tile_of_map, TileDim};

/// The tile one output tile reads of one operand.
#[derive(Clone, Debug, PartialEq)]
pub struct TileRead {
    pub output: usize,
    /// The operand's logical extents and layout.
    pub shape: ArrayShape,
    /// Per logical dimension: first index of the first tile, size, stride.
    pub origin: Vec<i64>,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    /// Elements read contiguously (XLA's product), and in bytes.
    pub contiguous: i64,
    pub contiguous_bytes: i64,
    pub coalesced: bool,
    pub utilization: f64,
}

/// The sizes for every output whose rank matches `sizes` (others get none).
pub fn sizes_for_outputs(subject: &Subject<'_>, sizes: &[i64]) -> Vec<Vec<i64>> {
    let view = subject.view();
    let count = crate::analysis::fusion::output_count(view, subject.computation).max(1);
    (0..count)
        .map(|o| match FusionMaps::new(view, subject.computation, o) {
            Some(m) if m.extents.len() == sizes.len() => sizes.to_vec(),
            _ => vec![],
        })
        .collect()
}

fn tile_read(
    output: usize,
    shape: &ArrayShape,
    tile: &[TileDim],
    bits: i64,
    device: &Device,
) -> TileRead {
    let sizes: Vec<i64> = tile.iter().map(|t| t.size).collect();
    let strides: Vec<i64> = tile.iter().map(|t| t.stride).collect();
    let origin: Vec<i64> = tile
        .iter()
        .map(|t| {
            t.offset
                .eval_with(&|v| match v.kind {
                    VarKind::Dim => Some(0),
                    _ => Some(0),
                })
                .unwrap_or(0)
        })
        .collect();
    let contiguous = contiguity::contiguous_elements(shape, &sizes, &strides);
    let contiguous_bytes = contiguous.saturating_mul(bits) / 8;
    let (coalesced, utilization) =
        contiguity::judge_bytes(contiguous_bytes, device.dram_to_l2_transaction_bytes);
    TileRead {
        output,
        shape: shape.clone(),
        origin,
        sizes,
        strides,
        contiguous,
        contiguous_bytes,
        coalesced,
        utilization,
    }
}

/// The report of the tiled family: `sizes[o]` tiles output `o` (empty: untiled).
pub fn analyze(subject: &Subject<'_>, device: &Device, sizes: &[Vec<i64>]) -> Report {
    let view = subject.view();
    let nodes = subject.nodes();
    let mut reads: Vec<Vec<TileRead>> = vec![vec![]; subject.operands.len()];
    let mut unknown: Vec<Option<String>> = vec![None; subject.operands.len()];
    for (o, s) in sizes.iter().enumerate() {
        if s.is_empty() {
            continue;
        }
        let Some(maps) = FusionMaps::new(view, subject.computation, o) else {
            continue;
        };
        let blocks = maps.blocks(s, TilingOptions::default());
        for (i, map) in &maps.maps {
            let Some(k) = nodes[*i].parameter_number else {
                continue;
            };
            let Some(op) = subject.operands.get(k) else {
                continue;
            };
            let Some(shape) = op.analysis_shape() else {
                continue;
            };
            if map.is_known_empty() || shape.rank() == 0 {
                continue;
            }
            let mut constraints = vec![];
            match tile_of_map(map, &blocks, &mut constraints) {
                Ok(tile) if tile.len() == shape.rank() => {
                    let r = tile_read(o, &shape, &tile, op.element_bits().unwrap_or(32), device);
                    if !reads[k].contains(&r) {
                        reads[k].push(r);
                    }
                }
                Ok(_) => {
                    unknown[k]
                        .get_or_insert_with(|| "the tile's rank differs from the operand's".into());
                }
                Err(e) => {
                    unknown[k].get_or_insert(e.0);
                }
            }
            if let Some(c) = constraints.iter().find(|c| !c.satisfied) {
                unknown[k].get_or_insert_with(|| {
                    format!("the tile is not a rectangle ({})", c.condition)
                });
            }
        }
        for (i, reason) in &maps.unknown {
            if let Some(k) = nodes[*i].parameter_number {
                if let Some(u) = unknown.get_mut(k) {
                    u.get_or_insert_with(|| reason.to_string());
                }
            }
        }
    }
    let operands = subject
        .operands
        .iter()
        .map(|op| {
            verdict(
                op,
                std::mem::take(&mut reads[op.index]),
                unknown[op.index].take(),
            )
        })
        .collect();
    Report {
        name: subject.name.clone(),
        family: Family::Tiled(sizes.to_vec()),
        operands,
    }
}

fn verdict(op: &Operand, reads: Vec<TileRead>, unknown: Option<String>) -> OperandVerdict {
    let mut v = OperandVerdict {
        index: op.index,
        name: op.name.clone(),
        parameter: op.parameter.as_ref().map(|(_, n)| n.clone()),
        shape: op.shape_text(),
        tensor: op.analysis_shape(),
        element_bits: op.element_bits(),
        coalesced: true,
        bandwidth_utilization: None,
        reason: String::new(),
        evidence: Evidence::None,
    };
    if op.array().is_none_or(|a| a.dims.is_empty()) {
        v.reason = "a scalar: one value per tile".into();
        return v;
    }
    if let Some(reason) = unknown {
        v.coalesced = false;
        v.reason = format!("its tile is unknown: {reason}");
        v.evidence = Evidence::Tile(reads);
        return v;
    }
    let Some(worst) = reads
        .iter()
        .min_by(|a, b| {
            a.utilization
                .total_cmp(&b.utilization)
                .then(a.coalesced.cmp(&b.coalesced))
        })
        .cloned()
    else {
        v.reason = "not read by the fusion".into();
        return v;
    };
    v.coalesced = reads.iter().all(|r| r.coalesced);
    v.bandwidth_utilization = Some(worst.utilization);
    let whole: i64 = worst
        .sizes
        .iter()
        .zip(&worst.shape.dims)
        .map(|(&s, &d)| s.min(d).max(0))
        .product();
    let bytes = format!("{} B", worst.contiguous_bytes);
    let pattern = match (worst.contiguous, worst.contiguous >= whole) {
        (1, true) => format!("a tile reads 1 element ({bytes})"),
        (1, false) => format!("a tile reads no two consecutive elements ({bytes} each)"),
        (n, true) => format!("a tile reads {n} contiguous elements ({bytes})"),
        (n, false) => format!("a tile reads runs of {n} contiguous elements ({bytes})"),
    };
    let usage = warp::usage_text(worst.utilization, true);
    v.reason = format!("{pattern}; {usage}");
    v.evidence = Evidence::Tile(reads);
    v
}
