//! Hover: what the name under the cursor is.
//!
//! * an instruction's name or opcode: opcode, shape and operands;
//! * an operand reference: the defining instruction with its shape;
//! * a parameter of a called (e.g. fused) computation: which operand of which
//!   calling instruction feeds it;
//! * a computation name: its callers.
//!
//! Indexing maps are added by the analysis section ([`super::maps`]) when the
//! analysis is available for the instruction.

use std::fmt::Write as _;
use std::ops::Range;

use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind};

use super::navigation::{symbol_at, Symbol};
use super::position::PositionEncoding;
use super::settings::Settings;
use super::snapshot::Snapshot;
use crate::model::{ComputationRef, HloFile, Instruction, Module};

fn touches(range: &Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}

/// The hover at `offset`, if something is named there.
pub fn hover(
    snapshot: &Snapshot,
    offset: usize,
    settings: &Settings,
    encoding: PositionEncoding,
) -> Option<Hover> {
    if snapshot.is_mlir() {
        return super::mlir::hover(snapshot, offset, settings, encoding);
    }
    let file = snapshot.model();
    let (text, range) = describe(file, offset, snapshot, settings)?;
    Some(markdown(text, range, snapshot, encoding))
}

/// A markdown hover over the bytes `range` (HLO and MLIR hovers alike).
pub fn markdown(
    value: String,
    range: Range<usize>,
    snapshot: &Snapshot,
    encoding: PositionEncoding,
) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(snapshot.range(range, encoding)),
    }
}

fn describe(
    file: &HloFile,
    offset: usize,
    snapshot: &Snapshot,
    settings: &Settings,
) -> Option<(String, Range<usize>)> {
    // The opcode is not a name: find the instruction whose opcode is under the cursor.
    if let Some(at) = file.instruction_at(offset) {
        let computation = file.computation(at);
        let instruction = computation.instruction(at.instruction);
        let opcode = computation.abs(instruction.opcode_range);
        if touches(&opcode, offset) {
            let module = file.module(at.module);
            let text = instruction_hover(snapshot, module, at.computation, instruction, settings);
            return Some((text, opcode));
        }
    }
    match symbol_at(file, offset)? {
        Symbol::Instruction {
            module: module_id,
            computation: computation_id,
            instruction,
        } => {
            let module = file.module(module_id);
            let computation = module.computation(computation_id);
            let instruction = computation.instruction(instruction);
            let name = computation.abs(instruction.name_range);
            if touches(&name, offset) {
                let text =
                    instruction_hover(snapshot, module, computation_id, instruction, settings);
                return Some((text, name));
            }
            // An operand reference: show the definition.
            let range = operand_range_at(computation, offset)?;
            Some((reference_hover(computation, instruction), range))
        }
        Symbol::Computation {
            module,
            computation,
        } => {
            let module = file.module(module);
            let range = name_range_at(module, offset)?;
            Some((computation_hover(module, computation), range))
        }
    }
}

fn operand_range_at(computation: ComputationRef, offset: usize) -> Option<Range<usize>> {
    computation
        .model()
        .instructions
        .iter()
        .flat_map(|i| &i.operands)
        .filter_map(|o| o.name_range.map(|r| computation.abs(r)))
        .find(|r| touches(r, offset))
}

/// The computation name under the cursor: a computation's own name or a call's.
fn name_range_at(module: &Module, offset: usize) -> Option<Range<usize>> {
    let c = module.computation(module.computation_at(offset)?);
    let own = c.abs(c.name_range);
    if touches(&own, offset) {
        return Some(own);
    }
    c.model()
        .instructions
        .iter()
        .flat_map(|i| &i.called)
        .map(|called| c.abs(called.name_range))
        .find(|r| touches(r, offset))
}

/// `%name = shape opcode(...)` as a one-line code block.
fn signature(computation: ComputationRef, instruction: &Instruction) -> String {
    let operands: Vec<String> = (0..instruction.operands.len())
        .map(|k| {
            let name = instruction.operands[k]
                .target
                .map(|id| format!("%{}", computation.instruction(id).name))
                .unwrap_or_else(|| "?".into());
            match computation.operand_shape(instruction, k) {
                Some(shape) => format!("{shape} {name}"),
                None => name,
            }
        })
        .collect();
    let arguments = match instruction.parameter_number {
        Some(k) => k.to_string(),
        None => operands.join(", "),
    };
    format!(
        "%{} = {} {}({arguments})",
        instruction.name, instruction.shape, instruction.opcode
    )
}

fn instruction_hover(
    snapshot: &Snapshot,
    module: &Module,
    computation_id: crate::model::ComputationId,
    instruction: &Instruction,
    settings: &Settings,
) -> String {
    let computation = module.computation(computation_id);
    let mut text = format!("```hlo\n{}\n```\n", signature(computation, instruction));
    // A tiled (Triton) fusion: the tiling analysis' one-line summary.
    let tiling = super::maps::module_index(snapshot, module).and_then(|index| {
        crate::tiling::report::hover_line(
            snapshot.model(),
            snapshot.analysis_module(index),
            computation.abs(instruction.name_range).start,
        )
    });
    if let Some(tiling) = tiling {
        let _ = writeln!(text, "\n{tiling}");
    }
    if let Some(k) = instruction.parameter_number {
        text.push_str(&parameter_sources(module, computation_id, k));
    }
    if let Some(maps) =
        super::maps::instruction_maps(snapshot, module, computation_id, instruction, settings)
    {
        text.push_str(&maps);
    }
    text
}

/// Which operand of which caller feeds parameter `k` of a called computation.
fn parameter_sources(
    module: &Module,
    computation_id: crate::model::ComputationId,
    k: i64,
) -> String {
    let mut text = String::new();
    let Ok(k) = usize::try_from(k) else {
        return text;
    };
    for site in module.callers_of(computation_id) {
        let caller_computation = module.computation(site.computation);
        let caller = caller_computation.instruction(site.instruction);
        let Some(operand) = caller.operands.get(k) else {
            continue;
        };
        let source = operand.target.map(|id| caller_computation.instruction(id));
        let _ = write!(
            text,
            "\nParameter {k} of `{}` is fed by operand {k} of `%{}` ({} in `{}`)",
            module.computation(computation_id).name,
            caller.name,
            caller.opcode,
            caller_computation.name
        );
        if let Some(source) = source {
            let _ = write!(text, ": `%{}` {}", source.name, source.shape);
        }
        text.push('\n');
    }
    text
}

fn reference_hover(computation: ComputationRef, definition: &Instruction) -> String {
    format!(
        "```hlo\n{}\n```\nDefined in `{}`",
        signature(computation, definition),
        computation.name
    )
}

fn computation_hover(module: &Module, computation_id: crate::model::ComputationId) -> String {
    let computation = module.computation(computation_id);
    let mut text = format!(
        "```hlo\n{}{}\n```\n{} instructions",
        if computation.is_entry { "ENTRY " } else { "" },
        computation.name,
        computation
            .instructions
            .iter()
            .filter(|i| !i.synthetic)
            .count()
    );
    for site in module.callers_of(computation_id) {
        let caller = module
            .computation(site.computation)
            .instruction(site.instruction);
        let _ = write!(
            text,
            "\n\nCalled by `%{}` ({}) in `{}`",
            caller.name,
            caller.opcode,
            module.computation(site.computation).name
        );
    }
    text
}
