//! The indexing-map sections of hovers, from the analysis layer.
//!
//! For an instruction: its output-to-input map per operand (XLA's text format in a
//! fenced block) with utilization. Inside a computation called by a fusion, also the
//! composed map from the fusion's output to this instruction and from the fusion's
//! output to each fusion parameter. On a fusion instruction the analysis composes
//! through the fused computation, so its per-operand maps are already the composed
//! maps to the fusion's operands.

use std::fmt::Write as _;

use super::settings::{FloorDivSpelling, Settings};
use super::snapshot::Snapshot;
use crate::algebra::{DivSpelling, PrintOptions};
use crate::analysis::{self, fusion, operand_indexing, utilization, Direction, Query};
use crate::model::{ComputationId, Instruction, Module};

/// Most outputs of a multi-output instruction shown in one hover.
const MAX_OUTPUTS: usize = 4;

fn print_options(settings: &Settings) -> PrintOptions {
    PrintOptions {
        div: match settings.floordiv {
            FloorDivSpelling::FloorDiv => DivSpelling::FloorDiv,
            FloorDivSpelling::Slash => DivSpelling::Slash,
        },
        ..PrintOptions::default()
    }
}

/// Markdown for the maps of `instruction`; `None` when the analysis has nothing.
pub fn instruction_maps(
    snapshot: &Snapshot,
    module: &Module,
    computation: ComputationId,
    instruction: &Instruction,
    settings: &Settings,
) -> Option<String> {
    let module_index = snapshot
        .model()
        .modules
        .iter()
        .position(|m| std::ptr::eq(m, module))?;
    let view = snapshot.analysis_module(module_index);
    let options = print_options(settings);
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
                let _ = write!(text, "\nOperand {k}");
                if let Some(shape) = n.op.operands.get(k).and_then(|s| s.as_array()) {
                    let budget = utilization::DEFAULT_BUDGET;
                    if let Some(u) = utilization::utilization(entry, shape, budget) {
                        let flag = if u.multiplicity > settings.utilization_budget {
                            " ⚠ re-read"
                        } else {
                            ""
                        };
                        let _ = write!(
                            text,
                            " — utilization {:.0}%, each element read {:.2}×{}{}",
                            u.fraction * 100.0,
                            u.multiplicity,
                            if u.exact { "" } else { " (estimate)" },
                            flag
                        );
                    }
                }
                let _ = write!(
                    text,
                    "\n```\n{}```\n",
                    operand_indexing::entry_to_string(entry, &options)
                );
            }
        }
    }
    fused_context(module, computation, view, node, &options, &mut text);
    (!text.is_empty()).then_some(text)
}

/// Inside a fused computation: maps from the fusion's output to `node` and to every
/// fusion parameter.
fn fused_context(
    module: &Module,
    computation: ComputationId,
    view: &analysis::Module,
    node: usize,
    options: &PrintOptions,
    text: &mut String,
) {
    let Some(site) = module.callers_of(computation).first() else {
        return;
    };
    let caller = module
        .computation(site.computation)
        .instruction(site.instruction);
    if caller.opcode.to_string() != "fusion" {
        return;
    }
    let comp = computation.index();
    let Some((start, out)) = fusion::output_start(view, comp, 0) else {
        return;
    };
    let reached = fusion::grouped_output_to_input(view, comp, start, out);
    if let Some(here) = reached.get(node) {
        let _ = write!(
            text,
            "\nFrom the output of fusion `%{}` to this instruction\n```\n{}```\n",
            caller.name,
            operand_indexing::entry_to_string(&here.to_entry(), options)
        );
    }
    let parameters = fusion::fused_output_to_input(view, comp, 0, caller.operands.len());
    for (k, entry) in parameters.entries.iter().enumerate() {
        let _ = write!(
            text,
            "\nFrom the fusion output to parameter {k}\n```\n{}```\n",
            operand_indexing::entry_to_string(entry, options)
        );
    }
}
