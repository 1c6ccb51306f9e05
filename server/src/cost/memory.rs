//! Memory time: how long a kernel takes to read its operands and write its
//! outputs, as XLA's `GpuPerformanceModelBase` estimates it
//! (`ReadTimeWithDRAMHeuristic`, `WriteTime`, `GetCoalescingUtilizationRate`).
//!
//! XLA computes bandwidths in single precision (`float`); so does this port, so
//! that times land on the same quarter nanosecond.

use super::duration::Duration;
use crate::device::Device;

/// Re-read data that fits in L2 comes this much faster than from DRAM
/// (`kL2CacheSpeedup`).
pub const L2_CACHE_SPEEDUP: f32 = 2.5;
/// ... and, when it also fits in the L1 caches of all SMs, this much faster again
/// (`kL1CacheSpeedup`).
pub const L1_CACHE_SPEEDUP: f32 = 8.0;

/// XLA's `AdjustBandwidth`: an SM issues at most `memory_transactions_per_clock`
/// bytes per clock, so a kernel with few blocks cannot use the whole DRAM
/// bandwidth (H100 needs about 57 busy SMs to saturate it).
pub fn adjust_bandwidth(device: &Device, bandwidth: f32, num_blocks: i64) -> f32 {
    let per_block =
        device.clock_rate_ghz as f32 * 1.0e9_f32 * device.memory_transactions_per_clock as f32;
    let max_bandwidth = num_blocks as f32 * per_block;
    bandwidth.min(max_bandwidth)
}

/// The fraction of DRAM bandwidth a read attains (`GetCoalescingUtilizationRate`):
/// 1 when coalesced; otherwise XLA assumes one element is used of each DRAM-to-L2
/// transaction (one f32 of 64 bytes: 1/16).
pub fn coalescing_utilization_rate(
    element_bytes: Option<i64>,
    device: &Device,
    coalesced: bool,
) -> f64 {
    if coalesced {
        return 1.0;
    }
    // Tuples and tokens: XLA's dummy 4 bytes.
    let bytes = element_bytes.filter(|&b| b > 0).unwrap_or(4);
    bytes as f64 / device.dram_to_l2_transaction_bytes.max(1) as f64
}

/// `ReadTimeWithDRAMHeuristic`: the first `min(net, total)` bytes come from DRAM
/// at the attained bandwidth (`hbm_utilization`); the rest are re-reads, from L2
/// (x2.5) when the distinct bytes fit in L2, and from L1 too (x8 more) when they
/// fit in the L1 of every SM; re-reads of data that does not fit in L2 pay DRAM's
/// attained bandwidth again. Both bandwidths are capped by [`adjust_bandwidth`].
pub fn read_time(
    device: &Device,
    num_blocks: i64,
    n_bytes_net: i64,
    n_bytes_total: i64,
    hbm_utilization: f64,
) -> Duration {
    let mut dram_bandwidth = (device.memory_bandwidth as f64 * hbm_utilization) as f32;
    let mut rest_bandwidth = device.memory_bandwidth as f32;
    if n_bytes_net < device.l2_cache_size {
        rest_bandwidth *= L2_CACHE_SPEEDUP;
        if n_bytes_net < device.l1_cache_size_per_sm.saturating_mul(device.sm_count) {
            rest_bandwidth *= L1_CACHE_SPEEDUP;
        }
    } else {
        rest_bandwidth *= hbm_utilization as f32;
    }
    dram_bandwidth = adjust_bandwidth(device, dram_bandwidth, num_blocks);
    rest_bandwidth = adjust_bandwidth(device, rest_bandwidth, num_blocks);
    // net > total happens for an operand the producer and consumer share (XLA
    // notes the flaw); the DRAM part is never more than the total.
    let from_dram = n_bytes_net.min(n_bytes_total);
    let from_cache = n_bytes_total - from_dram;
    seconds(from_dram, dram_bandwidth) + seconds(from_cache, rest_bandwidth)
}

/// `bytes / bandwidth` in single precision, as `absl::Seconds(float)`; no bytes
/// take no time whatever the bandwidth.
fn seconds(bytes: i64, bandwidth: f32) -> Duration {
    if bytes <= 0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(f64::from(bytes as f32 / bandwidth))
}

/// `WriteTime`: outputs are written once, at full DRAM bandwidth.
pub fn write_time(device: &Device, bytes_written: i64) -> Duration {
    seconds(bytes_written, device.memory_bandwidth as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_blocks_cap_the_bandwidth_and_caches_speed_up_rereads() {
        let d = Device::a6000();
        // 8 blocks: 8 * 1.41 GHz * 32 B = 361 GB/s < 768 GB/s.
        let t = read_time(&d, 8, 4000, 4000, 1.0);
        assert_eq!(t.as_nanos_f64(), 11.0);
        // Many blocks: full bandwidth; 4e7 bytes from DRAM take 52 µs.
        let t = read_time(&d, 100_000, 40_000_000, 40_000_000, 1.0);
        assert_eq!(t.whole_micros(), 52);
        // 40 kB re-read 1000 times: fits in L1 (2 KiB x 84 SMs), x20 speedup.
        let t = read_time(&d, 100_000, 40_000, 40_000_000, 1.0);
        assert_eq!(t.whole_micros(), 2);
        // Uncoalesced f32 reads use 4 of 64 bytes: 16 times slower.
        let rate = coalescing_utilization_rate(Some(4), &d, false);
        assert_eq!(rate, 1.0 / 16.0);
        let t = read_time(&d, 100_000, 40_000_000, 40_000_000, rate);
        assert_eq!(t.whole_micros(), 833);
        assert_eq!(write_time(&d, 0), Duration::ZERO);
    }
}
