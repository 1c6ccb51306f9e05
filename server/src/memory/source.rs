//! Where a buffer comes from in the user's program: `model.py:42`, the innermost
//! frame of its instruction's `stack_frame_id` (JAX keeps the user's frames), else
//! its `source_file` / `source_line` metadata; and what is live at a peak, grouped
//! by that line.

use crate::model::metadata::OpMetadata;
use crate::model::stack_frames::StackFrameIndex;
use crate::model::{Module, Opcode};

use super::{human_bytes, Peak, Report};

/// `file.py:LINE` of instruction `name` of `module`, when its metadata says.
pub fn source_line(module: &Module, frames: &StackFrameIndex, name: &str) -> Option<String> {
    let (c, i) = module.find_instruction(name)?;
    let computation = module.computation(c);
    let attribute = computation.instruction(i).attribute("metadata")?;
    let metadata = OpMetadata::parse(computation.src(attribute.value_range));
    let (file, line) = match metadata.stack_frame_id.and_then(|id| frames.innermost(id)) {
        Some(frame) => (frame.file?, frame.line),
        None => (metadata.source_file?, metadata.source_line),
    };
    Some(match line {
        Some(line) => format!("{file}:{line}"),
        None => file,
    })
}

/// The bytes live at a peak that one line of the user's program made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceGroup {
    /// `file.py:LINE`, `parameters` (arguments without a source line), or `no source
    /// line`.
    pub source: String,
    pub bytes: u64,
    pub buffers: usize,
    /// The largest buffer's instruction.
    pub largest: String,
}

/// What is live at `peak`, grouped by the line of the user's program that made it,
/// most bytes first (then by name): what someone out of memory asks first, "which
/// line of my model holds the memory".
pub fn by_source_line(
    report: &Report,
    peak: &Peak,
    module: &Module,
    frames: &StackFrameIndex,
) -> Vec<SourceGroup> {
    let mut groups: Vec<SourceGroup> = Vec::new();
    // `peak.live` is largest first: a group's first buffer is its largest.
    for &i in &peak.live {
        let b = &report.buffers[i];
        let source = source_line(module, frames, &b.instruction).unwrap_or_else(|| {
            let parameter = module
                .find_instruction(&b.instruction)
                .is_some_and(|(c, i)| {
                    module.computation(c).instruction(i).opcode == Opcode::Parameter
                });
            if parameter {
                "parameters"
            } else {
                "no source line"
            }
            .to_string()
        });
        match groups.iter_mut().find(|g| g.source == source) {
            Some(g) => {
                g.bytes += b.bytes;
                g.buffers += 1;
            }
            None => groups.push(SourceGroup {
                source,
                bytes: b.bytes,
                buffers: 1,
                largest: b.instruction.to_string(),
            }),
        }
    }
    groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.source.cmp(&b.source)));
    groups
}

/// The first `cap` groups as lines (`12.0 MiB  model.py:42  3 buffers, largest
/// %fusion.3`), then `… N more (1.2 MiB)` for the rest.
pub fn group_lines(groups: &[SourceGroup], cap: usize) -> Vec<String> {
    let mut lines: Vec<String> = groups
        .iter()
        .take(cap)
        .map(|g| {
            let what = match g.buffers {
                1 => format!("%{}", g.largest),
                n => format!("{n} buffers, largest %{}", g.largest),
            };
            format!("{:>10}  {}  {what}", human_bytes(g.bytes), g.source)
        })
        .collect();
    if groups.len() > cap {
        let rest = &groups[cap..];
        lines.push(format!(
            "… {} more ({})",
            rest.len(),
            human_bytes(rest.iter().map(|g| g.bytes).sum())
        ));
    }
    lines
}
