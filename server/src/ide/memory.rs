//! Memory next to the text: a lens on ENTRY and on each while body (`peak 1.5 MiB at
//! %fusion.3 · 12 buffers live (estimated)`) and one hover line per instruction
//! (allocation, offset, size, live from → to in steps of the schedule). Numbers are
//! XLA's when its buffer assignment is beside the file ([`crate::memory::siblings`]),
//! else the estimate from the module text ([`crate::memory::estimate`]); every answer
//! says which. (The finding on copies live at the peak is a check, published with the
//! document's others: [`crate::memory::diagnostics`].)

use std::ops::Range;

use super::snapshot::HloSnapshot;
use crate::memory::{human_bytes, Report};
use crate::model::{ModuleId, Opcode};

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
        .filter_map(|m| snapshot.memory(m).map(|r| (m, r)))
}

/// `peak 1.5 MiB at %fusion.3 · 12 buffers live (estimated)`.
fn title(report: &Report, peak: &crate::memory::Peak) -> String {
    format!(
        "peak {} at %{} · {} buffers live ({})",
        human_bytes(peak.bytes),
        report.instruction_at(peak.time).unwrap_or("?"),
        peak.live.len(),
        report.source.tag(),
    )
}

/// Lenses on ENTRY (the module's peak) and on each while body (its own peak).
pub fn lenses(snapshot: &HloSnapshot) -> Vec<MemoryLens> {
    let mut out = Vec::new();
    for (id, report) in modules(snapshot) {
        let module = snapshot.model().module(id);
        for c in module.computations() {
            let model = c.model();
            let peak = if model.is_entry {
                report.peak.clone()
            } else if module
                .callers_of(c.id)
                .iter()
                .filter_map(|site| module.caller(site))
                .any(|(_, i)| {
                    i.opcode == Opcode::While
                        && i.called.iter().any(|k| {
                            k.attribute == "body" && k.name.trim_start_matches('%') == model.name
                        })
                })
            {
                report.peak_in(&model.name)
            } else {
                None
            };
            if let Some(peak) = peak {
                out.push(MemoryLens {
                    range: c.abs(model.name_range),
                    title: title(&report, &peak),
                });
            }
        }
    }
    out
}

/// `Memory (estimated): allocation 3, offset 64, 2.0 KiB, live 20 → 23 of 31`.
pub fn hover_line(snapshot: &HloSnapshot, module: ModuleId, name: &str) -> Option<String> {
    let report = snapshot.memory(module)?;
    let b = report.buffers_of(name).max_by_key(|b| b.bytes)?;
    let place = match (b.allocation, b.offset) {
        (Some(a), Some(o)) => format!("allocation {a}, offset {o}, "),
        _ => String::new(),
    };
    let at_peak = report.peak.as_ref().is_some_and(|p| {
        p.live
            .iter()
            .any(|&i| report.buffers[i].instruction == name)
    });
    Some(format!(
        "Memory ({}): {place}{}, live {} → {} of {}{}",
        report.source.tag(),
        human_bytes(b.bytes),
        b.start,
        b.end,
        report.schedule.len(),
        if at_peak { " · live at the peak" } else { "" },
    ))
}
