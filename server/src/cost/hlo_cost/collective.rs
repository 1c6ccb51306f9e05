//! What `GpuHloCostAnalysis` records for collectives: the bytes a collective
//! moves between devices (`BytesTransferred`), and the bytes it reads and
//! writes in a ring over its ranks (`HandleAllReduce`, `HandleAllGather`,
//! `HandleReduceScatter`, `HandleAllToAll`, `HandleCollectivePermute`, their
//! async starts, and an `async-start` wrapping a reduce-scatter or all-to-all).
//!
//! The ranks of a collective (`NumRanks`) are the size of its largest replica
//! group, read in XLA's group mode (`GetCollectiveOpGroupMode`,
//! `GetParticipantCountsForReplicaGroups`) from `channel_id`,
//! `use_global_device_ids` and the module's replica and partition counts.

use crate::model::{ComputationRef, Instruction, Module, Opcode, Shape};

use super::{operand_shape, output_leaf_bytes, shape_size, Analysis, InstructionCost};

/// `CollectiveOpGroupMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupMode {
    CrossReplica,
    CrossPartition,
    CrossReplicaAndPartition,
    FlattenedId,
}

/// The attribute's text as written, if the instruction has it.
fn attribute<'a>(c: ComputationRef<'a>, instr: &Instruction, name: &str) -> Option<&'a str> {
    instr.attribute(name).map(|a| c.src(a.value_range).trim())
}

/// `GetCollectiveOpGroupMode(has_channel_id, use_global_device_ids)`; the
/// latter is only read for all-gathers and all-reduces (and reduce-scatters).
fn group_mode(c: ComputationRef<'_>, instr: &Instruction) -> GroupMode {
    let has_channel = attribute(c, instr, "channel_id").is_some();
    let reads_global = matches!(
        instr.opcode,
        Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::ReduceScatter
    );
    let global = reads_global
        .then(|| attribute(c, instr, "use_global_device_ids"))
        .flatten()
        .map(|v| v == "true");
    match (has_channel, global) {
        (false, _) => GroupMode::CrossReplica,
        (true, None) => GroupMode::CrossPartition,
        (true, Some(false)) => GroupMode::CrossReplicaAndPartition,
        (true, Some(true)) => GroupMode::FlattenedId,
    }
}

/// The size of each replica group: `{{0,1},{2,3}}` lists them; the iota form
/// `[2,4]<=[8]` (groups, then their size) gives them by count. `None` when
/// there are no groups (`{}` or no attribute).
fn group_sizes(text: &str) -> Option<Vec<i64>> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('[') {
        let dims: Vec<i64> = rest
            .split(']')
            .next()?
            .split(',')
            .map(|d| d.trim().parse().ok())
            .collect::<Option<_>>()?;
        return match dims[..] {
            [groups, size] => Some(vec![size; usize::try_from(groups).ok()?]),
            [size] => Some(vec![size]),
            _ => None,
        };
    }
    let inner = text.strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.is_empty() {
        return None;
    }
    let sizes: Vec<i64> = inner
        .split('}')
        .filter_map(|group| {
            let ids = group.trim_start_matches([',', ' ', '{']).trim();
            (!ids.is_empty()).then(|| ids.split(',').count() as i64)
        })
        .collect();
    (!sizes.is_empty()).then_some(sizes)
}

/// `NumRanks`: the largest number of participants of a group (at least 1).
pub(super) fn num_ranks(module: &Module, c: ComputationRef<'_>, instr: &Instruction) -> i64 {
    let replicas = module.replica_count().max(1);
    let partitions = module.num_partitions().max(1);
    let mode = group_mode(c, instr);
    let sizes = attribute(c, instr, "replica_groups")
        .and_then(group_sizes)
        .unwrap_or_else(|| {
            vec![match mode {
                GroupMode::CrossPartition => partitions,
                _ => replicas,
            }]
        });
    let counts = sizes.iter().map(|&s| match mode {
        GroupMode::CrossReplicaAndPartition => s.saturating_mul(partitions),
        _ => s,
    });
    counts.max().unwrap_or(1).max(1)
}

/// `ShapeSize(shape, ...)` of the GPU analysis: every array leaf, skipping the
/// leaves under tuple element `skip` (an async start's operands).
fn leaves_skipping(shape: &Shape, skip: Option<usize>) -> i64 {
    match shape {
        Shape::Tuple(elements) => elements
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != skip)
            .map(|(_, s)| output_leaf_bytes(s))
            .sum(),
        other => output_leaf_bytes(other),
    }
}

impl Analysis<'_, '_> {
    /// The collective handlers; `false` when `instr` is no collective they know.
    pub(super) fn collective(
        &self,
        c: ComputationRef<'_>,
        instr: &Instruction,
        cost: &mut InstructionCost,
    ) -> bool {
        match instr.opcode {
            Opcode::AllReduce => {
                let output = output_leaf_bytes(&instr.shape);
                let operands: i64 = (0..instr.operands.len())
                    .map(|k| shape_size(operand_shape(c, instr, k)))
                    .sum();
                cost.output_bytes = output;
                cost.bytes_transferred = output;
                cost.bytes_accessed = output + operands;
                cost.flops = self.reduction_flops(instr, &instr.shape);
            }
            Opcode::AllReduceStart => {
                let transferred = leaves_skipping(&instr.shape, None);
                cost.flops = self.reduction_flops(instr, &instr.shape);
                cost.bytes_accessed = transferred;
                cost.bytes_transferred = transferred;
            }
            Opcode::AllGather | Opcode::AllGatherStart => {
                let ranks = num_ranks(self.module, c, instr);
                let skip = (instr.opcode == Opcode::AllGatherStart).then_some(0);
                let transferred = leaves_skipping(&instr.shape, skip);
                let rank_bytes = transferred / ranks;
                let write = rank_bytes * (2 * ranks - 1);
                let read = rank_bytes * ranks;
                cost.bytes_accessed = write + read;
                cost.bytes_transferred = transferred;
            }
            Opcode::ReduceScatter => self.reduce_scatter(c, instr, cost),
            Opcode::AllToAll => cost.bytes_transferred = leaves_skipping(&instr.shape, None),
            Opcode::CollectivePermute | Opcode::CollectivePermuteStart => {
                cost.bytes_transferred += shape_size(operand_shape(c, instr, 0));
            }
            Opcode::AsyncStart => self.async_start(instr, cost),
            _ => return false,
        }
        true
    }

    /// `HandleReduceScatter`: the operands move in a ring; each rank reads
    /// `2N - 1` shards and writes `N`.
    fn reduce_scatter(
        &self,
        c: ComputationRef<'_>,
        instr: &Instruction,
        cost: &mut InstructionCost,
    ) {
        let ranks = num_ranks(self.module, c, instr);
        let transferred: i64 = (0..instr.operands.len())
            .map(|k| output_leaf_bytes(operand_shape(c, instr, k)))
            .sum();
        let rank_bytes = transferred / ranks;
        cost.bytes_accessed = rank_bytes * ranks + rank_bytes * (2 * ranks - 1);
        cost.bytes_transferred = transferred;
        cost.flops = self.reduction_flops(instr, &instr.shape);
    }

    /// `HandleAsyncStart` of the GPU analysis: the wrapped instruction is analyzed
    /// on its own, and the start records only what a wrapped reduce-scatter or
    /// all-to-all moves (XLA resets the start's other properties to zero).
    fn async_start(&self, instr: &Instruction, cost: &mut InstructionCost) {
        *cost = InstructionCost {
            operand_bytes: vec![0; instr.operands.len()],
            operand_utilization: vec![0.0; instr.operands.len()],
            ..InstructionCost::default()
        };
        let Some(wrapped_c) = instr
            .called
            .iter()
            .find(|called| called.attribute == "calls")
            .and_then(|called| self.module.resolve(called))
        else {
            return;
        };
        let Some(wrapped) = wrapped_c.model().root_instruction() else {
            return;
        };
        let mut inner = InstructionCost::default();
        match wrapped.opcode {
            Opcode::ReduceScatter => self.reduce_scatter(wrapped_c, wrapped, &mut inner),
            Opcode::AllToAll => inner.bytes_transferred = leaves_skipping(&wrapped.shape, None),
            _ => return,
        }
        cost.bytes_accessed = inner.bytes_accessed;
        cost.bytes_transferred = inner.bytes_transferred;
        cost.flops = inner.flops;
    }

    /// `GetFlopsForElementwiseOp(to_apply root opcode, shape)`: the reduction's
    /// op once per element of `shape` (a tuple's element type is no array type,
    /// so its ops cost the default).
    fn reduction_flops(&self, instr: &Instruction, shape: &Shape) -> i64 {
        let Some(applied) = self.module.called_computation(instr, "to_apply") else {
            return 0;
        };
        let Some(root) = applied.model().root_instruction() else {
            return 0;
        };
        let per_element = match shape.as_array() {
            Some(a) => self
                .options
                .profile
                .flops_per_element(root.opcode.name(), &a.element),
            None => crate::cost::profile::DEFAULT_FLOPS_PER_ELEMENT,
        };
        per_element.saturating_mul(super::elements_recursive(shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_groups_in_both_spellings() {
        assert_eq!(group_sizes("{{0,1,2,3}}"), Some(vec![4]));
        assert_eq!(group_sizes("{{0,1},{2,3},{4,5}}"), Some(vec![2, 2, 2]));
        assert_eq!(group_sizes("[2,4]<=[8]"), Some(vec![4, 4]));
        assert_eq!(group_sizes("[4,2]<=[2,4]T(1,0)"), Some(vec![2, 2, 2, 2]));
        assert_eq!(group_sizes("{}"), None);
    }

    /// An all-gather of four 4 KB shards: 16 KB move; in a ring each rank writes
    /// `2N - 1` shards and reads `N` (the formula of XLA's `HandleAllGather`).
    #[test]
    fn an_all_gather_moves_its_output_in_a_ring() {
        let text = "HloModule m, num_partitions=4

ENTRY e {
  p = f32[1024] parameter(0)
  ROOT g = f32[4096] all-gather(p), dimensions={0}, replica_groups={{0,1,2,3}}, channel_id=1, use_global_device_ids=true
}
";
        let file = crate::model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let g = entry.model().instruction_by_name("g").unwrap();
        let cost = super::super::analyze(module, entry, g);
        assert_eq!(cost.bytes_transferred, 16384);
        assert_eq!(cost.bytes_accessed, 4096 * 7 + 4096 * 4);
        assert_eq!(num_ranks(module, entry, g), 4);
    }
}
