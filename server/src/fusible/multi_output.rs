//! Multi-output fusion rules (XLA's `gpu_fusible.cc`): a multi-output fusion runs its
//! roots in one kernel with one loop, so the roots' heroes must be emitted the same way
//! (two reductions of the same kind, two equal tiled transposes, never one of each) and
//! index the same loop shape; and a producer that joins its consumer as an extra output
//! must itself be a plain loop op.

use super::decision::FusionDecision;
use super::hero::{
    find_non_trivial_hero, is_intermediate, is_real_reduction_hero, reduction_dimensions,
    tiled_transpose,
};
use super::predicates::{is_loop_fusible_as_producer, is_physically_transposing};
use super::shapes::{equal_ignoring_element_type, is_reshape_or_transpose_bitcast};
use super::target::Target;
use super::{Hlo, Instr};
use crate::model::{Opcode, Shape};

/// XLA's `GetRealHeroForMultiOutputFusion`: the instruction that constrains how `i` may
/// share a kernel: itself when not a fusion; for a fusion the reduction or tiled
/// transpose hero of a root when there is one, else the (first) root.
pub fn get_real_hero_for_multi_output_fusion(h: &Hlo, i: Instr, target: &dyn Target) -> Instr {
    let Some(root) = h.fused_expression_root(i) else {
        return i;
    };
    let constraining = |r: Instr| {
        let hero = find_non_trivial_hero(h, r);
        (is_real_reduction_hero(h, r, hero, target) || tiled_transpose(h, hero).is_some())
            .then_some(hero)
    };
    if !h.is_multi_output_fusion(i) {
        return constraining(root).unwrap_or(root);
    }
    let operands = h.operands(root);
    operands
        .iter()
        .find_map(|&o| constraining(o))
        .or_else(|| operands.first().copied())
        .unwrap_or(root)
}

/// Whether there is a path from the fused parameter `param` to its computation's root
/// made only of intermediate ops (then a tiled transpose feeding it stays tiled).
fn path_of_intermediate_ops(h: &Hlo, param: Instr) -> bool {
    let users = h.users(param);
    if users.len() != 1 {
        return false;
    }
    let mut hlo = users[0];
    for _ in 0..=h.instructions(hlo.computation).len() {
        let users = h.users(hlo);
        if users.is_empty() {
            return true;
        }
        if !is_intermediate(h, hlo, 1) {
            return false;
        }
        hlo = users[0];
    }
    false
}

/// XLA's `FusionHeroesAreCompatible`: whether the emitters of `hero1` and `hero2` can
/// share one kernel.
pub fn fusion_heroes_are_compatible(
    h: &Hlo,
    hero1: Instr,
    hero2: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let reduce1 = reduction_dimensions(h, hero1, target);
    let reduce2 = reduction_dimensions(h, hero2, target);
    let transpose1 = tiled_transpose(h, hero1);
    let transpose2 = tiled_transpose(h, hero2);
    let nested1 = *h.opcode(hero1) == Opcode::Transpose && transpose1.is_none();
    let nested2 = *h.opcode(hero2) == Opcode::Transpose && transpose2.is_none();
    let (unnested_reduce1, unnested_reduce2) = (reduce1.is_some(), reduce2.is_some());
    let (unnested_transpose1, unnested_transpose2) = (transpose1.is_some(), transpose2.is_some());
    if let (Some(r1), Some(r2)) = (reduce1, reduce2) {
        if r1 != r2 {
            return FusionDecision::TiledReductionsWithDifferentShapes;
        }
    } else if let (Some(t1), Some(t2)) = (&transpose1, &transpose2) {
        if !t1.is_equivalent(t2) {
            return FusionDecision::TiledTransposesWithDifferentShapes;
        }
    } else if ((unnested_transpose1 || unnested_reduce1) && nested2)
        || (nested1 && (unnested_transpose2 || unnested_reduce2))
    {
        return FusionDecision::NestedTransposeWithUnnestedHero;
    } else if (unnested_transpose1 && unnested_reduce2) || (unnested_reduce1 && unnested_transpose2)
    {
        return FusionDecision::TransposeAndReduction;
    }
    if unnested_transpose1 || unnested_transpose2 {
        let fusion1 = h.fusion_instruction(hero1.computation);
        let fusion2 = h.fusion_instruction(hero2.computation);
        if let (Some(f1), Some(f2)) = (fusion1, fusion2) {
            let untiled = |consumer: Instr, producer: Instr| {
                h.operands(consumer)
                    .iter()
                    .position(|&o| o == producer)
                    .and_then(|k| h.parameter(h.fused_computation(consumer)?, k))
                    .is_some_and(|param| !path_of_intermediate_ops(h, param))
            };
            let f2_uses_f1 = h.operands(f2).contains(&f1);
            let f1_uses_f2 = h.operands(f1).contains(&f2);
            if unnested_transpose1 && f2_uses_f1 {
                if untiled(f2, f1) {
                    return FusionDecision::TiledTransposeWouldBecomeUntiled;
                }
            } else if unnested_transpose2 && f1_uses_f2 && untiled(f1, f2) {
                return FusionDecision::TiledTransposeWouldBecomeUntiled;
            }
        }
    }
    FusionDecision::Allow
}

/// XLA's `ShapesCompatibleForMultiOutputFusion`: compatible heroes and the same loop
/// shape (a reduction or tiled transpose loops over its operand), up to a bitcast.
pub fn shapes_compatible_for_multi_output_fusion(
    h: &Hlo,
    instr1: Instr,
    instr2: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let hero1 = get_real_hero_for_multi_output_fusion(h, instr1, target);
    let hero2 = get_real_hero_for_multi_output_fusion(h, instr2, target);
    let compatible = fusion_heroes_are_compatible(h, hero1, hero2, target);
    if !compatible.is_allowed() {
        return compatible;
    }
    let loop_shape = |e: Instr| -> Option<&Shape> {
        let in_fusion = h.fusion_instruction(e.computation).is_some();
        let hero = if in_fusion {
            find_non_trivial_hero(h, e)
        } else {
            e
        };
        if reduction_dimensions(h, e, target).is_some() || tiled_transpose(h, hero).is_some() {
            return h.operand_shape(hero, 0);
        }
        Some(h.shape(e))
    };
    let (Some(l1), Some(l2)) = (loop_shape(hero1), loop_shape(hero2)) else {
        return FusionDecision::DifferentLoopShapes;
    };
    let accept_unequal = !l1.is_tuple() && !l2.is_tuple();
    if !equal_ignoring_element_type(l1, l2)
        && (!accept_unequal || !is_reshape_or_transpose_bitcast(l1, l2))
    {
        return FusionDecision::DifferentLoopShapes;
    }
    FusionDecision::Allow
}

/// Whether `i` updates an operand in place (XLA's `GetInPlaceInputOutputPairs` is not
/// empty): a dynamic-update-slice or scatter, or a fusion with one whose updated operand
/// is a fusion parameter.
pub fn has_in_place_input_output_pairs(h: &Hlo, i: Instr) -> bool {
    let in_place = |f: Instr| matches!(h.opcode(f), Opcode::DynamicUpdateSlice | Opcode::Scatter);
    if in_place(i) {
        return true;
    }
    h.fused_instructions(i).into_iter().any(|f| {
        if !in_place(f) {
            return false;
        }
        let mut operand = h.operand(f, 0);
        while let Some(o) = operand.filter(|&o| *h.opcode(o) == Opcode::Bitcast) {
            operand = h.operand(o, 0);
        }
        operand.is_some_and(|o| *h.opcode(o) == Opcode::Parameter)
    })
}

/// XLA's `IsProducerMultiOutputFusible`: a producer may become an extra output of its
/// consumer's fusion when it is a single-output, loop-fusible op that neither updates
/// in place nor transposes physically.
pub fn is_producer_multi_output_fusible(
    h: &Hlo,
    producer: Instr,
    _target: &dyn Target,
) -> FusionDecision {
    if h.is_multi_output_fusion(producer) {
        return FusionDecision::ProducerIsMultiOutputFusion;
    }
    if has_in_place_input_output_pairs(h, producer) {
        return FusionDecision::InPlaceOperationsPresent;
    }
    if !is_loop_fusible_as_producer(h, producer) {
        return FusionDecision::MultiOutputProducerNotLoopFusible;
    }
    if is_physically_transposing(h, producer) {
        return FusionDecision::ProducerPhysicallyTransposing;
    }
    FusionDecision::Allow
}

/// XLA's `IsProfitableOperand` (multi-output fusion of siblings): sharing an effective
/// scalar saves no memory traffic, so it is no reason to fuse the siblings that read it.
pub fn is_profitable_operand(h: &Hlo, i: Instr) -> bool {
    h.shape(i)
        .as_array()
        .is_none_or(|a| a.element_count() != Some(1))
}
