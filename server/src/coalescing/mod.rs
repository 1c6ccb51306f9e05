//! Coalescing: whether each tensor a fusion reads is read coalesced, decided
//! from the indexing maps as XLA's GPU cost model does
//! (`xla/service/gpu/model/coalescing_analysis.cc`), with the fraction of the
//! transferred bytes each read uses and a picture of what one warp (or tile)
//! reads.
//!
//! Two families, as in XLA:
//! * [`tiled`]: a fusion executed tile by tile (Triton `output_tiles`, or sizes
//!   given by the user): the tile each operand reads, laid out in its physical
//!   layout, is coalesced when its contiguous part fills a DRAM-to-L2
//!   transaction (`IsTiledReadCoalescedHeuristic`,
//!   `BandwidthUtilizationRateHeuristicForTiledMemoryAccess`).
//! * [`emitted`]: loop, reduction and transpose fusions, which XLA's own
//!   emitters launch ([`launch`], [`emitter`]): what the first warp reads
//!   ([`warp`]) through the fusion's output-to-input maps and the operand's
//!   layout.
//!
//! Fusions outside both (custom, Triton without tiles, scatter) get XLA's
//! cheaper [`heuristic`]. The [`device`] model holds the numbers; [`subject`]
//! turns an instruction into what is analyzed; [`picture`] draws a read.

/// The device model lives in [`crate::device`]; re-exported where it started.
pub mod device {
    pub use crate::device::*;
}
pub mod diagnostics;
pub mod emitted;
pub mod emitter;
pub mod heuristic;
pub mod launch;
pub mod memo;
pub mod picture;
pub mod site;
pub mod subject;
pub mod svg;
pub mod tiled;
pub mod warp;

pub use crate::device::Device;
pub use subject::Subject;

use crate::analysis::fusion::Reached;

/// How the verdicts were reached.
#[derive(Clone, Debug, PartialEq)]
pub enum Family {
    /// XLA's emitter launch model (`loop emitter, 128 threads per block, unroll 4`).
    Emitter(String),
    /// Tiles of these sizes per output.
    Tiled(Vec<Vec<i64>>),
    /// XLA's producer/consumer heuristic (why the launch model does not apply).
    Heuristic(String),
}

impl Family {
    /// One line for a hover or the CLI.
    pub fn describe(&self) -> String {
        match self {
            Family::Emitter(d) => d.clone(),
            Family::Tiled(sizes) => format!(
                "tiles {}",
                sizes
                    .iter()
                    .map(|s| crate::tiling::split::join_sizes(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Family::Heuristic(why) => format!("XLA's heuristic ({why})"),
        }
    }
}

/// What shows a verdict: the first warp's reads or the tiles read.
#[derive(Clone, Debug, PartialEq)]
pub enum Evidence {
    Warp(Vec<warp::WarpRead>),
    Tile(Vec<tiled::TileRead>),
    None,
}

/// The verdict on one operand of the fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct OperandVerdict {
    pub index: usize,
    /// The operand's name in the caller.
    pub name: String,
    /// The fused parameter's name, when there is one.
    pub parameter: Option<String>,
    /// `f32[100,200]{0,1}`.
    pub shape: String,
    /// Its extents and layout (for pictures), when it is an array.
    pub tensor: Option<crate::analysis::ArrayShape>,
    /// Bits per element, when known.
    pub element_bits: Option<i64>,
    pub coalesced: bool,
    /// Bytes used over bytes transferred; `None` when not measured (not read,
    /// scalar, unknown maps, the heuristic).
    pub bandwidth_utilization: Option<f64>,
    /// `a warp reads stride 100 (400 B); 1/16 of each transaction used`.
    pub reason: String,
    pub evidence: Evidence,
}

impl OperandVerdict {
    /// `p1 f32[100,200]{0,1}: not coalesced — a warp reads stride 100 (400 B); ...`.
    pub fn line(&self) -> String {
        format!(
            "{} {}: {} — {}",
            self.name,
            self.shape,
            if self.coalesced {
                "coalesced"
            } else {
                "not coalesced"
            },
            self.reason
        )
    }

    /// Nothing can be said about this operand's reads, for `reason` (which starts
    /// with "its", like the verdicts on unknown maps: not reported as a finding).
    fn not_judged(&mut self, reason: String) {
        self.coalesced = false;
        self.bandwidth_utilization = None;
        self.reason = reason;
        self.evidence = Evidence::None;
    }
}

/// The verdicts on every operand of one fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub name: String,
    pub family: Family,
    pub operands: Vec<OperandVerdict>,
}

/// What to analyze beyond the subject itself.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Tile sizes for every output of this rank (the tiled family), instead of
    /// the backend_config's.
    pub sizes: Option<Vec<i64>>,
    pub device: Device,
    /// Only this operand (the report leaves the others out): a hover on one
    /// fused parameter needs no more.
    pub operand: Option<usize>,
}

/// The report on `subject`: tiled when sizes are given or configured, else the
/// emitter XLA picks, else XLA's heuristic. `outputs` may hold the fused
/// computation's maps from every output (`grouped_from_every_output`), which
/// the server caches, to save composing them again.
pub fn analyze(
    subject: &Subject<'_>,
    options: &Options,
    outputs: Option<&[Vec<Reached>]>,
) -> Report {
    let sizes = match (&options.sizes, &subject.output_tiles) {
        (Some(s), _) => Some(tiled::sizes_for_outputs(subject, s)),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    };
    let mut report = match sizes {
        Some(sizes) => tiled::analyze(subject, &options.device, &sizes),
        None => emitted::analyze(subject, options, outputs),
    };
    if let Some(k) = options.operand {
        report.operands.retain(|o| o.index == k);
    }
    for v in &mut report.operands {
        let declared = subject.operands.iter().find(|o| o.index == v.index);
        if let Some(declared) = declared.and_then(|o| o.declared_otherwise.as_ref()) {
            v.not_judged(format!(
                "its parameter is declared {declared}: the fusion's maps index that shape, not this operand's"
            ));
        }
    }
    report
}
