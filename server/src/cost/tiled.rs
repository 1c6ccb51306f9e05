//! XLA's indexing-based model (`GpuPerformanceModelWithIndexingAnalysis`): the
//! flops and bytes of a fusion counted from its indexing maps rather than from
//! the cost analysis, and its tiled form for block-level (Triton) fusions.
//!
//! * [`flops_per_element`]: what one output element of an instruction costs
//!   (`FlopsPerElement`, as of the tests' XLA commit 06815fa); index-only ops
//!   cost nothing, a reduce pays its reducer once per reduced element but one
//!   (as `GpuHloCostAnalysis` counts; later XLA pads the reduced dimensions to
//!   powers of two).
//! * [`estimate_indexed`]: an emitted fusion (`EstimateRunTimeForFusion`): each
//!   instruction counts the size of each map's iteration space from the output.
//! * [`estimate_tiled`]: a fusion run tile by tile (`EstimateRunTimeForTiledFusion`):
//!   the output tile propagated to every instruction ([`crate::tiling`]; under a
//!   dot whose config gives a contraction tile, operand tiles span that tile and
//!   repeat once per step of the contraction loop); inside
//!   the fusion, flops per padded tile element; parameters are read once per
//!   tile (masked padding not read) at the DRAM bandwidth share their tile's
//!   contiguous run uses ([`crate::coalescing::tiled`]); outputs written at their
//!   tile's share; a tile larger than 40% of a block's registers spills, which
//!   XLA refuses (infinite time).
//! * [`num_warps`]: `GetNumWarps` of the largest padded tile.

use super::compute::{combine, compute_time};
use super::duration::Duration;
use super::hlo_cost::{self, elements_recursive};
use super::kernel::Model;
use super::memory::{coalescing_utilization_rate, read_time, write_time};
use super::profile;
use crate::analysis::contiguity::{contiguous_elements, judge_bytes};
use crate::analysis::fusion;
use crate::coalescing::heuristic;
use crate::model::{ComputationRef, Instruction, Module, Opcode};
use crate::tiling::propagate::{next_power_of_two, FusionMaps, TilingOptions};

/// `kFractionOfRegistersAvailableToStoreTile`.
const FRACTION_OF_REGISTERS_FOR_TILE: f64 = 0.4;

/// `GpuPerformanceModelWithIndexingAnalysis::FlopsPerElement` of `instr` in `comp`.
pub fn flops_per_element(module: &Module, comp: ComputationRef<'_>, instr: &Instruction) -> i64 {
    match instr.opcode.name() {
        "bitcast"
        | "broadcast"
        | "constant"
        | "dynamic-slice"
        | "dynamic-update-slice"
        | "gather"
        | "iota"
        | "pad"
        | "parameter"
        | "slice"
        | "transpose"
        | "tuple" => return 0,
        "concatenate" => {
            let dim = instr
                .attrs()
                .dimensions
                .as_ref()
                .and_then(|d| d.first())
                .copied()
                .unwrap_or(0);
            let first = comp
                .model()
                .operand_shape(instr, 0)
                .and_then(|s| s.as_array())
                .and_then(|a| a.dims.get(dim as usize))
                .copied()
                .unwrap_or(0);
            return if dim > 0 && first & 31 != 0 { 400 } else { 6 };
        }
        _ => {}
    }
    if instr.opcode.is_elementwise() {
        let element = instr.shape.leaves().first().map(|a| a.element.clone());
        return element.map_or(profile::DEFAULT_FLOPS_PER_ELEMENT, |e| {
            profile::flops_per_element(instr.opcode.name(), &e)
        });
    }
    if instr.opcode == Opcode::Reduce {
        let reducer: i64 = module
            .called_computation(instr, "to_apply")
            .map(|c| {
                c.model()
                    .instructions
                    .iter()
                    .map(|i| flops_per_element(module, c, i))
                    .sum()
            })
            .unwrap_or(0);
        // `ElementsIn(operand) / ElementsIn(output)` reductions of N elements,
        // each applying the reducer N - 1 times (as `GpuHloCostAnalysis` counts).
        let operand = comp.model().operand_shape(instr, 0).map_or(0, |s| {
            s.as_array().and_then(|a| a.element_count()).unwrap_or(0)
        });
        let output = match &*instr.shape {
            crate::model::Shape::Tuple(t) => t.first().and_then(|s| s.as_array()),
            s => s.as_array(),
        }
        .and_then(|a| a.element_count())
        .unwrap_or(0);
        if output == 0 {
            return 0;
        }
        return (operand / output - 1) * reducer;
    }
    let elements = elements_recursive(&instr.shape);
    if elements == 0 {
        return 0;
    }
    hlo_cost::analyze(module, comp, instr).flops / elements
}

/// `GetNumWarps`: few warps for small tiles (vectorized loads need elements per
/// thread), 8 for large ones (registers and latency hiding).
pub fn num_warps(largest_live_tile_size: i64) -> i64 {
    match largest_live_tile_size {
        ..=256 => 1,
        257..=1024 => 2,
        1025..=4096 => 4,
        _ => 8,
    }
}

/// `BlockLevelParameters`: one tile size list per output, the warps per block,
/// and how a dot's contraction loop is pipelined (`num_stages`, TMA).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockLevelParameters {
    pub output_tile_sizes: Vec<Vec<i64>>,
    pub num_warps: i64,
    /// Software pipeline depth of a dot's `k` loop (XLA's default 1: serial).
    pub num_stages: i64,
    pub is_tma_allowed: bool,
}

impl BlockLevelParameters {
    /// Tiles and warps with XLA's defaults for the rest (one stage, no TMA).
    pub fn new(output_tile_sizes: Vec<Vec<i64>>, num_warps: i64) -> BlockLevelParameters {
        BlockLevelParameters {
            output_tile_sizes,
            num_warps,
            num_stages: 1,
            is_tma_allowed: false,
        }
    }
}

/// XLA's `EstimateRunTimeData` of a tiled or indexed fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct RunTimeData {
    pub flops: i64,
    pub bytes_read: i64,
    pub bytes_written: i64,
    pub read_time: Duration,
    pub write_time: Duration,
    pub compute_time: Duration,
    pub exec_time: Duration,
    pub num_blocks: i64,
}

impl RunTimeData {
    /// The estimate of a kernel from its parts: its time is compute and memory
    /// overlapped as XLA combines them.
    fn from_parts(
        (flops, bytes_read, bytes_written): (i64, i64, i64),
        (read_time, write_time, compute_time): (Duration, Duration, Duration),
        num_blocks: i64,
    ) -> RunTimeData {
        RunTimeData {
            flops,
            bytes_read,
            bytes_written,
            read_time,
            write_time,
            compute_time,
            exec_time: combine(compute_time, read_time + write_time),
            num_blocks,
        }
    }

    fn infinite() -> RunTimeData {
        RunTimeData {
            flops: i64::MAX,
            bytes_read: i64::MAX,
            bytes_written: i64::MAX,
            read_time: Duration::INFINITE,
            write_time: Duration::INFINITE,
            compute_time: Duration::INFINITE,
            exec_time: Duration::INFINITE,
            num_blocks: 0,
        }
    }
}

/// One tile of one instruction in the tiled computation.
#[derive(Clone, Debug)]
struct TiledInstruction {
    instruction: usize,
    sizes: Vec<i64>,
    strides: Vec<i64>,
    /// Blocks that compute or read this tile.
    blocks: i64,
}

fn ceil_div(a: i64, b: i64) -> i64 {
    if b <= 0 {
        a
    } else {
        (a + b - 1) / b
    }
}

/// Elements of a tile padded to powers of two (`GetPaddedTileSize`).
fn padded_tile_size(sizes: &[i64]) -> i64 {
    sizes
        .iter()
        .map(|&s| next_power_of_two(s))
        .fold(1i64, i64::saturating_mul)
}

fn fits_in_registers(tile: i64, registers_per_block: i64) -> bool {
    tile as f64 <= FRACTION_OF_REGISTERS_FOR_TILE * registers_per_block as f64
}

/// The tiled computation of the fusion `instr` for `sizes` (one list per
/// output): every tile each output reaches, each once, with the number of
/// blocks that touch it (a concatenate operand only in its share of the
/// blocks). `Err` when the fusion cannot be tiled so.
fn tile(
    model: &Model<'_>,
    instr: &Instruction,
    sizes: &[Vec<i64>],
) -> Result<(i64, Vec<TiledInstruction>, Vec<usize>), String> {
    let fused = model
        .module
        .called_computation(instr, "calls")
        .ok_or("not a fusion")?;
    let comp = fused.id.index();
    let outputs = fusion::output_count(model.view, comp).max(1);
    let dot_loops = dot_loops(fused);
    let mut tiles: Vec<TiledInstruction> = vec![];
    let mut roots = vec![];
    let mut num_blocks = None;
    for o in 0..outputs {
        let s = sizes.get(o).or(sizes.first()).ok_or("no tile sizes")?;
        let maps = FusionMaps::new(model.view, comp, o).ok_or("an output without maps")?;
        if maps.extents.len() != s.len() {
            return Err(format!(
                "tile sizes {s:?} for an output of rank {}",
                maps.extents.len()
            ));
        }
        if let Some((start, _)) = fusion::output_start(model.view, comp, o) {
            roots.push(start);
        }
        let options = TilingOptions {
            pad_to_power_of_two: false,
        };
        let p = maps
            .propagate(model.module, model.view, s, options)
            .map_err(|e| format!("{e:?}"))?;
        if let Some((i, why)) = p.unknown.first() {
            return Err(format!("instruction {i}: {why}"));
        }
        let blocks: i64 = maps
            .extents
            .iter()
            .zip(s)
            .map(|(&n, &t)| ceil_div(n, t.max(1)))
            .fold(1i64, i64::saturating_mul);
        num_blocks.get_or_insert(blocks);
        for read in &p.reads {
            // Blocks whose output tile meets the map's domain.
            let region: i64 = read
                .map
                .dims()
                .iter()
                .zip(s)
                .map(|(v, &t)| {
                    let t = t.max(1);
                    (v.bounds.hi.max(v.bounds.lo) / t - v.bounds.lo.max(0) / t + 1).max(0)
                })
                .fold(1i64, i64::saturating_mul);
            let mut sizes: Vec<i64> = read.tile.iter().map(|d| d.size).collect();
            let strides: Vec<i64> = read.tile.iter().map(|d| d.stride).collect();
            let mut region = region;
            // Under a dot, the contraction is a loop of `k_tile` steps: its
            // operands' tiles span `k_tile` of it, once per step.
            if let Some((k, k_tile)) = dot_loops
                .iter()
                .find(|l| l.below.contains(&read.instruction))
                .map(|l| (l.k, l.k_tile))
            {
                let mut looped = false;
                for (size, d) in sizes.iter_mut().zip(&read.tile) {
                    if d.sources.is_empty() && *size == k {
                        *size = k_tile.min(*size);
                        looped = true;
                    }
                }
                if looped {
                    region = region.saturating_mul(ceil_div(k, k_tile));
                }
            }
            if tiles.iter().any(|t| {
                t.instruction == read.instruction && t.sizes == sizes && t.strides == strides
            }) {
                continue;
            }
            tiles.push(TiledInstruction {
                instruction: read.instruction,
                sizes,
                strides,
                blocks: region,
            });
        }
    }
    Ok((num_blocks.unwrap_or(1), tiles, roots))
}

/// A dot's contraction loop: the dot, the contraction extent `k`, the step
/// `k_tile`, and the instructions below the dot (its operands, transitively).
struct DotLoop {
    dot: usize,
    k: i64,
    k_tile: i64,
    below: Vec<usize>,
}

/// The dots of a fused computation with a contraction tile in their
/// `backend_config` (`sizes: [k]`).
fn dot_loops(fused: ComputationRef<'_>) -> Vec<DotLoop> {
    let body = fused.model();
    let mut loops = vec![];
    for (index, dot) in body
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| i.opcode.name() == "dot")
    {
        let attrs = dot.attrs();
        let Some(k_tile) = attrs
            .backend_config()
            .as_ref()
            .and_then(|c| c.get("sizes"))
            .and_then(|s| s.get(0))
            .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
        else {
            continue;
        };
        let k = attrs
            .dot
            .as_ref()
            .and_then(|d| d.lhs_contracting.first())
            .and_then(|&c| {
                body.operand_shape(dot, 0)?
                    .as_array()?
                    .dims
                    .get(c as usize)
                    .copied()
            });
        let Some(k) = k else { continue };
        let mut below = vec![];
        let mut stack: Vec<usize> = dot
            .operands
            .iter()
            .filter_map(|o| o.target.map(|t| t.index()))
            .collect();
        while let Some(i) = stack.pop() {
            if below.contains(&i) || i >= body.instructions.len() {
                continue;
            }
            below.push(i);
            stack.extend(
                body.instructions[i]
                    .operands
                    .iter()
                    .filter_map(|o| o.target.map(|t| t.index())),
            );
        }
        loops.push(DotLoop {
            dot: index,
            k,
            k_tile: k_tile.max(1),
            below,
        });
    }
    loops
}

/// `GetNumWarps` of the largest padded tile of the fusion tiled by `sizes`
/// (`EstimateNumWarps`).
pub fn estimate_num_warps(
    model: &Model<'_>,
    instr: &Instruction,
    sizes: &[Vec<i64>],
) -> Result<i64, String> {
    let (_, tiles, _) = tile(model, instr, sizes)?;
    let largest = tiles
        .iter()
        .map(|t| padded_tile_size(&t.sizes))
        .max()
        .unwrap_or(1);
    Ok(num_warps(largest))
}

/// `EstimateRunTimeForTiledFusion`: the fusion `instr` run with `params`.
pub fn estimate_tiled(
    model: &Model<'_>,
    instr: &Instruction,
    params: &BlockLevelParameters,
) -> Result<RunTimeData, String> {
    let device = model.device;
    let fused = model
        .module
        .called_computation(instr, "calls")
        .ok_or("not a fusion")?;
    let body = fused.model();
    let (num_blocks, tiles, roots) = tile(model, instr, &params.output_tile_sizes)?;
    let view_nodes = &model.view.computation(fused.id.index()).nodes;
    let registers = device.registers_per_block_limit;
    for &r in &roots {
        if let Some(t) = tiles.iter().find(|t| t.instruction == r) {
            if !fits_in_registers(padded_tile_size(&t.sizes), registers) {
                return Ok(RunTimeData::infinite());
            }
        }
    }
    let mut flops = 0i64;
    // A dot the GEMM model covers: its naive flops, its compute time, and the
    // longest of its run times (the fusion takes at least as long).
    let mut dot_flops = 0i64;
    let mut dot_compute = Duration::ZERO;
    let mut dot_exec = Duration::ZERO;
    let loops = dot_loops(fused);
    let mut bytes_read = 0i64;
    // Per parameter: bytes read and the worst bandwidth share of its tiles.
    let mut reads: Vec<(usize, i64, f64)> = vec![];
    for t in &tiles {
        let x = &body.instructions[t.instruction];
        let is_parameter = x.opcode == Opcode::Parameter;
        if (is_parameter || x.opcode.name() == "iota")
            && !fits_in_registers(padded_tile_size(&t.sizes), registers)
        {
            return Ok(RunTimeData::infinite());
        }
        if !is_parameter {
            let elements = t.blocks.saturating_mul(padded_tile_size(&t.sizes));
            let naive = flops_per_element(model.module, fused, x).saturating_mul(elements);
            match gemm_estimate(model, fused, &loops, t, params) {
                Some(d) => {
                    dot_compute += d.compute_time;
                    dot_exec = dot_exec.max(d.exec_time);
                    dot_flops = dot_flops.saturating_add(naive);
                }
                None => flops = flops.saturating_add(naive),
            }
            continue;
        }
        let Some(shape) = x.shape.as_array() else {
            continue;
        };
        let elements = t
            .sizes
            .iter()
            .zip(&shape.dims)
            .map(|(&s, &d)| s.min(d))
            .fold(t.blocks, i64::saturating_mul);
        let element_bytes = hlo_cost::element_bytes(&shape.element).unwrap_or(0);
        let tile_bytes = element_bytes.saturating_mul(elements);
        bytes_read = bytes_read.saturating_add(tile_bytes);
        let rate = tile_bandwidth_share(
            view_nodes.get(t.instruction),
            &t.sizes,
            &t.strides,
            element_bytes,
            device,
        );
        match reads.iter_mut().find(|(i, _, _)| *i == t.instruction) {
            Some(r) => {
                r.1 = r.1.saturating_add(tile_bytes);
                r.2 = r.2.min(rate);
            }
            None => reads.push((t.instruction, tile_bytes, rate)),
        }
    }
    let mut read = Duration::ZERO;
    for &(i, total, rate) in &reads {
        let size = hlo_cost::shape_size(&body.instructions[i].shape);
        read += read_time(device, num_blocks, size.min(total), total, rate);
    }
    let mut write = Duration::ZERO;
    let mut bytes_written = 0i64;
    for &r in &roots {
        let x = &body.instructions[r];
        let bytes = hlo_cost::shape_size(&x.shape).max(0);
        let rate = match (
            tiles.iter().find(|t| t.instruction == r),
            x.shape.as_array(),
        ) {
            (Some(t), Some(a)) => {
                let eb = hlo_cost::element_bytes(&a.element).unwrap_or(0);
                tile_bandwidth_share(view_nodes.get(r), &t.sizes, &t.strides, eb, device)
            }
            _ => 1.0,
        };
        let effective = (rate * device.memory_bandwidth as f64) as i64;
        write += if bytes == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(bytes as f64 / effective as f64)
        };
        bytes_written += bytes;
    }
    let compute = compute_time(
        device,
        flops,
        num_blocks,
        params.num_warps * device.warp_size,
    ) + dot_compute;
    let mut data = RunTimeData::from_parts(
        (flops.saturating_add(dot_flops), bytes_read, bytes_written),
        (read, write, compute),
        num_blocks,
    );
    data.exec_time = data.exec_time.max(dot_exec);
    Ok(data)
}

/// `GetDotEstimates`: the GEMM model's estimate of the dot tile `t`, its `k`
/// step the tile its lhs is read with (the dot's configured contraction tile,
/// else all of `k`). `None` when `t` is no dot or the model does not cover it.
fn gemm_estimate(
    model: &Model<'_>,
    fused: ComputationRef<'_>,
    loops: &[DotLoop],
    t: &TiledInstruction,
    params: &BlockLevelParameters,
) -> Option<super::dot::DotEstimate> {
    let x = &fused.model().instructions[t.instruction];
    if x.opcode.name() != "dot" {
        return None;
    }
    let problem = super::dot::DotProblem::of(fused, x).ok()?;
    let block_k = loops
        .iter()
        .find(|l| l.dot == t.instruction)
        .map_or(problem.k, |l| l.k_tile.min(problem.k));
    let pipeline = super::dot::Pipeline {
        num_stages: params.num_stages,
        is_tma_allowed: params.is_tma_allowed,
    };
    super::dot::estimate(&problem, &t.sizes, block_k, pipeline, model.device).ok()
}

/// `BandwidthUtilizationRateHeuristicForTiledMemoryAccess`: the share of each
/// DRAM-to-L2 transaction a tile's contiguous run uses.
fn tile_bandwidth_share(
    node: Option<&crate::analysis::Node>,
    sizes: &[i64],
    strides: &[i64],
    element_bytes: i64,
    device: &crate::device::Device,
) -> f64 {
    let Some(shape) = node.and_then(|n| n.op.shape.as_array()) else {
        return 1.0;
    };
    if shape.rank() != sizes.len() {
        return 1.0;
    }
    let contiguous = contiguous_elements(shape, sizes, strides);
    judge_bytes(
        contiguous.saturating_mul(element_bytes),
        device.dram_to_l2_transaction_bytes,
    )
    .1
}

/// The block-level parameters written in a fusion's backend config
/// (`block_level_fusion_config`: `output_tiles` and `num_warps`).
pub fn configured_parameters(
    model: &Model<'_>,
    instr: &Instruction,
) -> Option<BlockLevelParameters> {
    let tiles = crate::tiling::config::output_tiles(model.computation, instr)?.ok()?;
    let field = |name: &str| super::kernel::block_level_config_field(instr, name);
    Some(BlockLevelParameters {
        output_tile_sizes: tiles.sizes,
        num_warps: super::kernel::num_warps(instr).unwrap_or(4),
        num_stages: field("num_stages")
            .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
            .unwrap_or(1),
        is_tma_allowed: field("is_tma_allowed")
            .is_some_and(|v| v.as_bool().unwrap_or_else(|| v.as_str() == Some("true"))),
    })
}

/// `EstimateRunTimeForFusion` of the indexing model: an emitted fusion (or one
/// instruction) whose flops and reads count each map's iteration space from the
/// first output, judged coalesced by XLA's heuristic.
pub fn estimate_indexed(model: &Model<'_>, instr: &Instruction) -> RunTimeData {
    let device = model.device;
    let subject = model.subject(instr);
    let (kind, launch) = model.launch(instr, subject.as_ref());
    let coalesced = kind.as_ref().is_none_or(|k| {
        heuristic::read_coalesced(model.view, k, model.at(instr), None, device.warp_size).coalesced
    });
    let mut flops = 0i64;
    let mut bytes_read = 0i64;
    let mut read = Duration::ZERO;
    let bytes_written;
    if let (Some(fused), true) = (
        model.module.called_computation(instr, "calls"),
        instr.opcode == Opcode::Fusion,
    ) {
        let comp = fused.id.index();
        let reached = match fusion::output_start(model.view, comp, 0) {
            Some((start, out)) => fusion::grouped_output_to_input(model.view, comp, start, out),
            None => vec![],
        };
        for (i, r) in reached.iter().enumerate() {
            let x = &fused.model().instructions[i];
            let iterations: i64 = if r.unknown.is_some() {
                elements_recursive(&x.shape)
            } else {
                r.maps
                    .iter()
                    .map(|(_, m)| {
                        let m = &m.map;
                        if m.is_known_empty() {
                            return 0;
                        }
                        m.dims()
                            .iter()
                            .chain(m.range_vars())
                            .map(|v| v.bounds.hi - v.bounds.lo + 1)
                            .fold(1i64, i64::saturating_mul)
                    })
                    .sum()
            };
            if x.opcode == Opcode::Parameter {
                let Some(element_bytes) = x
                    .shape
                    .as_array()
                    .and_then(|a| hlo_cost::element_bytes(&a.element))
                else {
                    continue;
                };
                let total = element_bytes.saturating_mul(iterations);
                if total == 0 {
                    continue;
                }
                let size = hlo_cost::shape_size(&x.shape);
                bytes_read += total;
                let rate = coalescing_utilization_rate(Some(element_bytes), device, coalesced);
                read += read_time(device, launch.num_blocks, size.min(total), total, rate);
            } else {
                flops += flops_per_element(model.module, fused, x).saturating_mul(iterations);
            }
        }
        bytes_written = instr
            .shape
            .leaves()
            .iter()
            .map(|a| hlo_cost::array_bytes(a))
            .sum();
    } else {
        // One instruction is a fusion of itself (`HloFusionAdaptor::ForInstruction`):
        // its flops are `FlopsPerElement` over its output; its reads are the cost
        // analysis' (each operand map's iteration space is the operand itself).
        let k = model.kernel(instr);
        let elements = instr
            .shape
            .leaves()
            .first()
            .and_then(|a| a.element_count())
            .unwrap_or(0);
        flops = flops_per_element(model.module, model.computation, instr).saturating_mul(elements);
        bytes_read = k.bytes_read;
        read = k.read_time;
        bytes_written = k.bytes_written;
    }
    let write = write_time(device, bytes_written);
    let compute = compute_time(device, flops, launch.num_blocks, launch.threads_per_block);
    RunTimeData::from_parts(
        (flops, bytes_read, bytes_written),
        (read, write, compute),
        launch.num_blocks,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warps_follow_the_largest_tile() {
        assert_eq!(num_warps(256), 1);
        assert_eq!(num_warps(4096), 4);
        assert_eq!(num_warps(4097), 8);
        assert_eq!(padded_tile_size(&[9, 9, 9]), 4096);
    }
}

/// A tiling and its estimate (`TiledRunTimeData`).
#[derive(Clone, Debug, PartialEq)]
pub struct TiledRunTime {
    pub runtime: RunTimeData,
    pub parameters: BlockLevelParameters,
}

/// Most tilings `best_tiling` evaluates (the product of per-dimension
/// candidates can be large for high-rank outputs).
const MAX_TILINGS: usize = 4096;

/// `TryFindBestTilingForFusion`: every tiling of the first output whose
/// dimensions are powers of two below the extent or the extent itself, that
/// keeps every tile a hyper-rectangle, estimated with its own
/// [`num_warps`]; the fastest wins (the first of equals, in enumeration order
/// with the last dimension varying fastest). Another output gets the tile the
/// first output's tiling gives its root (XLA tiles a multi-output fusion from
/// one root), else the same sizes. `Err` when no tiling is valid.
pub fn best_tiling(model: &Model<'_>, instr: &Instruction) -> Result<TiledRunTime, String> {
    let fused = model
        .module
        .called_computation(instr, "calls")
        .ok_or("not a fusion")?;
    let comp = fused.id.index();
    let maps = FusionMaps::new(model.view, comp, 0).ok_or("no output maps")?;
    let outputs = fusion::output_count(model.view, comp).max(1);
    let per_dim: Vec<Vec<i64>> = maps
        .extents
        .iter()
        .map(|&n| crate::tiling::candidates::dimension_candidates(n))
        .collect();
    let options = TilingOptions {
        pad_to_power_of_two: false,
    };
    let mut best: Option<TiledRunTime> = None;
    let mut index = vec![0usize; per_dim.len()];
    let mut evaluated = 0;
    loop {
        let sizes: Vec<i64> = index.iter().zip(&per_dim).map(|(&i, c)| c[i]).collect();
        if maps.satisfies_constraints(&sizes, options) {
            let all = sizes_for_every_output(model, comp, &maps, &sizes, outputs);
            if let Ok(warps) = estimate_num_warps(model, instr, &all) {
                let parameters = BlockLevelParameters::new(all, warps);
                if let Ok(runtime) = estimate_tiled(model, instr, &parameters) {
                    let better = !runtime.exec_time.is_infinite()
                        && best
                            .as_ref()
                            .is_none_or(|b| runtime.exec_time < b.runtime.exec_time);
                    if better {
                        best = Some(TiledRunTime {
                            runtime,
                            parameters,
                        });
                    }
                }
            }
            evaluated += 1;
            if evaluated >= MAX_TILINGS {
                break;
            }
        }
        // Next index, last dimension fastest.
        let mut d = per_dim.len();
        loop {
            if d == 0 {
                return best.ok_or_else(|| "no valid tiling".to_string());
            }
            d -= 1;
            index[d] += 1;
            if index[d] < per_dim[d].len() {
                break;
            }
            index[d] = 0;
        }
    }
    best.ok_or_else(|| "no valid tiling".to_string())
}

/// Tile sizes for every output when the first is tiled by `sizes`: the tile
/// the first output's propagation reaches each other root with, else `sizes`.
fn sizes_for_every_output(
    model: &Model<'_>,
    comp: usize,
    maps: &FusionMaps,
    sizes: &[i64],
    outputs: usize,
) -> Vec<Vec<i64>> {
    let options = TilingOptions {
        pad_to_power_of_two: false,
    };
    let propagation = maps
        .propagate(model.module, model.view, sizes, options)
        .ok();
    (0..outputs)
        .map(|o| {
            if o == 0 {
                return sizes.to_vec();
            }
            let start = fusion::output_start(model.view, comp, o).map(|(s, _)| s);
            propagation
                .as_ref()
                .and_then(|p| p.reads.iter().find(|r| Some(r.instruction) == start))
                .map(|r| r.tile.iter().map(|d| d.size).collect())
                .unwrap_or_else(|| sizes.to_vec())
        })
        .collect()
}
