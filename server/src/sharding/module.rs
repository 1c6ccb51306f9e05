//! The shardings of a module: every instruction with a `sharding=`
//! attribute, read and laid over its shape, and whether the module's shapes
//! are global or already per device. A collective's replica groups are read
//! by the collective model's own reader
//! ([`crate::cost::collective::groups::DeviceList`]), so both agree.

use crate::cost::collective::groups::DeviceList;
use crate::cost::collective::op::Op;
use crate::model::{ComputationRef, Instruction, Module, Shape};

use super::{describe, parse, Leaf, ParseError, ShapeTiles, Sharding, Written};

/// An instruction with a sharding.
pub struct Sharded<'a> {
    pub computation: ComputationRef<'a>,
    pub instruction: &'a Instruction,
    /// The attribute's value as written.
    pub text: &'a str,
    /// Where the value starts in the computation's text.
    pub value_offset: usize,
    pub sharding: Result<Sharding, ParseError>,
}

/// One array of a sharded instruction (the instruction's shape, or one
/// element of its tuple) and its tiles.
pub struct ElementLayout {
    /// The tuple index, `None` for an array-shaped instruction.
    pub index: Option<usize>,
    pub element: String,
    /// The shape as written.
    pub written: Vec<i64>,
    pub leaf: Leaf,
    /// The tiles over the global shape, or why there are none.
    pub tiles: Result<ShapeTiles, String>,
}

/// Every instruction of the module with a `sharding=` attribute, in text order.
pub fn sharded_instructions(module: &Module) -> Vec<Sharded<'_>> {
    let mut out = vec![];
    for computation in module.computations() {
        for instruction in &computation.model().instructions {
            let Some(attribute) = instruction.attribute("sharding") else {
                continue;
            };
            let text = computation.src(attribute.value_range);
            out.push(Sharded {
                computation,
                instruction,
                text,
                value_offset: attribute.value_range.range().start,
                sharding: parse(text),
            });
        }
    }
    out
}

/// Whether the written shapes are global or per device, and why it is
/// believed: XLA's SPMD partitioner rewrites every shape to the device's
/// buffer and inserts the collectives the shardings call for, so a compiled
/// module over several partitions (`is_scheduled` with an
/// `entry_computation_layout`), a file named `*after_optimizations*`, or a
/// module whose ENTRY parameters are sharded and which has collectives, is
/// partitioned.
pub fn written_shapes(module: &Module, path: Option<&str>) -> (Written, String) {
    let partitions = module.num_partitions();
    if path.is_some_and(|p| p.ends_with(".mlir")) {
        return (
            Written::Global,
            "StableHLO is what XLA's SPMD partitioner reads: its shapes are global (a shard_map body's are each device's)".into(),
        );
    }
    if path.is_some_and(|p| p.contains("after_optimizations")) {
        return (
            Written::PerDevice,
            "the file is an after-optimizations dump: XLA's SPMD partitioner has run".into(),
        );
    }
    if module.compiled && partitions > 1 {
        return (
            Written::PerDevice,
            format!("XLA compiled the module over {partitions} partitions: its SPMD partitioner has run"),
        );
    }
    let sharded_parameters = module.entry_computation().is_some_and(|entry| {
        entry
            .model()
            .instructions
            .iter()
            .any(|i| i.opcode.name() == "parameter" && i.attribute("sharding").is_some())
    });
    let collectives = module.computations().any(|c| {
        c.model()
            .instructions
            .iter()
            .any(|i| Op::from_name(i.opcode.name()).is_some())
    });
    if sharded_parameters && collectives {
        return (
            Written::PerDevice,
            "the ENTRY parameters are sharded and the module has collectives, which the partitioner inserts".into(),
        );
    }
    (
        Written::Global,
        "no sign that XLA's SPMD partitioner ran (no collectives beside the shardings, not compiled)".into(),
    )
}

/// The devices a partitioned module runs on, each its own copy of the
/// program: `Some(8)` when the written shapes are per device
/// ([`written_shapes`]) over more than one partition, so a total of its
/// buffers or its time is one device's. `None` for a global module.
pub fn per_device(module: &Module, path: Option<&str>) -> Option<i64> {
    let partitions = module.num_partitions();
    (partitions > 1 && written_shapes(module, path).0 == Written::PerDevice).then_some(partitions)
}

/// The arrays of a sharded instruction laid out, the written shapes read as
/// `written`. `num_devices` names the devices of an untiled sharding.
pub fn layouts(
    shape: &Shape,
    sharding: &Sharding,
    written: Written,
    num_devices: Option<i64>,
) -> Vec<ElementLayout> {
    let mut out = vec![];
    let arrays: Vec<(Option<usize>, &Shape)> = match shape {
        Shape::Tuple(elements) => elements
            .iter()
            .enumerate()
            .map(|(k, e)| (Some(k), e))
            .collect(),
        _ => vec![(None, shape)],
    };
    for (index, element_shape) in arrays {
        let Some(array) = element_shape.as_array() else {
            continue;
        };
        let leaf = match index
            .map_or(Some(sharding), |k| sharding.element(k))
            .and_then(Sharding::v2)
        {
            Some(leaf) => leaf,
            None => continue,
        };
        let global = match written {
            Written::Global => array.dims.clone(),
            Written::PerDevice => leaf.global_of_shard(&array.dims),
        };
        let tiles = leaf.tiles(&global, num_devices);
        out.push(ElementLayout {
            index,
            element: array.element.to_string(),
            written: array.dims.clone(),
            leaf,
            tiles,
        });
    }
    out
}

impl ElementLayout {
    /// [`describe`] of this array, or why it cannot be said.
    pub fn words(&self) -> String {
        match &self.tiles {
            Ok(tiles) => describe(&self.leaf, &self.element, tiles),
            Err(why) => why.clone(),
        }
    }
}

/// A collective's replica groups, decoded to device sets.
pub struct ReplicaGroups<'a> {
    pub instruction: &'a Instruction,
    pub text: &'a str,
    pub groups: Result<Vec<Vec<i64>>, String>,
}

/// The replica groups of every collective with a `replica_groups=`.
pub fn replica_groups(module: &Module) -> Vec<ReplicaGroups<'_>> {
    let mut out = vec![];
    for computation in module.computations() {
        for instruction in &computation.model().instructions {
            let Some(attribute) = instruction.attribute("replica_groups") else {
                continue;
            };
            let text = computation.src(attribute.value_range);
            out.push(ReplicaGroups {
                instruction,
                text,
                groups: DeviceList::parse(text).map(|d| d.groups()),
            });
        }
    }
    out
}
