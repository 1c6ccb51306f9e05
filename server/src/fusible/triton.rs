//! Priority fusion's Triton path (`PriorityFusionQueue::CanFuseTriton`,
//! `IsTritonSupported`, `FindPossibleConsumersForTritonMultiOutputFusion` in
//! `priority_fusion.cc`, and the data types of Triton's `support.cc`).
//!
//! Fusing with Triton is XLA's first choice: when either side is already a generic
//! Triton fusion, or heroless Triton fusion is enabled, the pair is fused only if the
//! result can be a Triton fusion, and that decision is final. Otherwise the native
//! emitters' rules decide ([`super::producer_consumer::backend_can_fuse`]).
//!
//! Not ported: XLA also asks Triton's tiling search for a tiling of the merged fusion
//! whose run time is finite (`TryFindBestTilingForFusion`); here a pair the rules allow
//! is allowed. Triton's per-opcode support table is reduced to its data types and the
//! opcodes Triton never emits.

use super::budget::fusion_fits_in_parameter_limit;
use super::decision::FusionDecision;
use super::producer_consumer::{
    is_fusible_bitcast, is_fusible_for_priority_fusion, is_generic_triton_fusion,
};
use super::target::Target;
use super::{Hlo, Instr};
use crate::model::{Opcode, PrimitiveType, Shape};

/// `IsTritonSupportedDataType`: the element types Triton's emitters handle (FP8 and
/// BF16 on CUDA; this port takes BF16 on ROCm too).
fn is_supported_data_type(t: &PrimitiveType, target: &dyn Target) -> bool {
    match t.name() {
        "pred" | "s4" | "s8" | "s16" | "s32" | "s64" | "f16" | "f32" | "f64" | "bf16" => true,
        "f8e5m2" | "f8e4m3fn" => !target.is_rocm(),
        _ => false,
    }
}

/// Opcodes no Triton emitter lowers.
fn is_unsupported_opcode(op: &Opcode) -> bool {
    matches!(
        op.name(),
        "custom-call"
            | "sort"
            | "scatter"
            | "gather"
            | "rng"
            | "rng-bit-generator"
            | "rng-get-and-update-state"
            | "while"
            | "call"
            | "conditional"
            | "fft"
            | "convolution"
            | "reduce-window"
            | "select-and-scatter"
            | "tuple"
            | "get-tuple-element"
            | "after-all"
            | "infeed"
            | "outfeed"
            | "send"
            | "recv"
            | "all-reduce"
            | "all-gather"
            | "all-to-all"
            | "collective-permute"
            | "reduce-scatter"
    )
}

fn leaf_types(shape: &Shape) -> Vec<&PrimitiveType> {
    match shape {
        Shape::Tuple(elements) => elements.iter().flat_map(leaf_types).collect(),
        other => other
            .as_array()
            .map(|a| vec![&a.element])
            .unwrap_or_default(),
    }
}

/// `IsTritonSupportedInstruction` (reduced, see the module doc): its output and
/// operand types, then its opcode.
fn is_supported_instruction(h: &Hlo, i: Instr, target: &dyn Target) -> FusionDecision {
    let unsupported = |why: &str| FusionDecision::TritonUnsupported(why.to_string());
    if leaf_types(h.shape(i))
        .into_iter()
        .any(|t| !is_supported_data_type(t, target))
    {
        return unsupported("Unsupported output data type.");
    }
    let operand_types_ok = (0..h.operand_count(i)).all(|k| {
        h.operand_shape(i, k).is_none_or(|s| {
            leaf_types(s)
                .into_iter()
                .all(|t| is_supported_data_type(t, target))
        })
    });
    if !operand_types_ok {
        return unsupported("Unsupported input data type.");
    }
    if is_unsupported_opcode(h.opcode(i)) {
        return unsupported("Unsupported opcode.");
    }
    FusionDecision::Allow
}

/// `IsTritonSupported`: a generic Triton fusion is; another fusion is when every
/// instruction of its fused computation is; any other instruction by itself.
pub fn is_triton_supported(h: &Hlo, i: Instr, target: &dyn Target) -> FusionDecision {
    if is_generic_triton_fusion(h, i) {
        return FusionDecision::Allow;
    }
    if *h.opcode(i) != Opcode::Fusion {
        return is_supported_instruction(h, i, target);
    }
    h.fused_instructions(i)
        .into_iter()
        .filter(|&f| *h.opcode(f) != Opcode::Parameter)
        .map(|f| is_supported_instruction(h, f, target))
        .find(|d| !d.is_allowed())
        .unwrap_or(FusionDecision::Allow)
}

/// `ContainsScan`: a scan, or a fusion computing one.
fn contains_scan(h: &Hlo, i: Instr) -> bool {
    let is_scan = |x: Instr| h.opcode(x).name() == "scan";
    is_scan(i)
        || (*h.opcode(i) == Opcode::Fusion && h.fused_instructions(i).into_iter().any(is_scan))
}

/// `CanFuseTriton`: whether fusing `producer` into `consumer` makes a Triton fusion.
pub fn can_fuse_triton(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> FusionDecision {
    if !is_fusible_for_priority_fusion(h, producer) {
        return FusionDecision::ProducerNotFusible;
    }
    if !is_fusible_for_priority_fusion(h, consumer) {
        return FusionDecision::ConsumerNotFusible;
    }
    if contains_scan(h, producer) {
        return FusionDecision::ScanEpilogue;
    }
    if !(is_generic_triton_fusion(h, producer)
        || is_generic_triton_fusion(h, consumer)
        || target.triton_heroless_fusion())
    {
        return FusionDecision::TritonHerolessDisabled;
    }
    for side in [producer, consumer] {
        let supported = is_triton_supported(h, side, target);
        if !supported.is_allowed() {
            return supported;
        }
    }
    fusion_fits_in_parameter_limit(h, consumer, producer, true)
}

/// Whether fusing `producer` into `consumer` would make a cycle: another operand of
/// `consumer` is reached from `producer` through users (`OperandReachableFromProducer`).
fn operand_reachable_from_producer(h: &Hlo, producer: Instr, consumer: Instr) -> bool {
    let targets: Vec<Instr> = h
        .operands(consumer)
        .into_iter()
        .filter(|&o| o != producer)
        .collect();
    let mut seen = vec![producer];
    let mut stack = vec![producer];
    while let Some(i) = stack.pop() {
        for u in h.users(i) {
            if targets.contains(&u) {
                return true;
            }
            if !seen.contains(&u) {
                seen.push(u);
                stack.push(u);
            }
        }
    }
    false
}

/// `FindPossibleConsumersForTritonMultiOutputFusion` then
/// `CanFuseTritonMultiOutputWithSingleUser`: when the producer cannot go into all its
/// users, Triton multi-output fusion (when enabled) fuses it with its one user that
/// makes a Triton fusion without a cycle, keeping the producer's result as a second
/// output. `Err` with XLA's reason when there is no such single user.
pub fn multi_output_consumer(
    h: &Hlo,
    producer: Instr,
    target: &dyn Target,
) -> Result<Instr, FusionDecision> {
    if !target.triton_multi_output_fusion() || h.is_root(producer) {
        return Err(FusionDecision::NoUsers);
    }
    let possible: Vec<Instr> = h
        .users(producer)
        .into_iter()
        .filter(|&u| !is_fusible_bitcast(h, u))
        .filter(|&u| {
            can_fuse_triton(h, producer, u, target).is_allowed()
                && !operand_reachable_from_producer(h, producer, u)
        })
        .collect();
    match possible.as_slice() {
        [] => Err(FusionDecision::NoUsers),
        [one] => Ok(*one),
        _ => Err(FusionDecision::MoreThanOneConsumer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::fusible::target::Flags;
    use crate::fusible::test_support::module;

    #[test]
    fn complex_numbers_keep_a_producer_out_of_a_triton_fusion() {
        let m = module(
            "HloModule m\nt {\n  a = f32[8] parameter(0)\n  ROOT n = f32[8] negate(a)\n}\np {\n  c = c64[8] parameter(0)\n  ROOT r = f32[8] real(c)\n}\nENTRY e {\n  x = c64[8] parameter(0)\n  f = f32[8] fusion(x), kind=kLoop, calls=p\n  ROOT g = f32[8] fusion(f), kind=kCustom, calls=t, backend_config={\"fusion_backend_config\":{\"kind\":\"__triton\"}}\n}\n",
        );
        let h = Hlo::new(&m);
        let d = Device::a6000();
        let (f, g) = (h.find("f").unwrap(), h.find("g").unwrap());
        assert_eq!(
            can_fuse_triton(&h, f, g, &d).message(),
            "Unsupported input data type."
        );
        // Two plain elementwise ops go to Triton only when heroless fusion is on.
        let m = module("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  a = f32[8] negate(p)\n  ROOT b = f32[8] exponential(a)\n}\n");
        let h = Hlo::new(&m);
        let (a, b) = (h.find("a").unwrap(), h.find("b").unwrap());
        assert_eq!(
            can_fuse_triton(&h, a, b, &d),
            FusionDecision::TritonHerolessDisabled
        );
        let on = Flags {
            target: &d,
            triton_heroless_fusion: true,
            triton_multi_output_fusion: false,
        };
        assert!(can_fuse_triton(&h, a, b, &on).is_allowed());
    }
}
