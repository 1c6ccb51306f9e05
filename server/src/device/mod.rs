//! The GPU the analyses reason about: the numbers XLA's launch heuristics,
//! coalescing rules and GPU cost model read from its `se::DeviceDescription`
//! (built from a `GpuDeviceInfoProto`).
//!
//! Presets (every number sourced): XLA's own test devices
//! (`TestGpuDeviceInfo::*DeviceInfo()`, `xla/service/gpu/gpu_device_info_for_tests.cc`),
//! with `fpus_per_core` (which that file computes from the compute capability)
//! from XLA's shipped specs (`xla/tools/hlo_opt/gpu_specs/*.txtpb`):
//! * `a6000`: NVIDIA RTX A6000 (GA102, compute capability 8.6), the device of
//!   XLA's coalescing and cost-model tests: 84 SMs, 1536 resident threads per SM,
//!   128 FP32 units per SM, 1.41 GHz, 768 GB/s, 6 MiB L2.
//! * `a100`: NVIDIA A100 SXM4 80 GB (8.0): 108 SMs, 2048 threads per SM, 64 FP32
//!   units per SM (`a100_sxm_80.txtpb`), 1.41 GHz, 2.04 TB/s, 40 MiB L2.
//! * `h100`: NVIDIA H100 SXM (9.0): 132 SMs, 2048 threads per SM, 128 units, 1.98 GHz,
//!   3.35 TB/s, 50 MiB L2.
//! * `b200`: NVIDIA B200 (10.0): 148 SMs, 2048 threads per SM, 128 units, 1.965 GHz,
//!   8 TiB/s (the test device's number; `b200.txtpb` says 7.67 TB/s), 126 MiB L2.
//!
//! Three numbers are not in the proto: XLA derives them from the compute
//! capability (`DeviceDescription::l1_cache_size_per_SM`,
//! `dram_to_l2_transaction_size_bytes`, `memory_transactions_per_clock`): 2 KiB of
//! L1 counted per SM, a 64-byte DRAM-to-L2 transaction (two 32-byte sectors of a
//! 128-byte L2 line, the default since Volta, citing NVIDIA's GTC 2020 talk S21819
//! page 10) and 32 transactions per clock per SM, on every GPU but AMD's MI300
//! (32 KiB, 128 bytes, 16) and MI100/MI200 (16 KiB of L1).
//!
//! Execution units ([`units`]): every preset gets XLA's `FillExecutionUnitDesc`
//! rates for its compute capability and clock (tensor cores and CUDA cores per
//! element type); [`Device::peak_ops_per_ns`] answers a unit and a type.
//!
//! Host link (`host_bandwidth`, one direction, XLA's `pcie_bandwidth` formula:
//! 0.25 GiB/s per gen-1 lane, doubled each generation, times 16 lanes):
//! * `a6000`: PCIe 4.0 x16 (RTX A6000 datasheet): 32 GiB/s.
//! * `a100`: PCIe 4.0 x16 (A100 datasheet): 32 GiB/s, as XLA's `a100_sxm_40.txtpb`.
//! * `h100`: PCIe 5.0 x16 (H100 SXM datasheet): 64 GiB/s; XLA's `h100_sxm.txtpb`
//!   records 32 GiB/s, the link generation NVML reported at the time (it drops
//!   to a lower generation while idle).
//! * `b200`: PCIe 5.0 x16: 64 GiB/s, as XLA's `b200.txtpb`.
//!
//! A device can also come from a text proto ([`target_config`]); the server reads
//! one from the editor's settings (`lsp::settings`). Its fields serialize in
//! camelCase, the names those settings use.

pub mod target_config;
pub mod text_proto;
pub mod units;

use serde::{Deserialize, Serialize};

pub use target_config::{from_text_proto, DeviceProtoError};
pub use units::{Rate, Unit};

use crate::model::PrimitiveType;

/// What XLA's `GpuComputeCapability` says: which vendor rules apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ComputeCapability {
    /// `sm_{major}{minor}`.
    Cuda { major: i64, minor: i64 },
    /// `gfx90a`, `gfx942`, ...
    Rocm { gcn_arch_name: String },
    /// Not said (XLA then uses the CUDA defaults).
    #[default]
    Unknown,
}

impl ComputeCapability {
    /// The `gfx` name without feature suffixes (`gfx90a:sramecc+:xnack-` → `gfx90a`).
    fn gfx(&self) -> Option<&str> {
        match self {
            ComputeCapability::Rocm { gcn_arch_name } => gcn_arch_name.split(':').next(),
            _ => None,
        }
    }

    /// AMD MI300 (`gfx940` to `gfx942`: XLA's `gfx9_mi300`).
    pub fn is_mi300(&self) -> bool {
        matches!(self.gfx(), Some("gfx940" | "gfx941" | "gfx942"))
    }

    /// AMD MI100 / MI200 (`gfx908`, `gfx90a`).
    pub fn is_mi100_or_mi200(&self) -> bool {
        matches!(self.gfx(), Some("gfx908" | "gfx90a"))
    }
}

/// The device numbers the analyses use. Field names follow the settings
/// (camelCase in JSON); each doc names XLA's `DeviceDescription` accessor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// A preset's name, the proto's `device_description_str`, or `custom`.
    pub name: String,
    /// Threads that issue one memory instruction together (`threads_per_warp`).
    pub warp_size: i64,
    /// Streaming multiprocessors (`core_count`).
    pub sm_count: i64,
    /// Resident threads per SM (`threads_per_core_limit`).
    pub threads_per_sm: i64,
    /// Most threads in one block (`threads_per_block_limit`).
    pub threads_per_block: i64,
    /// Shared memory one block may use without opting in, in bytes
    /// (`shared_memory_per_block`).
    pub shared_memory_per_block: i64,
    /// The granularity of a DRAM-to-L2 transfer, in bytes: a read that uses less
    /// of the transfer wastes bandwidth (`dram_to_l2_transaction_size_bytes`).
    pub dram_to_l2_transaction_bytes: i64,
    /// Shared memory one block may use when it opts in (`shared_memory_per_block_optin`).
    pub shared_memory_per_block_optin: i64,
    /// Shared memory of one SM (`shared_memory_per_core`).
    pub shared_memory_per_core: i64,
    /// FP32 units ("CUDA cores") per SM: operations one SM issues per clock
    /// (`fpus_per_core`).
    pub fpus_per_core: i64,
    /// Most blocks in each grid dimension x, y, z (`block_dim_limit`).
    pub block_dim_limit: [i64; 3],
    /// DRAM bandwidth in bytes per second (`memory_bandwidth`).
    pub memory_bandwidth: i64,
    /// L2 cache in bytes (`l2_cache_size`).
    pub l2_cache_size: i64,
    /// L1 cache XLA counts per SM, in bytes (`l1_cache_size_per_SM`).
    pub l1_cache_size_per_sm: i64,
    /// Memory transactions one SM issues per clock (`memory_transactions_per_clock`):
    /// with few blocks the bandwidth is limited by it.
    pub memory_transactions_per_clock: i64,
    /// Core clock in GHz (`clock_rate_ghz`).
    pub clock_rate_ghz: f64,
    /// Device memory in bytes (`device_memory_size`).
    pub device_memory_size: i64,
    /// Registers of one SM (`registers_per_core_limit`).
    pub registers_per_core_limit: i64,
    /// Registers one block may use (`registers_per_block_limit`).
    pub registers_per_block_limit: i64,
    pub compute_capability: ComputeCapability,
    /// Tensor cores' rate per element type (`matrix_unit_description`); empty
    /// when the device has none described (XLA then costs GEMMs on the CUDA
    /// cores). Filled from the generation's table ([`units::fill`]) unless a
    /// text proto lists its own.
    #[serde(default)]
    pub matrix_units: Vec<Rate>,
    /// CUDA cores' rate per element type (`scalar_unit_description`).
    #[serde(default)]
    pub vector_units: Vec<Rate>,
    /// Host link bandwidth in bytes per second, one direction (`pcie_bandwidth`,
    /// computed by XLA as 0.25 GiB/s per PCIe gen-1 lane, doubling each
    /// generation, times the lanes): what a `MoveToHost` / `MoveToDevice`
    /// offload moves at. 0 when unknown.
    #[serde(default)]
    pub host_bandwidth: i64,
}

/// The preset names, for messages.
pub const PRESETS: &[&str] = &["a6000", "a100", "h100", "b200"];

/// Numbers every NVIDIA preset shares (see the module documentation).
const WARP_SIZE: i64 = 32;
const THREADS_PER_BLOCK: i64 = 1024;
const REGISTERS: i64 = 64 * 1024;
const BLOCK_DIM_LIMIT: [i64; 3] = [2_147_483_647, 65_535, 65_535];

/// The numbers that differ between the NVIDIA presets.
struct Nvidia {
    name: &'static str,
    cc: (i64, i64),
    sm_count: i64,
    threads_per_sm: i64,
    fpus_per_core: i64,
    clock_rate_ghz: f64,
    memory_bandwidth: i64,
    l2_cache_size: i64,
    device_memory_size: i64,
    shared_memory_per_block: i64,
    shared_memory_per_block_optin: i64,
    shared_memory_per_core: i64,
    host_bandwidth: i64,
}

/// One direction of a PCIe x16 link, as XLA computes `pcie_bandwidth`
/// (`GetDevicePcieBandwidth`: 0.25 GiB/s per gen-1 lane, doubled each generation).
const fn pcie_x16(generation: u32) -> i64 {
    (1i64 << 28) * (1i64 << (generation - 1)) * 16
}

impl Device {
    /// The device XLA's coalescing and cost-model tests use (and the default):
    /// `TestGpuDeviceInfo::RTXA6000DeviceInfo()`.
    pub fn a6000() -> Device {
        Device::nvidia(Nvidia {
            name: "a6000",
            cc: (8, 6),
            sm_count: 84,
            threads_per_sm: 1536,
            fpus_per_core: 128,
            clock_rate_ghz: 1.41,
            memory_bandwidth: 768_096_000_000,
            l2_cache_size: 6 * 1024 * 1024,
            device_memory_size: 51_050_250_240,
            shared_memory_per_block: 48 * 1024,
            shared_memory_per_block_optin: 101_376,
            shared_memory_per_core: 100 * 1024,
            host_bandwidth: pcie_x16(4),
        })
    }

    /// `TestGpuDeviceInfo::A100SXMDeviceInfo()`.
    pub fn a100() -> Device {
        Device::nvidia(Nvidia {
            name: "a100",
            cc: (8, 0),
            sm_count: 108,
            threads_per_sm: 2048,
            fpus_per_core: 64,
            clock_rate_ghz: 1.41,
            memory_bandwidth: 2_039_040_000_000,
            l2_cache_size: 40 * 1024 * 1024,
            device_memory_size: 85_100_068_864,
            shared_memory_per_block: 48 * 1024,
            shared_memory_per_block_optin: 166_912,
            shared_memory_per_core: 167_936,
            host_bandwidth: pcie_x16(4),
        })
    }

    /// `TestGpuDeviceInfo::H100SXMDeviceInfo()`.
    pub fn h100() -> Device {
        Device::nvidia(Nvidia {
            name: "h100",
            cc: (9, 0),
            sm_count: 132,
            threads_per_sm: 2048,
            fpus_per_core: 128,
            clock_rate_ghz: 1.98,
            memory_bandwidth: 3_352_320_000_000,
            l2_cache_size: 50 * 1024 * 1024,
            device_memory_size: 84_978_434_048,
            shared_memory_per_block: 48 * 1024,
            shared_memory_per_block_optin: 232_448,
            shared_memory_per_core: 233_472,
            host_bandwidth: pcie_x16(5),
        })
    }

    /// `TestGpuDeviceInfo::B200SXMDeviceInfo()`.
    pub fn b200() -> Device {
        Device::nvidia(Nvidia {
            name: "b200",
            cc: (10, 0),
            sm_count: 148,
            threads_per_sm: 2048,
            fpus_per_core: 128,
            clock_rate_ghz: 1.965,
            memory_bandwidth: 8_796_093_022_208,
            l2_cache_size: 132_120_576,
            device_memory_size: 193_273_528_320,
            shared_memory_per_block: 128 * 1024,
            shared_memory_per_block_optin: 232_448,
            shared_memory_per_core: 233_472,
            host_bandwidth: pcie_x16(5),
        })
    }

    fn nvidia(n: Nvidia) -> Device {
        let mut d = Device::empty(n.name);
        d.warp_size = WARP_SIZE;
        d.threads_per_block = THREADS_PER_BLOCK;
        d.sm_count = n.sm_count;
        d.threads_per_sm = n.threads_per_sm;
        d.fpus_per_core = n.fpus_per_core;
        d.clock_rate_ghz = n.clock_rate_ghz;
        d.memory_bandwidth = n.memory_bandwidth;
        d.l2_cache_size = n.l2_cache_size;
        d.device_memory_size = n.device_memory_size;
        d.shared_memory_per_block = n.shared_memory_per_block;
        d.shared_memory_per_block_optin = n.shared_memory_per_block_optin;
        d.shared_memory_per_core = n.shared_memory_per_core;
        d.registers_per_core_limit = REGISTERS;
        d.registers_per_block_limit = REGISTERS;
        d.block_dim_limit = BLOCK_DIM_LIMIT;
        d.host_bandwidth = n.host_bandwidth;
        d.set_compute_capability(ComputeCapability::Cuda {
            major: n.cc.0,
            minor: n.cc.1,
        });
        d.fill_units();
        d
    }

    /// `FillExecutionUnitDesc` at the device's capability and clock: what XLA
    /// does for every CUDA device it opens (`cuda_executor.cc`) and for its
    /// A100/H100/B200 test devices. The table is chosen by the capability's
    /// major, so an 8.6 part (the A6000) gets the A100's rates. Unknown
    /// generations keep no units.
    pub fn fill_units(&mut self) {
        let cc = &self.compute_capability;
        self.matrix_units = units::fill(cc, self.clock_rate_ghz, Unit::Matrix).unwrap_or_default();
        self.vector_units = units::fill(cc, self.clock_rate_ghz, Unit::Vector).unwrap_or_default();
    }

    /// The rates of one kind of unit (empty when not described).
    pub fn units(&self, unit: Unit) -> &[Rate] {
        match unit {
            Unit::Matrix => &self.matrix_units,
            Unit::Vector => &self.vector_units,
        }
    }

    /// Peak operations per nanosecond (an FMA counts two) of `dtype` on `unit`
    /// over every SM; `None` when the device describes no rate for it. tf32 is
    /// `f32` on the matrix units.
    pub fn peak_ops_per_ns(&self, unit: Unit, dtype: &PrimitiveType) -> Option<f64> {
        units::rate_of(self.units(unit), dtype).map(|r| r.ops_per_ns(self.sm_count))
    }

    /// `GpuPerformanceModelBase::CalculatePeakMatrixOpsPerNs`: the tensor cores'
    /// peak for `dtype`, truncated to whole ops per ns as XLA's `int64_t`; without
    /// a matrix rate for it, every CUDA core of every SM
    /// (`CalculateEffectiveFlopsPerNs(core_count, fpus_per_core)`).
    pub fn peak_matrix_ops_per_ns(&self, dtype: &PrimitiveType) -> i64 {
        match self.peak_ops_per_ns(Unit::Matrix, dtype) {
            Some(peak) => peak as i64,
            None => {
                let per_fpu = f64::from(self.clock_rate_ghz as f32) * 2.0;
                (per_fpu * self.sm_count.saturating_mul(self.fpus_per_core) as f64) as i64
            }
        }
    }

    /// What XLA's `DeviceDescription` holds for an empty `GpuDeviceInfoProto`:
    /// every number zero, the capability-derived ones at their CUDA defaults.
    pub fn empty(name: &str) -> Device {
        let mut d = Device {
            name: name.to_string(),
            warp_size: 0,
            sm_count: 0,
            threads_per_sm: 0,
            threads_per_block: 0,
            shared_memory_per_block: 0,
            dram_to_l2_transaction_bytes: 0,
            shared_memory_per_block_optin: 0,
            shared_memory_per_core: 0,
            fpus_per_core: 0,
            block_dim_limit: [0; 3],
            memory_bandwidth: 0,
            l2_cache_size: 0,
            l1_cache_size_per_sm: 0,
            memory_transactions_per_clock: 0,
            clock_rate_ghz: 0.0,
            device_memory_size: 0,
            registers_per_core_limit: 0,
            registers_per_block_limit: 0,
            compute_capability: ComputeCapability::Unknown,
            matrix_units: vec![],
            vector_units: vec![],
            host_bandwidth: 0,
        };
        d.set_compute_capability(ComputeCapability::Unknown);
        d
    }

    /// Sets the capability and the three numbers XLA derives from it
    /// (`l1_cache_size_per_SM`, `dram_to_l2_transaction_size_bytes`,
    /// `memory_transactions_per_clock` in `device_description.h`).
    pub fn set_compute_capability(&mut self, cc: ComputeCapability) {
        let (l1, transaction, per_clock) = if cc.is_mi300() {
            (32 * 1024, 128, 16)
        } else if cc.is_mi100_or_mi200() {
            (16 * 1024, 64, 32)
        } else {
            (2 * 1024, 64, 32)
        };
        self.l1_cache_size_per_sm = l1;
        self.dram_to_l2_transaction_bytes = transaction;
        self.memory_transactions_per_clock = per_clock;
        self.compute_capability = cc;
    }

    /// A preset by name (case-insensitive).
    pub fn preset(name: &str) -> Option<Device> {
        match name.to_ascii_lowercase().as_str() {
            "a6000" | "rtx-a6000" | "rtxa6000" => Some(Device::a6000()),
            "a100" => Some(Device::a100()),
            "h100" => Some(Device::h100()),
            "b200" => Some(Device::b200()),
            _ => None,
        }
    }

    /// Every number the analyses divide by must be positive, and a warp at most
    /// one block.
    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("warpSize", self.warp_size),
            ("smCount", self.sm_count),
            ("threadsPerSm", self.threads_per_sm),
            ("threadsPerBlock", self.threads_per_block),
            ("sharedMemoryPerBlock", self.shared_memory_per_block),
            (
                "dramToL2TransactionBytes",
                self.dram_to_l2_transaction_bytes,
            ),
            ("fpusPerCore", self.fpus_per_core),
            ("memoryBandwidth", self.memory_bandwidth),
            (
                "memoryTransactionsPerClock",
                self.memory_transactions_per_clock,
            ),
        ];
        for (name, v) in fields {
            if v < 1 {
                return Err(format!("device {name} must be positive, got {v}"));
            }
        }
        let non_negative = [
            ("l2CacheSize", self.l2_cache_size),
            ("l1CacheSizePerSm", self.l1_cache_size_per_sm),
            (
                "sharedMemoryPerBlockOptin",
                self.shared_memory_per_block_optin,
            ),
            ("sharedMemoryPerCore", self.shared_memory_per_core),
            ("deviceMemorySize", self.device_memory_size),
            ("registersPerCoreLimit", self.registers_per_core_limit),
            ("registersPerBlockLimit", self.registers_per_block_limit),
            ("hostBandwidth", self.host_bandwidth),
        ];
        for (name, v) in non_negative {
            if v < 0 {
                return Err(format!("device {name} must not be negative, got {v}"));
            }
        }
        if !(self.clock_rate_ghz.is_finite() && self.clock_rate_ghz > 0.0) {
            return Err(format!(
                "device clockRateGhz must be a positive number, got {}",
                self.clock_rate_ghz
            ));
        }
        if self.warp_size > self.threads_per_block || self.warp_size > 1024 {
            return Err(format!(
                "device warpSize {} must be at most threadsPerBlock {} (and 1024)",
                self.warp_size, self.threads_per_block
            ));
        }
        Ok(())
    }

    /// Threads the whole GPU keeps resident: XLA unrolls loop fusions only when
    /// the output has at least this many elements.
    pub fn resident_threads(&self) -> i64 {
        self.sm_count.saturating_mul(self.threads_per_sm)
    }
}

impl Default for Device {
    fn default() -> Device {
        Device::a6000()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_custom_values() {
        assert_eq!(
            Device::preset("A6000").unwrap().resident_threads(),
            84 * 1536
        );
        assert_eq!(Device::preset("h100").unwrap().sm_count, 132);
        assert!(Device::preset("v100").is_none());
    }

    #[test]
    fn presets_validate_and_derive_from_the_capability() {
        for name in PRESETS {
            let d = Device::preset(name).unwrap();
            d.validate().unwrap();
            assert_eq!(d.l1_cache_size_per_sm, 2048);
            assert_eq!(d.memory_transactions_per_clock, 32);
            assert_eq!(d.dram_to_l2_transaction_bytes, 64);
        }
        let mut d = Device::empty("mi300");
        d.set_compute_capability(ComputeCapability::Rocm {
            gcn_arch_name: "gfx942:sramecc+:xnack-".into(),
        });
        assert_eq!(
            (
                d.l1_cache_size_per_sm,
                d.dram_to_l2_transaction_bytes,
                d.memory_transactions_per_clock
            ),
            (32 * 1024, 128, 16)
        );
    }
}
