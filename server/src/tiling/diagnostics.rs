//! Tiling diagnostics for `hlo-lsp check` and the language server (registered
//! in `checks::SOURCES`, per computation): on the fusion instruction (range: its
//! `output_tiles` sizes list) and on the instruction inside the fused
//! computation that reads the tile:
//!
//! * `indivisible-tile` (information, item 1): a tile size that does not divide
//!   its extent. The emitter masks the partial last tile, which is normal
//!   codegen (XLA's own Triton tests do it), not a defect; the message names the
//!   holes and the predicate, related: the minimal predicates and the read
//!   guards they imply (item 2) and the maps' read predicates (item 4).
//! * `non-contiguous-tile` (warning, item 3): a merge followed by a split
//!   that divides neither way.
//! * `reduction-holes` (item 5): a reduced dimension padded with holes, which
//!   XLA masks with the reduce's init value: a warning when that changes the
//!   result (an init that is not the identity of a sum or product, or unknown),
//!   information otherwise (the identity, or an idempotent max/min/and/or).
//! * `invalid-tiling` (error, item 6): a tile that is not a hyper-rectangle,
//!   with a quick fix to the nearest valid sizes.
//! * `invalid-tile-config` (error): `output_tiles` that cannot be read.
//!
//! Fixes edit only the inside of the `sizes` list, in its own quoting.

use std::ops::Range;

use super::candidates::Candidate;
use super::config::format_sizes_like;
use super::report::{report_at, FusionReport, OutputReport, ReportOptions};
use super::split::join_sizes;
use crate::analysis;
use crate::model::{
    ComputationId, ComputationRef, Diagnostic, Fix, HloFile, InstrRef, ModuleId, Severity, TextEdit,
};

/// Stable codes of the tiling diagnostics.
pub mod codes {
    pub const INDIVISIBLE_TILE: &str = "indivisible-tile";
    pub const NON_CONTIGUOUS_TILE: &str = "non-contiguous-tile";
    pub const REDUCTION_HOLES: &str = "reduction-holes";
    pub const INVALID_TILING: &str = "invalid-tiling";
    pub const INVALID_TILE_CONFIG: &str = "invalid-tile-config";
}

/// Every tiling diagnostic of the file.
pub fn diagnostics(file: &HloFile, options: &ReportOptions) -> Vec<Diagnostic> {
    file.all_computations()
        .flat_map(|(module, c)| computation_diagnostics(file, module, c, options))
        .collect()
}

/// The tiling diagnostics located in computation `c` (a `checks::SOURCES` entry): those
/// of its own tiled fusions (on their sizes lists) and, when `c` is the fused
/// computation of tiled fusions, those on its instructions. A report reads the fusion
/// and its fused computation, so both ask for it.
pub fn computation_diagnostics(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
    options: &ReportOptions,
) -> Vec<Diagnostic> {
    let m = file.module(module);
    let own = c.model().instructions.iter().map(|i| InstrRef {
        module,
        computation: c.id,
        instruction: i.id,
    });
    let calling = m.callers_of(c.id).iter().filter_map(|site| {
        let (caller, instruction) = m.caller(site)?;
        Some(InstrRef {
            module,
            computation: caller.id,
            instruction: instruction.id,
        })
    });
    let fusions: Vec<InstrRef> = own.chain(calling).collect();
    if !fusions.iter().any(|&at| {
        crate::tiling::config::output_tiles(file.computation(at), file.instruction(at)).is_some()
    }) {
        return Vec::new();
    }
    let view = analysis::view::borrowed(m);
    let mut out = Vec::new();
    for at in fusions {
        match report_at(m, &view, at, options) {
            Some(Ok(r)) => {
                for o in &r.outputs {
                    output_diagnostics(file, &r, o, &mut out);
                }
            }
            Some(Err(p)) => out.push(Diagnostic::error(
                p.error.range,
                codes::INVALID_TILE_CONFIG,
                p.error.message,
            )),
            None => {}
        }
    }
    let inside = c.offset..c.offset + c.text.len();
    out.retain(|d| inside.contains(&d.range.start));
    out.dedup();
    out
}

/// Where a fusion-level diagnostic goes: the sizes list of this output.
fn sizes_range(file: &HloFile, r: &FusionReport, output: usize) -> Range<usize> {
    r.config
        .as_ref()
        .and_then(|c| c.list_ranges.get(output).cloned().or(Some(c.range.clone())))
        .unwrap_or_else(|| {
            file.computation(r.at)
                .abs(file.instruction(r.at).name_range)
        })
}

/// The fused computation of a report.
fn fused<'a>(file: &'a HloFile, r: &FusionReport) -> ComputationRef<'a> {
    file.module(r.at.module)
        .computation(ComputationId(r.fused as u32))
}

/// The name range of instruction `i` of the fused computation.
fn fused_range(file: &HloFile, r: &FusionReport, i: usize) -> Option<Range<usize>> {
    let c = fused(file, r);
    c.model().instructions.get(i).map(|x| c.abs(x.name_range))
}

/// The instruction that reads instruction `i`'s result inside the fused
/// computation (its first user), or `i` itself for the root.
fn reader(file: &HloFile, r: &FusionReport, i: usize) -> usize {
    let fused = fused(file, r);
    fused
        .model()
        .users(crate::model::InstrId(i as u32))
        .first()
        .map_or(i, |u| u.index())
}

/// A fix replacing the sizes list with `c.sizes`.
fn sizes_fix(
    file: &HloFile,
    r: &FusionReport,
    output: usize,
    c: &Candidate,
    why: &str,
) -> Option<Fix> {
    let range = r.config.as_ref()?.list_ranges.get(output)?.clone();
    let old = file.text(range.clone())?;
    Some(Fix {
        title: format!("Use tile sizes {} ({why})", join_sizes(&c.sizes)),
        edits: vec![TextEdit {
            range,
            new_text: format_sizes_like(old, &c.sizes),
        }],
    })
}

fn output_diagnostics(
    file: &HloFile,
    r: &FusionReport,
    o: &OutputReport,
    out: &mut Vec<Diagnostic>,
) {
    let at = sizes_range(file, r, o.output);
    let p = &o.propagation;
    let fused_name = |i: usize| {
        fused(file, r)
            .model()
            .instructions
            .get(i)
            .map_or_else(String::new, |x| x.name.to_string())
    };
    // Item 1 with items 2 and 4 as related information.
    for f in &o.splits {
        let holes = match f.holes {
            1 => "1 hole".to_string(),
            n => format!("{n} holes"),
        };
        let message = if f.block != f.tile {
            format!(
                "fusion {}: the tile of dimension d{} (extent {}, size {}) is padded to a power-of-two block of {}, masked by `{}` ({holes})",
                r.name, f.dim, f.extent, f.tile, f.block, f.predicate
            )
        } else {
            let tiles = match f.tiles {
                1 => "one tile, masked".to_string(),
                n => format!("{n} tiles, the last one masked"),
            };
            format!(
                "fusion {}: tile size {} does not divide dimension d{} (extent {}): {tiles} by `{}` ({holes})",
                r.name, f.tile, f.dim, f.extent, f.predicate
            )
        };
        let mut d = Diagnostic::new(
            at.clone(),
            Severity::Information,
            codes::INDIVISIBLE_TILE,
            message,
        );
        d.related.push((
            at.clone(),
            format!("minimal predicates: {}", o.predicates.join(", ")),
        ));
        for implied in &o.implied {
            d.related
                .push((at.clone(), format!("not needed: {implied}")));
        }
        for rp in &p.read_predicates {
            let range = fused_range(file, r, rp.instruction).unwrap_or(at.clone());
            d.related
                .push((range, format!("read predicate on {}: {}", rp.name, rp.text)));
        }
        if let Some(fix) = o.fewer_predicates.as_ref().and_then(|c| {
            sizes_fix(
                file,
                r,
                o.output,
                c,
                "the nearest valid tiling with fewer predicates",
            )
        }) {
            d = d.with_fix(fix);
        }
        out.push(d);
        for read in p.reads.iter().filter(|x| x.parameter.is_some()) {
            if !read
                .tile
                .iter()
                .any(|t| t.size > 1 && t.sources.contains(&f.dim))
            {
                continue;
            }
            if let Some(range) = fused_range(file, r, read.instruction) {
                let message = format!(
                    "reads a masked partial tile: fusion {} tiles d{} (extent {}) by {}, masked by `{}`",
                    r.name, f.dim, f.extent, f.block, f.predicate
                );
                let mut d = Diagnostic::new(
                    range,
                    Severity::Information,
                    codes::INDIVISIBLE_TILE,
                    message,
                );
                d.related.push((at.clone(), "the tile sizes".into()));
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
    // Item 3.
    for (i, m) in &o.non_contiguous {
        let rd = reader(file, r, *i);
        let message = format!(
            "fusion {}: {} merges dimensions (inner extent {}) and the tile splits them by {}, which divides neither way: rows wrap, accesses are not contiguous, vectorized or TMA loads of this tile are invalid",
            r.name,
            fused_name(rd),
            m.inner_extent,
            m.tile
        );
        let mut d = Diagnostic::warning(at.clone(), codes::NON_CONTIGUOUS_TILE, message.clone());
        let inner = fused_range(file, r, rd);
        if let Some(range) = &inner {
            d.related.push((range.clone(), "the merge".into()));
        }
        out.push(d);
        if let Some(range) = inner {
            let mut d = Diagnostic::warning(range, codes::NON_CONTIGUOUS_TILE, message);
            d.related.push((at.clone(), "the tile sizes".into()));
            out.push(d);
        }
    }
    // Item 5.
    for h in p.reductions.iter().filter(|h| h.holes > 0) {
        let message = format!("fusion {}: reduce {}: {}", r.name, h.name, h.describe());
        // A hazard only when masking with the init value changes the result.
        let severity = if h.init_fill_is_correct() == Some(true) {
            Severity::Information
        } else {
            Severity::Warning
        };
        let mut d = Diagnostic::new(
            at.clone(),
            severity,
            codes::REDUCTION_HOLES,
            message.clone(),
        );
        let inner = fused_range(file, r, h.instruction);
        if let Some(range) = &inner {
            d.related.push((range.clone(), "the reduce".into()));
        }
        out.push(d);
        if let Some(range) = inner {
            let mut d = Diagnostic::new(range, severity, codes::REDUCTION_HOLES, message);
            d.related.push((at.clone(), "the tile sizes".into()));
            out.push(d);
        }
    }
    // Item 6.
    for (i, c) in &o.violations {
        let rd = reader(file, r, *i);
        let suggestion = o
            .suggestion
            .as_ref()
            .map(|s| format!("; the nearest valid tiling is {}", join_sizes(&s.sizes)))
            .unwrap_or_else(|| "; no valid tiling among powers of two and full extents".into());
        let message = format!(
            "fusion {}: tile sizes {} are not a hyper-rectangle through {}: needs {}{}",
            r.name,
            join_sizes(&p.sizes),
            fused_name(rd),
            c.condition,
            suggestion
        );
        let mut d = Diagnostic::error(at.clone(), codes::INVALID_TILING, message.clone());
        if let Some(fix) = o
            .suggestion
            .as_ref()
            .and_then(|s| sizes_fix(file, r, o.output, s, "the nearest valid tiling"))
        {
            d = d.with_fix(fix);
        }
        let inner = fused_range(file, r, rd);
        if let Some(range) = &inner {
            d.related.push((
                range.clone(),
                "the read that is not a hyper-rectangle".into(),
            ));
        }
        out.push(d);
        if let Some(range) = inner {
            let mut d = Diagnostic::error(range, codes::INVALID_TILING, message);
            d.related.push((at.clone(), "the tile sizes".into()));
            out.push(d);
        }
    }
}
