//! `uncoalesced-read`: on the parameter of a fused computation whose operand
//! the fusion does not read coalesced (information: XLA's own output has such
//! reads on purpose, e.g. the loop half of a transpose; the server's
//! `coalescing.severity` setting raises it to a warning). The related location
//! is the fusion with what the first warp (or a tile) reads. On a tiled fusion
//! the finding carries a fix: the nearest valid tiling whose reads are all
//! coalesced.
//!
//! A [`crate::checks::SOURCES`] entry: it reports on fused computations only,
//! for the first fusion that calls each.

use super::memo::{self, Shared};
use super::site::calling_fusion;
use super::subject::caller_operand;
use super::{Evidence, Family, OperandVerdict, Options, Subject};
use crate::analysis;
use crate::model::backend::Backend;
use crate::model::{self, ComputationRef, Diagnostic, Fix, HloFile, ModuleId, Severity, TextEdit};
use crate::tiling::candidates::nearest_valid_where;
use crate::tiling::config::{format_sizes_like, output_tiles};
use crate::tiling::propagate::{FusionMaps, ReadCost, TilingOptions};

/// The diagnostic code.
pub const UNCOALESCED_READ: &str = "uncoalesced-read";

/// Fused computations with more instructions, or fusions with more operands,
/// than these are not analyzed for diagnostics (the hover still analyzes them on
/// demand): the cost grows with both (one composition per operand, one
/// propagation per output), and a document's diagnostics must stay fast. On the
/// benchmark dump the 24 fusions over 32 operands took 3/4 of the time.
pub const MAX_FUSED_INSTRUCTIONS: usize = 200;
pub const MAX_OPERANDS: usize = 32;

/// The `uncoalesced-read` findings located in computation `c`, shared with
/// fusions that differ from its fusion only in names ([`memo`]).
pub fn computation_diagnostics(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
) -> Vec<Diagnostic> {
    computation_diagnostics_with(file, module, c, Sharing::Memo)
}

/// Whether findings come from the [`memo`] when a fusion of the same key had them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    Memo,
    /// Analyzed again (what the memo must agree with).
    Fresh,
}

/// [`computation_diagnostics`], with or without the memo.
pub fn computation_diagnostics_with(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
    sharing: Sharing,
) -> Vec<Diagnostic> {
    let m = file.module(module);
    let Some((caller_id, fusion)) = calling_fusion(m, c.id) else {
        return vec![];
    };
    if c.instructions.len() > MAX_FUSED_INSTRUCTIONS || fusion.operands.len() > MAX_OPERANDS {
        return vec![];
    }
    // A fusion XLA's CPU backend compiled launches no GPU kernel: valid CPU output
    // must not light up with GPU findings.
    let backend = Backend::of_instruction(fusion).or_else(|| Backend::of_module(m));
    if backend == Some(Backend::Cpu) {
        return vec![];
    }
    let caller = m.computation(caller_id);
    // Tiles of any size can split an identity read; emitters cannot.
    if elementwise_over_one_layout(c) && output_tiles(caller, fusion).is_none() {
        return vec![];
    }
    let view = analysis::view::borrowed(m);
    let options = Options::default();
    let compute = || {
        let subject = Subject::new(m, &view, caller, fusion).ok()?;
        let report = super::analyze(&subject, &options, None);
        // Cut short by the server's budget: partial, so not kept.
        (!crate::budget::exhausted()).then(|| Shared::of(&report, evidence_text))
    };
    let shared = match sharing {
        Sharing::Memo => memo::findings(m, caller, fusion, c, compute),
        Sharing::Fresh => compute().map(std::sync::Arc::new),
    };
    let Some(shared) = shared else {
        return vec![];
    };
    if matches!(shared.family, Family::Heuristic(_)) {
        return vec![];
    }
    let fix = tiled_fix(
        file,
        m,
        &view,
        caller,
        fusion,
        &shared.family,
        &options.device,
    );
    shared
        .findings
        .iter()
        .filter_map(|f| {
            let parameter = c.model().parameter(f.index)?;
            let operand = caller_operand(caller, fusion, f.index);
            let mut d = Diagnostic::new(
                c.abs(parameter.name_range),
                Severity::Information,
                UNCOALESCED_READ,
                format!(
                    "`{} {}` (operand {} of %{}): not coalesced — {}",
                    operand.name, operand.shape, f.index, fusion.name, f.reason
                ),
            );
            d.related
                .push((caller.abs(fusion.name_range), f.evidence.clone()));
            if let Some(fix) = &fix {
                d = d.with_fix(fix.clone());
            }
            Some(d)
        })
        .collect()
}

/// A fused computation of elementwise ops over parameters that all have the
/// root's extents and layout (or are scalars): every read is the identity, which
/// XLA's emitters read coalesced (not so tiles: see the caller). The common loop fusion; skipping it keeps the
/// diagnostics cheap.
fn elementwise_over_one_layout(c: ComputationRef<'_>) -> bool {
    let model = c.model();
    let Some(root) = model.root.map(|r| model.instruction(r)) else {
        return false;
    };
    let Some(out) = root.shape.as_array() else {
        return false;
    };
    let same = |s: &model::Shape| match s {
        model::Shape::Array(a) => {
            a.dims.is_empty() || (a.dims == out.dims && a.minor_to_major() == out.minor_to_major())
        }
        _ => false,
    };
    model.instructions.iter().all(|i| {
        let op = i.opcode.name();
        match op {
            "parameter" => same(&i.shape),
            "constant" => i.shape.as_array().is_some_and(|a| a.dims.is_empty()),
            _ => i.opcode.is_elementwise() && same(&i.shape),
        }
    })
}

/// `first warp reads (linear offsets): (thread_x) -> (thread_x * 100), ...`.
fn evidence_text(o: &OperandVerdict) -> String {
    match &o.evidence {
        Evidence::Warp(warps) => warps
            .iter()
            .find(|w| !w.coalesced)
            .or(warps.first())
            .map(|w| {
                format!(
                    "first warp reads (linear offsets): {}",
                    w.map.to_string().replace('\n', " ")
                )
            })
            .unwrap_or_default(),
        Evidence::Tile(tiles) => tiles
            .iter()
            .find(|t| !t.coalesced)
            .or(tiles.first())
            .map(|t| {
                format!(
                    "a tile reads sizes {:?} with strides {:?}: {} contiguous elements",
                    t.sizes, t.strides, t.contiguous
                )
            })
            .unwrap_or_default(),
        Evidence::None => String::new(),
    }
}

/// For a fusion with `output_tiles`: rewrite each sizes list to the nearest
/// valid tiling whose parameter reads are all coalesced (when one exists).
fn tiled_fix(
    file: &HloFile,
    m: &model::Module,
    view: &analysis::Module<'_>,
    caller: ComputationRef<'_>,
    fusion: &model::Instruction,
    family: &Family,
    device: &super::Device,
) -> Option<Fix> {
    let Family::Tiled(configured) = family else {
        return None;
    };
    let tiles = output_tiles(caller, fusion)?.ok()?;
    let fused = m.called_computation(fusion, "calls")?;
    let bits: Vec<Option<i64>> = fused
        .model()
        .instructions
        .iter()
        .map(|i| i.shape.element_bits())
        .collect();
    let options = TilingOptions {
        pad_to_power_of_two: tiles.triton,
    };
    let mut edits = vec![];
    let mut titles = vec![];
    for (o, sizes) in configured.iter().enumerate() {
        if sizes.is_empty() {
            continue;
        }
        let maps = FusionMaps::new(view, fused.id.index(), o)?.with_read_cost(ReadCost {
            element_bits: bits.clone(),
            transaction_bytes: device.dram_to_l2_transaction_bytes,
        });
        if maps.uncoalesced_reads(sizes, options) == 0 {
            continue;
        }
        let better = nearest_valid_where(&maps, sizes, options, &|c| c.uncoalesced == 0)?;
        let range = tiles.list_ranges.get(o).filter(|r| !r.is_empty())?.clone();
        let old = file.text(range.clone())?;
        edits.push(TextEdit {
            range,
            new_text: format_sizes_like(old, &better.sizes),
        });
        titles.push(crate::tiling::split::join_sizes(&better.sizes));
    }
    (!edits.is_empty()).then(|| Fix {
        title: format!("Use tile sizes {} (coalesced reads)", titles.join(", ")),
        edits,
    })
}
