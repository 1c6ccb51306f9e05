//! Where a buffer comes from in the user's program: `model.py:42`, the innermost
//! frame of its instruction's `stack_frame_id` (JAX keeps the user's frames), else
//! its `source_file` / `source_line` metadata.

use crate::model::metadata::OpMetadata;
use crate::model::stack_frames::StackFrameIndex;
use crate::model::Module;

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
