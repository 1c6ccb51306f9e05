//! The time of one collective: XLA's `SolLatencyEstimator::ComputeCollectiveTime`
//! (`xla/service/gpu/model/sol_latency_estimator.cc`). A collective inside one
//! node is looked up in the measured throughputs ([`CollectiveInterpolator`]),
//! or, annotated for the Triton one/two-shot kernels, costed by NVLink
//! bandwidth; one across nodes by the SoL model's ring or all-to-all over the
//! NICs, plus the time to read and write its buffers in device memory
//! (`DCNCollectiveDuration`).

use std::sync::{Arc, OnceLock};

use super::communication::{communication_type, CommunicationType, PermuteType};
use super::config::{SolConfig, SolParameters};
use super::groups::ModuleConfig;
use super::interpolation::{CollectiveInterpolator, Match};
use super::op::{CollectiveOp, Op};
use super::platform;
use super::sol_model::{CollectiveType, SolModel};
use crate::analysis;
use crate::cost::compute::compute_time;
use crate::cost::{Duration, Model};
use crate::device::Device;
use crate::model::{ComputationRef, Instruction, Module};

/// `GpuPerformanceModelBase::kNcclKernelLaunchOverhead`: what XLA charges a
/// collective across nodes it has no formula for.
const NCCL_KERNEL_LAUNCH_OVERHEAD: Duration = Duration::from_micros(5);

/// How a collective's time was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// XLA's measured throughputs (`CollectiveInterpolator`).
    Interpolator(Match),
    /// The SoL model across nodes, plus the memory time.
    Sol(CollectiveType),
    /// Across nodes with no SoL formula: the NCCL launch and the memory time.
    LaunchOnly,
    /// The intra-node Triton all-reduce kernels over NVLink, plus the memory time.
    Nvlink,
    /// A `*-done`: its time is counted on this start.
    OnStart(String),
}

impl Method {
    /// For reports: `interpolator (exact)`, `SoL ring (all-reduce)`, ...
    pub fn describe(&self) -> String {
        match self {
            Method::Interpolator(Match::Exact) => "XLA's measurements (exact devices)".into(),
            Method::Interpolator(Match::Fallback(c)) => {
                format!("XLA's measurements ({})", c.name())
            }
            Method::Sol(CollectiveType::AllToAll) => "SoL model (all-to-all across nodes)".into(),
            Method::Sol(CollectiveType::SendRecv) => "SoL model (send/receive across nodes)".into(),
            Method::Sol(_) => "SoL model (ring across nodes)".into(),
            Method::LaunchOnly => "NCCL launch only (no SoL formula)".into(),
            Method::Nvlink => "NVLink kernel (Triton all-reduce)".into(),
            Method::OnStart(start) => format!("counted on {start}"),
        }
    }
}

/// A collective's time and how the devices were read for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    pub time: Duration,
    pub method: Method,
    /// Nodes the traffic spans (1 inside a node).
    pub nodes: i64,
    pub communication: Option<CommunicationType>,
}

/// Which interpolator the estimator uses.
#[derive(Clone, Debug)]
pub enum Interpolation {
    /// XLA's default table for the device, built on first use.
    Default,
    /// One given (XLA's tests build one from their own measurements).
    Given(Arc<CollectiveInterpolator>),
    /// None: collectives inside a node are not costed (XLA's `nullptr`).
    Off,
}

/// XLA's `SolLatencyEstimator` for one module on one device.
pub struct Estimator<'a> {
    pub module: &'a Module,
    pub device: &'a Device,
    pub parameters: SolParameters,
    /// NVLink lanes of one GPU (`device_interconnect_info().active_links`).
    pub active_links: i64,
    pub config: ModuleConfig,
    pub interpolation: Interpolation,
    interpolator: OnceLock<Result<Arc<CollectiveInterpolator>, String>>,
    view: OnceLock<analysis::Module<'a>>,
}

impl<'a> Estimator<'a> {
    /// `SolLatencyEstimator::Create`: the parameters from
    /// `SolGPUCostModel::GetConfig(module, device)` with the user's options,
    /// XLA's default table.
    pub fn new(module: &'a Module, device: &'a Device, options: &SolConfig) -> Estimator<'a> {
        Estimator::with_parameters(module, device, SolParameters::for_device(device, options))
    }

    /// An estimator with the parameters given (XLA's tests pass their own).
    pub fn with_parameters(
        module: &'a Module,
        device: &'a Device,
        parameters: SolParameters,
    ) -> Estimator<'a> {
        Estimator {
            module,
            device,
            parameters,
            active_links: platform::active_links(device),
            config: module
                .header_text()
                .map(ModuleConfig::from_header)
                .unwrap_or_default(),
            interpolation: Interpolation::Default,
            interpolator: OnceLock::new(),
            view: OnceLock::new(),
        }
    }

    /// The analysis view, made on first use (loop fusions and reductions).
    pub(super) fn view(&self) -> &analysis::Module<'a> {
        self.view
            .get_or_init(|| analysis::view::borrowed(self.module))
    }

    fn interpolator(&self) -> Result<Arc<CollectiveInterpolator>, String> {
        match &self.interpolation {
            Interpolation::Given(i) => Ok(i.clone()),
            Interpolation::Off => {
                Err("no collective interpolator was given for collectives inside a node".into())
            }
            Interpolation::Default => self
                .interpolator
                .get_or_init(|| {
                    let profile = platform::profile_name(self.device)
                        .ok_or_else(|| "the device's compute capability is not said".to_string())?;
                    CollectiveInterpolator::default_for(&profile, self.parameters.gpus_per_node)
                })
                .clone(),
        }
    }

    /// `GetPartitionSize`: the option's, else a node's GPUs (the module's
    /// own `partition_size` is not in HLO text).
    fn partition_size(&self) -> i64 {
        if self.parameters.partition_size > 0 {
            self.parameters.partition_size
        } else {
            self.parameters.gpus_per_node
        }
    }

    /// The collective an instruction of the model is, with the module's device counts.
    pub fn op(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
    ) -> Result<CollectiveOp, String> {
        CollectiveOp::from_instruction(self.module, computation, instr, self.config)
    }

    /// `ComputeCollectiveTime` of a collective (for an asynchronous one, the
    /// collective it starts).
    pub fn collective_time(&self, op: &CollectiveOp) -> Result<Timed, String> {
        let partition = self.partition_size();
        if op.op.is_permute() {
            let kind = PermuteType::of(&op.pairs, partition);
            if kind == PermuteType::Unknown {
                return Err("a collective-permute without pairs".into());
            }
            if kind.is_intra_partition() {
                let (time, how) = self.interpolator()?.estimated_runtime(op)?;
                return Ok(Timed {
                    time,
                    method: Method::Interpolator(how),
                    nodes: 1,
                    communication: Some(CommunicationType::SinglePartition),
                });
            }
            let (time, method) = self.across_nodes(op, 2, 1)?;
            return Ok(Timed {
                time,
                method,
                nodes: 2,
                communication: Some(CommunicationType::MultiHostNonWorldLevel),
            });
        }
        if !platform::sorts_communication(self.device) {
            return Err("XLA sorts collectives only on CUDA GPUs and AMD's MI350 (gfx950)".into());
        }
        let communication =
            communication_type(partition, &op.devices.groups(), op.config.replica_count)?;
        let (groups, size) = op
            .count_and_size()?
            .ok_or_else(|| format!("the replica groups of {} differ in size", op.name))?;
        let timed = |(time, method): (Duration, Method), nodes: i64| Timed {
            time,
            method,
            nodes,
            communication: Some(communication),
        };
        match communication {
            CommunicationType::MultiHostWorldLevel => {
                let nodes = size / partition;
                Ok(timed(self.across_nodes(op, nodes, groups)?, nodes))
            }
            CommunicationType::MultiHostNonWorldLevel => {
                Ok(timed(self.across_nodes(op, size, groups)?, size))
            }
            CommunicationType::SinglePartition => {
                if is_triton_kernel(op.kernel_strategy.as_deref()) {
                    let sol = SolModel::new(self.parameters.clone());
                    let nvlink = sol.intra_node_all_reduce_latency(
                        op.bytes_transferred,
                        size,
                        self.active_links,
                    )?;
                    return Ok(timed((self.memory_time(op) + nvlink, Method::Nvlink), 1));
                }
                let (time, how) = self.interpolator()?.estimated_runtime(op)?;
                Ok(timed((time, Method::Interpolator(how)), 1))
            }
        }
    }

    /// `1.0f * bytes_accessed / memory_bandwidth`, in single precision as XLA.
    fn memory_time(&self, op: &CollectiveOp) -> Duration {
        let seconds = op.bytes_accessed / self.device.memory_bandwidth as f32;
        Duration::from_secs_f64(f64::from(seconds))
    }

    /// `EstimateRunTimeForInstruction(instr).compute_time` of a reduction: its
    /// flops over the FPUs its launch occupies.
    fn reduction_time(&self, op: &CollectiveOp) -> Duration {
        let Some(site) = op.site else {
            return Duration::ZERO;
        };
        let computation = self.module.computation(site.computation);
        let instr = computation.instruction(site.instruction);
        let launch = Model::new(self.view(), self.module, computation, self.device)
            .kernel(instr)
            .launch;
        compute_time(
            self.device,
            op.flops,
            launch.num_blocks,
            launch.threads_per_block,
        )
    }

    /// `DCNCollectiveDuration`: across `nodes` nodes with `communicators`
    /// communicators (one per replica group).
    fn across_nodes(
        &self,
        op: &CollectiveOp,
        nodes: i64,
        communicators: i64,
    ) -> Result<(Duration, Method), String> {
        let sol = SolModel::new(self.parameters.clone());
        let bytes = op.bytes_transferred;
        let memory = self.memory_time(op);
        let ring = |kind: CollectiveType| -> Result<(Duration, Method), String> {
            let extra = match kind {
                CollectiveType::AllReduce | CollectiveType::ReduceScatter => {
                    self.reduction_time(op)
                }
                _ => Duration::ZERO,
            };
            let network = sol.ring_latency(bytes, nodes, kind, communicators)?;
            Ok((memory + extra + network, Method::Sol(kind)))
        };
        match op.op {
            Op::AllGather | Op::AllGatherStart => ring(CollectiveType::AllGather),
            Op::AllReduce | Op::AllReduceStart => ring(CollectiveType::AllReduce),
            Op::ReduceScatter => ring(CollectiveType::ReduceScatter),
            Op::CollectivePermute | Op::CollectivePermuteStart => ring(CollectiveType::SendRecv),
            Op::AllToAll => Ok((
                memory + sol.all_to_all_latency(bytes, nodes, communicators)?,
                Method::Sol(CollectiveType::AllToAll),
            )),
            Op::RaggedAllToAll | Op::CollectiveBroadcast => {
                Ok((memory + NCCL_KERNEL_LAUNCH_OVERHEAD, Method::LaunchOnly))
            }
        }
    }
}

/// `IsTritonCollectiveKernel`: the Triton one-shot or two-shot all-reduce.
pub fn is_triton_kernel(strategy: Option<&str>) -> bool {
    matches!(
        strategy,
        Some("KERNEL_STRATEGY_TRITON_ONE_SHOT" | "KERNEL_STRATEGY_TRITON_TWO_SHOT")
    )
}
