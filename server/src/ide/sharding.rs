//! The sharding line of an instruction's hover: what its `sharding=` means
//! in words ([`crate::sharding::describe`]), per device beside global, and
//! whether the written shapes were read as global or per device.

use crate::cost::collective::groups::DeviceList;
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

/// The devices a collective's `replica_groups=` names, in every form XLA writes
/// (explicit lists, iota `[2,4]<=[8]`, JAX's mesh form): "Replica groups: 2 groups
/// of 4 devices: {0,1,2,3} {4,5,6,7}" (the first 4 groups), or why they cannot be
/// read; `None` without the attribute.
pub fn replica_groups_line(
    computation: ComputationRef<'_>,
    instruction: &Instruction,
) -> Option<String> {
    let attribute = instruction.attribute("replica_groups")?;
    let text = computation.src(attribute.value_range);
    let groups = match DeviceList::parse(text) {
        Ok(list) => list.groups(),
        Err(e) => return Some(format!("Replica groups: cannot be read ({e})")),
    };
    if groups.is_empty() {
        return Some("Replica groups: none written, every device in one group".into());
    }
    const SHOWN: usize = 4;
    let list = |g: &Vec<i64>| {
        let ids: Vec<String> = g.iter().map(i64::to_string).collect();
        format!("{{{}}}", ids.join(","))
    };
    let mut shown: Vec<String> = groups.iter().take(SHOWN).map(list).collect();
    if groups.len() > SHOWN {
        shown.push(format!("… {} more", groups.len() - SHOWN));
    }
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let size = if sizes.iter().all(|&s| s == sizes[0]) {
        format!(
            "of {} device{}",
            sizes[0],
            if sizes[0] == 1 { "" } else { "s" }
        )
    } else {
        "of different sizes".to_string()
    };
    Some(format!(
        "Replica groups: {} group{} {size}: {}",
        groups.len(),
        if groups.len() == 1 { "" } else { "s" },
        shown.join(" ")
    ))
}
