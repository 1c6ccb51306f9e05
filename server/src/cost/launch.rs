//! Launch dimensions (blocks and threads per block) of the kernel XLA emits for
//! a fusion or a single instruction: the compute and memory model scale with
//! how many SMs and FPUs the launch occupies. The emitter is the one the
//! project's coalescing analysis picks ([`crate::coalescing::emitter::choose`],
//! XLA's `GetEmitterFusionKind`); the numbers are each emitter's
//! `launch_dimensions()`:
//!
//! * loop (`CalculateLaunchDimensions`): one thread per `unroll` output
//!   elements of the first root, blocks of `4 x warp` threads
//!   (`kWarpSchedulingGranularity`), fewer threads when the output is smaller;
//!   an output of at most one element launches one thread;
//! * in-place dynamic-update-slice: the same over the update's shape;
//! * row reduction: `min(1024, roundup(ceil(row / 16), warp))` threads per row
//!   and as many rows per block as fit 256 threads, one block per group of
//!   kept rows; column reduction: a 32 x 32 thread block per 32 x vector kept
//!   columns of each major slice;
//! * transpose: 128 threads (`kNumThreadsPerBlock`) per 32 x 32 tile;
//! * Triton with an `output_tiles` config: one block per output tile, `num_warps`
//!   warps; anything else: XLA's fallback of 128 threads per output element
//!   block ("we assume that the kernel launches 1 thread per output element").

use crate::coalescing::emitter::{self, EmitterKind, ReductionDims};
use crate::coalescing::launch::{loop_unroll, MAX_THREADS_X_ROW_REDUCTION};
use crate::coalescing::Subject;
use crate::device::Device;

/// `kWarpSchedulingGranularity`: loop blocks hold this many warps.
const WARP_SCHEDULING_GRANULARITY: i64 = 4;
/// `kMinorReducedElementsPerThread`.
const MINOR_REDUCED_ELEMENTS_PER_THREAD: i64 = 16;
/// `kThreadsPerBlockTarget` of the reduction emitters.
const REDUCTION_THREADS_PER_BLOCK_TARGET: i64 = 256;
/// The transpose emitter's tile edge and threads per block.
const TRANSPOSE_TILE: i64 = 32;
const TRANSPOSE_THREADS_PER_BLOCK: i64 = 128;
/// The fallback's threads per block.
const FALLBACK_THREADS_PER_BLOCK: i64 = 128;

/// How a kernel is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    pub num_blocks: i64,
    pub threads_per_block: i64,
    /// The emitter, for messages (`loop`, `row reduction`, ...).
    pub emitter: String,
}

impl LaunchDims {
    fn new(num_blocks: i64, threads_per_block: i64, emitter: impl Into<String>) -> LaunchDims {
        LaunchDims {
            num_blocks: num_blocks.max(1),
            threads_per_block: threads_per_block.max(1),
            emitter: emitter.into(),
        }
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    if b <= 0 {
        return a.max(0);
    }
    (a + b - 1) / b
}

/// `CalculateLaunchDimensions(shape, device, {unroll})` for `elements` outputs.
pub fn loop_launch(elements: i64, unroll: i64, device: &Device, emitter: &str) -> LaunchDims {
    if elements <= 1 {
        return LaunchDims::new(1, 1, emitter);
    }
    let per_thread = ceil_div(elements, unroll.max(1));
    let max_threads = device.warp_size * WARP_SCHEDULING_GRANULARITY;
    let threads = per_thread.min(max_threads.max(1));
    LaunchDims::new(ceil_div(per_thread, threads), threads, emitter)
}

/// `GetVectorSizeForMlir` of the reduction emitters.
fn reduction_vector_size(minor: i64, threads: i64, smallest_input_bits: Option<i64>) -> i64 {
    if minor % 2 != 0 || threads * 2 > minor {
        return 1;
    }
    if smallest_input_bits.is_some_and(|b| b >= 32) || threads * 4 > minor {
        return 2;
    }
    if minor % 4 == 0 {
        4
    } else {
        2
    }
}

fn reduction_launch(r: &ReductionDims, device: &Device, input_bits: Option<i64>) -> LaunchDims {
    let [z, y, x] = r.dims;
    let warp = device.warp_size.max(1);
    if !r.is_row {
        let vector = reduction_vector_size(x, warp, input_bits);
        return LaunchDims::new(
            z * ceil_div(x, warp * vector),
            warp * warp,
            "column reduction",
        );
    }
    if x > 0 && x < warp && warp % x == 0 {
        // Multi-row: one thread per element, several rows per warp.
        let threads = REDUCTION_THREADS_PER_BLOCK_TARGET.min(y * x).max(1);
        let rows_per_block = (threads / x).max(1);
        return LaunchDims::new(ceil_div(y, rows_per_block), threads, "multi-row reduction");
    }
    let reduced = MAX_THREADS_X_ROW_REDUCTION
        .min((ceil_div(x, MINOR_REDUCED_ELEMENTS_PER_THREAD) + warp - 1) / warp * warp);
    let reduced = reduced.max(1);
    let mut kept = 1;
    if reduced * 2 <= REDUCTION_THREADS_PER_BLOCK_TARGET {
        kept = if y * reduced <= REDUCTION_THREADS_PER_BLOCK_TARGET {
            y
        } else {
            REDUCTION_THREADS_PER_BLOCK_TARGET / reduced
        };
    }
    let kept = kept.max(1);
    LaunchDims::new(ceil_div(y, kept), kept * reduced, "row reduction")
}

/// Launch dimensions of `subject` on `device`; `num_warps` is a Triton fusion's
/// `block_level_fusion_config.num_warps` when its config gives one (default 4).
pub fn launch_dims(subject: &Subject<'_>, device: &Device, num_warps: Option<i64>) -> LaunchDims {
    let (kind, heroes) = emitter::choose(subject, device);
    let nodes = subject.nodes();
    let roots: Vec<usize> = heroes.iter().map(|&(r, _)| r).collect();
    let root_elements = |r: usize| {
        nodes
            .get(r)
            .and_then(|n| n.op.shape.output(0))
            .and_then(|a| a.element_count())
            .unwrap_or(0)
    };
    let first_root_elements = roots.first().map_or(0, |&r| root_elements(r));
    match &kind {
        EmitterKind::Loop => {
            let in_place_dus = !subject.one_op
                && !roots.is_empty()
                && roots.iter().all(|&r| {
                    nodes
                        .get(r)
                        .is_some_and(|n| n.op.opcode == "dynamic-update-slice")
                });
            if in_place_dus {
                let update = nodes[roots[0]]
                    .op
                    .operands
                    .get(1)
                    .and_then(|s| s.as_array())
                    .and_then(|a| a.element_count())
                    .unwrap_or(0);
                return loop_launch(update, 1, device, "in-place dynamic-update-slice");
            }
            let unroll = loop_unroll(subject, device, first_root_elements, &roots);
            loop_launch(first_root_elements, unroll, device, "loop")
        }
        EmitterKind::Reduction { dims } => {
            let params: Vec<usize> = (0..nodes.len())
                .filter(|&i| nodes[i].parameter_number.is_some())
                .collect();
            reduction_launch(dims, device, emitter::smallest_bits(subject, &params))
        }
        EmitterKind::Transpose { transpose } => {
            let rank = transpose.input.len();
            let moved = transpose.moved_dim();
            let blocks = transpose
                .input
                .iter()
                .enumerate()
                .map(|(d, &extent)| {
                    if d + 1 == rank || d == moved {
                        ceil_div(extent, TRANSPOSE_TILE)
                    } else {
                        extent
                    }
                })
                .fold(1i64, i64::saturating_mul);
            LaunchDims::new(blocks, TRANSPOSE_THREADS_PER_BLOCK, "transpose")
        }
        EmitterKind::Other(what) => {
            if let Some(tiles) = subject.output_tiles.as_ref().and_then(|t| t.first()) {
                let dims = roots
                    .first()
                    .and_then(|&r| nodes.get(r))
                    .and_then(|n| n.op.shape.output(0))
                    .map(|a| a.dims.clone())
                    .unwrap_or_default();
                let blocks = dims
                    .iter()
                    .zip(tiles)
                    .map(|(&d, &t)| ceil_div(d, t.max(1)))
                    .fold(1i64, i64::saturating_mul);
                let warps = num_warps.unwrap_or(4);
                return LaunchDims::new(blocks, warps * device.warp_size, what.clone());
            }
            if roots.len() == 1 && nodes[roots[0]].op.opcode == "scatter" {
                let updates = nodes[roots[0]]
                    .op
                    .operands
                    .last()
                    .and_then(|s| s.as_array())
                    .and_then(|a| a.element_count())
                    .unwrap_or(0);
                return loop_launch(updates, 1, device, "scatter");
            }
            LaunchDims::new(
                ceil_div(first_root_elements, FALLBACK_THREADS_PER_BLOCK),
                FALLBACK_THREADS_PER_BLOCK,
                what.clone(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_and_reduction_launches() {
        let d = Device::a6000();
        assert_eq!(loop_launch(1000, 1, &d, "loop").num_blocks, 8);
        assert_eq!(loop_launch(1000, 1, &d, "loop").threads_per_block, 128);
        assert_eq!(loop_launch(1, 1, &d, "loop").threads_per_block, 1);
        assert_eq!(loop_launch(10_000_000, 4, &d, "loop").num_blocks, 19532);
        let row = reduction_launch(
            &ReductionDims {
                is_row: true,
                dims: [1, 1, 3072],
            },
            &d,
            Some(32),
        );
        assert_eq!((row.num_blocks, row.threads_per_block), (1, 192));
        let row = reduction_launch(
            &ReductionDims {
                is_row: true,
                dims: [1, 1000, 224],
            },
            &d,
            Some(32),
        );
        assert_eq!((row.num_blocks, row.threads_per_block), (125, 256));
        let col = reduction_launch(
            &ReductionDims {
                is_row: false,
                dims: [1500, 128, 32],
            },
            &d,
            Some(32),
        );
        assert_eq!((col.num_blocks, col.threads_per_block), (1500, 1024));
    }
}
