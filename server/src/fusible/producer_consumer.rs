//! The producer-into-consumer decision priority fusion makes before it asks the cost
//! model (XLA's `PriorityFusion::CanFuse` and `CanFuseWithAllNonBitcastUsers`, with
//! `gpu_fusible.cc`'s `CanEmitInputFusedScatter`, `FusionFitsInBudget`, and the code
//! duplication checks of `GpuHloCostAnalysis::ProducerConsumerMergedTooLarge` and
//! `CreatesHeavyComputation`). A producer is fused only into all of its users at once,
//! so the decision over all users is what the queue of producers uses.

use super::budget::fusion_fits_in_budget;
use super::decision::FusionDecision;
use super::hero::{find_non_trivial_hero, is_one_to_one, is_real_reduction_hero};
use super::predicates::{self, is_elementwise, is_input_fusible_scatter};
use super::target::Target;
use super::unroll::{fusion_body, fusion_roots_of};
use super::{Hlo, Instr};
use crate::model::{Opcode, Shape};

/// `kMaxIRSize` of the GPU cost analysis: fused code larger than this is too much.
pub const MAX_IR_SIZE: usize = 10_000;
/// A reduction of fewer elements per output is emitted elementwise anyway, so it does
/// not count as a reduce for the reduce-into-reduce rule.
pub const MIN_SIGNIFICANT_REDUCTION_SIZE: i64 = 16;
/// `kMaxInputsPerOutput` of `IsExpensiveToRepeat`.
pub const MAX_INPUTS_PER_OUTPUT: i64 = 10;

/// Whether `i` is a generic Triton fusion (`IsGenericTritonFusion`).
pub fn is_generic_triton_fusion(h: &Hlo, i: Instr) -> bool {
    h.is_custom_fusion(i)
        && h.instruction(i)
            .attrs()
            .backend_config()
            .and_then(|c| c.pointer("/fusion_backend_config/kind").cloned())
            .is_some_and(|k| k == "__triton")
}

/// XLA's `IsFusibleBitcast`: a bitcast that keeps the element width (a no-op that
/// priority fusion fuses first and looks through).
pub fn is_fusible_bitcast(h: &Hlo, i: Instr) -> bool {
    *h.opcode(i) == Opcode::Bitcast
        && Hlo::element_bits(h.shape(i)) == h.operand_shape(i, 0).and_then(Hlo::element_bits)
}

/// Priority fusion's own `IsFusible` (`GpuPriorityFusion::IsFusible` over
/// `PriorityFusion::IsFusible`): ops the elemental emitters can compute, fusions other
/// than custom ones (generic Triton fusions excepted).
pub fn is_fusible_for_priority_fusion(h: &Hlo, i: Instr) -> bool {
    if *h.opcode(i) == Opcode::Fusion {
        return is_generic_triton_fusion(h, i) || !h.is_custom_fusion(i);
    }
    if is_elementwise(h, i) || is_fusible_bitcast(h, i) {
        return true;
    }
    matches!(
        h.opcode(i),
        Opcode::Copy
            | Opcode::Iota
            | Opcode::Constant
            | Opcode::Reduce
            | Opcode::Broadcast
            | Opcode::Concatenate
            | Opcode::DynamicSlice
            | Opcode::DynamicUpdateSlice
            | Opcode::Gather
            | Opcode::Pad
            | Opcode::ReduceWindow
            | Opcode::Reshape
            | Opcode::Reverse
            | Opcode::Scatter
            | Opcode::Slice
            | Opcode::Transpose
    )
}

/// XLA's `IsReduceIntermediate`: a single-operand, single-user op that adds no compute
/// to a reduction's epilogue (a bitcast, bitcast-convert, convert, or a reshape that is
/// a bitcast).
pub fn is_reduce_intermediate(h: &Hlo, i: Instr) -> bool {
    if h.operand_count(i) > 1 || h.users(i).len() > 1 {
        return false;
    }
    match h.opcode(i) {
        Opcode::Bitcast | Opcode::BitcastConvert | Opcode::Convert => true,
        Opcode::Reshape => match (
            h.operand_shape(i, 0).and_then(Shape::as_array),
            h.shape(i).as_array(),
        ) {
            (Some(inp), Some(out)) => super::shapes::reshape_is_bitcast(inp, out),
            _ => false,
        },
        _ => false,
    }
}

/// XLA's `IsProducerConsumerFusible` (the instruction fusion pass' test, before priority
/// fusion took over): a loop-fusible producer (or a tiled transpose that is the
/// consumer's hero) into an input- or loop-fusible consumer; a reduction's epilogue only
/// of reduce intermediates and only for its single user; scalar constants only into
/// fusions. (XLA ends with `ShouldFuseInPlaceOp`, which is not ported.)
pub fn is_producer_consumer_fusible(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let transpose_hero = super::hero::tiled_transpose(h, producer).is_some()
        && find_non_trivial_hero(h, consumer) == producer;
    if !predicates::is_loop_fusible_as_producer(h, producer) && !transpose_hero {
        return FusionDecision::ProducerNotLoopFusible;
    }
    if super::hero::is_reduction_from_or_to_contiguous_dimensions(h, producer, target) {
        let epilogue_ok = match h.fused_computation(consumer) {
            Some(_) => h
                .fused_instructions(consumer)
                .into_iter()
                .all(|f| *h.opcode(f) == Opcode::Parameter || is_reduce_intermediate(h, f)),
            None => is_reduce_intermediate(h, consumer),
        };
        if !epilogue_ok {
            return FusionDecision::ReductionEpilogueNotFusible;
        }
        if h.users(producer).len() > 1 {
            return FusionDecision::ReductionOutputSingleUser;
        }
    }
    if !predicates::is_input_fusible(h, consumer, target)
        && !predicates::is_loop_fusible_as_consumer(h, consumer)
    {
        return FusionDecision::ConsumerNotInputOrLoopFusible;
    }
    if h.is_multi_output_fusion(producer) {
        return FusionDecision::ProducerIsMultiOutputFusionForConsumer;
    }
    let effective_scalar = h
        .shape(producer)
        .as_array()
        .is_some_and(|a| a.element_count() == Some(1));
    if *h.opcode(producer) == Opcode::Constant
        && (!effective_scalar || *h.opcode(consumer) != Opcode::Fusion)
    {
        return FusionDecision::NotFusingConstant;
    }
    FusionDecision::Allow
}

/// XLA's `CanEmitInputFusedScatter`: nothing fuses into a scatter's output, nor into its
/// in-place operand, nor reads that operand (the scatter overwrites it).
pub fn can_emit_input_fused_scatter(h: &Hlo, producer: Instr, consumer: Instr) -> FusionDecision {
    if is_input_fusible_scatter(h, producer) {
        return FusionDecision::IntoScatterOutput;
    }
    if !is_input_fusible_scatter(h, consumer) {
        return FusionDecision::Allow;
    }
    let in_place = match h.fused_expression_root(consumer) {
        Some(scatter) => h
            .operand(scatter, 0)
            .and_then(|p| h.instruction(p).parameter_number)
            .and_then(|k| h.operand(consumer, usize::try_from(k).ok()?)),
        None => h.operand(consumer, 0),
    };
    let Some(in_place) = in_place else {
        return FusionDecision::Allow;
    };
    if in_place == producer {
        return FusionDecision::IntoScatterInPlaceOperand;
    }
    if h.operands(producer).contains(&in_place) {
        return FusionDecision::ProducerUsesScatterInPlaceOperand;
    }
    FusionDecision::Allow
}

fn elements(shape: Option<&Shape>) -> i64 {
    shape
        .and_then(Shape::as_array)
        .and_then(|a| a.element_count())
        .unwrap_or(0)
}

/// Whether the fusion of `i` has a reduce of at least [`MIN_SIGNIFICANT_REDUCTION_SIZE`]
/// elements per output.
fn contains_significant_reduce(h: &Hlo, i: Instr) -> bool {
    fusion_body(h, i).into_iter().any(|f| {
        if *h.opcode(f) != Opcode::Reduce || h.shape(f).as_array().is_none() {
            return false;
        }
        let out = elements(Some(h.shape(f))).max(1);
        elements(h.operand_shape(f, 0)) / out >= MIN_SIGNIFICANT_REDUCTION_SIZE
    })
}

/// Whether the fusion of `i` uses a reduction emitter.
fn is_reduction_fusion(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    let roots = fusion_roots_of(h, i);
    roots
        .into_iter()
        .any(|r| is_real_reduction_hero(h, r, find_non_trivial_hero(h, r), target))
}

/// Whether the fusion of `producer` into `consumer` keeps a reduction emitter: some root
/// of the consumer reaches the producer's reduction hero through intermediate ops.
fn fused_is_reduction(h: &Hlo, producer: Instr, consumer: Instr, target: &dyn Target) -> bool {
    if is_reduction_fusion(h, consumer, target) {
        return true;
    }
    let roots = fusion_roots_of(h, consumer);
    let reaches_producer = |start: Instr| {
        let mut at = start;
        for _ in 0..=h.instructions(at.computation).len() {
            let is_producer = at == producer
                || (*h.opcode(at) == Opcode::Parameter
                    && h.instruction(at)
                        .parameter_number
                        .and_then(|k| usize::try_from(k).ok())
                        .and_then(|k| h.operand(consumer, k))
                        == Some(producer));
            if is_producer {
                return true;
            }
            // The fused root's hero is found through ops that map elements one to one.
            let next = if !is_one_to_one(h, at, 1) {
                None
            } else if at == consumer {
                h.operands(consumer).into_iter().find(|&o| o == producer)
            } else {
                h.operand(at, 0)
            };
            match next {
                Some(n) => at = n,
                None => return false,
            }
        }
        false
    };
    roots.into_iter().any(reaches_producer) && is_reduction_fusion(h, producer, target)
}

/// The size of the code `i` emits, in instructions (`IrSize`).
fn ir_size(h: &Hlo, i: Instr) -> usize {
    fusion_body(h, i).len().max(1)
}

/// How many times the consumer computes each producer element when fused: the uses of
/// the producer inside the consumer.
fn producer_replication(h: &Hlo, producer: Instr, consumer: Instr) -> usize {
    let Some(c) = h.fused_computation(consumer) else {
        return 1;
    };
    h.operands(consumer)
        .iter()
        .enumerate()
        .filter(|(_, &o)| o == producer)
        .filter_map(|(k, _)| h.parameter(c, k))
        .map(|p| h.users(p).len())
        .sum::<usize>()
        .max(1)
}

/// XLA's `ProducerConsumerMergedTooLarge`: the producer's code, repeated for each use in
/// the consumer, plus the consumer's, exceeds [`MAX_IR_SIZE`].
pub fn producer_consumer_merged_too_large(h: &Hlo, producer: Instr, consumer: Instr) -> bool {
    ir_size(h, producer) * producer_replication(h, producer, consumer) + ir_size(h, consumer)
        > MAX_IR_SIZE
}

/// XLA's `IsExpensiveToRepeat`: a reduction the reduction emitter does not take, or a
/// reduce-window, that reads more than [`MAX_INPUTS_PER_OUTPUT`] inputs per output.
pub fn is_expensive_to_repeat(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    match h.opcode(i) {
        Opcode::Reduce
            if !super::hero::is_reduction_from_or_to_contiguous_dimensions(h, i, target) =>
        {
            let out = elements(Some(h.shape(i))).max(1);
            elements(h.operand_shape(i, 0)) / out > MAX_INPUTS_PER_OUTPUT
        }
        Opcode::ReduceWindow => {
            let ratio: i64 = h
                .instruction(i)
                .attrs()
                .uncommon()
                .window
                .as_ref()
                .map_or(1, |w| w.iter().map(|d| d.size).product());
            ratio > MAX_INPUTS_PER_OUTPUT
        }
        _ => false,
    }
}

/// XLA's `IfFusedReadsElementsMultipleTimes` (`ReusesOperandElements`): a gather or
/// broadcast with more outputs than inputs, or a reduce-window whose windows overlap.
pub fn if_fused_reads_elements_multiple_times(h: &Hlo, i: Instr) -> bool {
    match h.opcode(i) {
        Opcode::Gather | Opcode::Broadcast => {
            elements(Some(h.shape(i))) > elements(h.operand_shape(i, 0))
        }
        Opcode::ReduceWindow => h
            .instruction(i)
            .attrs()
            .uncommon()
            .window
            .as_ref()
            .is_some_and(|w| w.iter().any(|d| d.size > d.stride)),
        _ => false,
    }
}

/// XLA's `CreatesHeavyComputation`: the producer has an op expensive to repeat and the
/// consumer reads producer elements more than once, so fusing would repeat it.
pub fn creates_heavy_computation(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> bool {
    let heavy = fusion_body(h, producer)
        .into_iter()
        .any(|f| is_expensive_to_repeat(h, f, target));
    if !heavy {
        return false;
    }
    let Some(c) = h.fused_computation(consumer) else {
        return if_fused_reads_elements_multiple_times(h, consumer);
    };
    let mut stack: Vec<Instr> = h
        .operands(consumer)
        .iter()
        .enumerate()
        .filter(|(_, &o)| o == producer)
        .filter_map(|(k, _)| h.parameter(c, k))
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some(at) = stack.pop() {
        if !seen.insert(at) {
            continue;
        }
        if if_fused_reads_elements_multiple_times(h, at) {
            return true;
        }
        stack.extend(h.users(at));
    }
    false
}

/// XLA's `CanFuseWithNativeEmitter`: the native emitters' rules, in XLA's order.
pub fn backend_can_fuse(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> FusionDecision {
    if h.shape(producer).as_array().is_none() || h.shape(consumer).as_array().is_none() {
        return FusionDecision::NotAnArray;
    }
    if is_fusible_bitcast(h, consumer) {
        // A broadcast feeding transposes through a bitcast is fused into the bitcast.
        let into_transposes = *h.opcode(producer) == Opcode::Broadcast
            && h.users(consumer)
                .iter()
                .all(|&u| *h.opcode(u) == Opcode::Transpose);
        return if into_transposes {
            FusionDecision::Allow
        } else {
            FusionDecision::IntoSingleBitcast
        };
    }
    let scatter = can_emit_input_fused_scatter(h, producer, consumer);
    if !scatter.is_allowed() {
        return scatter;
    }
    let consumer_reduces = contains_significant_reduce(h, consumer);
    if contains_significant_reduce(h, producer) && consumer_reduces {
        return FusionDecision::BothContainReduce;
    }
    if *h.opcode(producer) == Opcode::Transpose && consumer_reduces {
        return FusionDecision::TransposeIntoSignificantReduction;
    }
    if is_reduction_fusion(h, producer, target)
        && !fused_is_reduction(h, producer, consumer, target)
    {
        return FusionDecision::ReduceOutputWouldBecomeLoop;
    }
    let budget = fusion_fits_in_budget(h, consumer, producer, target, true);
    if !budget.is_allowed() {
        return budget;
    }
    if producer_consumer_merged_too_large(h, producer, consumer) {
        return FusionDecision::OverlyLargeCodeDuplication;
    }
    FusionDecision::Allow
}

/// XLA's `PriorityFusionQueue::CanFuse`: whether `producer` may be fused into
/// `consumer`, before the cost model weighs it. (XLA ends with
/// `InstructionFusion::ShouldFuseInPlaceOp`, the aliasing check of in-place ops, which is
/// not ported.)
pub fn can_fuse(h: &Hlo, producer: Instr, consumer: Instr, target: &dyn Target) -> FusionDecision {
    if h.is_root(producer) {
        return FusionDecision::IntoRootOutput;
    }
    if !is_fusible_for_priority_fusion(h, producer) {
        return FusionDecision::ProducerNotFusible;
    }
    if !is_fusible_for_priority_fusion(h, consumer) {
        return FusionDecision::ConsumerNotFusible;
    }
    // Triton first: when either side is a Triton fusion, or the pair makes one, its
    // answer is final; otherwise the native emitters' rules decide.
    let triton = super::triton::can_fuse_triton(h, producer, consumer, target);
    if is_generic_triton_fusion(h, producer)
        || is_generic_triton_fusion(h, consumer)
        || triton.is_allowed()
    {
        return triton;
    }
    backend_can_fuse(h, producer, consumer, target)
}

/// XLA's `CanFuseWithAllNonBitcastUsers`: a producer is fused into every user that is
/// not a bitcast, or into none.
pub fn can_fuse_with_all_non_bitcast_users(
    h: &Hlo,
    producer: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let users = h.users(producer);
    if users.is_empty() {
        return FusionDecision::NoUsers;
    }
    let mut has_non_bitcast_user = false;
    for user in users {
        if is_fusible_bitcast(h, user) {
            continue;
        }
        has_non_bitcast_user = true;
        let decision = can_fuse(h, producer, user, target);
        if !decision.is_allowed() {
            return decision;
        }
    }
    if !has_non_bitcast_user {
        return FusionDecision::OnlyBitcastUsers;
    }
    FusionDecision::Allow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::fusible::test_support::module;

    const PREFIX: &str = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

    fn decide(body: &str, producer: &str, consumer: &str) -> FusionDecision {
        let m = module(&format!("{PREFIX}{body}"));
        let h = Hlo::new(&m);
        let (p, c) = (h.find(producer).unwrap(), h.find(consumer).unwrap());
        can_fuse(&h, p, c, &Device::a6000())
    }

    #[test]
    fn reduce_into_reduce_is_refused() {
        let body = "ENTRY e {\n  p = f32[64,128,256] parameter(0)\n  z = f32[] constant(0)\n  r1 = f32[64,128] reduce(p, z), dimensions={2}, to_apply=add\n  r2 = f32[64] reduce(r1, z), dimensions={1}, to_apply=add\n  ROOT n = f32[64] negate(r2)\n}\n";
        assert_eq!(decide(body, "r1", "r2"), FusionDecision::BothContainReduce);
        // A reduce may take an elementwise producer.
        let body = "ENTRY e {\n  p = f32[64,128] parameter(0)\n  z = f32[] constant(0)\n  x = f32[64,128] exponential(p)\n  r = f32[64] reduce(x, z), dimensions={1}, to_apply=add\n  ROOT n = f32[64] negate(r)\n}\n";
        assert!(decide(body, "x", "r").is_allowed());
        // A small reduction (4 elements per output) does not count as a reduce.
        let body = "ENTRY e {\n  p = f32[64,128,4] parameter(0)\n  z = f32[] constant(0)\n  r1 = f32[64,128] reduce(p, z), dimensions={2}, to_apply=add\n  r2 = f32[64] reduce(r1, z), dimensions={1}, to_apply=add\n  ROOT n = f32[64] negate(r2)\n}\n";
        assert_ne!(decide(body, "r1", "r2"), FusionDecision::BothContainReduce);
    }

    #[test]
    fn reduction_output_must_stay_a_reduction() {
        // Broadcasting a reduce's result would turn the reduction into a loop fusion.
        let body = "ENTRY e {\n  p = f32[64,128] parameter(0)\n  z = f32[] constant(0)\n  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add\n  b = f32[64,128] broadcast(r), dimensions={0}\n  ROOT n = f32[64,128] negate(b)\n}\n";
        assert_eq!(
            decide(body, "r", "b"),
            FusionDecision::ReduceOutputWouldBecomeLoop
        );
        // An elementwise epilogue keeps it one.
        let body = "ENTRY e {\n  p = f32[64,128] parameter(0)\n  z = f32[] constant(0)\n  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add\n  n = f32[64] negate(r)\n  ROOT t = (f32[64]) tuple(n)\n}\n";
        assert!(decide(body, "r", "n").is_allowed());
    }

    #[test]
    fn bitcasts_scatter_and_roots() {
        let body = "ENTRY e {\n  p = f32[64,128] parameter(0)\n  x = f32[64,128] exponential(p)\n  ROOT b = f32[8192] bitcast(x)\n}\n";
        assert_eq!(decide(body, "x", "b"), FusionDecision::IntoSingleBitcast);
        let m = module(&format!("{PREFIX}{body}"));
        let h = Hlo::new(&m);
        let x = h.find("x").unwrap();
        assert_eq!(
            can_fuse_with_all_non_bitcast_users(&h, x, &Device::a6000()),
            FusionDecision::OnlyBitcastUsers
        );
        assert_eq!(
            can_fuse_with_all_non_bitcast_users(&h, h.find("b").unwrap(), &Device::a6000()),
            FusionDecision::NoUsers
        );
        let body = "ENTRY e {\n  p = f32[64] parameter(0)\n  i = s32[4,1] parameter(1)\n  u = f32[4] parameter(2)\n  x = f32[64] exponential(p)\n  ROOT s = f32[64] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
        assert_eq!(
            decide(body, "x", "s"),
            FusionDecision::IntoScatterInPlaceOperand
        );
        let body = "ENTRY e {\n  p = f32[64] parameter(0)\n  ROOT x = f32[64] exponential(p)\n}\n";
        assert_eq!(decide(body, "p", "x"), FusionDecision::ProducerNotFusible);
    }

    #[test]
    fn instruction_fusion_rules() {
        let body = "ENTRY e {\n  p = f32[64,128] parameter(0)\n  z = f32[] constant(0)\n  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add\n  c = f16[64] convert(r)\n  b = f32[64,128] broadcast(r), dimensions={0}\n  ROOT t = (f16[64], f32[64,128]) tuple(c, b)\n}\n";
        let m = module(&format!("{PREFIX}{body}"));
        let h = Hlo::new(&m);
        let d = Device::a6000();
        let find = |n: &str| h.find(n).unwrap();
        assert_eq!(
            is_producer_consumer_fusible(&h, find("r"), find("b"), &d),
            FusionDecision::ReductionEpilogueNotFusible
        );
        assert_eq!(
            is_producer_consumer_fusible(&h, find("r"), find("c"), &d),
            FusionDecision::ReductionOutputSingleUser
        );
        assert_eq!(
            is_producer_consumer_fusible(&h, find("z"), find("r"), &d),
            FusionDecision::NotFusingConstant
        );
        assert!(
            is_producer_consumer_fusible(&h, find("p"), find("r"), &d)
                == FusionDecision::ProducerNotLoopFusible
        );
    }

    #[test]
    fn heavy_computation_is_not_repeated() {
        // A window reduction of 32 inputs per output, read 8 times by a broadcast.
        let body = "ENTRY e {\n  p = f32[1024] parameter(0)\n  z = f32[] constant(0)\n  w = f32[32] reduce-window(p, z), window={size=32 stride=32}, to_apply=add\n  ROOT b = f32[32,8] broadcast(w), dimensions={0}\n}\n";
        let m = module(&format!("{PREFIX}{body}"));
        let h = Hlo::new(&m);
        let (w, b) = (h.find("w").unwrap(), h.find("b").unwrap());
        assert!(creates_heavy_computation(&h, w, b, &Device::a6000()));
        assert!(is_expensive_to_repeat(&h, w, &Device::a6000()));
    }
}
