//! One collective as XLA's collective cost models read it: its opcode, its
//! devices, the module's device counts, and what `GpuHloCostAnalysis` records
//! for it (`BytesTransferred`, `bytes_accessed`, the reduction's flops, in
//! `HandleAllReduce`, `HandleAllGather(Start)`, `HandleReduceScatter`,
//! `HandleAllToAll`, `HandleCollectivePermute(Start)`). Built from an
//! instruction of the model, or from a measurement of XLA's performance table
//! (`CollectiveInterpolator::ConstructModule`), so both meet the same rules.

use super::groups::{self, DeviceList, GroupMode, ModuleConfig, Participants};
use crate::cost::{hlo_cost, profile};
use crate::model::{
    ComputationId, ComputationRef, InstrId, Instruction, Module, PrimitiveType, Shape,
};

/// The collective opcodes XLA's collective cost models tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    AllGather,
    AllGatherStart,
    AllReduce,
    AllReduceStart,
    ReduceScatter,
    AllToAll,
    RaggedAllToAll,
    CollectiveBroadcast,
    CollectivePermute,
    CollectivePermuteStart,
}

impl Op {
    const NAMES: [(&'static str, Op); 10] = [
        ("all-gather", Op::AllGather),
        ("all-gather-start", Op::AllGatherStart),
        ("all-reduce", Op::AllReduce),
        ("all-reduce-start", Op::AllReduceStart),
        ("reduce-scatter", Op::ReduceScatter),
        ("all-to-all", Op::AllToAll),
        ("ragged-all-to-all", Op::RaggedAllToAll),
        ("collective-broadcast", Op::CollectiveBroadcast),
        ("collective-permute", Op::CollectivePermute),
        ("collective-permute-start", Op::CollectivePermuteStart),
    ];

    pub fn from_name(name: &str) -> Option<Op> {
        Op::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, op)| op)
    }

    pub fn name(self) -> &'static str {
        Op::NAMES
            .iter()
            .find(|(_, op)| *op == self)
            .map_or("?", |(n, _)| n)
    }

    /// The synchronous collective a `*-start` runs.
    pub fn synchronous(self) -> Op {
        match self {
            Op::AllGatherStart => Op::AllGather,
            Op::AllReduceStart => Op::AllReduce,
            Op::CollectivePermuteStart => Op::CollectivePermute,
            other => other,
        }
    }

    pub fn is_permute(self) -> bool {
        self.synchronous() == Op::CollectivePermute
    }

    /// Whether the instruction class has `use_global_device_ids`
    /// (`HloAllGatherInstruction`, `HloAllReduceInstructionBase`).
    fn has_global_device_ids(self) -> bool {
        matches!(
            self,
            Op::AllGather
                | Op::AllGatherStart
                | Op::AllReduce
                | Op::AllReduceStart
                | Op::ReduceScatter
        )
    }

    /// `RequiresAccumulation`: the measurement depends on the element type.
    pub fn requires_accumulation(self) -> bool {
        matches!(self, Op::AllReduce | Op::AllReduceStart | Op::ReduceScatter)
    }
}

/// Where the instruction a [`CollectiveOp`] came from stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub computation: ComputationId,
    pub instruction: InstrId,
}

/// One collective, as the cost models read it.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveOp {
    pub name: String,
    pub op: Op,
    /// The element type of the instruction's shape when it is an array
    /// (`shape().element_type()`; a tuple has none).
    pub element: Option<PrimitiveType>,
    pub devices: DeviceList,
    /// A collective-permute's `source_target_pairs`.
    pub pairs: Vec<(i64, i64)>,
    pub has_channel_id: bool,
    pub use_global_device_ids: bool,
    pub config: ModuleConfig,
    /// `GpuHloCostAnalysis::BytesTransferred`.
    pub bytes_transferred: i64,
    /// `bytes_accessed` (XLA keeps it as a `float`).
    pub bytes_accessed: f32,
    /// Flops of the reduction (`GetFlopsForElementwiseOp` of the reducer's root).
    pub flops: i64,
    /// `collective_backend_config.kernel_strategy` from the backend config.
    pub kernel_strategy: Option<String>,
    /// `collective_backend_config.is_sync`.
    pub is_sync: bool,
    pub site: Option<Site>,
}

/// The shapes the byte counts are made of.
struct Shapes<'s> {
    output: &'s Shape,
    operands: Vec<&'s Shape>,
}

/// `ShapeSize(shape, shape_size, index_to_skip)`: every array leaf's bytes,
/// leaving out the top-level tuple element `skip`.
fn leaf_bytes(shape: &Shape, skip: Option<usize>) -> i64 {
    match (shape, skip) {
        (Shape::Tuple(elements), Some(skip)) => elements
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != skip)
            .map(|(_, e)| hlo_cost::output_leaf_bytes(e))
            .sum(),
        _ => hlo_cost::output_leaf_bytes(shape),
    }
}

impl CollectiveOp {
    /// `GetCollectiveOpGroupMode` of this collective.
    pub fn group_mode(&self) -> Result<GroupMode, String> {
        GroupMode::of(
            self.has_channel_id,
            self.op
                .has_global_device_ids()
                .then_some(self.use_global_device_ids),
        )
    }

    /// `GetParticipantCountsForReplicaGroups` of this collective.
    pub fn participants(&self) -> Result<Participants, String> {
        Participants::count(self.config, &self.devices.groups(), self.group_mode()?)
    }

    /// `GetReplicaGroupCountAndSize`.
    pub fn count_and_size(&self) -> Result<Option<(i64, i64)>, String> {
        groups::group_count_and_size(&self.devices, self.config, self.group_mode())
    }

    /// Reads `instr` of `computation` (a collective opcode, not an async wrapper).
    pub fn from_instruction(
        module: &Module,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        config: ModuleConfig,
    ) -> Result<CollectiveOp, String> {
        let op = Op::from_name(instr.opcode.name())
            .ok_or_else(|| format!("{} is not a collective", instr.opcode.name()))?;
        let text = |name: &str| {
            instr
                .attribute(name)
                .map(|a| computation.src(a.value_range))
        };
        let devices = match text("replica_groups") {
            Some(t) => DeviceList::parse(t)?,
            None => DeviceList::empty(),
        };
        let pairs = match text("source_target_pairs") {
            Some(t) => groups::parse_pairs(t)?,
            None => vec![],
        };
        let backend = instr.attrs().backend_config().unwrap_or_default();
        let collective = &backend["collective_backend_config"];
        let mut result = CollectiveOp {
            name: instr.name.to_string(),
            op,
            element: instr.shape.as_array().map(|a| a.element.clone()),
            devices,
            pairs,
            has_channel_id: instr.attribute("channel_id").is_some(),
            use_global_device_ids: text("use_global_device_ids").map(str::trim) == Some("true"),
            config,
            bytes_transferred: 0,
            bytes_accessed: 0.0,
            flops: 0,
            kernel_strategy: collective["kernel_strategy"].as_str().map(str::to_string),
            is_sync: collective["is_sync"].as_bool().unwrap_or(false),
            site: Some(Site {
                computation: computation.id,
                instruction: instr.id,
            }),
        };
        static INVALID: Shape = Shape::Invalid;
        let shapes = Shapes {
            output: &instr.shape,
            operands: (0..instr.operands.len())
                .map(|k| {
                    computation
                        .model()
                        .operand_shape(instr, k)
                        .unwrap_or(&INVALID)
                })
                .collect(),
        };
        result.count_bytes(&shapes)?;
        if op.requires_accumulation() {
            let root = instr
                .called
                .iter()
                .find(|c| c.attribute == "to_apply")
                .and_then(|c| module.resolve(c))
                .and_then(|c| {
                    c.model()
                        .root_instruction()
                        .map(|r| r.opcode.name().to_string())
                });
            let element = instr
                .shape
                .leaves()
                .first()
                .map_or(PrimitiveType::F32, |a| a.element.clone());
            if let Some(root) = root {
                result.flops = profile::flops_per_element(&root, &element)
                    * hlo_cost::elements_recursive(&instr.shape);
            }
        }
        Ok(result)
    }

    /// The collective XLA builds from one measurement of its table
    /// (`ConstructModule`): `elements` of `element` in one dimension (the
    /// output; a reduce-scatter's operand is `devices per group` times larger,
    /// an all-gather's that much smaller), channel 1, global device ids.
    pub fn measured(
        op: Op,
        element: PrimitiveType,
        elements: i64,
        devices: DeviceList,
        pairs: Vec<(i64, i64)>,
    ) -> Result<CollectiveOp, String> {
        let per_group = match &devices {
            DeviceList::Iota(i) | DeviceList::Mesh(i) => i.size,
            DeviceList::Explicit(g) => g.first().map_or(0, |g| g.len() as i64),
        };
        let output = Shape::array(element.clone(), vec![elements]);
        let operand = match op {
            Op::ReduceScatter => Shape::array(element.clone(), vec![elements * per_group]),
            Op::AllGather if per_group > 0 => {
                Shape::array(element.clone(), vec![elements / per_group])
            }
            _ => output.clone(),
        };
        let mut result = CollectiveOp {
            name: "_".into(),
            op,
            element: Some(element),
            devices,
            pairs,
            has_channel_id: true,
            use_global_device_ids: op.has_global_device_ids(),
            config: ModuleConfig::default(),
            bytes_transferred: 0,
            bytes_accessed: 0.0,
            flops: 0,
            kernel_strategy: None,
            is_sync: false,
            site: None,
        };
        result.count_bytes(&Shapes {
            output: &output,
            operands: vec![&operand],
        })?;
        Ok(result)
    }

    /// `BytesTransferred` and `bytes_accessed` as `GpuHloCostAnalysis`'s
    /// handlers set them; collectives without a handler keep
    /// `HloCostAnalysis::Preprocess`'s default (output plus operands) and
    /// transfer nothing.
    fn count_bytes(&mut self, shapes: &Shapes<'_>) -> Result<(), String> {
        let operands: i64 = shapes
            .operands
            .iter()
            .map(|s| hlo_cost::shape_size(s))
            .sum();
        // `Preprocess` adds each output leaf, then each operand, to a `float`.
        let default = shapes
            .output
            .leaves()
            .iter()
            .map(|a| hlo_cost::array_bytes(a))
            .chain(shapes.operands.iter().map(|s| hlo_cost::shape_size(s)))
            .fold(0f32, |sum, bytes| sum + bytes as f32);
        let ring = |bytes: i64, ranks: i64, writes: i64, reads: i64| {
            let rank = bytes / ranks;
            (rank * writes + rank * reads) as f32
        };
        let (transferred, accessed) = match self.op {
            Op::AllReduce => {
                let out = leaf_bytes(shapes.output, None);
                (out, (out + operands) as f32)
            }
            Op::AllReduceStart => {
                self.participants()?;
                let out = leaf_bytes(shapes.output, None);
                (out, out as f32)
            }
            Op::AllGather | Op::AllGatherStart => {
                let r = self.participants()?.num_ranks();
                let skip = (self.op == Op::AllGatherStart).then_some(0);
                let out = leaf_bytes(shapes.output, skip);
                (out, ring(out, r, 2 * r - 1, r))
            }
            Op::ReduceScatter => {
                let r = self.participants()?.num_ranks();
                let input: i64 = shapes.operands.iter().map(|s| leaf_bytes(s, None)).sum();
                (input, ring(input, r, r, 2 * r - 1))
            }
            Op::AllToAll => (leaf_bytes(shapes.output, None), default),
            Op::CollectivePermute | Op::CollectivePermuteStart => (
                shapes
                    .operands
                    .first()
                    .map_or(0, |s| hlo_cost::shape_size(s)),
                default,
            ),
            Op::RaggedAllToAll | Op::CollectiveBroadcast => (0, default),
        };
        if self.op == Op::AllReduce {
            self.participants()?;
        }
        // XLA keeps every property as a `float`, and reads this one back as
        // an integer.
        self.bytes_transferred = transferred as f32 as i64;
        self.bytes_accessed = accessed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    fn op(text: &str, name: &str) -> CollectiveOp {
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let instr = entry.model().instruction_by_name(name).unwrap();
        let config = ModuleConfig::from_header(text.lines().next().unwrap());
        CollectiveOp::from_instruction(module, entry, instr, config).unwrap()
    }

    #[test]
    fn an_all_gather_start_moves_its_output_and_rings_its_shards() {
        let text = "HloModule m, num_partitions=16\n\nENTRY main {\n  p = bf16[16000,1000] parameter(0)\n  ag-start = (bf16[16000,1000], bf16[16000,8000]) all-gather-start(p), replica_groups={{0,1,2,3,4,5,6,7},{8,9,10,11,12,13,14,15}}, channel_id=1, use_global_device_ids=true, dimensions={1}\n  ROOT ag-done = bf16[16000,8000] all-gather-done(ag-start)\n}\n";
        let ag = op(text, "ag-start");
        assert_eq!(ag.op, Op::AllGatherStart);
        assert_eq!(ag.bytes_transferred, 16000 * 8000 * 2);
        let rank = 16000 * 1000 * 2;
        assert_eq!(ag.bytes_accessed, (rank * 15 + rank * 8) as f32);
        assert_eq!(ag.count_and_size().unwrap(), Some((2, 8)));
        assert_eq!(ag.element, None);
    }

    #[test]
    fn an_all_reduce_counts_its_reduction() {
        let text = "HloModule m, num_partitions=8\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[256] parameter(0)\n  ROOT ar = f32[256] all-reduce(p), to_apply=add, replica_groups=[1,8]<=[8], use_global_device_ids=true, channel_id=1\n}\n";
        let ar = op(text, "ar");
        assert_eq!((ar.bytes_transferred, ar.bytes_accessed), (1024, 2048.0));
        assert_eq!(ar.flops, 3 * 256);
        assert!(ar.devices.is_iota());
    }

    /// JAX 0.10 prints `replica_groups=mesh['axis_0'=1,'axis_1'=8] {'axis_1'}`; the
    /// grammar reads the whole value, so the collective is modelled with the groups
    /// XLA makes of the mesh (one group of the 8 devices on `axis_1`).
    #[test]
    fn mesh_replica_groups_are_modelled_with_xla_s_groups() {
        let text = "HloModule m, num_partitions=8\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[256] parameter(0)\n  ROOT ar = f32[256] all-reduce(p), channel_id=1, replica_groups=mesh['axis_0'=1,'axis_1'=8] {'axis_1'}, use_global_device_ids=true, to_apply=add\n}\n";
        let ar = op(text, "ar");
        assert_eq!(ar.devices.groups(), vec![(0..8).collect::<Vec<i64>>()]);
        assert_eq!((ar.bytes_transferred, ar.bytes_accessed), (1024, 2048.0));
    }

    #[test]
    fn a_measurement_rebuilds_xla_s_module() {
        let iota = DeviceList::parse("[2,8]<=[16]").unwrap();
        let rs = CollectiveOp::measured(Op::ReduceScatter, PrimitiveType::F32, 32, iota, vec![])
            .unwrap();
        assert_eq!(rs.bytes_transferred, 32 * 8 * 4);
    }
}
