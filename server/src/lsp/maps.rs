//! The indexing-map sections of hovers, from the analysis layer.
//!
//! For an instruction: its output-to-input maps per operand (XLA's text format, one
//! fenced block per map) with utilization. Inside a computation called by a fusion,
//! also the composed map from the fusion's output to this instruction and from the
//! fusion's output to each fusion parameter. On a fusion instruction the analysis
//! composes through the fused computation, so its per-operand maps are already the
//! composed maps to the fusion's operands.

use std::fmt::Write as _;

use super::settings::{FloorDivSpelling, Settings};
use super::snapshot::Snapshot;
use crate::algebra::{DivSpelling, PrintOptions};
use crate::analysis::{self, operand_indexing, utilization, Direction, OperandIndexing, Query};
use crate::model::{ComputationId, ComputationRef, Instruction, Module};

/// Most outputs of a multi-output instruction shown in one hover.
const MAX_OUTPUTS: usize = 4;

/// Domain points a hover enumerates to make utilization exact; beyond that it shows
/// the closed form or an estimate, so a hover stays fast on huge operands.
const HOVER_UTILIZATION_BUDGET: u128 = 200_000;

/// How maps are printed under the user's settings.
pub fn print_options(settings: &Settings, multiline: bool) -> PrintOptions {
    PrintOptions {
        div: match settings.floordiv {
            FloorDivSpelling::FloorDiv => DivSpelling::FloorDiv,
            FloorDivSpelling::Slash => DivSpelling::Slash,
        },
        multiline,
    }
}

/// Index of `module` in the snapshot's model (modules are split by `// -----`).
pub fn module_index(snapshot: &Snapshot, module: &Module) -> Option<usize> {
    snapshot
        .model()
        .modules
        .iter()
        .position(|m| std::ptr::eq(m, module))
}

/// The fusion instruction calling `computation`, if it is a fused computation.
pub fn calling_fusion(module: &Module, computation: ComputationId) -> Option<&Instruction> {
    let site = module.callers_of(computation).first()?;
    let caller = module
        .computation(site.computation)
        .instruction(site.instruction);
    (caller.opcode.name() == "fusion").then_some(caller)
}

/// Markdown for the maps of `instruction`; `None` when the analysis has nothing.
pub fn instruction_maps(
    snapshot: &Snapshot,
    module: &Module,
    computation: ComputationId,
    instruction: &Instruction,
    settings: &Settings,
) -> Option<String> {
    let module_index = module_index(snapshot, module)?;
    let view = snapshot.analysis_module(module_index);
    let options = print_options(settings, true);
    let (comp, node) = (computation.index(), instruction.id.index());
    let n = view.computations.get(comp)?.nodes.get(node)?;
    let mut text = String::new();
    let outputs = n.op.shape.output_count().clamp(1, MAX_OUTPUTS);
    if !instruction.operands.is_empty() {
        for output in 0..outputs {
            let query = Query {
                computation: comp,
                instruction: node,
                direction: Direction::OutputToInput,
                output_id: output,
                operand_id: 0,
                physical_layout: settings.physical_layout,
            };
            let indexing = analysis::analyze(view, &query);
            if outputs > 1 {
                let _ = write!(text, "\n**Output {output}**\n");
            }
            for (k, entry) in indexing.entries.iter().enumerate() {
                let operand_shape = n.op.operands.get(k).and_then(|s| s.as_array());
                let name = operand_name(module.computation(computation), instruction, k);
                let _ = write!(text, "\n**Operand {k}** {name}");
                if let Some(shape) = operand_shape {
                    text.push_str(&utilization_text(entry, shape, settings));
                }
                text.push('\n');
                text.push_str(&map_blocks(entry, &options));
            }
        }
    }
    if let Some(fusion) = calling_fusion(module, computation) {
        let fused = FusedContext {
            snapshot,
            module_index,
            computation,
            fusion,
        };
        fused.describe(instruction, &options, &mut text);
    }
    (!text.is_empty()).then_some(text)
}

/// `` `%name` `` of operand `k`, or nothing for an unresolved operand.
fn operand_name(computation: ComputationRef, instruction: &Instruction, k: usize) -> String {
    instruction
        .operands
        .get(k)
        .and_then(|o| o.target)
        .map(|id| format!("`%{}`", computation.instruction(id).name))
        .unwrap_or_default()
}

/// ` — utilization 50.0% of elements, each read 2.00×` (flagged above the budget).
fn utilization_text(
    entry: &OperandIndexing,
    shape: &analysis::ArrayShape,
    settings: &Settings,
) -> String {
    let Some(u) = utilization::utilization(entry, shape, HOVER_UTILIZATION_BUDGET) else {
        return String::new();
    };
    // A scalar (an init value, a broadcast constant) is re-read by design.
    let flag = if u.multiplicity > settings.utilization_budget && shape.rank() > 0 {
        " ⚠ re-read"
    } else {
        ""
    };
    format!(" — {u}{flag}")
}

/// One fenced block per map of `entry`, then the reason when some path is unknown.
pub fn map_blocks(entry: &OperandIndexing, options: &PrintOptions) -> String {
    let mut out = String::new();
    for m in &entry.maps {
        let printed = operand_indexing::operand_map_to_string(m, options);
        let _ = write!(out, "```\n{}\n```\n", printed.trim_end());
    }
    if let Some(reason) = &entry.unknown {
        let _ = writeln!(out, "unknown indexing: {reason}");
    }
    if entry.maps.is_empty() && entry.unknown.is_none() {
        out.push_str("not read\n");
    }
    out
}

/// An instruction inside a fused computation, seen from the fusion's output.
struct FusedContext<'a> {
    snapshot: &'a Snapshot,
    module_index: usize,
    computation: ComputationId,
    fusion: &'a Instruction,
}

impl FusedContext<'_> {
    /// The composed map from the fusion's output to `instruction`, and (except on a
    /// parameter, where that is the same thing) to every fusion parameter.
    fn describe(&self, instruction: &Instruction, options: &PrintOptions, text: &mut String) {
        let fused = self
            .snapshot
            .fused_maps(self.module_index, self.computation.index());
        if let Some(here) = fused.reached.get(instruction.id.index()) {
            let _ = write!(
                text,
                "\n**From the output of fusion `%{}` to this instruction**\n{}",
                self.fusion.name,
                map_blocks(&here.to_entry(), options)
            );
        }
        if instruction.parameter_number.is_some() {
            return;
        }
        let module = &self.snapshot.model().modules[self.module_index];
        let computation = module.computation(self.computation);
        let mut parameters: Vec<(i64, &Instruction)> = computation
            .instructions
            .iter()
            .filter_map(|i| i.parameter_number.map(|k| (k, i)))
            .collect();
        parameters.sort_by_key(|(k, _)| *k);
        for (k, parameter) in parameters {
            if let Some(reached) = fused.reached.get(parameter.id.index()) {
                let _ = write!(
                    text,
                    "\n**From the fusion output to parameter {k}** `%{}`\n{}",
                    parameter.name,
                    map_blocks(&reached.to_entry(), options)
                );
            }
        }
    }
}
