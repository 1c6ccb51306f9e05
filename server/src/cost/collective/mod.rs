//! Collectives (all-gather, all-reduce, reduce-scatter, all-to-all,
//! collective-permute) costed as XLA's SoL latency estimator does
//! (`xla/service/gpu/model/sol_latency_estimator.cc`), not as kernels: inside a
//! node from XLA's measured network throughput (`CollectiveInterpolator` over
//! its default performance table), across nodes from the Speed-of-Light model
//! of NCCL over the NICs (`SolGPUCostModel`). The time of an asynchronous
//! collective lies on its start; its done costs nothing, so a pair counts once.
//! One concept per file:
//!
//! * [`groups`]: replica groups (lists, iota lists, mesh axes), source-target
//!   pairs, group modes and participant counts;
//! * [`communication`]: inside a node or across nodes, and how a permute runs;
//! * [`op`]: one collective as the models read it (bytes from `GpuHloCostAnalysis`);
//! * [`wrapping`]: starts, dones and `async-start` wrappers;
//! * [`config`]: the SoL model's parameters by device and the user's options;
//! * [`platform`]: the device's XLA name, profile name and NVLink lanes;
//! * [`sol_model`]: `SolGPUCostModel` (ring, all-to-all, NVLink all-reduce);
//! * [`perf_table`], [`interpolation`]: XLA's measured table
//!   (`server/data/collective_perf_table.txt`, read on first use) and
//!   `CollectiveInterpolator`, through the interpolators of
//!   [`crate::cost::interpolator`];
//! * [`estimator`]: `ComputeCollectiveTime`; [`node_cost`]: `NodeCost` and
//!   `GetLatencyBetween`.
//!
//! [`estimate`] is what a kernel ranking calls for each instruction.

pub mod communication;
pub mod config;
pub mod estimator;
pub mod groups;
pub mod interpolation;
pub mod node_cost;
pub mod op;
pub mod perf_table;
pub mod platform;
pub mod sol_model;
pub mod wrapping;

pub use communication::CommunicationType;
pub use config::{SolConfig, SolParameters};
pub use estimator::{Estimator, Interpolation, Method};
pub use node_cost::{NodeCost, WrappedEstimator};
pub use wrapping::Part;

use crate::cost::Duration;
use crate::device::Device;
use crate::model::{ComputationRef, Instruction, Module};
use op::Op;

/// What a collective costs, for a report.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveCost {
    /// The instruction's name.
    pub name: String,
    /// The collective (`all-reduce`, `collective-permute`, ...; a start's or
    /// wrapper's collective).
    pub kind: &'static str,
    pub part: Part,
    /// The time (zero for a done, whose time is on its start), or why it is
    /// not modelled (`not modelled: ...`).
    pub time: Result<Duration, String>,
    pub method: Option<Method>,
    /// Bytes transferred (`GpuHloCostAnalysis::BytesTransferred`).
    pub bytes: i64,
    /// Devices taking part in each group (the devices a permute's pairs name).
    pub devices: Option<i64>,
    /// Groups (communicators) running at once.
    pub groups: Option<i64>,
    /// Nodes the traffic spans (1 inside a node).
    pub nodes: Option<i64>,
    pub communication: Option<CommunicationType>,
}

/// The cost of `instr` if it is a collective or a part of one (`None`
/// otherwise), on `device` with the user's SoL options.
pub fn estimate(
    module: &Module,
    computation: ComputationRef<'_>,
    instr: &Instruction,
    device: &Device,
    options: &SolConfig,
) -> Option<CollectiveCost> {
    Estimator::new(module, device, options).collective(computation, instr)
}

fn not_modelled(why: String) -> String {
    if why.starts_with("not modelled") {
        why
    } else {
        format!("not modelled: {why}")
    }
}

impl Estimator<'_> {
    /// The cost of `instr` if it is a collective or a part of one; an
    /// estimator serves a whole module (its table and analysis view are
    /// made once).
    pub fn collective(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
    ) -> Option<CollectiveCost> {
        let mut cost = CollectiveCost {
            name: instr.name.to_string(),
            kind: "",
            part: Part::Whole,
            time: Ok(Duration::ZERO),
            method: None,
            bytes: 0,
            devices: None,
            groups: None,
            nodes: None,
            communication: None,
        };
        if wrapping::is_send_recv(instr) {
            cost.kind = if instr.opcode.name().starts_with("send") {
                "send"
            } else {
                "recv"
            };
            cost.time = Err(not_modelled(
                "XLA's SoL model does not cost send and recv (its scheduler gives them 1 µs)"
                    .into(),
            ));
            return Some(cost);
        }
        let found = wrapping::find(self.module, computation, instr)?;
        cost.kind = found.op.synchronous().name();
        cost.part = found.part;
        // A `*-done` reads its start; an `async-done` its wrapped collective.
        let (site_computation, site) = match (found.part, Op::from_name(found.instr.opcode.name()))
        {
            (Part::Done, None) => {
                let start = instr
                    .operands
                    .first()
                    .and_then(|o| o.target)
                    .map(|id| computation.instruction(id));
                match start {
                    Some(s) => (computation, s),
                    None => (found.computation, found.instr),
                }
            }
            _ => (found.computation, found.instr),
        };
        let op = self.op(site_computation, site);
        if let Ok(op) = &op {
            cost.bytes = op.bytes_transferred;
            cost.devices = Some(if op.op.is_permute() {
                let mut ids: Vec<i64> = op.pairs.iter().flat_map(|&(s, t)| [s, t]).collect();
                ids.sort_unstable();
                ids.dedup();
                ids.len() as i64
            } else {
                op.count_and_size()
                    .ok()
                    .flatten()
                    .map_or(0, |(_, size)| size)
            });
            cost.groups = op.count_and_size().ok().flatten().map(|(count, _)| count);
        }
        if found.part == Part::Done {
            let start = instr.operands.first().and_then(|o| o.target).map_or_else(
                || "its start".to_string(),
                |id| computation.instruction(id).name.to_string(),
            );
            cost.method = Some(Method::OnStart(start));
            return Some(cost);
        }
        match op.and_then(|op| self.collective_time(&op)) {
            Ok(timed) => {
                cost.time = Ok(timed.time);
                cost.method = Some(timed.method);
                cost.nodes = Some(timed.nodes);
                cost.communication = timed.communication;
            }
            Err(why) => cost.time = Err(not_modelled(why)),
        }
        Some(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    /// An async-start around a reduce-scatter across two nodes, its done, and
    /// a `call` of a computation holding an all-gather.
    const MODULE: &str = "HloModule m, num_partitions=16\n\nadd {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n  ROOT s = bf16[] add(a, b)\n}\n\nrs {\n  x = bf16[8192,1024] parameter(0)\n  ROOT r = bf16[512,1024] reduce-scatter(x), dimensions={0}, to_apply=add, replica_groups=[1,16]<=[16], channel_id=1, use_global_device_ids=true\n}\n\ngather {\n  y = bf16[64,1024] parameter(0)\n  ROOT g = bf16[512,1024] all-gather(y), dimensions={0}, replica_groups=[2,8]<=[16], channel_id=2, use_global_device_ids=true\n}\n\nENTRY e {\n  p = bf16[8192,1024] parameter(0)\n  start = ((bf16[8192,1024]), bf16[512,1024]) async-start(p), calls=rs\n  done = bf16[512,1024] async-done(start)\n  ROOT c = bf16[512,1024] call(done), to_apply=gather\n}\n";

    #[test]
    fn a_pair_counts_once_and_a_call_is_not_a_collective() {
        let file = model::parse_hlo(MODULE);
        let module = &file.modules[0];
        let device = Device::h100();
        let options = SolConfig::default();
        let entry = module.entry_computation().unwrap();
        let cost = |name: &str| {
            let instr = entry.model().instruction_by_name(name).unwrap();
            estimate(module, entry, instr, &device, &options)
        };
        let start = cost("start").unwrap();
        assert_eq!((start.kind, start.part), ("reduce-scatter", Part::Start));
        assert_eq!(
            start.method,
            Some(Method::Sol(sol_model::CollectiveType::ReduceScatter))
        );
        assert_eq!(
            (start.devices, start.groups, start.nodes),
            (Some(16), Some(1), Some(2))
        );
        assert_eq!(start.bytes, 8192 * 1024 * 2);
        assert!(start.time.unwrap() > Duration::from_micros(45));
        let done = cost("done").unwrap();
        assert_eq!((done.part, done.time), (Part::Done, Ok(Duration::ZERO)));
        assert_eq!(done.method, Some(Method::OnStart("start".into())));
        assert_eq!(cost("c"), None);
        assert_eq!(cost("p"), None);
        // The all-gather inside the called computation is costed where it stands.
        let gather = module.computation(module.computation_by_name("gather").unwrap());
        let g = gather.model().instruction_by_name("g").unwrap();
        let all_gather = estimate(module, gather, g, &device, &options).unwrap();
        assert_eq!(
            all_gather.communication,
            Some(CommunicationType::SinglePartition)
        );
        assert!(all_gather.time.unwrap() > Duration::ZERO);
    }

    #[test]
    fn what_cannot_be_costed_says_why() {
        let text = "HloModule m, num_partitions=8\n\nENTRY e {\n  p = f32[64] parameter(0)\n  ROOT a = f32[64] all-to-all(p), dimensions={0}, replica_groups={{0,1},{2,3,4}}, channel_id=1\n}\n";
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let a = entry.model().root_instruction().unwrap();
        // The A6000 (sm_86) has no measurements; the groups differ anyway.
        for device in [Device::a6000(), Device::h100()] {
            let cost = estimate(module, entry, a, &device, &SolConfig::default()).unwrap();
            let why = cost.time.unwrap_err();
            assert!(why.starts_with("not modelled: "), "{why}");
        }
    }
}
