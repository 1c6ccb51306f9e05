//! Memory next to the text: a lens on ENTRY and on each while body (`peak 1.5 MiB at
//! %fusion.3 · 12 buffers live (estimated)`) and one hover line per instruction
//! (allocation, offset, size, live from → to in steps of the schedule). Numbers are
//! XLA's when its buffer assignment is beside the file ([`crate::memory::siblings`]),
//! else the estimate from the module text ([`crate::memory::estimate`]); every answer
//! says which. (The finding on copies live at the peak is a check, published with the
//! document's others: [`crate::memory::diagnostics`].)
//!
//! The estimate needs the whole module: lenses and hovers show it once it is ready
//! ([`HloSnapshot::ready_memory`]; the server computes it in the background), the
//! timeline, which the user asks for, waits for it.

use std::ops::Range;

use super::snapshot::HloSnapshot;
use crate::memory::source::{by_source_line, group_lines};
use crate::memory::{human_bytes, Peak, Report};
use crate::model::ModuleId;

/// A lens: where, and its title.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLens {
    pub range: Range<usize>,
    pub title: String,
}

fn modules(
    snapshot: &HloSnapshot,
) -> impl Iterator<Item = (ModuleId, std::sync::Arc<Report>)> + '_ {
    (0..snapshot.model().modules.len())
        .map(|m| ModuleId(m as u32))
        .filter_map(|m| snapshot.ready_memory(m).map(|r| (m, r)))
}

/// The instruction a peak names: the one whose allocation raised the heap to it
/// (XProf's `peak_op`), else the one scheduled at its step.
fn peak_name<'a>(report: &'a Report, peak: &'a Peak) -> &'a str {
    peak.instruction
        .as_deref()
        .or_else(|| report.instruction_at(peak.time))
        .unwrap_or("?")
}

/// `peak 1.5 MiB at %fusion.3 · 12 buffers live (estimated)`: the heap's peak as
/// XProf's memory viewer counts it, the same number the hover and the panel show.
fn title(report: &Report, peak: &crate::memory::Peak, per_device: bool) -> String {
    format!(
        "peak {} at %{} · {} buffers live ({}{})",
        human_bytes(peak.bytes),
        peak_name(report, peak),
        peak.live.len(),
        report.source.tag(),
        if per_device { ", per device" } else { "" },
    )
}

/// Whether `module` of the snapshot is partitioned: its buffers are one
/// device's ([`crate::sharding::per_device`]).
fn per_device(snapshot: &HloSnapshot, module: ModuleId) -> bool {
    crate::sharding::per_device(snapshot.model().module(module), Some(snapshot.file_name()))
        .is_some()
}

/// The peak a lens shows on computation `c`: the module's on ENTRY, its own on a
/// while body, none elsewhere.
fn peak_of(
    module: &crate::model::Module,
    report: &Report,
    c: crate::model::ComputationRef,
) -> Option<Peak> {
    if module.entry == Some(c.id) {
        return report.peak.clone();
    }
    // A while body is known from its callers' outlines: the lenses ask this of every
    // computation, and building each one's model to learn it would cost the file.
    let is_body = module
        .callers_of(c.id)
        .iter()
        .any(|site| module.call_attribute(site) == "body");
    is_body.then(|| report.peak_in(&c.model().name)).flatten()
}

/// Lenses on ENTRY (the module's peak) and on each while body (its own peak), once
/// the memory answer is ready.
pub fn lenses(snapshot: &HloSnapshot) -> Vec<MemoryLens> {
    let mut out = Vec::new();
    for (id, report) in modules(snapshot) {
        let module = snapshot.model().module(id);
        for c in module.computations() {
            if let Some(peak) = peak_of(module, &report, c) {
                out.push(MemoryLens {
                    range: c.abs(c.model().name_range),
                    title: title(&report, &peak, per_device(snapshot, id)),
                });
            }
        }
    }
    out
}

/// Source lines listed in a computation's hover before "… N more".
const HOVER_SOURCE_LINES: usize = 8;

/// The memory part of the hover on a computation's name where a lens stands (ENTRY,
/// a while body): the peak, then what is live at it grouped by the line of the
/// user's program that made it, most bytes first.
pub fn computation_hover(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: crate::model::ComputationId,
) -> Option<String> {
    let report = snapshot.ready_memory(module)?;
    let m = snapshot.model().module(module);
    let peak = peak_of(m, &report, m.computation(computation))?;
    let frames = snapshot.ready_stack_frames(module)?;
    let groups = by_source_line(&report, &peak, m, &frames);
    // On ENTRY, XLA's own live-range "peak" line when it says something else.
    let xla = (m.entry == Some(computation))
        .then(|| crate::memory::xla_line_if_different(&report))
        .flatten()
        .map(|line| {
            format!(
                " ({line}: it counts each value by itself, the outputs from when they are written)"
            )
        })
        .unwrap_or_default();
    Some(format!(
        "**Memory** ({}{}): peak {} at `%{}`, step {} of {} · {} buffers live{xla}\n\n\
         Live at the peak, by source line:\n```text\n{}\n```",
        report.source.tag(),
        if per_device(snapshot, module) {
            ", per device"
        } else {
            ""
        },
        human_bytes(peak.bytes),
        peak_name(&report, &peak),
        peak.time,
        report.schedule.len(),
        peak.live.len(),
        group_lines(&groups, HOVER_SOURCE_LINES).join("\n"),
    ))
}

/// What a hover says in place of [`hover_line`] while the module's memory answer is
/// computed in the background ([`HloSnapshot::memory_pending`]), for an instruction
/// that may have a buffer of its own: one of a compiled module's computation that no
/// fusion calls.
pub fn pending_line(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: crate::model::ComputationRef,
) -> Option<String> {
    if !snapshot.memory_pending() {
        return None;
    }
    may_hold_buffers(snapshot, module, &computation.name).then(|| {
        "Memory: computing… (the whole module's estimate; shown once it is ready)".to_string()
    })
}

/// Whether instructions of `computation` may have buffers of their own: it belongs to
/// a compiled module (the others have no memory answer) and no fusion calls it (a
/// fused computation's values live in registers). Asked before the memory answer,
/// which a hover on a fused instruction then never waits for.
fn may_hold_buffers(snapshot: &HloSnapshot, module: ModuleId, computation: &str) -> bool {
    let m = snapshot.model().module(module);
    let fused = m.callers_of_name(computation).iter().any(|site| {
        let calls = &m.outline(site.computation).calls;
        calls
            .get(site.call as usize)
            .is_some_and(|call| call.attribute() == "calls")
    });
    m.compiled && !fused
}

/// `Memory (estimated): allocation 3, offset 64, 2.0 KiB, live 20 → 23 of 31`.
pub fn hover_line(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: &str,
    name: &str,
) -> Option<String> {
    may_hold_buffers(snapshot, module, computation).then_some(())?;
    let report = snapshot.ready_memory(module)?;
    scheduled(&report, computation).then_some(())?;
    let b = report.buffers_of(name).max_by_key(|b| b.bytes)?;
    let place = match (b.allocation, b.offset) {
        (Some(a), Some(o)) => format!("allocation {a}, offset {o}, "),
        _ => String::new(),
    };
    let at_peak = report.peak.as_ref().is_some_and(|p| {
        p.live
            .iter()
            .any(|&i| *report.buffers[i].instruction == *name)
    });
    Some(format!(
        "Memory ({}{}): {place}{}, live {} → {} of {}{}",
        report.source.tag(),
        if per_device(snapshot, module) {
            ", per device"
        } else {
            ""
        },
        human_bytes(b.bytes),
        b.start,
        b.end,
        report.schedule.len(),
        if at_peak { " · live at the peak" } else { "" },
    ))
}

/// Rows of the live-range strip: the instructions scheduled this close to the
/// cursor's, on either side.
const STRIP_NEIGHBOURS: usize = 2;

/// The live ranges of the buffers around instruction `name` in the schedule (its
/// own marked `›`) over the whole schedule, the peak marked: a code block.
pub fn live_strip(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: &str,
    name: &str,
) -> Option<String> {
    may_hold_buffers(snapshot, module, computation).then_some(())?;
    let report = snapshot.ready_memory(module)?;
    scheduled(&report, computation).then_some(())?;
    let at = report.schedule.iter().position(|n| **n == *name)?;
    report.buffers_of(name).next()?;
    let around = at.saturating_sub(STRIP_NEIGHBOURS)..(at + STRIP_NEIGHBOURS + 1);
    let rows: Vec<(String, &crate::memory::Buffer)> = report.schedule
        [around.start..around.end.min(report.schedule.len())]
        .iter()
        .filter_map(|n| {
            let b = report.buffers_of(n).max_by_key(|b| b.bytes)?;
            let mark = if **n == *name { '›' } else { ' ' };
            Some((format!("{mark} %{n}"), b))
        })
        .collect();
    Some(format!(
        "```text\n{}\n```",
        crate::memory::strip::render(&report, &rows)
    ))
}

/// Whether computation `name` runs in the report's schedule (a fused computation
/// does not: its instructions have no buffers, whatever their names).
fn scheduled(report: &Report, name: &str) -> bool {
    report.spans.iter().any(|s| s.computation == name)
}

/// The memory timeline of the computation at `offset` when it runs in the schedule
/// (ENTRY, a while body, a called computation), else of ENTRY (the cursor in a fused
/// computation, or off any): what VS Code's memory panel draws.
pub fn timeline_at(
    snapshot: &HloSnapshot,
    offset: usize,
) -> Option<crate::memory::timeline::Timeline> {
    let file = snapshot.model();
    let (module, at) = match file.computation_at(offset) {
        Some((m, c)) => (m, Some(c.model().name.clone())),
        None => (ModuleId(0), None),
    };
    let report = snapshot.memory(module)?;
    let m = file.module(module);
    let computation = at
        .filter(|name| scheduled(&report, name))
        .or_else(|| Some(m.entry_computation()?.model().name.clone()))?;
    crate::memory::timeline::lay_out(
        &report,
        m,
        &computation,
        &snapshot.stack_frames(module),
        crate::memory::timeline::DEFAULT_ROWS,
    )
}
