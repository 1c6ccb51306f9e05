//! The sharding line of an instruction's hover: what its `sharding=` means
//! in words ([`crate::sharding::describe`]), per device beside global, and
//! whether the written shapes were read as global or per device.

use crate::model::{ComputationRef, Instruction, Module};
use crate::sharding;

/// "Sharding: dim 1 split 4 ways, each tile on 2 devices (replicated); per
/// device f32[64,32] of global f32[64,128] (shapes read as partitioned)", or
/// why the sharding cannot be read; `None` without a sharding.
pub fn hover_line(
    module: &Module,
    computation: ComputationRef<'_>,
    instruction: &Instruction,
    file_name: Option<&str>,
) -> Option<String> {
    let attribute = instruction.attribute("sharding")?;
    let parsed = match sharding::parse(computation.src(attribute.value_range)) {
        Ok(parsed) => parsed,
        Err(e) => return Some(format!("Sharding: cannot be read ({e})")),
    };
    let (written, _) = sharding::written_shapes(module, file_name);
    let devices = (module.num_partitions() > 1).then(|| module.num_partitions());
    let words: Vec<String> = sharding::layouts(&instruction.shape, &parsed, written, devices)
        .iter()
        .map(|l| match l.index {
            Some(k) => format!("{{{k}}} {}", l.words()),
            None => l.words(),
        })
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(format!(
        "Sharding: {} (shapes read as {})",
        words.join("; "),
        written.name()
    ))
}
