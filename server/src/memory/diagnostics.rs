//! The information finding on a copy or transpose whose buffer is live at the memory
//! peak: the cases people bring to XLA's tracker when a program runs out of memory
//! (openxla/xla#26987, a transpose held beside its operand doubles the memory;
//! openxla/xla#5335, copies around a loop's state raise the peak from 74 to 98 GB).
//! It names the bytes, their share of the peak, and whether the copied operand is
//! live then too (the data held twice).
//!
//! Only where someone chasing an out-of-memory error would look: a buffer of at least
//! [`MIN_SHARE_PERCENT`] of the peak and at least [`MIN_BYTES`]. Below a twentieth of
//! the peak removing the copy cannot move the peak enough to matter, and below a MiB no
//! device runs out of memory because of it; a small valid program never hears of it.

use std::path::Path;

use super::{human_bytes, Report};
use crate::model::Severity;
use crate::model::{
    ComputationId, ComputationRef, Diagnostic, HloFile, Instruction, Module, ModuleId, Opcode,
};

/// The code of the finding.
pub const COPY_AT_PEAK: &str = "copy-at-memory-peak";
/// The least share of the peak a copy's buffer must hold to be reported.
pub const MIN_SHARE_PERCENT: u64 = 5;
/// The least size a copy's buffer must have to be reported.
pub const MIN_BYTES: u64 = 1 << 20;

/// A copy or transpose live at the peak, in plain terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeakCopy {
    pub instruction: String,
    /// `copy` or `transpose`.
    pub kind: &'static str,
    pub bytes: u64,
    /// The operand it copies, when that is live at the peak too: name and bytes.
    pub operand_live: Option<(String, u64)>,
}

/// Whether `instruction` copies its operand: a `copy` or `transpose`, or a fusion
/// whose root is one (under bitcasts and reshapes, as XLA's `copy_bitcast_fusion`).
fn copy_kind(module: &Module, instruction: &Instruction) -> Option<&'static str> {
    match instruction.opcode {
        Opcode::Copy => Some("copy"),
        Opcode::Transpose => Some("transpose"),
        Opcode::Fusion => {
            let fused = module.called_computation(instruction, "calls")?;
            let mut at = fused.root_instruction()?;
            while matches!(at.opcode, Opcode::Bitcast | Opcode::Reshape) {
                at = fused.instruction(at.operands.first()?.target?);
            }
            let operand = at.operands.first().and_then(|o| o.target);
            match at.opcode {
                // A copy of a transpose is how XLA writes a transpose in memory.
                Opcode::Copy
                    if operand
                        .is_some_and(|o| fused.instruction(o).opcode == Opcode::Transpose) =>
                {
                    Some("transpose")
                }
                Opcode::Copy => Some("copy"),
                Opcode::Transpose => Some("transpose"),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The copies and transposes live at `report`'s peak that hold a meaningful share of
/// it (see the module docs), largest first.
pub fn peak_copies(module: &Module, report: &Report) -> Vec<PeakCopy> {
    let Some(peak) = &report.peak else {
        return Vec::new();
    };
    let mut out: Vec<PeakCopy> = Vec::new();
    // The heap can stay at its peak for several steps (a loop's copy made while the
    // value it copies is still held): a copy counts when it is live at any of them,
    // its operand when live at the same step.
    for t in report.peak_steps() {
        let live = report.live_at(t);
        let live_bytes = |name: &str| {
            live.iter()
                .map(|&i| &report.buffers[i])
                .filter(|b| *b.instruction == *name)
                .map(|b| b.bytes)
                .sum::<u64>()
        };
        for &i in &live {
            let b = &report.buffers[i];
            let meaningful = b.bytes >= MIN_BYTES
                && u128::from(b.bytes) * 100
                    >= u128::from(peak.bytes) * u128::from(MIN_SHARE_PERCENT);
            let seen = out.iter().position(|c| *c.instruction == *b.instruction);
            if !meaningful || seen.is_some_and(|k| out[k].operand_live.is_some()) {
                continue;
            }
            let Some(copy) = as_copy(module, b, &live_bytes) else {
                continue;
            };
            match seen {
                Some(k) if copy.operand_live.is_some() => out[k] = copy,
                Some(_) => {}
                None => out.push(copy),
            }
        }
    }
    out.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.instruction.cmp(&b.instruction))
    });
    out
}

/// `b` as a copy live at a peak step, when its instruction copies its operand; what
/// is live then is measured by `live_bytes`.
fn as_copy(
    module: &Module,
    b: &super::Buffer,
    live_bytes: &dyn Fn(&str) -> u64,
) -> Option<PeakCopy> {
    let (c, id) = module.find_instruction(&b.instruction)?;
    let computation = module.computation(c);
    let instruction = computation.instruction(id);
    let kind = copy_kind(module, instruction)?;
    let operand_live = instruction
        .operands
        .first()
        .and_then(|o| o.target)
        .map(|t| computation.instruction(t).name.to_string())
        .map(|name| (live_bytes(&name), name))
        .filter(|(bytes, _)| *bytes > 0)
        .map(|(bytes, name)| (name, bytes));
    Some(PeakCopy {
        instruction: b.instruction.to_string(),
        kind,
        bytes: live_bytes(&b.instruction),
        operand_live,
    })
}

/// The sentence of a finding.
pub fn message(copy: &PeakCopy, report: &Report) -> String {
    let Some(peak) = &report.peak else {
        return String::new();
    };
    let mut text = format!(
        "this {} holds {} at the memory peak: {}% of {} at %{} ({})",
        copy.kind,
        human_bytes(copy.bytes),
        u128::from(copy.bytes) * 100 / u128::from(peak.bytes.max(1)),
        human_bytes(peak.bytes),
        report.peak_at().unwrap_or("?"),
        report.source.tag(),
    );
    if let Some((name, bytes)) = &copy.operand_live {
        text.push_str(&format!(
            "; its operand %{name} ({}) is live then too, so the data is held twice",
            human_bytes(*bytes)
        ));
    }
    text
}

/// The findings of module `module` of `file`, all shown from its ENTRY computation
/// (`c` when it is the ENTRY, else none): the peak is the whole module's, and the
/// ENTRY is checked again after an edit of any computation it reaches. `dump` is
/// where the document is on disk (XLA's buffer assignment is read from beside it).
pub fn computation_diagnostics(
    file: &HloFile,
    module: ModuleId,
    c: ComputationRef,
    dump: Option<&Path>,
) -> Vec<Diagnostic> {
    let m = file.module(module);
    if !c.is_entry || m.entry != Some(c.id) {
        return Vec::new();
    }
    let Some(report) = super::analyze_in(file, module, dump) else {
        return Vec::new();
    };
    peak_findings(m, &report)
        .into_iter()
        .map(|(_, d)| d)
        .collect()
}

/// The findings of module `m` whose memory answer is `report`, in document bytes of
/// the version `m` belongs to, each with the computation it is shown in (the one
/// holding the copy: the ENTRY, or a computation it calls).
pub fn peak_findings(m: &Module, report: &Report) -> Vec<(ComputationId, Diagnostic)> {
    peak_copies(m, report)
        .iter()
        .filter_map(|copy| {
            let (ci, id) = m.find_instruction(&copy.instruction)?;
            let at = m.computation(ci);
            let instruction = at.instruction(id);
            let mut d = Diagnostic::new(
                at.abs(instruction.name_range),
                Severity::Information,
                COPY_AT_PEAK,
                message(copy, report),
            );
            if let Some(operand) = copy
                .operand_live
                .as_ref()
                .and_then(|(name, _)| at.instruction_by_name(name))
            {
                d = d.with_related(
                    at.abs(operand.name_range),
                    "the operand, live at the peak too",
                );
            }
            Some((ci, d))
        })
        .collect()
}
