//! Fusible-ness of one instruction (XLA's `gpu_fusible.cc` predicates and
//! `HloInstruction::IsFusible` / `IsElementwise`): which ops a loop fusion may take as
//! producer or consumer, which ops need an input (reduction, transpose, scatter)
//! fusion, which may be a root of a multi-output fusion, and which fusion kind a
//! producer-consumer pair becomes.

use super::hero::{
    find_non_trivial_hero, fusion_roots, is_real_reduction_hero,
    is_reduction_from_or_to_contiguous_dimensions, tiled_transpose,
};
use super::shapes::transpose_is_bitcast;
use super::target::Target;
use super::{Hlo, Instr};
use crate::model::Opcode;

/// XLA's `HloInstruction::FusionKind` as the GPU pipeline chooses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusionKind {
    Loop,
    Input,
}

impl FusionKind {
    /// `kLoop` / `kInput`, as HLO text writes it.
    pub fn name(self) -> &'static str {
        match self {
            FusionKind::Loop => "kLoop",
            FusionKind::Input => "kInput",
        }
    }
}

/// Whether `i` has a side effect that forbids fusing it (`HasSideEffect`).
fn has_side_effect(h: &Hlo, i: Instr) -> bool {
    match h.opcode(i) {
        Opcode::Send
        | Opcode::SendDone
        | Opcode::Recv
        | Opcode::RecvDone
        | Opcode::Infeed
        | Opcode::Outfeed
        | Opcode::RngGetAndUpdateState => true,
        Opcode::CustomCall => h
            .instruction(i)
            .attribute("custom_call_has_side_effect")
            .is_some_and(|a| {
                h.model
                    .computation(i.computation)
                    .src(a.value_range)
                    .trim()
                    .eq_ignore_ascii_case("true")
            }),
        _ => false,
    }
}

/// XLA's `HloInstruction::IsFusible`: control flow, parameters and side effects are
/// never fused; fusions, maps and reductions always may be.
pub fn is_fusible(h: &Hlo, i: Instr) -> bool {
    match h.opcode(i) {
        Opcode::Domain | Opcode::Parameter | Opcode::While | Opcode::Conditional | Opcode::Call => {
            false
        }
        Opcode::Fusion | Opcode::Map | Opcode::Reduce | Opcode::ReduceWindow => true,
        Opcode::Rng => h.users(i).len() <= 1,
        _ => !has_side_effect(h, i),
    }
}

/// XLA's `HloInstruction::IsElementwise`: an elementwise op, or a fusion all of whose
/// fused instructions are.
pub fn is_elementwise(h: &Hlo, i: Instr) -> bool {
    if *h.opcode(i) == Opcode::Fusion {
        let fused = h.fused_instructions(i);
        return !fused.is_empty()
            && fused
                .iter()
                .all(|&f| *h.opcode(f) == Opcode::Parameter || h.opcode(f).is_elementwise());
    }
    h.opcode(i).is_elementwise()
}

/// XLA's `IsPhysicallyTransposing`: a copy, a transpose that is not a bitcast, or a
/// fusion containing one. A loop fusion iterates in its output's physical order, so
/// only such ops read an operand out of order.
pub fn is_physically_transposing(h: &Hlo, i: Instr) -> bool {
    if *h.opcode(i) == Opcode::Fusion
        && h.fused_instructions(i)
            .into_iter()
            .any(|f| is_physically_transposing(h, f))
    {
        return true;
    }
    match h.opcode(i) {
        Opcode::Copy => true,
        Opcode::Transpose => {
            let (Some(out), Some(inp)) = (
                h.shape(i).as_array(),
                h.operand_shape(i, 0).and_then(|s| s.as_array()),
            ) else {
                return false;
            };
            let dims = h
                .instruction(i)
                .attrs()
                .dimensions
                .clone()
                .unwrap_or_default();
            !transpose_is_bitcast(inp, out, &dims)
        }
        _ => false,
    }
}

/// The most minor dimension of extent above 1 and its position in minor-to-major order
/// (`-1` and the rank when there is none).
fn most_minor_non_trivial_dimension(a: &crate::model::ArrayShape) -> (i64, usize) {
    let m2m = a.minor_to_major();
    for (position, &d) in m2m.iter().enumerate() {
        if usize::try_from(d)
            .ok()
            .and_then(|d| a.dims.get(d))
            .is_some_and(|&n| n > 1)
        {
            return (d, position);
        }
    }
    (-1, m2m.len())
}

/// XLA's `TransposesMinorDimension`: a copy or transpose (or a fusion with one) that
/// moves the most minor dimension of extent above 1, which makes its reads strided.
pub fn transposes_minor_dimension(h: &Hlo, i: Instr) -> bool {
    let arrays = || Some((h.shape(i).as_array()?, h.operand_shape(i, 0)?.as_array()?));
    match h.opcode(i) {
        Opcode::Fusion => h
            .fused_instructions(i)
            .into_iter()
            .any(|f| transposes_minor_dimension(h, f)),
        Opcode::Copy => arrays().is_some_and(|(out, inp)| {
            most_minor_non_trivial_dimension(inp).0 != most_minor_non_trivial_dimension(out).0
        }),
        Opcode::Transpose => {
            let Some((out, inp)) = arrays() else {
                return false;
            };
            let Some(dims) = h.instruction(i).attrs().dimensions.clone() else {
                return false;
            };
            let in_m2m = inp.minor_to_major();
            let position_in_minor_to_major = |d: i64| in_m2m.iter().position(|&x| x == d);
            let first_non_trivial = most_minor_non_trivial_dimension(inp).1;
            for output_dim in out.minor_to_major() {
                let Ok(o) = usize::try_from(output_dim) else {
                    return false;
                };
                if out.dims.get(o) == Some(&1) {
                    continue;
                }
                let Some(&operand_dim) = dims.get(o) else {
                    return false;
                };
                return position_in_minor_to_major(operand_dim)
                    .is_some_and(|p| p > first_non_trivial);
            }
            false
        }
        _ => false,
    }
}

/// XLA's `IsReduceInputFusion`: a fusion with a root whose hero is a real reduction.
pub fn is_reduce_input_fusion(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    let Some(c) = h.fused_computation(i) else {
        return false;
    };
    fusion_roots(h, c)
        .into_iter()
        .any(|root| is_real_reduction_hero(h, root, find_non_trivial_hero(h, root), target))
}

/// XLA's `IsInputFusibleReduction`: a reduce input fusion, or a reduce the reduction
/// emitter takes.
pub fn is_input_fusible_reduction(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    is_reduce_input_fusion(h, i, target)
        || is_reduction_from_or_to_contiguous_dimensions(h, i, target)
}

/// XLA's `IsInputFusibleTranspose`: a tiled transpose, or a fusion with a root whose hero
/// is one.
pub fn is_input_fusible_transpose(h: &Hlo, i: Instr) -> bool {
    if *h.opcode(i) == Opcode::Bitcast || h.is_custom_fusion(i) {
        return false;
    }
    if let Some(c) = h.fused_computation(i) {
        return fusion_roots(h, c)
            .into_iter()
            .any(|r| tiled_transpose(h, find_non_trivial_hero(h, r)).is_some());
    }
    tiled_transpose(h, i).is_some()
}

/// XLA's `IsInputFusibleScatter`: a scatter, or an input fusion whose root is one.
pub fn is_input_fusible_scatter(h: &Hlo, i: Instr) -> bool {
    match h.opcode(i) {
        Opcode::Scatter => true,
        Opcode::Fusion => {
            h.fusion_kind(i) == Some("kInput")
                && h.fused_expression_root(i)
                    .is_some_and(|r| *h.opcode(r) == Opcode::Scatter)
        }
        _ => false,
    }
}

/// XLA's `IsInputFusible`: fusible, and a reduction, scatter or transpose that needs
/// its own emitter.
pub fn is_input_fusible(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    is_fusible(h, i)
        && (is_input_fusible_reduction(h, i, target)
            || is_input_fusible_scatter(h, i)
            || is_input_fusible_transpose(h, i))
}

/// Whether a bitcast keeps the element width (`KeepsBitwidth`).
fn keeps_bitwidth(h: &Hlo, i: Instr) -> bool {
    let out = Hlo::element_bits(h.shape(i));
    let inp = h.operand_shape(i, 0).and_then(Hlo::element_bits);
    out == inp
}

/// XLA's `IsUniversallyLoopFusible`: ops the loop emitter computes elementwise from
/// their operands, as producer or consumer.
pub fn is_universally_loop_fusible(h: &Hlo, i: Instr) -> bool {
    let opcode = h.opcode(i);
    if is_elementwise(h, i) && h.operand_count(i) > 0 && *opcode != Opcode::Copy {
        return true;
    }
    match opcode {
        Opcode::Copy => tiled_transpose(h, i).is_none(),
        Opcode::Fusion => h.fusion_kind(i) == Some("kLoop"),
        Opcode::Bitcast => keeps_bitwidth(h, i),
        Opcode::Broadcast
        | Opcode::Concatenate
        | Opcode::DynamicSlice
        | Opcode::DynamicUpdateSlice
        | Opcode::Gather
        | Opcode::Pad
        | Opcode::ReduceWindow
        | Opcode::Reshape
        | Opcode::Reverse
        | Opcode::Slice
        | Opcode::Transpose => true,
        _ => false,
    }
}

/// XLA's `IsLoopFusibleAsConsumer`: any reduction may also be a consumer.
pub fn is_loop_fusible_as_consumer(h: &Hlo, i: Instr) -> bool {
    is_fusible(h, i) && (is_universally_loop_fusible(h, i) || *h.opcode(i) == Opcode::Reduce)
}

/// XLA's `IsLoopFusibleAsProducer`: iotas, constants and non-variadic reductions may
/// also be producers.
pub fn is_loop_fusible_as_producer(h: &Hlo, i: Instr) -> bool {
    if !is_fusible(h, i) {
        return false;
    }
    match h.opcode(i) {
        Opcode::Iota | Opcode::Constant => true,
        Opcode::Reduce => !h.shape(i).is_tuple(),
        _ => is_universally_loop_fusible(h, i),
    }
}

/// XLA's `IsFusibleAsMultiOutputFusionRoot`: reductions, tiled transposes, loop fusions
/// and elementwise ops; not scatter (its emitter cannot), not custom fusions.
pub fn is_fusible_as_multi_output_fusion_root(h: &Hlo, i: Instr, target: &dyn Target) -> bool {
    is_fusible(h, i)
        && !h.is_custom_fusion(i)
        && (is_input_fusible_reduction(h, i, target)
            || is_input_fusible_transpose(h, i)
            || h.is_loop_fusion(i)
            || is_elementwise(h, i))
}

/// XLA's `ChooseFusionKind`: an input fusion when either side needs the input
/// emitters, else a loop fusion.
pub fn choose_fusion_kind(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> FusionKind {
    if is_input_fusible(h, consumer, target) || is_input_fusible(h, producer, target) {
        FusionKind::Input
    } else {
        FusionKind::Loop
    }
}

/// XLA's `IsConsumerTheOnlyNonRootUser`: every user of `i` (looking through
/// get-tuple-elements and bitcasts) is `consumer` or the computation's root.
pub fn is_consumer_the_only_non_root_user(h: &Hlo, i: Instr, consumer: Instr) -> bool {
    fn walk(h: &Hlo, i: Instr, consumer: Instr, depth: usize) -> bool {
        h.users(i).into_iter().all(|user| {
            if matches!(h.opcode(user), Opcode::GetTupleElement | Opcode::Bitcast) && depth < 64 {
                return walk(h, user, consumer, depth + 1);
            }
            user == consumer || h.is_root(user)
        })
    }
    walk(h, i, consumer, 0)
}
