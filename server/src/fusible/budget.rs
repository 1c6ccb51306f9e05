//! What one fusion may hold (XLA's `FusionFitsInBudget`): the shared memory its
//! reductions and transposes need must fit one block, at most 8 unnested reductions
//! (each costs registers), and at most [`MAX_OPERANDS_AND_OUTPUTS_PER_FUSION`] kernel
//! parameters (CUDA limits a kernel's parameter space; many operands also mean many
//! registers per thread).

use super::decision::FusionDecision;
use super::hero::{reduction_dimensions, tiled_transpose};
use super::target::Target;
use super::{Hlo, Instr};
use crate::model::{Opcode, Shape};

/// `MaxOperandsAndOutputsPerFusion()`.
pub const MAX_OPERANDS_AND_OUTPUTS_PER_FUSION: usize = 96;
/// `kMaxUnnestedReductionOutputsPerFusion`.
pub const MAX_UNNESTED_REDUCTION_OUTPUTS_PER_FUSION: i64 = 8;
/// The column reduction emitter's widest vector (`kMaxVectorSize`).
const MAX_VECTOR_SIZE: i64 = 4;

fn bytes_of(shape: Option<&Shape>) -> i64 {
    shape
        .and_then(Hlo::element_bits)
        .map_or(0, |bits| (bits + 7) / 8)
}

/// XLA's `SharedMemoryUsage` (`FusionInfoCache::GetSharedMemoryUsage`): the shared
/// memory `i` needs, in bytes. A row reduction writes one element per warp (at most 32
/// warps per row); a column reduction keeps a `32 x (4·32 + 1)` tile per input; a tiled
/// transpose its tile; a fusion the sum of its instructions'.
pub fn shared_memory_usage(h: &Hlo, i: Instr, target: &dyn Target) -> i64 {
    if *h.opcode(i) == Opcode::Fusion {
        return h
            .fused_instructions(i)
            .into_iter()
            .map(|f| shared_memory_usage(h, f, target))
            .sum();
    }
    if let Some(r) = reduction_dimensions(h, i, target) {
        // Variadic reductions keep one buffer per input.
        let inputs = h.operand_count(i) / 2;
        let bytes: i64 = (0..inputs).map(|k| bytes_of(h.operand_shape(i, k))).sum();
        return if r.is_row {
            32 * bytes
        } else {
            32 * (MAX_VECTOR_SIZE * 32 + 1) * bytes
        };
    }
    tiled_transpose(h, i).map_or(0, |t| t.shmem_usage)
}

/// XLA's `NumUnnestedReductions`: reductions the reduction emitter takes, in `i`.
pub fn num_unnested_reductions(h: &Hlo, i: Instr, target: &dyn Target) -> i64 {
    if *h.opcode(i) == Opcode::Fusion {
        return h
            .fused_instructions(i)
            .into_iter()
            .map(|f| num_unnested_reductions(h, f, target))
            .sum();
    }
    i64::from(reduction_dimensions(h, i, target).is_some())
}

/// XLA's `ShapeUtil::SubshapeCount`: the shape and, for a tuple, every nested element.
fn subshape_count(shape: &Shape) -> usize {
    match shape {
        Shape::Tuple(elements) => 1 + elements.iter().map(subshape_count).sum::<usize>(),
        _ => 1,
    }
}

/// XLA's `FusionFitsInParameterLimit`: operands plus output buffers of the fusion of
/// `instr1` and `instr2` stay within [`MAX_OPERANDS_AND_OUTPUTS_PER_FUSION`]. For a
/// producer-consumer fusion (`instr1` the consumer) a fusion that needs no more operands
/// than the consumer already has is always fine.
pub fn fusion_fits_in_parameter_limit(
    h: &Hlo,
    instr1: Instr,
    instr2: Instr,
    is_consumer_producer_fusion: bool,
) -> FusionDecision {
    let outputs = subshape_count(h.shape(instr1)) + subshape_count(h.shape(instr2));
    let (n1, n2) = (h.operand_count(instr1), h.operand_count(instr2));
    if (n1 + n2 + outputs).saturating_sub(1) <= MAX_OPERANDS_AND_OUTPUTS_PER_FUSION {
        return FusionDecision::Allow;
    }
    let mut operands: Vec<Instr> = h.operands(instr1);
    operands.extend(h.operands(instr2));
    operands.sort();
    operands.dedup();
    operands.retain(|&o| o != instr1 && o != instr2);
    if is_consumer_producer_fusion && operands.len() <= n1 {
        return FusionDecision::Allow;
    }
    if operands.len() + outputs > MAX_OPERANDS_AND_OUTPUTS_PER_FUSION {
        return FusionDecision::TooManyOperandsAndOutputs;
    }
    FusionDecision::Allow
}

/// XLA's `FusionFitsInBudget`: shared memory, unnested reductions, then parameters.
pub fn fusion_fits_in_budget(
    h: &Hlo,
    instr1: Instr,
    instr2: Instr,
    target: &dyn Target,
    is_consumer_producer_fusion: bool,
) -> FusionDecision {
    let budget = target.shared_memory_per_block();
    if shared_memory_usage(h, instr1, target) + shared_memory_usage(h, instr2, target) > budget {
        return FusionDecision::SharedMemoryOverBudget {
            budget_bytes: budget,
        };
    }
    if num_unnested_reductions(h, instr1, target) + num_unnested_reductions(h, instr2, target)
        > MAX_UNNESTED_REDUCTION_OUTPUTS_PER_FUSION
    {
        return FusionDecision::TooManyUnnestedReductions {
            limit: MAX_UNNESTED_REDUCTION_OUTPUTS_PER_FUSION,
        };
    }
    fusion_fits_in_parameter_limit(h, instr1, instr2, is_consumer_producer_fusion)
}
