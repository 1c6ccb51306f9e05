//! How far the loop emitter unrolls (XLA's `ComputeLoopFusionConfig`,
//! `MaxUnrollFactor`, `MayCausePerformanceDropIfUnrolled`): unrolling lets one thread
//! load a vector of consecutive elements, which pays only when the GPU is full anyway
//! (at least one element per resident thread), and hurts with ops whose one output
//! element already costs many loads or registers (dots, sorts, large windows,
//! concatenates of many operands, variadic reductions).
//!
//! The unroll factor is 4 (or 2, or 1: the largest dividing the element count), raised
//! so that sub-byte outputs write whole bytes. On Blackwell a single-output loop or
//! transpose fusion without reductions and with outputs narrower than 64 bits unrolls
//! to fill the widest vector access: `max_vector_bits / max(8, widest element)` over the
//! non-scalar parameters and the roots (a scalar parameter is broadcast, never loaded as
//! a vector), 128 bits with older toolkits and 256 bits from CUDA 12.9 on, as XLA's tests
//! at `0e16889e` expect (`ComputeLoopFusionConfig*`, `FourBitTypeUnrolled16or32x...`).

use super::hero::{find_non_trivial_hero, fusion_roots, is_real_reduction_hero, tiled_transpose};
use super::target::Target;
use super::{Hlo, Instr};
use crate::coalescing::emitter::normalize_transpose;
use crate::model::{Opcode, Shape};

/// `kDefaultUnrollFactor` / `kMaxUnrollFactor`.
pub const DEFAULT_UNROLL_FACTOR: i64 = 4;
/// `kMaxConcatArgumentsForUnrolling`.
pub const MAX_CONCAT_ARGUMENTS_FOR_UNROLLING: usize = 10;
/// `kMaxReduceWindowSize`: one thread computes a whole window.
pub const MAX_REDUCE_WINDOW_SIZE: i64 = 8;
/// `kMaxBitsForAggressiveUnrolling`.
pub const MAX_BITS_FOR_AGGRESSIVE_UNROLLING: i64 = 64;
/// `kMaxNumOutputsForFullUnrolling`.
pub const MAX_NUM_OUTPUTS_FOR_FULL_UNROLLING: usize = 1;

/// The instructions of `i` as a fusion (XLA's `HloFusionAdaptor::ForInstruction`): a
/// fusion's fused instructions without parameters, or `i` alone.
pub fn fusion_body(h: &Hlo, i: Instr) -> Vec<Instr> {
    match h.fused_computation(i) {
        Some(_) => h
            .fused_instructions(i)
            .into_iter()
            .filter(|&f| *h.opcode(f) != Opcode::Parameter)
            .collect(),
        None => vec![i],
    }
}

/// The roots of `i` as a fusion (XLA's `HloFusionAnalysis::fusion_roots`).
pub fn fusion_roots_of(h: &Hlo, i: Instr) -> Vec<Instr> {
    match h.fused_computation(i) {
        Some(c) => fusion_roots(h, c),
        None => vec![i],
    }
}

/// The inputs of `i` as a fusion: its fused parameters, or its operands' shapes.
fn fusion_parameter_shapes<'a>(h: &Hlo<'a>, i: Instr) -> Vec<&'a Shape> {
    match h.fused_computation(i) {
        Some(c) => h
            .instructions(c)
            .into_iter()
            .filter(|&f| *h.opcode(f) == Opcode::Parameter)
            .map(|f| h.shape(f))
            .collect(),
        None => (0..h.operand_count(i))
            .filter_map(|k| h.operand_shape(i, k))
            .collect(),
    }
}

/// XLA's `MayCausePerformanceDropIfUnrolled` over the fusion of `i`.
pub fn may_cause_performance_drop_if_unrolled(h: &Hlo, i: Instr) -> bool {
    fusion_body(h, i).into_iter().any(|f| match h.opcode(f) {
        Opcode::ReduceWindow => {
            let sizes: i64 = h
                .instruction(f)
                .attrs()
                .uncommon()
                .window
                .as_ref()
                .map_or(1, |w| w.iter().map(|d| d.size).product());
            sizes > MAX_REDUCE_WINDOW_SIZE
        }
        Opcode::Sort | Opcode::Dot => true,
        Opcode::Concatenate => h.operand_count(f) > MAX_CONCAT_ARGUMENTS_FOR_UNROLLING,
        Opcode::Reduce => matches!(h.shape(f), Shape::Tuple(t) if t.len() > 1),
        _ => false,
    })
}

/// The emitter family of the fusion of `i`, as far as unrolling cares: a reduction
/// emitter, the transpose emitter, or the loop emitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Emitter {
    Loop,
    Reduction,
    Transpose,
}

fn emitter(h: &Hlo, i: Instr, target: &dyn Target) -> Emitter {
    let roots = fusion_roots_of(h, i);
    let heroes: Vec<(Instr, Instr)> = roots
        .iter()
        .map(|&r| (r, find_non_trivial_hero(h, r)))
        .collect();
    if heroes
        .iter()
        .any(|&(r, hero)| is_real_reduction_hero(h, r, hero, target))
    {
        return Emitter::Reduction;
    }
    if heroes
        .iter()
        .any(|&(_, hero)| tiled_transpose(h, hero).is_some())
    {
        return Emitter::Transpose;
    }
    Emitter::Loop
}

/// Whether a transpose of the fusion moves its minor dimension to one shorter than
/// `unroll` elements: unrolled reads of it would not be contiguous.
fn contains_transpose_with_small_most_minor_dim(h: &Hlo, i: Instr, unroll: i64) -> bool {
    fusion_body(h, i).into_iter().any(|f| {
        if *h.opcode(f) != Opcode::Transpose {
            return false;
        }
        let node = h.node(f);
        let permutation: Option<Vec<usize>> = node
            .op
            .attrs
            .dimensions
            .as_ref()
            .and_then(|d| d.iter().map(|&x| usize::try_from(x).ok()).collect());
        let (Some(permutation), Some(out), Some(inp)) = (
            permutation,
            node.op.shape.as_array(),
            node.op.operands.first().and_then(|s| s.as_array()),
        ) else {
            return false;
        };
        let Some(t) = normalize_transpose(inp, out, &permutation) else {
            return false;
        };
        let rank = t.permutation.len();
        rank > 0 && t.permutation[rank - 1] != rank - 1 && t.input[t.permutation[rank - 1]] < unroll
    })
}

fn storage_bits(shape: &Shape) -> i64 {
    Hlo::element_bits(shape).unwrap_or(0)
}

/// The smallest element width among the roots' outputs, in bits.
fn smallest_output_bits(h: &Hlo, i: Instr) -> i64 {
    fusion_roots_of(h, i)
        .into_iter()
        .flat_map(|r| h.shape(r).leaves())
        .map(|a| storage_bits(&Shape::Array(a.clone())))
        .filter(|&b| b > 0)
        .min()
        .unwrap_or(8)
}

/// XLA's `MaxUnrollFactor`: 4, or on Blackwell enough to fill the widest vector access.
pub fn max_unroll_factor(h: &Hlo, i: Instr, target: &dyn Target) -> i64 {
    let roots = fusion_roots_of(h, i);
    let has_reduce = fusion_body(h, i)
        .into_iter()
        .any(|f| *h.opcode(f) == Opcode::Reduce);
    if !(target.is_blackwell()
        && emitter(h, i, target) != Emitter::Reduction
        && smallest_output_bits(h, i) < MAX_BITS_FOR_AGGRESSIVE_UNROLLING
        && roots.len() <= MAX_NUM_OUTPUTS_FOR_FULL_UNROLLING
        && !has_reduce)
    {
        return DEFAULT_UNROLL_FACTOR;
    }
    let is_scalar = |s: &Shape| s.as_array().is_some_and(|a| a.element_count() == Some(1));
    let widest = fusion_parameter_shapes(h, i)
        .into_iter()
        .filter(|s| !is_scalar(s))
        .chain(roots.iter().map(|&r| h.shape(r)))
        .map(storage_bits)
        .max()
        .unwrap_or(0);
    let mut unroll = target.max_vector_bits() / widest.max(8);
    // Round down to a power of two.
    unroll = if unroll > 0 {
        1 << (63 - unroll.leading_zeros())
    } else {
        1
    };
    while unroll > DEFAULT_UNROLL_FACTOR {
        if !contains_transpose_with_small_most_minor_dim(h, i, unroll) {
            return unroll;
        }
        unroll /= 2;
    }
    DEFAULT_UNROLL_FACTOR
}

/// The largest power of two up to `max_unroll` dividing `elements` (XLA's
/// `ComputeMaxUnrollFactor`).
fn compute_max_unroll_factor(elements: i64, max_unroll: i64) -> i64 {
    let mut u = max_unroll;
    while u > 1 {
        if elements % u == 0 {
            return u;
        }
        u /= 2;
    }
    1
}

/// XLA's `ComputeLoopFusionConfig(analysis).unroll_factor` for the fusion of `i` (or `i`
/// as a one-op fusion): unrolled only when there is at least one element per resident
/// thread and nothing makes unrolling slow; raised so each thread writes whole bytes.
pub fn unroll_factor(h: &Hlo, i: Instr, target: &dyn Target) -> i64 {
    let roots = fusion_roots_of(h, i);
    let elements = roots
        .first()
        .and_then(|&r| h.shape(r).leaves().first().and_then(|a| a.element_count()))
        .unwrap_or(0);
    let threads = target.threads_per_core_limit() * target.core_count();
    let mut unroll = 1;
    if elements >= threads && !may_cause_performance_drop_if_unrolled(h, i) {
        unroll = compute_max_unroll_factor(elements, max_unroll_factor(h, i, target));
    }
    let bits = smallest_output_bits(h, i).max(1);
    unroll.max((8 + bits - 1) / bits)
}
