//! XLA's GPU performance model as a library: how long a kernel runs on a
//! [`Device`], and whether fusing a producer into its consumers saves time.
//!
//! A port of `xla/service/gpu/model/gpu_performance_model{,_base}.cc` and
//! `gpu_hlo_cost_analysis.cc` on this project's own ingredients: the emitter
//! choice and launch of [`crate::coalescing`], its coalescing verdicts, and the
//! model's shapes. One concept per file:
//!
//! * [`duration`]: time as XLA keeps it (quarter nanoseconds, infinite);
//! * [`profile`]: cycles per element of elementwise ops (XLA's `sm_86` profile);
//! * [`hlo_cost`]: flops, bytes and utilizations (`GpuHloCostAnalysis`);
//! * [`launch`]: blocks and threads of the emitted kernel;
//! * [`memory`]: read time (DRAM, L2 and L1 re-reads, coalescing), write time;
//! * [`compute`]: compute time and its overlap with memory time;
//! * [`kernel`]: one kernel's estimate ([`KernelCost`]);
//! * [`fusion`]: producer/consumer fusion ([`RunTimes`]);
//! * [`tiled`]: the indexing model and block-level (Triton) tiles;
//! * [`dot`]: a tiled dot's GEMM model (tile and wave quantization, pipelining);
//! * [`gemm`]: which kernels are GEMMs and how each is costed on the matrix units;
//! * [`matmul`]: XLA's `MatmulInterpolator` over its measured GEMM table, a second
//!   estimate of a GEMM ([`interpolator`]: the interpolators it reads through);
//! * [`offload`]: host offloads (`MoveToHost`, copies to `S(5)`) over the host link;
//! * [`collective`]: collectives as XLA's SoL latency estimator costs them
//!   (measured throughput inside a node, the SoL network model across nodes);
//! * [`class`]: which of these models costs a kernel, or why none does;
//! * [`step`]: one step of a module: every kernel, its runs per step (loops weighted
//!   by their trip counts), the total; [`report`]: the lines a ranking shows.
//!
//! Times are [`Duration`]s; XLA's tests compare them truncated to whole
//! microseconds ([`Duration::whole_micros`]).

pub mod class;
pub mod collective;
pub mod compute;
pub mod dot;
pub mod duration;
pub mod fusion;
pub mod gemm;
pub mod hlo_cost;
pub mod interpolator;
pub mod kernel;
pub mod launch;
pub mod matmul;
pub mod memory;
pub mod offload;
pub mod profile;
pub mod report;
pub mod step;
pub mod tiled;

pub use duration::Duration;
pub use fusion::{RunTimes, KERNEL_LAUNCH_OVERHEAD};
pub use kernel::{Bound, Coalescing, KernelCost, Model, OperandCost};
pub use launch::LaunchDims;

use crate::analysis;
use crate::device::Device;
use crate::model::{ComputationRef, Instruction, Module};

/// `EstimateRunTimeForInstruction`: `instruction` of `computation` launched as
/// one kernel on `device`. `view` is the module's analysis view
/// (`analysis::view::borrowed(module)`).
pub fn estimate_kernel<'a>(
    view: &'a analysis::Module<'a>,
    module: &'a Module,
    computation: ComputationRef<'a>,
    instruction: &Instruction,
    device: &'a Device,
) -> KernelCost {
    Model::new(view, module, computation, device).kernel(instruction)
}

/// `EstimateRunTimes(producer, consumers)`: the time of the producer and its
/// consumers as separate kernels, and with the producer fused into each.
pub fn estimate_run_times<'a>(
    view: &'a analysis::Module<'a>,
    module: &'a Module,
    computation: ComputationRef<'a>,
    producer: &Instruction,
    consumers: &[&Instruction],
    device: &'a Device,
) -> RunTimes {
    Model::new(view, module, computation, device).run_times(producer, consumers)
}

/// `EstimateRunTimesForMultiOutputFusion(producer, consumer)`.
pub fn estimate_run_times_multi_output<'a>(
    view: &'a analysis::Module<'a>,
    module: &'a Module,
    computation: ComputationRef<'a>,
    producer: &Instruction,
    consumer: &Instruction,
    device: &'a Device,
) -> RunTimes {
    Model::new(view, module, computation, device).run_times_multi_output(producer, consumer)
}

/// Whether XLA emits `instruction` as a kernel of its own: everything but
/// values that only name or regroup buffers (parameters, constants, tuples,
/// get-tuple-element, bitcasts), ordering tokens and custom calls that only
/// annotate ([`class::is_annotation`]). Control flow and calls are listed too:
/// their cost is their body's, which this model does not add up.
pub fn is_kernel(instruction: &Instruction) -> bool {
    if instruction.opcode == crate::model::Opcode::CustomCall
        && instruction
            .custom_call_target()
            .is_some_and(class::is_annotation)
    {
        return false;
    }
    !matches!(
        instruction.opcode.name(),
        "parameter"
            | "constant"
            | "tuple"
            | "get-tuple-element"
            | "bitcast"
            | "after-all"
            | "add-dependency"
            | "domain"
            | "opt-barrier"
            | "partition-id"
            | "replica-id"
    )
}

/// Every kernel of `computation`, in text order, with its estimate.
pub fn kernels<'a>(
    view: &'a analysis::Module<'a>,
    module: &'a Module,
    computation: ComputationRef<'a>,
    device: &'a Device,
) -> Vec<KernelCost> {
    let model = Model::new(view, module, computation, device);
    computation
        .model()
        .instructions
        .iter()
        .filter(|i| !i.synthetic && is_kernel(i))
        .map(|i| model.kernel(i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::view;
    use crate::model;

    #[test]
    fn kernels_skip_what_xla_does_not_launch() {
        let text = "ENTRY e {\n p = f32[64] parameter(0)\n c = f32[] constant(1)\n b = f32[64] broadcast(c), dimensions={}\n a = f32[64] add(p, b)\n bc = f32[8,8] bitcast(a)\n ROOT t = (f32[8,8]) tuple(bc)\n}\n";
        let file = model::parse_hlo(text);
        let module = &file.modules[0];
        let v = view::borrowed(module);
        let device = Device::a6000();
        let entry = module.entry_computation().unwrap();
        let names: Vec<String> = kernels(&v, module, entry, &device)
            .into_iter()
            .map(|k| k.name)
            .collect();
        assert_eq!(names, vec!["b", "a"]);
    }
}
