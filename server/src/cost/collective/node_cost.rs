//! What XLA's latency-hiding scheduler asks the SoL estimator of every
//! instruction (`SolLatencyEstimator::NodeCost`) and of every edge
//! (`GetLatencyBetween`): an asynchronous collective costs little as a node
//! (`kLowCost`) and its time lies on the edge from its start to its done; a
//! synchronous Triton all-reduce blocks, so its time is the node's; a Mosaic
//! kernel says its own (`latency_metadata`, ns); matmuls come from XLA's
//! `MatmulInterpolator` ([`crate::cost::matmul`]); loop and input fusions from
//! the GPU performance model; anything else from the estimator XLA wraps
//! (the [`WrappedEstimator`] hook), scaled by 0.01. Times are microseconds, as
//! XLA's `TimeCost`.

use super::estimator::{is_triton_kernel, Estimator};
use super::wrapping::{self, Part};
use crate::cost::{Duration, Model};
use crate::model::{ComputationRef, Instruction, Module, Opcode};

/// `SolLatencyEstimator::kLowCost` and `kLowLatency`: 1 µs.
pub const LOW_COST: f64 = 1.0;

/// The estimator XLA's SoL estimator wraps and falls back on, in its own
/// units (cycles; `cycles_per_microsecond` converts `latency_metadata`).
pub trait WrappedEstimator {
    fn node_cost(&self, instr: &Instruction) -> f64;
    /// `GetLatencyBetween`; `async_pair` says whether `from` starts what `to` ends.
    fn latency_between(&self, from: &Instruction, to: &Instruction, async_pair: bool) -> f64;
    fn cycles_per_microsecond(&self) -> f64 {
        1.0
    }
}

/// The wrapped estimator of XLA's tests (`DummyLatencyEstimator`): zero
/// everywhere, one cycle per microsecond.
pub struct Dummy;

impl WrappedEstimator for Dummy {
    fn node_cost(&self, _: &Instruction) -> f64 {
        0.0
    }
    fn latency_between(&self, _: &Instruction, _: &Instruction, _: bool) -> f64 {
        0.0
    }
}

/// XLA's `ApproximateLatencyEstimator`: a loop fusion costs 1000, an output
/// fusion or a convolution 5000, anything else 1; an asynchronous pair's
/// latency is 5000, any other 1.
pub struct Approximate;

impl WrappedEstimator for Approximate {
    fn node_cost(&self, instr: &Instruction) -> f64 {
        match (instr.opcode.name(), fusion_kind(instr)) {
            ("fusion", Some("kLoop")) => 1000.0,
            ("fusion", Some("kOutput")) | ("convolution", _) => 5000.0,
            _ => 1.0,
        }
    }
    fn latency_between(&self, _: &Instruction, _: &Instruction, async_pair: bool) -> f64 {
        if async_pair {
            5000.0
        } else {
            1.0
        }
    }
}

/// Where a node's cost came from.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeSource {
    /// The instruction's `latency_metadata` frontend attribute.
    LatencyMetadata,
    /// A synchronous Triton all-reduce: its whole time.
    SyncCollective,
    /// The start or done of an asynchronous collective (`kLowCost`).
    AsyncCollective,
    Matmul,
    /// A loop or input fusion: the GPU performance model's time.
    Fusion,
    /// 0.01 of the wrapped estimator's cost.
    Wrapped,
}

/// `NodeCost`: microseconds and where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeCost {
    pub micros: f64,
    pub source: NodeSource,
}

/// `GetLatencyBetween`: microseconds, and whether the collective model gave
/// them (rather than `kLowLatency` or the wrapped estimator).
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    pub micros: f64,
    pub modelled: bool,
}

fn fusion_kind(instr: &Instruction) -> Option<&str> {
    instr.attrs().fusion_kind.as_deref()
}

/// `latency_metadata="30000"` among the frontend attributes: nanoseconds.
fn latency_metadata(computation: ComputationRef<'_>, instr: &Instruction) -> Option<i64> {
    let text = computation.src(instr.attribute("frontend_attributes")?.value_range);
    let at = text.find("latency_metadata")?;
    let value = text[at + "latency_metadata".len()..]
        .trim_start()
        .strip_prefix('=')?;
    let value = value.trim_start().trim_start_matches('"');
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(value.len());
    value[..end].parse().ok()
}

/// Whether XLA's `MatmulInterpolator` would cost `instr`: a dot, a cuBLASLt
/// call (`IsCublasLtGemm`), or a Triton GEMM fusion with one dot (`IsTritonGemm`).
pub fn is_matmul(module: &Module, instr: &Instruction) -> bool {
    match instr.opcode {
        Opcode::Dot => true,
        Opcode::CustomCall => matches!(
            instr.custom_call_target(),
            Some(
                "__cublas$lt$matmul"
                    | "__cublas$lt$matmul$f8"
                    | "__cublas$lt$matmul$mx"
                    | "__cublas$lt$groupedMatmul"
            )
        ),
        Opcode::Fusion => {
            let config = instr.attrs().backend_config().unwrap_or_default();
            let kind = config["fusion_backend_config"]["kind"]
                .as_str()
                .map(str::to_string)
                .or_else(|| {
                    // A backend config XLA reads but JSON does not (a trailing comma).
                    let text = config.as_str()?;
                    ["__triton_gemm", "__triton_nested_gemm_fusion"]
                        .into_iter()
                        .find(|k| text.contains(&format!("\"{k}\"")))
                        .map(str::to_string)
                });
            let gemm = matches!(
                kind.as_deref(),
                Some("__triton_gemm" | "__triton_nested_gemm_fusion")
            );
            gemm && module.called_computation(instr, "calls").is_some_and(|c| {
                c.model()
                    .instructions
                    .iter()
                    .filter(|i| i.opcode == Opcode::Dot)
                    .count()
                    == 1
            })
        }
        _ => false,
    }
}

/// A collective start's backend config asks for a synchronous Triton kernel.
fn is_sync_triton(instr: &Instruction) -> bool {
    let config = instr.attrs().backend_config().unwrap_or_default();
    let c = &config["collective_backend_config"];
    c["is_sync"].as_bool() == Some(true) && is_triton_kernel(c["kernel_strategy"].as_str())
}

impl Estimator<'_> {
    /// `ComputeCollectiveTime(instr)` for an instruction of the model: the
    /// collective it is or starts; a done costs nothing.
    pub fn instruction_time(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
    ) -> Result<Duration, String> {
        let found = wrapping::find(self.module, computation, instr).ok_or_else(|| {
            format!(
                "{} is not a collective XLA's SoL model costs",
                instr.opcode.name()
            )
        })?;
        if found.part == Part::Done {
            return Ok(Duration::ZERO);
        }
        let op = self.op(found.computation, found.instr)?;
        Ok(self.collective_time(&op)?.time)
    }

    /// `SolLatencyEstimator::NodeCost`.
    pub fn node_cost(
        &self,
        computation: ComputationRef<'_>,
        instr: &Instruction,
        wrapped: &dyn WrappedEstimator,
    ) -> Result<NodeCost, String> {
        let cost = |micros: f64, source: NodeSource| Ok(NodeCost { micros, source });
        if let Some(ns) = latency_metadata(computation, instr) {
            return cost(
                ns as f64 * wrapped.cycles_per_microsecond() / 1000.0,
                NodeSource::LatencyMetadata,
            );
        }
        let module = self.module;
        if wrapping::is_async_collective_start(module, computation, instr) && is_sync_triton(instr)
        {
            if let Ok(t) = self.instruction_time(computation, instr) {
                return cost(t.as_micros_f64(), NodeSource::SyncCollective);
            }
        }
        if wrapping::is_async_collective_start(module, computation, instr)
            || wrapping::is_async_collective_done(module, computation, instr)
        {
            return cost(LOW_COST, NodeSource::AsyncCollective);
        }
        if is_matmul(module, instr) {
            let t = crate::cost::matmul::estimate(module, computation, instr, self.device)?;
            return cost(t.as_micros_f64(), NodeSource::Matmul);
        }
        if instr.opcode == Opcode::Fusion && matches!(fusion_kind(instr), Some("kLoop" | "kInput"))
        {
            let model = Model::new(self.view(), module, computation, self.device);
            return cost(
                model.kernel(instr).exec_time.as_micros_f64(),
                NodeSource::Fusion,
            );
        }
        cost(0.01 * wrapped.node_cost(instr), NodeSource::Wrapped)
    }

    /// `SolLatencyEstimator::GetLatencyBetween(from, to)`.
    pub fn latency_between(
        &self,
        computation: ComputationRef<'_>,
        from: &Instruction,
        to: &Instruction,
        wrapped: &dyn WrappedEstimator,
    ) -> Latency {
        let low = Latency {
            micros: LOW_COST,
            modelled: false,
        };
        // `SchedulerConfig::schedule_send_recvs` is off by default.
        if matches!(from.opcode.name(), "send" | "recv") || is_sync_triton(from) {
            return low;
        }
        let pair = wrapping::is_async_pair(self.module, computation, from, to);
        let fallback = || Latency {
            micros: wrapped.latency_between(from, to, pair),
            modelled: false,
        };
        if !pair && !wrapping::is_supported_collective(from) {
            return fallback();
        }
        match self.instruction_time(computation, from) {
            Ok(t) => Latency {
                micros: t.as_micros_f64(),
                modelled: true,
            },
            Err(_) => fallback(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::collective::SolConfig;
    use crate::device::Device;
    use crate::model;

    const MODULE: &str = "HloModule m, num_partitions=8\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[1048576] parameter(0)\n  ar-start = f32[1048576] all-reduce-start(p), to_apply=add, replica_groups=[1,8]<=[8], channel_id=1, use_global_device_ids=true\n  ar-done = f32[1048576] all-reduce-done(ar-start)\n  mosaic = f32[8] custom-call(p), custom_call_target=\"mosaic_gpu_v2\", frontend_attributes={latency_metadata=\"30000\"}\n  c = f32[] constant(1)\n  ROOT t = (f32[1048576], f32[8]) tuple(ar-done, mosaic)\n}\n";

    #[test]
    fn nodes_cost_as_xla_s_scheduler_sees_them() {
        let file = model::parse_hlo(MODULE);
        let module = &file.modules[0];
        let device = Device::h100();
        let estimator = Estimator::new(module, &device, &SolConfig::default());
        let entry = module.entry_computation().unwrap();
        let node = |name: &str| {
            let instr = entry.model().instruction_by_name(name).unwrap();
            estimator.node_cost(entry, instr, &Dummy).unwrap()
        };
        // A Mosaic kernel says its own latency: 30000 ns.
        assert_eq!(node("mosaic").micros, 30.0);
        assert_eq!(node("mosaic").source, NodeSource::LatencyMetadata);
        assert_eq!(node("ar-start").micros, LOW_COST);
        assert_eq!(node("ar-done").source, NodeSource::AsyncCollective);
        assert_eq!(node("c").micros, 0.0);
        // The pair's time is on the edge, and equals the start's time.
        let start = entry.model().instruction_by_name("ar-start").unwrap();
        let done = entry.model().instruction_by_name("ar-done").unwrap();
        let edge = estimator.latency_between(entry, start, done, &Dummy);
        assert!(edge.modelled);
        let time = estimator.instruction_time(entry, start).unwrap();
        assert_eq!(edge.micros, time.as_micros_f64());
        assert_eq!(
            estimator.instruction_time(entry, done).unwrap(),
            Duration::ZERO
        );
        // A dot costs what XLA's MatmulInterpolator says of it.
        let dot = "HloModule d\n\nENTRY e {\n  a = bf16[1024,1024] parameter(0)\n  ROOT d = bf16[1024,1024] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
        let file = model::parse_hlo(dot);
        let module = &file.modules[0];
        let entry = module.entry_computation().unwrap();
        let estimator = Estimator::new(module, &device, &SolConfig::default());
        let d = entry.model().instruction_by_name("d").unwrap();
        let node = estimator.node_cost(entry, d, &Dummy).unwrap();
        let table = crate::cost::matmul::estimate(module, entry, d, &device).unwrap();
        assert_eq!(node.micros, table.as_micros_f64());
        assert_eq!(node.source, NodeSource::Matmul);
    }
}
