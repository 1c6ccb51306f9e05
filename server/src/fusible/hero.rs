//! The heroes of a fusion: the reduce or transpose whose emitter shapes the kernel,
//! and the facts about them the fusion rules ask (XLA's `ir_emission_utils.cc`:
//! `IsReductionFromOrToContiguousDimensions`, `IsRealReductionHero`,
//! `ReductionIsRaceFree`, `GetDescriptionForTiledTransposeEmitter`, `GetFusionRoots`,
//! `FindNonTrivialHero`, `IsIntermediate`). Finding the hero and normalizing a
//! transpose are the coalescing analysis' ports ([`crate::coalescing::emitter`]).

use super::shapes::{reshape_is_bitcast, transpose_is_bitcast};
use super::target::Target;
use super::{Hlo, Instr};
use crate::analysis::ArrayShape;
use crate::coalescing::emitter::{
    self, ReductionDims, MIN_DIMENSION_TO_TRANSPOSE_TILED, MIN_DIMENSION_TO_TRANSPOSE_TILED_2,
    MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED,
};
use crate::model::{ComputationId, Opcode};

/// `MinThreadsXRowReduction` (ptxas 12.2 and later).
pub const MIN_THREADS_X_ROW_REDUCTION: i64 = 1024;
/// The row reduction tiling's minor entry: elements one thread reduces.
pub const ROW_REDUCTION_TILE_X: i64 = 16;
/// The column reduction tiling's reduced entry (`GetReductionTiling`).
pub const COLUMN_REDUCTION_TILE_Y: i64 = 128;
/// `BatchedReductionRaceFreeBound`.
pub const BATCHED_REDUCTION_RACE_FREE_BOUND: i64 = 8;
/// `kNumShmemBanks`: the transpose emitter's tiles are this many banks wide.
pub const NUM_SHMEM_BANKS: i64 = 32;
/// `kMaxBitsInMostMinorDimension`: a transpose that keeps its minor dimension is tiled
/// only when that dimension is at most 8 bytes.
pub const MAX_BITS_IN_MOST_MINOR_DIMENSION: i64 = 8 * 8;
/// Bits of one shared memory bank word.
const BANK_BITS: i64 = 32;

/// XLA's `LayoutUtil::AreDimensionsConsecutive`: `dims` sit next to each other in the
/// layout. Unit dimensions count: the fusion rules run before XLA drops them (the
/// coalescing analysis, which looks at normalized HLO, skips them instead).
fn are_dimensions_consecutive(shape: &ArrayShape, dims: &[usize]) -> bool {
    let layout = shape.layout();
    let mut positions: Vec<usize> = dims
        .iter()
        .filter_map(|d| layout.iter().position(|x| x == d))
        .collect();
    positions.sort_unstable();
    positions.len() == dims.len() && positions.windows(2).all(|w| w[1] == w[0] + 1)
}

/// The reduction dimensions of `i` when it is a reduce that XLA's reduction emitters
/// take (XLA's `IsReductionFromOrToContiguousDimensions`: kept or reduced dimensions
/// consecutive in the layout, and large enough to beat the elemental emitter).
pub fn reduction_dimensions(h: &Hlo, i: Instr, target: &dyn Target) -> Option<ReductionDims> {
    if *h.opcode(i) != Opcode::Reduce {
        return None;
    }
    let node = h.node(i);
    let input = node.op.operands.first()?.as_array()?;
    let reduced = node.op.dimensions(input.rank()).ok()?;
    let kept: Vec<usize> = (0..input.rank()).filter(|d| !reduced.contains(d)).collect();
    if !(are_dimensions_consecutive(input, &kept) || are_dimensions_consecutive(input, &reduced)) {
        return None;
    }
    let r = emitter::reduction_dims(input, &reduced);
    emitter::reduction_emitter_is_faster(&r, target.warp_size()).then_some(r)
}

/// XLA's `IsReductionFromOrToContiguousDimensions`.
pub fn is_reduction_from_or_to_contiguous_dimensions(
    h: &Hlo,
    i: Instr,
    target: &dyn Target,
) -> bool {
    reduction_dimensions(h, i, target).is_some()
}

/// XLA's `ReductionIsRaceFree`: one block reduces a whole row (or column), so a
/// reduction hero that is not a root can feed other ops of the same fusion.
pub fn reduction_is_race_free(r: &ReductionDims, target: &dyn Target) -> bool {
    if r.is_row {
        r.dims[2] <= MIN_THREADS_X_ROW_REDUCTION * ROW_REDUCTION_TILE_X
            && r.dims[0] <= BATCHED_REDUCTION_RACE_FREE_BOUND
    } else {
        r.dims[1] <= target.warp_size() * COLUMN_REDUCTION_TILE_Y
    }
}

/// XLA's `IsRealReductionHero`: `hero` is a reduction the reduction emitter takes, and
/// either it is the root itself or its result can be reused race-free.
pub fn is_real_reduction_hero(h: &Hlo, root: Instr, hero: Instr, target: &dyn Target) -> bool {
    let Some(r) = reduction_dimensions(h, hero, target) else {
        return false;
    };
    root == hero || reduction_is_race_free(&r, target)
}

/// XLA's `GetFusionRoots`: the outputs of a computation, through tuples and
/// get-tuple-elements of tuples.
pub fn fusion_roots(h: &Hlo, c: ComputationId) -> Vec<Instr> {
    fn walk(h: &Hlo, i: Instr, out: &mut Vec<Instr>, depth: usize) {
        if depth > 64 {
            return;
        }
        match h.opcode(i) {
            Opcode::GetTupleElement => {
                let Some(t) = h.operand(i, 0) else { return };
                if *h.opcode(t) == Opcode::Tuple {
                    let index = h.instruction(i).attrs().tuple_index.unwrap_or(0);
                    if let Some(o) = usize::try_from(index).ok().and_then(|k| h.operand(t, k)) {
                        walk(h, o, out, depth + 1);
                    }
                } else {
                    out.push(t);
                }
            }
            Opcode::Tuple => {
                for o in h.operands(i) {
                    walk(h, o, out, depth + 1);
                }
            }
            _ => out.push(i),
        }
    }
    let mut out = vec![];
    if let Some(root) = h.root(c) {
        walk(h, root, &mut out, 0);
    }
    out
}

/// XLA's `FindNonTrivialHero` within `i`'s computation (the coalescing analysis' port).
pub fn find_non_trivial_hero(h: &Hlo, i: Instr) -> Instr {
    let nodes = h.nodes(i.computation);
    let hero = emitter::hero(nodes, i.id.index());
    Instr {
        computation: i.computation,
        id: crate::model::InstrId(hero as u32),
    }
}

/// A transpose as XLA's transpose emitter tiles it (`TransposeDescription`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransposeDescription {
    /// The output's normalized extents (unit dimensions dropped, adjacent ones merged).
    pub dimensions: Vec<i64>,
    /// Output normalized dimension `j` is input normalized dimension `permutation[j]`.
    pub permutation: Vec<usize>,
    /// The shared memory the emitter's tile takes, in bytes.
    pub shmem_usage: i64,
}

impl TransposeDescription {
    /// XLA's `IsEquivalent`: the same normalized transpose.
    pub fn is_equivalent(&self, other: &TransposeDescription) -> bool {
        self.dimensions == other.dimensions && self.permutation == other.permutation
    }
}

/// XLA's `GetDescriptionForTiledTransposeEmitter`: the transpose `i`, when the
/// shared-memory transpose emitter handles it. Three shapes qualify:
/// * the minor dimension moves and both swapped dimensions are long enough (a 32 x 33
///   tile of elements);
/// * the minor dimension stays, is at most 8 bytes, and the swapped dimensions are long
///   enough (the tile carries the minor dimension along);
/// * narrow elements (8 or 16 bits) whose minor dimension moves but is too short for the
///   first form: a packed transpose, `32·v x 32·v` elements with `v` elements per bank
///   word.
pub fn tiled_transpose(h: &Hlo, i: Instr) -> Option<TransposeDescription> {
    if *h.opcode(i) != Opcode::Transpose {
        return None;
    }
    let node = h.node(i);
    let permutation = emitter::transpose_permutation(node)?;
    let out = node.op.shape.as_array()?;
    let inp = node.op.operands.first()?.as_array()?;
    let t = emitter::normalize_transpose(inp, out, &permutation)?;
    let rank = t.permutation.len();
    if rank < 2 {
        return None;
    }
    let dims: Vec<i64> = t.permutation.iter().map(|&p| t.input[p]).collect();
    let bits = Hlo::element_bits(h.shape(i))?;
    let describe = |shmem_usage: i64| TransposeDescription {
        dimensions: dims.clone(),
        permutation: t.permutation.clone(),
        shmem_usage,
    };
    let out_minor = dims[rank - 1];
    if t.permutation[rank - 1] == rank - 1 {
        // The minor dimension stays: tile the two before it, carrying it along.
        if rank < 3 {
            return None;
        }
        let operand_minor = t.input[rank - 2];
        let swapped = operand_minor.min(dims[rank - 2]);
        if bits * out_minor <= MAX_BITS_IN_MOST_MINOR_DIMENSION
            && bits * out_minor * swapped >= 8 * MIN_DIMENSION_TO_TRANSPOSE_TILED
        {
            let bytes = (NUM_SHMEM_BANKS * (NUM_SHMEM_BANKS + 1) * bits * out_minor + 7) / 8;
            return Some(describe(bytes));
        }
        return None;
    }
    let operand_minor = t.input[rank - 1];
    let long_enough = (operand_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED
        && out_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED)
        || (operand_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED_2
            && out_minor >= MIN_DIMENSION_TO_TRANSPOSE_TILED_2
            && operand_minor.saturating_mul(out_minor) >= MIN_TOTAL_DIMENSIONS_TO_TRANSPOSE_TILED);
    if long_enough {
        let bytes = (NUM_SHMEM_BANKS * (NUM_SHMEM_BANKS + 1) * bits + 7) / 8;
        return Some(describe(bytes));
    }
    // Packed: several narrow elements per bank word.
    if (8..BANK_BITS).contains(&bits) && BANK_BITS % bits == 0 {
        let per_word = BANK_BITS / bits;
        if operand_minor * bits <= MAX_BITS_IN_MOST_MINOR_DIMENSION
            && out_minor >= NUM_SHMEM_BANKS
            && operand_minor > 1
        {
            let side = NUM_SHMEM_BANKS * per_word;
            return Some(describe(side * side * bits / 8));
        }
    }
    None
}

/// XLA's `IsIntermediate`: an op that only moves or maps values one to one (an
/// elementwise op with at most `allowed_operands` operands, a bitcast, a reshape or
/// transpose that is a bitcast), with at most one user.
pub fn is_intermediate(h: &Hlo, i: Instr, allowed_operands: usize) -> bool {
    h.users(i).len() <= 1 && is_one_to_one(h, i, allowed_operands)
}

/// [`is_intermediate`] without the user count: `i` maps its operands' elements to its
/// own one to one.
pub fn is_one_to_one(h: &Hlo, i: Instr, allowed_operands: usize) -> bool {
    let n = h.operand_count(i);
    if n == 0 || n > allowed_operands {
        return false;
    }
    let opcode = h.opcode(i);
    if opcode.is_elementwise() {
        return true;
    }
    let shapes = || Some((h.shape(i).as_array()?, h.operand_shape(i, 0)?.as_array()?));
    match opcode {
        Opcode::Bitcast => true,
        Opcode::Reshape => shapes().is_some_and(|(out, inp)| reshape_is_bitcast(inp, out)),
        Opcode::Transpose => shapes().is_some_and(|(out, inp)| {
            h.instruction(i)
                .attrs()
                .dimensions
                .as_ref()
                .is_some_and(|d| transpose_is_bitcast(inp, out, d))
        }),
        _ => false,
    }
}
