//! The launch model: for the emitter XLA picks ([`super::emitter`]), the map from
//! one warp's threads (and each thread's loop and vector indices) to the index
//! it works on, as XLA's emitters compute it (`ComputeThreadIdToInputIndexing`).
//!
//! Only the first warp of the first block is modelled, as XLA's coalescing
//! analysis samples it: `thread_x` in `[0, 31]`, every other thread and block id 0.
//! Every number below is XLA's, named after its constant:
//!
//! * Loop emitter (`GetDefaultThreadIdIndexingMap`, `ComputeLoopFusionConfig`):
//!   thread `t` of block 0 covers linear output index `t * unroll + u`, `u <
//!   unroll`, delinearized in the output's layout. `unroll` is the largest of 4,
//!   2 dividing the element count when the output has at least as many elements
//!   as the GPU has resident threads and no op prevents vectorization
//!   (`ComputeMaxUnrollFactor`, `MayPreventVectorization`), raised so that
//!   sub-byte outputs write whole bytes.
//! * Row reduction (`RowReductionFusion`): `min(1024, roundup(ceil(x / 16), 32))`
//!   threads along the reduced row (`kMinorReducedElementsPerThread` = 16, the
//!   1024 of `MinThreadsXRowReduction` with ptxas 12.2+), rows per block up to
//!   `kThreadsPerBlockTarget` = 256 threads, vector loads by
//!   `GetVectorSizeForMlir`. Multi-row (`MultiRowReductionFusion`, rows shorter
//!   than a warp dividing it): one thread per element, `32 / x` rows per warp.
//! * Column reduction (`ColumnReductionFusion`): a 32 x 32 thread tile, threads of
//!   a warp along the kept minor dimension, loops down the reduced one.
//! * Transpose (`TransposeFusion`): 32 x 32 tiles (`kTileSize`), 128 threads
//!   (`kNumThreadsPerBlock`, 4 rows of 32, `kNumRows`), vectorized up to
//!   `kMaxVectorizedBytes` = 4 bytes when there is enough work; threads read the
//!   input tile row by row.

use super::device::Device;
use super::emitter::{self, EmitterKind, NormalizedTranspose, ReductionDims};
use super::subject::Subject;
use crate::algebra::{Expr, IndexingMap, Interval, Variable};
use crate::analysis::{ArrayShape, Node};

/// `kMaxUnrollFactor`.
pub const MAX_UNROLL_FACTOR: i64 = 4;
/// Loop emitter blocks: 4 warps (`kWarpSchedulingGranularity`).
pub const LOOP_WARPS_PER_BLOCK: i64 = 4;
/// `kMinorReducedElementsPerThread`.
pub const MINOR_REDUCED_ELEMENTS_PER_THREAD: i64 = 16;
/// `MinThreadsXRowReduction` (ptxas 12.2 and later).
pub const MAX_THREADS_X_ROW_REDUCTION: i64 = 1024;
/// `kThreadsPerBlockTarget` of the reduction emitters.
pub const REDUCTION_THREADS_PER_BLOCK_TARGET: i64 = 256;
/// `kNumRows` of the transpose emitter.
pub const TRANSPOSE_ROWS: i64 = 4;
/// `kMaxVectorizedBytes` of the transpose emitter.
pub const TRANSPOSE_MAX_VECTORIZED_BYTES: i64 = 4;
/// Concatenates with more operands do not unroll (`kMaxConcatArgumentsForUnrolling`).
pub const MAX_CONCAT_ARGUMENTS_FOR_UNROLLING: usize = 10;

/// Where one warp's indices land for one root: `map` goes from `(thread_x)` and
/// the thread's loop and vector indices to an index of `node`'s output.
#[derive(Clone, Debug)]
pub struct SpaceRead {
    /// The root (fusion output) this work belongs to.
    pub root: usize,
    /// The fused instruction whose index space `map` lands in (a root, or the
    /// operand a reduce or transpose hero reads).
    pub node: usize,
    pub map: IndexingMap,
}

/// The launch of a fusion as far as the first warp is concerned.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kind: EmitterKind,
    /// `loop emitter, unroll 4`, for messages.
    pub description: String,
    pub reads: Vec<SpaceRead>,
}

/// The launch XLA would use for `subject` on `device`.
pub fn launch(subject: &Subject<'_>, device: &Device) -> Launch {
    let (kind, heroes) = emitter::choose(subject, device);
    match &kind {
        EmitterKind::Loop => loop_launch(subject, device, &heroes, kind.clone()),
        EmitterKind::Reduction { dims } => {
            reduction_launch(subject, device, &heroes, *dims, kind.clone())
        }
        EmitterKind::Transpose { transpose } => {
            transpose_launch(subject, device, &heroes, transpose, kind.clone())
        }
        EmitterKind::Other(what) => Launch {
            description: what.clone(),
            kind,
            reads: vec![],
        },
    }
}

/// Logical dimension `l`'s stride in the linear physical order of `shape`.
pub fn physical_strides(shape: &ArrayShape) -> Vec<i64> {
    let mut strides = vec![0; shape.rank()];
    let mut stride = 1i64;
    for d in shape.layout() {
        strides[d] = stride;
        stride = stride.saturating_mul(shape.dims[d].max(1));
    }
    strides
}

/// The linear physical offset of `index` in `shape`.
pub fn linearize(shape: &ArrayShape, index: &[Expr]) -> Expr {
    let strides = physical_strides(shape);
    index
        .iter()
        .zip(&strides)
        .fold(Expr::constant(0), |acc, (e, &s)| acc + e.clone() * s)
}

/// The logical index of linear physical offset `linear` in `shape` (the most
/// major dimension is not reduced modulo its extent: offsets are in bounds).
pub fn delinearize(shape: &ArrayShape, linear: &Expr) -> Vec<Expr> {
    let strides = physical_strides(shape);
    let major = shape.layout().last().copied();
    (0..shape.rank())
        .map(|l| {
            let q = linear.clone().floor_div(strides[l].max(1));
            if Some(l) == major {
                q
            } else {
                q.modulo(shape.dims[l].max(1))
            }
        })
        .collect()
}

/// The map from `(thread_x)[symbols]` to `results` with the given constraints.
fn warp_map(
    threads: i64,
    symbols: Vec<Variable>,
    results: Vec<Expr>,
    constraints: Vec<(Expr, Interval)>,
) -> IndexingMap {
    let mut m = IndexingMap::new(
        vec![Variable::named(0, threads - 1, "thread_x")],
        symbols,
        vec![],
        results,
        vec![],
    );
    for (e, r) in constraints {
        m.add_constraint(e, r);
    }
    m.simplify();
    m
}

fn first_array(node: &Node) -> Option<&ArrayShape> {
    node.op.shape.output(0)
}

fn elements(shape: &ArrayShape) -> i64 {
    shape.element_count().unwrap_or(0)
}

/// XLA's `MayPreventVectorization`.
fn may_prevent_vectorization(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n.op.opcode.as_str() {
        "dot" | "sort" => true,
        "concatenate" => n.operands.len() > MAX_CONCAT_ARGUMENTS_FOR_UNROLLING,
        "reduce" => n.op.shape.output_count() > 1 && n.op.shape.as_array().is_none(),
        _ => false,
    })
}

/// The loop emitter's unroll factor (`ComputeLoopFusionConfig`).
pub fn loop_unroll(subject: &Subject<'_>, device: &Device, elements: i64, roots: &[usize]) -> i64 {
    let mut unroll = 1;
    if elements >= device.resident_threads() && !may_prevent_vectorization(subject.nodes()) {
        unroll = [MAX_UNROLL_FACTOR, 2]
            .into_iter()
            .filter(|u| *u <= MAX_UNROLL_FACTOR)
            .find(|u| elements % u == 0)
            .unwrap_or(1);
    }
    if let Some(bits) = emitter::smallest_bits(subject, roots) {
        if bits > 0 && bits < 8 {
            unroll = unroll.max((8 + bits - 1) / bits);
        }
    }
    unroll
}

fn loop_launch(
    subject: &Subject<'_>,
    device: &Device,
    heroes: &[(usize, usize)],
    kind: EmitterKind,
) -> Launch {
    let nodes = subject.nodes();
    let roots: Vec<usize> = heroes.iter().map(|&(r, _)| r).collect();
    let n = roots
        .first()
        .and_then(|&r| first_array(&nodes[r]))
        .map_or(0, elements);
    let unroll = loop_unroll(subject, device, n, &roots);
    if n <= 0 {
        return Launch {
            kind,
            description: "loop emitter, no elements".into(),
            reads: vec![],
        };
    }
    let per_thread = (n + unroll - 1) / unroll.max(1);
    let threads = per_thread.clamp(1, LOOP_WARPS_PER_BLOCK * device.warp_size);
    let warp = threads.min(device.warp_size);
    let mut reads = vec![];
    for &r in &roots {
        let Some(shape) = first_array(&nodes[r]) else {
            continue;
        };
        let linear = Expr::dim(0) * unroll + Expr::range(0);
        let results = delinearize(shape, &linear);
        let map = warp_map(
            warp,
            vec![Variable::named(0, unroll - 1, "unroll")],
            results,
            vec![(linear, Interval::new(0, elements(shape) - 1))],
        );
        reads.push(SpaceRead {
            root: r,
            node: r,
            map,
        });
    }
    Launch {
        kind,
        description: format!("loop emitter, {threads} threads per block, unroll {unroll}"),
        reads,
    }
}

/// XLA's `GetVectorSizeForMlir` for reductions.
fn reduction_vector_size(minor: i64, threads: i64, smallest_input_bits: Option<i64>) -> i64 {
    if minor % 2 != 0 || threads * 2 > minor {
        return 1;
    }
    if smallest_input_bits.is_some_and(|b| b >= 32) {
        return 2;
    }
    if threads * 4 > minor {
        return 2;
    }
    if minor % 4 == 0 {
        4
    } else {
        2
    }
}

/// One warp's position in the reduction's three-dimensional space: `(z, y, x)`
/// expressions, symbols and constraints, and a description.
struct ReductionWarp {
    index: [Expr; 3],
    symbols: Vec<Variable>,
    constraints: Vec<(Expr, Interval)>,
    warp: i64,
    description: String,
}

fn row_reduction_warp(dims: [i64; 3], device: &Device, input_bits: Option<i64>) -> ReductionWarp {
    let [z, y, x] = dims;
    let warp_size = device.warp_size;
    let rows_per_warp = if x > 0 && warp_size % x == 0 && x < warp_size {
        warp_size / x
    } else {
        1
    };
    if rows_per_warp > 1 {
        // One thread per element; a warp reduces `rows_per_warp` whole rows.
        let threads_kept = if y * x <= REDUCTION_THREADS_PER_BLOCK_TARGET {
            y
        } else {
            REDUCTION_THREADS_PER_BLOCK_TARGET / x
        };
        let t = Expr::dim(0);
        let index = [Expr::range(0), t.clone().floor_div(x), t.modulo(x)];
        return ReductionWarp {
            constraints: bounds(&index, &dims),
            index,
            symbols: vec![Variable::named(0, z - 1, "reduced_major")],
            warp: (threads_kept * x).min(warp_size),
            description: format!("multi-row reduction emitter, {rows_per_warp} rows per warp"),
        };
    }
    let threads_reduced = MAX_THREADS_X_ROW_REDUCTION.min(round_up(
        ceil_div(x, MINOR_REDUCED_ELEMENTS_PER_THREAD),
        warp_size,
    ));
    let mut threads_kept = 1;
    if threads_reduced * 2 <= REDUCTION_THREADS_PER_BLOCK_TARGET {
        threads_kept = if y * threads_reduced <= REDUCTION_THREADS_PER_BLOCK_TARGET {
            y
        } else {
            REDUCTION_THREADS_PER_BLOCK_TARGET / threads_reduced
        };
    }
    let vector = reduction_vector_size(x, threads_reduced, input_bits);
    let minor_tile = (MINOR_REDUCED_ELEMENTS_PER_THREAD / vector)
        .min(ceil_div(x / vector, threads_reduced))
        .max(1);
    let t = Expr::dim(0);
    let x_index = (Expr::range(1) * threads_reduced + t.clone().modulo(threads_reduced)) * vector
        + Expr::range(2);
    let index = [Expr::range(0), t.floor_div(threads_reduced), x_index];
    ReductionWarp {
        constraints: bounds(&index, &dims),
        index,
        symbols: vec![
            Variable::named(0, z - 1, "reduced_major"),
            Variable::named(0, minor_tile - 1, "reduced_minor"),
            Variable::named(0, vector - 1, "vector"),
        ],
        warp: (threads_kept * threads_reduced).min(warp_size),
        description: format!(
            "row reduction emitter, {threads_reduced} threads per row, vector {vector}"
        ),
    }
}

fn column_reduction_warp(
    dims: [i64; 3],
    device: &Device,
    input_bits: Option<i64>,
) -> ReductionWarp {
    let [_, r, k] = dims;
    let w = device.warp_size;
    let vector = reduction_vector_size(k, w, input_bits);
    let t = Expr::dim(0);
    let index = [
        Expr::constant(0),
        t.clone().floor_div(w) + Expr::range(0) * w,
        t.modulo(w) * vector + Expr::range(1),
    ];
    ReductionWarp {
        constraints: bounds(&index, &dims),
        index,
        symbols: vec![
            Variable::named(0, ceil_div(r, w) - 1, "reduced"),
            Variable::named(0, vector - 1, "vector"),
        ],
        warp: w,
        description: format!("column reduction emitter, {w}x{w} tile, vector {vector}"),
    }
}

/// `e_i in [0, n_i - 1]` for every index.
fn bounds(index: &[Expr], dims: &[i64]) -> Vec<(Expr, Interval)> {
    index
        .iter()
        .zip(dims)
        .map(|(e, &n)| (e.clone(), Interval::new(0, n - 1)))
        .collect()
}

fn ceil_div(a: i64, b: i64) -> i64 {
    if b <= 0 {
        return a;
    }
    (a + b - 1).div_euclid(b)
}

fn round_up(a: i64, b: i64) -> i64 {
    ceil_div(a, b) * b
}

fn reduction_launch(
    subject: &Subject<'_>,
    device: &Device,
    heroes: &[(usize, usize)],
    dims: ReductionDims,
    kind: EmitterKind,
) -> Launch {
    let nodes = subject.nodes();
    let params: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].parameter_number.is_some())
        .collect();
    let input_bits = emitter::smallest_bits(subject, &params);
    let w = if dims.is_row {
        row_reduction_warp(dims.dims, device, input_bits)
    } else {
        column_reduction_warp(dims.dims, device, input_bits)
    };
    let [_, d1, d2] = dims.dims;
    let linear = (w.index[0].clone() * d1 + w.index[1].clone()) * d2 + w.index[2].clone();
    let mut reads = vec![];
    for &(root, hero) in heroes {
        let h = &nodes[hero];
        let targets: Vec<usize> = if emitter::reduction_hero(h, device.warp_size).is_some() {
            h.operands[..h.operands.len() / 2].to_vec()
        } else {
            vec![root]
        };
        for node in targets {
            let Some(shape) = nodes.get(node).and_then(first_array) else {
                continue;
            };
            if elements(shape) != dims.dims.iter().product::<i64>() {
                continue;
            }
            let map = warp_map(
                w.warp,
                w.symbols.clone(),
                delinearize(shape, &linear),
                w.constraints.clone(),
            );
            reads.push(SpaceRead { root, node, map });
        }
    }
    Launch {
        kind,
        description: w.description,
        reads,
    }
}

/// The transpose emitter's vector size: `kMaxVectorizedBytes / element bytes`,
/// halved until there is enough work and shared memory and the tiled
/// dimensions divide.
fn transpose_vector_size(
    t: &NormalizedTranspose,
    device: &Device,
    element_bytes: i64,
    transposes: i64,
) -> i64 {
    let rank = t.input.len();
    let moved = t.moved_dim();
    let tile = device.warp_size;
    let blocks: i64 = t
        .input
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            if i == rank - 1 || i == moved {
                ceil_div(n, tile)
            } else {
                n
            }
        })
        .product();
    let shmem = transposes * tile * (tile + 1) * element_bytes;
    let mut v = TRANSPOSE_MAX_VECTORIZED_BYTES / element_bytes.max(1);
    while v > 1 {
        let per_thread = v * v;
        let enough_work = blocks.saturating_mul(TRANSPOSE_ROWS * tile)
            >= per_thread.saturating_mul(device.resident_threads());
        let enough_shmem = shmem * per_thread <= device.shared_memory_per_block;
        let aligned = t.input[rank - 1] % v == 0 && t.input[moved] % v == 0;
        if enough_work && enough_shmem && aligned {
            return v;
        }
        v /= 2;
    }
    1
}

fn transpose_launch(
    subject: &Subject<'_>,
    device: &Device,
    heroes: &[(usize, usize)],
    t: &NormalizedTranspose,
    kind: EmitterKind,
) -> Launch {
    let nodes = subject.nodes();
    let tiled: Vec<usize> = heroes
        .iter()
        .map(|&(_, h)| h)
        .filter(|&h| emitter::tiled_transpose(&nodes[h]).is_some())
        .collect();
    let element_bytes = tiled
        .iter()
        .filter_map(|&h| subject.node_bits.get(h).copied().flatten())
        .max()
        .map_or(4, |bits| (bits / 8).max(1));
    let v = transpose_vector_size(t, device, element_bytes, tiled.len() as i64);
    let tile = device.warp_size * v;
    let rank = t.input.len();
    let moved = t.moved_dim();
    // Thread offsets in the tile: row `loop * 4 + thread / tile`, column
    // `thread * v + vector mod tile` (XLA's `GetThreadOffsets`).
    let linear_in_tile =
        Expr::range(0) * (tile * TRANSPOSE_ROWS) + Expr::dim(0) * v + Expr::range(1);
    let mut index = vec![Expr::constant(0); rank];
    index[moved] = linear_in_tile.clone().floor_div(tile);
    index[rank - 1] = linear_in_tile.modulo(tile);
    let constraints = bounds(&index, &t.input);
    let mut linear = Expr::constant(0);
    for (i, e) in index.iter().enumerate() {
        let stride: i64 = t.input[i + 1..].iter().product();
        linear = linear + e.clone() * stride;
    }
    let symbols = vec![
        Variable::named(0, tile / TRANSPOSE_ROWS - 1, "loop"),
        Variable::named(0, v - 1, "vector"),
    ];
    let total: i64 = t.input.iter().product();
    let mut reads = vec![];
    for &(root, hero) in heroes {
        let node = if tiled.contains(&hero) {
            match nodes[hero].operands.first() {
                Some(&o) => o,
                None => continue,
            }
        } else {
            root
        };
        let Some(shape) = nodes.get(node).and_then(first_array) else {
            continue;
        };
        if elements(shape) != total {
            continue;
        }
        let map = warp_map(
            device.warp_size,
            symbols.clone(),
            delinearize(shape, &linear),
            constraints.clone(),
        );
        reads.push(SpaceRead { root, node, map });
    }
    Launch {
        kind,
        description: format!(
            "transpose emitter, {tile}x{tile} tiles, {} threads per block, vector {v}",
            TRANSPOSE_ROWS * device.warp_size
        ),
        reads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linearize_and_delinearize_follow_the_layout() {
        let s = ArrayShape::with_layout(vec![100, 200], vec![0, 1]);
        assert_eq!(physical_strides(&s), vec![1, 100]);
        let idx = delinearize(&s, &Expr::constant(250));
        let vals: Vec<i64> = idx
            .iter()
            .map(|e| e.evaluate(&[], &[], &[]).unwrap())
            .collect();
        assert_eq!(vals, vec![50, 2]);
        let back = linearize(&s, &[Expr::constant(50), Expr::constant(2)]);
        assert_eq!(back.evaluate(&[], &[], &[]), Some(250));
    }
}
