//! XLA's cost model of a tiled dot (`gpu_dot_fusion_cost_model.cc`, as of the
//! tests' commit 06815fa): a GEMM run as output tiles, one threadblock per tile,
//! looping over the contraction in `block_k` steps.
//!
//! The generic tiled model counts a dot's flops at the CUDA cores' rate and its
//! operands' tiles at DRAM speed; a GEMM is neither. This model quantizes the
//! work to whole tiles and whole waves of SMs (the last wave runs as long as a
//! full one), reads the operands once from HBM at a bandwidth that depends on
//! the transfer size (XLA's H100 measurements, used for every device), charges
//! the L2 traffic of tiles re-reading the same rows, and runs the `k` loop
//! either serially (`num_stages <= 1`) or software-pipelined, with a fixed
//! latency tax per memory step ([`LATENCY_TAX`]).
//!
//! The peak matrix rate is XLA's `CalculatePeakMatrixOpsPerNs` for the lhs
//! element type ([`Device::peak_matrix_ops_per_ns`]): the tensor cores' rate,
//! or, on a device that describes none for the type, every FPU of every SM
//! (`CalculateEffectiveFlopsPerNs`).

use super::duration::Duration;
use crate::device::{ComputeCapability, Device};
use crate::model::{ComputationRef, Instruction, Opcode, PrimitiveType};

/// `gpu_dot_fusion_cost_model::detail::kLatencyTax`: what one step of the main
/// loop waits for memory beyond its transfer time.
pub const LATENCY_TAX: Duration = Duration::from_nanos(1800);

/// `DotProblemInfo`: the GEMM a dot computes, `b` batches of `m x k` times `k x n`.
#[derive(Clone, Debug, PartialEq)]
pub struct DotProblem {
    pub b: i64,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub lhs: PrimitiveType,
    pub rhs: PrimitiveType,
    pub output: PrimitiveType,
}

/// `DotTileSize`: one threadblock's share of the output, and its `k` step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DotTile {
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub b: i64,
}

/// How the tiles' loop is run (`BlockLevelParameters`' Triton fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub num_stages: i64,
    pub is_tma_allowed: bool,
}

/// `EstimateRunTimeData` of a dot: tile- and wave-quantized flops, HBM bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct DotEstimate {
    pub flops: i64,
    pub bytes_read: i64,
    pub bytes_written: i64,
    pub l2_bytes_read: i64,
    pub read_time: Duration,
    pub write_time: Duration,
    pub compute_time: Duration,
    pub exec_time: Duration,
}

fn ceil_div(a: i64, b: i64) -> i64 {
    if b <= 0 {
        return a;
    }
    (a + b - 1) / b
}

fn bits(t: &PrimitiveType) -> i64 {
    i64::from(t.bit_width().unwrap_or(0))
}

/// `GetNonContractingDims`: the dimensions of a rank-`rank` operand that are
/// neither contracted nor batch.
fn non_contracting(rank: usize, contracting: &[i64], batch: &[i64]) -> Vec<usize> {
    (0..rank)
        .filter(|&d| !contracting.contains(&(d as i64)) && !batch.contains(&(d as i64)))
        .collect()
}

impl DotProblem {
    /// `IsSupported` then `DotProblemInfo(dot)`: `Err` in XLA's words when the
    /// model does not apply (more than one free dimension per side, not exactly
    /// one contracting dimension, a transpose downstream of the dot).
    pub fn of(comp: ComputationRef<'_>, dot: &Instruction) -> Result<DotProblem, String> {
        let body = comp.model();
        let dims = dot.attrs().dot.clone().ok_or("not a dot")?;
        let lhs = body
            .operand_shape(dot, 0)
            .and_then(|s| s.as_array())
            .ok_or("dot lhs is not an array")?;
        let rhs = body
            .operand_shape(dot, 1)
            .and_then(|s| s.as_array())
            .ok_or("dot rhs is not an array")?;
        let out = dot.shape.as_array().ok_or("dot output is not an array")?;
        let lhs_free = non_contracting(lhs.rank(), &dims.lhs_contracting, &dims.lhs_batch);
        let rhs_free = non_contracting(rhs.rank(), &dims.rhs_contracting, &dims.rhs_batch);
        if lhs_free.len() > 1 || rhs_free.len() > 1 {
            return Err(format!(
                "Multiple non-contracting dimensions are not supported, got LHS: [{}], RHS: [{}]",
                join(&lhs_free),
                join(&rhs_free)
            ));
        }
        if dims.lhs_contracting.len() != 1 || dims.rhs_contracting.len() != 1 {
            return Err(format!(
                "Exactly one contracting dimension is supported, got LHS: [{}], RHS: [{}]",
                join(&dims.lhs_contracting),
                join(&dims.rhs_contracting)
            ));
        }
        if has_downstream_transpose(comp, dot) {
            return Err("Dot with a downstream transpose is not supported.".into());
        }
        let dim = |a: &crate::model::ArrayShape, d: Option<usize>| {
            d.and_then(|d| a.dims.get(d).copied()).unwrap_or(1)
        };
        Ok(DotProblem {
            b: dims
                .lhs_batch
                .iter()
                .map(|&d| dim(lhs, Some(d as usize)))
                .product(),
            m: dim(lhs, lhs_free.first().copied()),
            n: dim(rhs, rhs_free.first().copied()),
            k: dim(lhs, Some(dims.lhs_contracting[0] as usize)),
            lhs: lhs.element.clone(),
            rhs: rhs.element.clone(),
            output: out.element.clone(),
        })
    }
}

fn join<T: ToString>(xs: &[T]) -> String {
    xs.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// Whether any instruction reached from `dot` through its users is a transpose.
fn has_downstream_transpose(comp: ComputationRef<'_>, dot: &Instruction) -> bool {
    let body = comp.model();
    let mut seen = vec![false; body.instructions.len()];
    let mut stack: Vec<usize> = body.users(dot.id).iter().map(|u| u.index()).collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let x = &body.instructions[i];
        if x.opcode == Opcode::Transpose {
            return true;
        }
        stack.extend(body.users(x.id).iter().map(|u| u.index()));
    }
    false
}

/// `ExtractBlockK`: the contraction step a dot's `backend_config` gives
/// (`{"sizes":["32"]}`, XLA's `xtile::Tile`); `Err` (XLA's `FailedPrecondition`)
/// without one.
pub fn extract_block_k(dot: &Instruction) -> Result<i64, String> {
    let config = dot
        .attrs()
        .backend_config()
        .ok_or("Dot instruction must have a backend config with tiling sizes.")?;
    config
        .get("sizes")
        .and_then(|s| s.get(0))
        .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
        .ok_or_else(|| "Tile backend config must have sizes.".to_string())
}

/// `CalculateLoopIterBytes`: what one step of the `k` loop loads, the lhs and
/// rhs tiles of `tile.k` columns and rows.
pub fn loop_iter_bytes(dot: &DotProblem, tile: &DotTile) -> i64 {
    let lhs = ceil_div(tile.b * tile.m * tile.k * bits(&dot.lhs), 8);
    let rhs = ceil_div(tile.b * tile.k * tile.n * bits(&dot.rhs), 8);
    lhs + rhs
}

/// `CalculateNumThreadblocks`: one block per output tile.
fn threadblocks(dot: &DotProblem, tile: &DotTile) -> i64 {
    ceil_div(dot.b, tile.b) * ceil_div(dot.m, tile.m) * ceil_div(dot.n, tile.n)
}

/// `GetEffectiveFlopsPerNsForTileSize`: the peak matrix rate, derated where a
/// tile's `m` is too small for the generation's tensor core instructions.
fn tile_flops_per_ns(device: &Device, tile_m: i64, element: &PrimitiveType) -> f64 {
    let peak = device.peak_matrix_ops_per_ns(element);
    let major = match device.compute_capability {
        ComputeCapability::Cuda { major, .. } => major,
        _ => 0,
    };
    let derate = match major {
        10 if tile_m < 128 => 0.5,
        9 if tile_m < 64 => 0.63,
        8 if tile_m < 16 => 0.5,
        _ => 1.0,
    };
    peak as f64 * derate
}

/// `CalculateComputeTimeWithTileAndWaveQuantization`: every launched wave runs
/// as many tiles as there are SMs, each tile `2 * b * m * n * k` flops.
/// Returns the quantized flops and their time.
pub fn compute_time_with_quantization(
    dot: &DotProblem,
    tile: &DotTile,
    device: &Device,
) -> (i64, Duration) {
    let waves = ceil_div(threadblocks(dot, tile), device.sm_count);
    let flops_per_tile = 2 * tile.b * tile.m * tile.n * dot.k;
    let flops = flops_per_tile.saturating_mul(waves * device.sm_count);
    let rate = tile_flops_per_ns(device, tile.m, &dot.lhs);
    // `absl::Nanoseconds(1.0f * flops / rate)`: the flops as a float.
    (
        flops,
        Duration::from_nanos_f64(f64::from(flops as f32) / rate),
    )
}

/// `GetEffectiveHbmBandwidth`: bytes per second XLA measured on an H100 for a
/// transfer of `dma_size` bytes, interpolated linearly (single precision).
pub fn effective_hbm_bandwidth(dma_size: i64) -> f32 {
    const GBPS: [(i64, f32); 18] = [
        (8192, 1.42),
        (16384, 3.03),
        (32768, 6.02),
        (65536, 11.77),
        (131072, 23.68),
        (262144, 47.35),
        (524288, 92.56),
        (1048576, 179.06),
        (2097152, 346.75),
        (4194304, 639.38),
        (8388608, 1069.98),
        (16777216, 1583.95),
        (33554432, 1974.72),
        (67108864, 2343.19),
        (134217728, 2632.96),
        (268435456, 2766.69),
        (536870912, 2968.89),
        (1073741824, 3126.0),
    ];
    const GIB: f32 = (1u32 << 30) as f32;
    let (first, last) = (GBPS[0], GBPS[GBPS.len() - 1]);
    if dma_size <= first.0 {
        return first.1 * GIB;
    }
    if dma_size >= last.0 {
        return last.1 * GIB;
    }
    let hi = GBPS
        .iter()
        .position(|&(size, _)| size >= dma_size)
        .unwrap_or(0);
    let ((s1, a), (s2, b)) = (GBPS[hi - 1], GBPS[hi]);
    let t = (dma_size - s1) as f32 / (s2 - s1) as f32;
    (a + t * (b - a)) * GIB
}

/// `CalculateHbmTime`: the operands read once, the output written once, both
/// at the bandwidth of the whole transfer. `(bytes_read, bytes_written,
/// read_time, write_time)`.
fn hbm_time(dot: &DotProblem) -> (i64, i64, Duration, Duration) {
    let bytes = |elements: i64, t: &PrimitiveType| ceil_div(elements.saturating_mul(bits(t)), 8);
    let read = bytes(dot.b * dot.m * dot.k, &dot.lhs) + bytes(dot.b * dot.k * dot.n, &dot.rhs);
    let written = bytes(dot.b * dot.m * dot.n, &dot.output);
    let bandwidth = effective_hbm_bandwidth(read + written);
    let time = |b: i64| Duration::from_secs_f64(f64::from(b as f32 / bandwidth));
    (read, written, time(read), time(written))
}

/// `CalculateL2Bytes`: each block reads its rows of the lhs and columns of the
/// rhs over the whole contraction, however many other blocks read them too.
fn l2_bytes(dot: &DotProblem, tile: &DotTile, blocks: i64) -> i64 {
    let lhs = ceil_div(tile.b * tile.m * dot.k * bits(&dot.lhs), 8);
    let rhs = ceil_div(tile.b * tile.n * dot.k * bits(&dot.rhs), 8);
    (lhs + rhs).saturating_mul(blocks)
}

/// `CalculateL2Time`: the L2 traffic at XLA's measured H100 L2 bandwidth, plus
/// a fixed overhead per `k` step (less with TMA's bulk copies).
fn l2_time(dot_k: i64, tile_k: i64, l2_bytes: i64, is_tma_allowed: bool) -> Duration {
    const L2_BANDWIDTH: f64 = 6.65 * 1e12;
    let overhead = if is_tma_allowed { 150e-9 } else { 400e-9 };
    let base = f64::from(l2_bytes as f32) / L2_BANDWIDTH;
    Duration::from_secs_f64(base + ceil_div(dot_k, tile_k) as f64 * overhead)
}

/// `EstimateRunTimeForDotOpWithBlockParameters`: the dot `dot` tiled by
/// `output_tile` (batch dimensions first, then `m`, `n`) with contraction step
/// `block_k`. The main loop is memory then compute per step when not pipelined;
/// pipelined, `num_stages - 1` steps of loads run ahead. The time is the
/// longest of the main loop, the HBM transfers and the L2 transfers.
pub fn estimate(
    dot: &DotProblem,
    output_tile: &[i64],
    block_k: i64,
    pipeline: Pipeline,
    device: &Device,
) -> Result<DotEstimate, String> {
    if output_tile.len() < 2 {
        return Err(format!(
            "Tile shape must be of size at least 2, got {}",
            output_tile.len()
        ));
    }
    if block_k <= 0 || dot.k <= 0 {
        return Err(format!(
            "block_k ({block_k}) and k ({}) must be strictly positive",
            dot.k
        ));
    }
    let rank = output_tile.len();
    let tile = DotTile {
        m: output_tile[rank - 2],
        n: output_tile[rank - 1],
        k: block_k,
        b: output_tile[..rank - 2].iter().product(),
    };
    let (flops, compute) = compute_time_with_quantization(dot, &tile, device);
    let (bytes_read, bytes_written, read, write) = hbm_time(dot);
    let l2 = l2_bytes(dot, &tile, threadblocks(dot, &tile));
    let l2_time = l2_time(dot.k, tile.k, l2, pipeline.is_tma_allowed);
    let steps = ceil_div(dot.k, block_k);
    let step_compute = compute.div_i64(steps);
    let step_raw_memory = read.div_i64(steps);
    let step_memory = step_raw_memory + LATENCY_TAX;
    let main_loop = if pipeline.num_stages <= 1 || steps <= 1 {
        (step_memory + step_compute).mul_i64(steps) + write
    } else {
        let theoretical = step_raw_memory.max(step_compute);
        let with_latency = step_memory.max(step_compute);
        let step = theoretical.max(with_latency.div_i64(pipeline.num_stages - 1));
        let prologue_steps = (pipeline.num_stages - 1).min(steps);
        let prologue = LATENCY_TAX + step_raw_memory.mul_i64(prologue_steps);
        let overlap = step.mul_i64(steps - prologue_steps);
        let epilogue = step_compute.mul_i64(prologue_steps);
        prologue + overlap + epilogue + write
    };
    Ok(DotEstimate {
        flops,
        bytes_read,
        bytes_written,
        l2_bytes_read: l2,
        read_time: read,
        write_time: write,
        compute_time: compute,
        exec_time: main_loop.max(read + write).max(l2_time),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(n: i64) -> DotProblem {
        DotProblem {
            b: 1,
            m: n,
            n,
            k: n,
            lhs: PrimitiveType::Bf16,
            rhs: PrimitiveType::Bf16,
            output: PrimitiveType::Bf16,
        }
    }

    #[test]
    fn the_last_wave_runs_as_long_as_a_full_one() {
        let d = Device::a6000();
        let tile = DotTile {
            m: 128,
            n: 128,
            k: 32,
            b: 1,
        };
        // 4096 tiles on 84 SMs: 49 waves of 84 tiles of 2*128*128*8192 flops.
        let (flops, _) = compute_time_with_quantization(&square(8192), &tile, &d);
        assert_eq!(flops, 2 * 128 * 128 * 8192 * 49 * 84);
    }

    #[test]
    fn hbm_bandwidth_is_interpolated_between_measurements() {
        let gib = (1u32 << 30) as f32;
        assert_eq!(effective_hbm_bandwidth(1), 1.42 * gib);
        assert_eq!(effective_hbm_bandwidth(1 << 40), 3126.0 * gib);
        // Half way from 8 KiB to 16 KiB: half way from 1.42 to 3.03 GB/s.
        let mid = effective_hbm_bandwidth(3 * 4096);
        assert!((mid / gib - (1.42 + 3.03) / 2.0).abs() < 1e-4);
    }

    #[test]
    fn a_serial_loop_pays_the_latency_tax_every_step() {
        let d = Device::a6000();
        let dot = square(1024);
        let serial = Pipeline {
            num_stages: 1,
            is_tma_allowed: false,
        };
        let piped = Pipeline {
            num_stages: 3,
            ..serial
        };
        let a = estimate(&dot, &[64, 64], 32, serial, &d).unwrap();
        let b = estimate(&dot, &[64, 64], 32, piped, &d).unwrap();
        assert!(a.exec_time >= LATENCY_TAX.mul_i64(32));
        assert!(b.exec_time < a.exec_time);
        assert!(estimate(&dot, &[64], 32, serial, &d).is_err());
    }
}
