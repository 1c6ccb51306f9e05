//! Which of XLA's models costs an instruction as a kernel of a GPU step, or why none
//! does.
//!
//! XLA's GPU backend has one model per kind of work: `GpuPerformanceModel` for the
//! kernels its emitters generate (loop, reduction, transpose, ... fusions and unfused
//! ops), the tiled model for block-level (Triton) fusions, GEMM models for dots and
//! library calls, and the SoL model for collectives. A kernel given to the wrong one
//! gets a wrong number: a collective costed as an elementwise kernel, a dot at the
//! CUDA cores' rate, an XLA:CPU kernel as a GPU loop fusion. What no model covers is
//! said, and kept out of the step's total, rather than guessed.

use crate::model::{ComputationRef, Instruction, Module, Opcode};

/// How an instruction is costed in a GPU step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelClass {
    /// No kernel: values that only name or regroup buffers, ordering tokens, sharding
    /// annotations, the `-done` half of an async pair (its start carries the time) and
    /// control flow (the kernels of its bodies carry the time).
    NotLaunched,
    /// A kernel XLA's emitters generate: `GpuPerformanceModel`.
    Emitted,
    /// A block-level (Triton) fusion with its output tiles: the tiled model.
    Tiled,
    /// A matrix multiplication (a dot, a cuBLAS call, a GEMM fusion): matrix units.
    Gemm,
    /// A collective, or the start of one: XLA's SoL collective model.
    Collective,
    /// A copy between host and device memory, over the host link.
    HostTransfer,
    /// No model covers it; the reason says what it is.
    NotModelled(String),
}

/// Opcodes that launch nothing of their own.
const NOT_LAUNCHED: &[&str] = &[
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "after-all",
    "add-dependency",
    "domain",
    "opt-barrier",
    "partition-id",
    "replica-id",
    // Control flow and calls: their bodies' kernels carry the time.
    "while",
    "conditional",
    "call",
    // The second half of an async pair: its start carries the time.
    "async-done",
    "async-update",
    "all-reduce-done",
    "all-gather-done",
    "collective-permute-done",
    "copy-done",
];

/// Collective opcodes (and the starts of their async forms).
const COLLECTIVES: &[&str] = &[
    "all-reduce",
    "all-reduce-start",
    "all-gather",
    "all-gather-start",
    "reduce-scatter",
    "all-to-all",
    "ragged-all-to-all",
    "collective-permute",
    "collective-permute-start",
    "collective-broadcast",
];

/// Custom calls that annotate the program for XLA's passes and run nothing.
const ANNOTATIONS: &[&str] = &[
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "LayoutConstraint",
    "annotate_device_placement",
    "AllocateBuffer",
    "MoveToHostPlaceholder",
];

/// Whether a custom call to `target` only annotates the program: one of
/// [`ANNOTATIONS`], or Shardy's markers (`xla.sdy.FuncResultSharding`,
/// `xla.sdy.GlobalToLocalShape`, ...), which XLA's partitioner removes.
pub fn is_annotation(target: &str) -> bool {
    ANNOTATIONS.contains(&target) || target.starts_with("xla.sdy.")
}

/// Custom calls that are GEMM library calls (cuBLAS, cuBLASLt).
fn is_gemm_target(target: &str) -> bool {
    target.starts_with("__cublas$")
}

/// The class of `instr` in `computation`.
pub fn classify(
    module: &Module,
    computation: ComputationRef<'_>,
    instr: &Instruction,
) -> KernelClass {
    let opcode = instr.opcode.name();
    if NOT_LAUNCHED.contains(&opcode) {
        return KernelClass::NotLaunched;
    }
    if COLLECTIVES.contains(&opcode) {
        return KernelClass::Collective;
    }
    match instr.opcode {
        Opcode::Dot | Opcode::Convolution | Opcode::RaggedDot | Opcode::ScaledDot => {
            KernelClass::Gemm
        }
        Opcode::Fusion => fusion(instr),
        Opcode::CustomCall => custom_call(instr),
        Opcode::AsyncStart => async_start(module, instr),
        Opcode::Copy | Opcode::CopyStart
            if super::offload::direction(computation, instr).is_some() =>
        {
            KernelClass::HostTransfer
        }
        _ => other(opcode),
    }
}

/// Point-to-point and host I/O opcodes no model covers.
fn other(opcode: &str) -> KernelClass {
    match opcode {
        "send" | "recv" | "send-done" | "recv-done" => KernelClass::NotModelled(format!(
            "{opcode}: point-to-point transfers have no XLA cost model"
        )),
        "infeed" | "outfeed" => KernelClass::NotModelled(format!(
            "{opcode}: a transfer with the host program, not a kernel"
        )),
        _ => KernelClass::Emitted,
    }
}

/// A fusion by its kind and backend config: XLA's emitters' kinds, Triton and GEMM
/// fusions on the GPU, another backend's kernels.
fn fusion(instr: &Instruction) -> KernelClass {
    let config = instr.attrs().backend_config();
    let gpu_kind = config
        .as_ref()
        .and_then(|c| c.pointer("/fusion_backend_config/kind"))
        .and_then(|k| k.as_str())
        .map(str::to_string);
    let cpu_kind = config
        .as_ref()
        .and_then(|c| c.pointer("/fusion_config/kind"))
        .and_then(|k| k.as_str())
        .map(str::to_string);
    if let Some(kind) = cpu_kind {
        return KernelClass::NotModelled(format!(
            "an XLA:CPU kernel ({kind}): no GPU model for another backend's kernels"
        ));
    }
    match gpu_kind.as_deref() {
        Some("__triton") => KernelClass::Tiled,
        Some(
            "__triton_gemm"
            | "__triton_nested_gemm_fusion"
            | "__triton_scaled_dot_fusion"
            | "__cublas"
            | "__cudnn$fusion",
        ) => KernelClass::Gemm,
        Some(kind) if kind.starts_with("__custom_fusion") => {
            KernelClass::NotModelled(format!("a custom fusion ({kind}): no XLA cost model"))
        }
        _ => KernelClass::Emitted,
    }
}

/// A custom call by its target.
fn custom_call(instr: &Instruction) -> KernelClass {
    let target = instr.custom_call_target().unwrap_or("");
    if is_annotation(target) {
        return KernelClass::NotLaunched;
    }
    if target == "MoveToHost" || target == "MoveToDevice" {
        return KernelClass::HostTransfer;
    }
    if is_gemm_target(target) {
        return KernelClass::Gemm;
    }
    if target.starts_with("__cudnn$conv") {
        return KernelClass::Gemm;
    }
    if target == "__triton" {
        // A Triton kernel written by hand: XLA's cost analysis reads the flops and
        // bytes its author wrote in `cost_estimate_json`.
        return KernelClass::Emitted;
    }
    KernelClass::NotModelled(if target.is_empty() {
        "a custom call without a target".to_string()
    } else {
        format!("custom call {target}: no XLA cost model for it")
    })
}

/// An `async-start` is costed as what it wraps: a collective, or another kernel on
/// a stream of its own (not modelled: its overlap with the main stream is not).
fn async_start(module: &Module, instr: &Instruction) -> KernelClass {
    let Some(wrapped) = module.called_computation(instr, "calls") else {
        return KernelClass::NotModelled("an async-start without a computation".into());
    };
    let Some(root) = wrapped.model().root_instruction() else {
        return KernelClass::NotModelled("an async-start without a root".into());
    };
    if COLLECTIVES.contains(&root.opcode.name()) {
        return KernelClass::Collective;
    }
    KernelClass::NotModelled(format!(
        "an async {} on another stream: its overlap with the main stream is not modelled",
        root.opcode.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

    fn class_of(body: &str, name: &str) -> KernelClass {
        let text = format!("HloModule m\n\n{body}");
        let file = model::parse_hlo(&text);
        let module = &file.modules[0];
        let (c, i) = module.find_instruction(name).unwrap();
        let comp = module.computation(c);
        classify(module, comp, comp.instruction(i))
    }

    #[test]
    fn each_kind_of_work_goes_to_its_model() {
        let entry = r#"ENTRY e {
  p = f32[64,64] parameter(0)
  n = f32[64,64] negate(p)
  d = f32[64,64] dot(p, n), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ar = f32[64,64] all-reduce(d), replica_groups={{0,1}}, to_apply=add
  h = f32[64,64] custom-call(ar), custom_call_target="MoveToHost"
  s = f32[64,64] custom-call(h), custom_call_target="Sharding"
  te = f32[64,64] custom-call(s), custom_call_target="te_fused_attn_forward_ffi"
  ROOT t = (f32[64,64]) tuple(te)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"#;
        assert_eq!(class_of(entry, "n"), KernelClass::Emitted);
        assert_eq!(class_of(entry, "d"), KernelClass::Gemm);
        assert_eq!(class_of(entry, "ar"), KernelClass::Collective);
        assert_eq!(class_of(entry, "h"), KernelClass::HostTransfer);
        assert_eq!(class_of(entry, "s"), KernelClass::NotLaunched);
        assert_eq!(class_of(entry, "t"), KernelClass::NotLaunched);
        assert!(
            matches!(class_of(entry, "te"), KernelClass::NotModelled(r) if r.contains("te_fused_attn_forward_ffi"))
        );
    }

    #[test]
    fn fusions_by_their_backend_config() {
        let text = r#"f {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
ENTRY e {
  p = f32[8] parameter(0)
  cpu = f32[8] fusion(p), kind=kCustom, calls=f, backend_config={"outer_dimension_partitions":[],"fusion_config":{"kind":"__ynn_fusion"}}
  tri = f32[8] fusion(cpu), kind=kCustom, calls=f, backend_config={"fusion_backend_config":{"kind":"__triton","block_level_fusion_config":{"output_tiles":[{"sizes":["8"]}],"num_warps":"1"}}}
  gemm = f32[8] fusion(tri), kind=kCustom, calls=f, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
  ROOT loop = f32[8] fusion(gemm), kind=kLoop, calls=f
}
"#;
        assert!(
            matches!(class_of(text, "cpu"), KernelClass::NotModelled(r) if r.contains("__ynn_fusion"))
        );
        assert_eq!(class_of(text, "tri"), KernelClass::Tiled);
        assert_eq!(class_of(text, "gemm"), KernelClass::Gemm);
        assert_eq!(class_of(text, "loop"), KernelClass::Emitted);
    }
}
