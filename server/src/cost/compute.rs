//! Compute time and how it overlaps memory time
//! (`GpuPerformanceModelBase::ComputeTime`, `CalculateEffectiveFlopsPerNs`,
//! `CombineComputeAndMemoryAccessTime`).

use super::duration::Duration;
use crate::device::Device;

/// Share of the shorter of compute and memory time hidden under the longer:
/// XLA's `GpuPerformanceModelBase::kMemoryComputeParallelism`. XLA once made it
/// an option (1.0 by default, 0.95 in priority fusion); since the option's
/// removal every estimate uses 0.95 ("close to 1, but not quite": compute and
/// memory sometimes stall on each other). The records of XLA's tests need it:
/// a memory-bound dot fusion's time is its memory time plus 5% of its compute.
pub const MEMORY_COMPUTE_PARALLELISM: f64 = 0.95;

/// `CalculateEffectiveFlopsPerNs`: a launch keeps busy at most one FPU per
/// thread of a block and one SM per block; each FPU does a fused multiply-add
/// (2 flops) per clock. Truncated to whole flops per nanosecond, as XLA's
/// `int64_t`.
pub fn effective_flops_per_ns(device: &Device, num_blocks: i64, threads_per_block: i64) -> i64 {
    let active_fpus_per_core = threads_per_block.min(device.fpus_per_core);
    let active_cores = num_blocks.min(device.sm_count);
    let fpus = active_cores.saturating_mul(active_fpus_per_core);
    let per_fpu = f64::from(device.clock_rate_ghz as f32) * 2.0;
    (per_fpu * fpus as f64) as i64
}

/// `ComputeTime`: `flops` spread over the FPUs the launch occupies.
pub fn compute_time(
    device: &Device,
    flops: i64,
    num_blocks: i64,
    threads_per_block: i64,
) -> Duration {
    if flops <= 0 {
        return Duration::ZERO;
    }
    let rate = effective_flops_per_ns(device, num_blocks, threads_per_block);
    // `1.0f * flops / rate` in single precision; no FPU at all is infinite.
    Duration::from_nanos_f64(f64::from(flops as f32 / rate as f32))
}

/// `CombineComputeAndMemoryAccessTime`: compute and memory overlap, so the sum
/// minus the hidden part of the shorter one.
pub fn combine(compute: Duration, memory: Duration) -> Duration {
    combine_with(compute, memory, MEMORY_COMPUTE_PARALLELISM)
}

/// [`combine`] with another `memory_compute_parallelism`.
pub fn combine_with(compute: Duration, memory: Duration, parallelism: f64) -> Duration {
    compute + memory - compute.min(memory).mul_f64(parallelism)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_limits_the_flop_rate() {
        let d = Device::a6000();
        // 84 SMs x 128 FPUs x 1.41 GHz x 2.
        assert_eq!(effective_flops_per_ns(&d, 1000, 256), 30320);
        // One thread of one block: 2.82 flops/ns, truncated to 2.
        assert_eq!(effective_flops_per_ns(&d, 1, 1), 2);
        assert_eq!(compute_time(&d, 3000, 8, 128).as_nanos_f64(), 1.0);
        let mut empty = Device::a6000();
        empty.fpus_per_core = 0;
        assert!(compute_time(&empty, 1, 1, 1).is_infinite());
        let us = Duration::from_micros;
        // 5 µs of memory hide 95% of 4 µs of compute.
        assert_eq!(combine(us(4), us(5)), us(5) + Duration::from_nanos(200));
        assert_eq!(combine_with(us(4), us(4), 0.5), us(6));
    }
}
