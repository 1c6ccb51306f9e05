//! Hover: what the name under the cursor is.
//!
//! * an instruction's name or opcode: opcode, shape and operands;
//! * an operand reference: the defining instruction with its shape;
//! * a parameter of a called (e.g. fused) computation: which operand of which
//!   calling instruction feeds it;
//! * a computation name: its callers.
//!
//! Indexing maps are gathered by [`super::maps`] and laid out by [`crate::hover`].

use std::fmt::Write as _;
use std::ops::Range;

use super::config::Config;
use super::maps::short_shape;
use super::navigation::{symbol_at, Symbol};
use super::snapshot::HloSnapshot;
use super::touches;
use crate::hover::{Detail, InstructionHover, Style};
use crate::model::{ComputationRef, Instruction, Module};

/// A hover: markdown over a range of bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    pub markdown: String,
    /// The bytes it describes (the name or opcode under the cursor).
    pub range: Range<usize>,
    /// The analysis stopped at its time budget: what it did not reach shows as
    /// unknown, and [`Hover::text`] says so.
    pub partial: bool,
}

/// Appended to a hover whose analysis stopped at its time budget.
pub const PARTIAL_NOTE: &str = "\n\n---\n⚠ **Partial**: the analysis stopped at its time budget; what it did not reach shows as unknown.\n";

impl Hover {
    /// `markdown` over `range`, partial when the current request's budget ran out
    /// while it was computed.
    pub fn new(markdown: String, range: Range<usize>) -> Hover {
        let partial = crate::budget::current().cut() == Some(crate::budget::Cut::Deadline);
        Hover {
            markdown,
            range,
            partial,
        }
    }

    /// What the user reads: the markdown, and the partial note when it is partial.
    pub fn text(&self) -> String {
        if self.partial {
            format!("{}{PARTIAL_NOTE}", self.markdown)
        } else {
            self.markdown.clone()
        }
    }
}

/// The hover at `offset`, if something is named there; [`Detail::Full`] is the
/// fusion-maps panel's text, nothing summarized.
pub fn hover(
    snapshot: &HloSnapshot,
    offset: usize,
    config: &Config,
    detail: Detail,
) -> Option<Hover> {
    let (text, range) = describe(snapshot, offset, config, detail)?;
    Some(Hover::new(text, range))
}

fn describe(
    snapshot: &HloSnapshot,
    offset: usize,
    config: &Config,
    detail: Detail,
) -> Option<(String, Range<usize>)> {
    let file = snapshot.model();
    // The opcode is not a name: find the instruction whose opcode is under the cursor.
    if let Some(at) = file.instruction_at(offset) {
        let computation = file.computation(at);
        let instruction = computation.instruction(at.instruction);
        let opcode = computation.abs(instruction.opcode_range);
        if touches(&opcode, offset) {
            let module = file.module(at.module);
            let text = instruction_hover(
                snapshot,
                module,
                at.computation,
                instruction,
                config,
                detail,
            );
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
                let text = instruction_hover(
                    snapshot,
                    module,
                    computation_id,
                    instruction,
                    config,
                    detail,
                );
                return Some((text, name));
            }
            // An operand reference (or a signature's parameter): show the definition.
            let range = operand_range_at(computation, offset)?;
            Some((reference_hover(computation, instruction), range))
        }
        Symbol::Computation {
            module: module_id,
            computation,
        } => {
            let module = file.module(module_id);
            let range = name_range_at(module, offset)?;
            let mut text = computation_hover(module, computation);
            // On its own name (where a memory lens stands), what is live at its peak.
            let c = module.computation(computation);
            if range == c.abs(c.name_range) {
                if let Some(memory) =
                    super::memory::computation_hover(snapshot, module_id, computation)
                {
                    let _ = write!(text, "\n\n{memory}");
                }
            }
            Some((text, range))
        }
    }
}

/// An operand name, or a parameter's name in the signature, at `offset`.
fn operand_range_at(computation: ComputationRef, offset: usize) -> Option<Range<usize>> {
    let signature = computation
        .signature_parameters
        .iter()
        .map(|&r| computation.abs(r));
    computation
        .model()
        .instructions
        .iter()
        .flat_map(|i| &i.operands)
        .filter_map(|o| o.name_range().map(|r| computation.abs(r)))
        .chain(signature)
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

/// Attributes that define an instruction's maps (or what a fusion calls), shown in
/// the hover's header; metadata, backend configs and the like are left out.
const DEFINING_ATTRIBUTES: &[&str] = &[
    "dimensions",
    "slice",
    "padding",
    "window",
    "dim_labels",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "offset_dims",
    "collapsed_slice_dims",
    "start_index_map",
    "operand_batching_dims",
    "start_indices_batching_dims",
    "index_vector_dim",
    "slice_sizes",
    "dynamic_slice_sizes",
    "update_window_dims",
    "inserted_window_dims",
    "scatter_dims_to_operand_dims",
    "input_batching_dims",
    "scatter_indices_batching_dims",
    "iota_dimension",
    "index",
    "feature_group_count",
    "batch_group_count",
    "fft_type",
    "fft_length",
    "direction",
    "kind",
    "calls",
    "to_apply",
];

/// `%name = shape opcode(operand shapes and names), defining attributes` (one line).
/// Operands the hover's first line writes out: a fusion of a hundred operands (XLA's
/// CPU dumps have them) would otherwise open with a paragraph of names.
const MAX_SIGNATURE_OPERANDS: usize = 8;

fn signature(computation: ComputationRef, instruction: &Instruction) -> String {
    let operands: Vec<String> = (0..instruction.operands.len())
        .map(|k| {
            let name = instruction.operands[k]
                .target
                .map(|id| format!("%{}", computation.instruction(id).name))
                .unwrap_or_else(|| "?".into());
            match computation.operand_shape(instruction, k) {
                Some(shape) => format!("{} {name}", short_shape(shape)),
                None => name,
            }
        })
        .collect();
    let arguments = match instruction.parameter_number {
        Some(k) => k.to_string(),
        None if operands.is_empty() => literal(computation, instruction),
        None if operands.len() > MAX_SIGNATURE_OPERANDS => format!(
            "{}, … {} more",
            operands[..MAX_SIGNATURE_OPERANDS].join(", "),
            operands.len() - MAX_SIGNATURE_OPERANDS
        ),
        None => operands.join(", "),
    };
    let mut line = format!(
        "%{} = {} {}({arguments})",
        instruction.name,
        compact_shape(&instruction.shape),
        instruction.opcode
    );
    for attribute in &instruction.attributes {
        if DEFINING_ATTRIBUTES.contains(&attribute.name.as_str()) {
            let value = computation.src(attribute.value_range);
            let _ = write!(line, ", {}={}", attribute.name, value.trim());
        }
    }
    line
}

/// A constant's literal as written, cut to a few dozen characters.
fn literal(computation: ComputationRef, instruction: &Instruction) -> String {
    const MAX: usize = 48;
    let written: Vec<&str> = instruction
        .literals
        .iter()
        .map(|&r| computation.src(r).trim())
        .collect();
    let joined = written.join(", ");
    if joined.chars().count() <= MAX {
        return joined;
    }
    let mut cut: String = joined.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

/// A shape as written, except that a long tuple counts its repeated elements:
/// `(4 × f32[1,8192]{1,0}, 42 × f32[8192,1]{1,0})`.
fn compact_shape(shape: &crate::model::Shape) -> String {
    let crate::model::Shape::Tuple(elements) = shape else {
        return shape.to_string();
    };
    if elements.len() <= 4 {
        return shape.to_string();
    }
    let mut runs: Vec<(usize, String)> = Vec::new();
    for element in elements {
        let text = element.to_string();
        match runs.last_mut() {
            Some((n, last)) if *last == text => *n += 1,
            _ => runs.push((1, text)),
        }
    }
    let parts: Vec<String> = runs
        .into_iter()
        .map(|(n, text)| {
            if n == 1 {
                text
            } else {
                format!("{n} × {text}")
            }
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// The hover on an instruction, summarized ([`Detail::Summary`]) or whole.
pub fn instruction_hover(
    snapshot: &HloSnapshot,
    module: &Module,
    computation_id: crate::model::ComputationId,
    instruction: &Instruction,
    config: &Config,
    detail: Detail,
) -> String {
    let computation = module.computation(computation_id);
    let mut hover = InstructionHover {
        header: signature(computation, instruction),
        ..InstructionHover::default()
    };
    // A tiled (Triton) fusion: the tiling analysis' one-line summary.
    let module_id = super::maps::module_id(snapshot, module);
    // The sections below each read the analysis view: held here, it is one view for
    // the whole hover (the sections that ask the snapshot for it get this one).
    let view = module_id.map(|id| snapshot.analysis_module(id));
    let tiling = view.as_deref().and_then(|view| {
        crate::tiling::report::hover_line(
            snapshot.model(),
            view,
            computation.abs(instruction.name_range).start,
        )
    });
    hover.notes.extend(tiling);
    // Where it comes from: one line, its own paragraph (the notes after it are lists).
    if let Some(module_id) = module_id {
        if let Some(line) = super::source::hover_line(snapshot, module_id, computation, instruction)
        {
            hover.notes.insert(0, format!("{line}\n"));
        }
    }
    // What the kernel costs, before how it reads (the maps and coalescing explain it).
    let cost = super::cost::hover_lines(snapshot, module, computation_id, instruction, config);
    let at = usize::from(!hover.notes.is_empty() && hover.notes[0].starts_with("Source:"));
    // What the partitioner will insert here (a module before partitioning):
    // first, it is what makes a sharded step slow.
    let mut first = module_id
        .map(|m| super::sharding::predicted_lines(snapshot, m, computation, instruction))
        .unwrap_or_default();
    first.extend(cost);
    for (k, line) in first.into_iter().enumerate() {
        hover.notes.insert(at + k, line);
    }
    // Where its buffer lives and when (one line, a paragraph of its own).
    if let Some(line) =
        module_id.and_then(|m| super::memory::pending_line(snapshot, m, computation))
    {
        hover.notes.push(format!("{line}\n"));
    } else if let Some(line) = module_id
        .and_then(|m| super::memory::hover_line(snapshot, m, &computation.name, &instruction.name))
    {
        hover.notes.push(format!("{line}\n"));
        if let Some(strip) = module_id.and_then(|m| {
            super::memory::live_strip(snapshot, m, &computation.name, &instruction.name)
        }) {
            hover.notes.push(format!("{strip}\n"));
        }
    }
    // What each device holds of it (one line, a paragraph of its own).
    let file_name = snapshot.file_name();
    if let Some(line) =
        super::sharding::hover_line(module, computation, instruction, Some(file_name))
    {
        hover.notes.push(format!("{line}\n"));
    }
    // Which devices a collective joins, what each sends and why.
    if let Some(lines) = view
        .as_deref()
        .and_then(|view| super::sharding::collective_lines(module, view, computation, instruction))
    {
        hover.notes.push(format!("{}\n", lines.join("\n\n")));
    }
    if let Some(k) = instruction.parameter_number {
        hover
            .notes
            .extend(parameter_sources(module, computation_id, k));
    }
    // On a fusion, whether it coalesces is a headline; on a fused parameter, the
    // maps from the fusion come first and its coalescing (a paragraph and a
    // picture) after them.
    let coalescing = coalescing_notes(
        snapshot,
        module,
        computation_id,
        instruction,
        config,
        detail,
    );
    if instruction.parameter_number.is_some() {
        hover.closing.extend(coalescing);
    } else {
        hover.notes.extend(coalescing);
    }
    super::maps::instruction_maps(
        snapshot,
        module,
        computation_id,
        instruction,
        config,
        &mut hover,
    );
    let style = Style {
        print: config.print_options(true),
        detail,
        physical: config.physical_layout,
    };
    crate::hover::render(&hover, &style)
}

/// On a fusion, whether each operand read is coalesced; on a fused parameter, the
/// same for the operand feeding it, with the warp's read map and picture.
fn coalescing_notes(
    snapshot: &HloSnapshot,
    module: &Module,
    computation_id: crate::model::ComputationId,
    instruction: &Instruction,
    config: &Config,
    detail: Detail,
) -> Vec<String> {
    use crate::coalescing::site::Site;
    let Some(site) = Site::at(module, computation_id, instruction) else {
        return Vec::new();
    };
    let fusion = match site {
        Site::Fusion { fusion, .. } | Site::Parameter { fusion, .. } => fusion,
    };
    // A CPU dump (or StableHLO) is not a GPU kernel graph: judged only on a GPU the
    // user chose.
    let off_gpu = super::cost::off_gpu(snapshot, module, Some(fusion));
    if off_gpu && !config.device_chosen {
        return Vec::new();
    }
    let Some(module_id) = super::maps::module_id(snapshot, module) else {
        return Vec::new();
    };
    let view = snapshot.analysis_module(module_id);
    let cached = site
        .fused(module)
        .map(|fused| snapshot.fused_maps(module_id, fused));
    let options = crate::coalescing::Options {
        device: config.device.clone(),
        ..Default::default()
    };
    let Some(report) = site.report(
        module,
        &view,
        &options,
        cached.as_ref().map(|c| &c.outputs[..]),
    ) else {
        return Vec::new();
    };
    let device = &config.device;
    let lines = match site {
        Site::Fusion { .. } => crate::hover::coalescing::fusion_lines(&report, device, detail),
        Site::Parameter { fusion, .. } => {
            crate::hover::coalescing::parameter_lines(&report, &fusion.name, device, detail)
        }
    };
    if !off_gpu {
        return lines;
    }
    // Said where the section starts: this is not how the dump runs.
    let heading = format!("**Coalescing** (as if compiled for {} · ", device.name);
    lines
        .into_iter()
        .map(|line| line.replacen("**Coalescing** (", &heading, 1))
        .collect()
}

/// Which operand of which caller feeds parameter `k` of a called computation.
fn parameter_sources(
    module: &Module,
    computation_id: crate::model::ComputationId,
    k: u32,
) -> Vec<String> {
    let Ok(k) = usize::try_from(k) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for site in module.callers_of(computation_id) {
        let Some((caller_computation, caller)) = module.caller(site) else {
            continue;
        };
        let Some(operand) = caller.operands.get(k) else {
            continue;
        };
        let mut line = format!(
            "Parameter {k}, fed by operand {k} of `%{}` ({} in `{}`)",
            caller.name, caller.opcode, caller_computation.name
        );
        if let Some(source) = operand.target.map(|id| caller_computation.instruction(id)) {
            let _ = write!(
                line,
                ": `%{}` `{}`",
                source.name,
                short_shape(&source.shape)
            );
        }
        lines.push(line);
    }
    lines
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
        let Some((caller_computation, caller)) = module.caller(site) else {
            continue;
        };
        let _ = write!(
            text,
            "\n\nCalled by `%{}` ({}) in `{}`",
            caller.name, caller.opcode, caller_computation.name
        );
    }
    text
}
