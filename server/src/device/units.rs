//! The GPU's execution units and their peak rate per element type: XLA's
//! `ExecutionUnitDescription` (`matrix_unit_description`, the tensor cores;
//! `scalar_unit_description`, the CUDA cores), filled from NVIDIA's published
//! rates by `FillExecutionUnitDesc` (`xla/stream_executor/cuda/cuda_core_info_table.cc`).
//!
//! Why: a GEMM on an H100 runs on tensor cores at ~989 TFLOP/s in bf16, fifteen
//! times the CUDA cores' ~67 TFLOP/s f32 that XLA's generic `ComputeTime` assumes.
//! XLA's GEMM model asks `CalculatePeakMatrixOpsPerNs(device, dtype)`; this module
//! answers it ([`super::Device::peak_ops_per_ns`]).
//!
//! The table is kept per compute-capability major (Ampere 8.x, Hopper 9.x,
//! Blackwell 10.x); a row covers every type with its float-ness and bit width
//! (the 16-bit float row is f16 and bf16, the 8-bit float row every f8, the
//! 32-bit float matrix row is tf32). Facts, with XLA's sources:
//! * Ampere (A100 whitepaper, "A100 SM Architecture"): 4 tensor cores per SM at
//!   the base clock; per core and clock 512 int8, 256 f16, 128 tf32, 16 f64 FMAs.
//!   CUDA cores: 64 f32, 32 f64, 64 int32 per SM; f16 as 2-way SIMD.
//! * Hopper (H100 whitepaper, table 3): twice Ampere's tensor-core FMAs per clock
//!   (1024 int8/f8, 512 f16, 256 tf32; f64 32), at 0.924 of the base clock
//!   (1830 of 1980 MHz) except f64; 128 f32 CUDA cores per SM.
//! * Blackwell (Blackwell technical brief, fitted at 1965 MHz and 148 SMs):
//!   2048 int8/f8 and 4096 f4 FMAs per tensor core and clock, at 0.934 of the
//!   base clock; CUDA cores issue f16 at one result per lane.
//!
//! peak ops/ns = unit clock (GHz) x FMAs per clock x 2 x SMs x units per SM.

use serde::{Deserialize, Serialize};

use super::ComputeCapability;
use crate::model::PrimitiveType;

/// Which units run an operation: tensor cores or CUDA cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Tensor cores (`matrix_unit_description`): dots and convolutions.
    Matrix,
    /// CUDA cores (`scalar_unit_description`): everything else.
    Vector,
}

/// One element type's rate on one kind of unit (`ExecutionUnitDescription::RateInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// XLA's spelling of the element type (`bf16`, `f8e4m3fn`, `s8`).
    pub dtype: String,
    /// Units of this kind per SM (`units_per_core`).
    pub units_per_core: i64,
    /// The units' clock in GHz (the device's base clock times the unit's scale).
    pub clock_rate_ghz: f32,
    /// Fused multiply-adds one unit retires per clock (`ops_per_clock`).
    pub ops_per_clock: i64,
}

impl Rate {
    /// Operations (an FMA counts two) per nanosecond of `sm_count` SMs.
    pub fn ops_per_ns(&self, sm_count: i64) -> f64 {
        f64::from(self.clock_rate_ghz)
            * self.ops_per_clock as f64
            * 2.0
            * (sm_count.saturating_mul(self.units_per_core)) as f64
    }
}

/// A table row: which types it covers (float or not, bit width) and its rate.
struct Row {
    float: bool,
    bits: u32,
    units_per_sm: i64,
    ops_per_clock: i64,
    clock_scale: f32,
}

const fn row(float: bool, bits: u32, units: i64, ops: i64, scale: f32) -> Row {
    Row {
        float,
        bits,
        units_per_sm: units,
        ops_per_clock: ops,
        clock_scale: scale,
    }
}

const AMPERE_TC_SCALE: f32 = 1.0;
const HOPPER_TC_SCALE: f32 = 0.924;
const BLACKWELL_TC_SCALE: f32 = 0.934;
/// Tensor cores per SM on every generation in the table.
const TC_PER_SM: i64 = 4;

const AMPERE_VECTOR: &[Row] = &[
    row(true, 16, 64, 2, 1.0),
    row(true, 32, 64, 1, 1.0),
    row(true, 64, 32, 1, 1.0),
    row(false, 32, 64, 1, 1.0),
];
const AMPERE_MATRIX: &[Row] = &[
    row(false, 8, TC_PER_SM, 512, AMPERE_TC_SCALE),
    row(true, 16, TC_PER_SM, 256, AMPERE_TC_SCALE),
    row(true, 32, TC_PER_SM, 128, AMPERE_TC_SCALE),
    row(true, 64, TC_PER_SM, 16, AMPERE_TC_SCALE),
];
const HOPPER_VECTOR: &[Row] = &[
    row(true, 16, 128, 2, 1.0),
    row(true, 32, 128, 1, 1.0),
    row(true, 64, 64, 1, 1.0),
    row(false, 32, 64, 1, 1.0),
];
const HOPPER_MATRIX: &[Row] = &[
    row(false, 8, TC_PER_SM, 1024, HOPPER_TC_SCALE),
    row(true, 8, TC_PER_SM, 1024, HOPPER_TC_SCALE),
    row(true, 16, TC_PER_SM, 512, HOPPER_TC_SCALE),
    row(true, 32, TC_PER_SM, 256, HOPPER_TC_SCALE),
    row(true, 64, TC_PER_SM, 32, 1.0),
];
const BLACKWELL_VECTOR: &[Row] = &[
    row(true, 16, 128, 1, 1.0),
    row(true, 32, 128, 1, 1.0),
    row(true, 64, 64, 1, 1.0),
    row(false, 32, 64, 1, 1.0),
];
const BLACKWELL_MATRIX: &[Row] = &[
    row(true, 4, TC_PER_SM, 4096, BLACKWELL_TC_SCALE),
    row(true, 6, TC_PER_SM, 2048, BLACKWELL_TC_SCALE),
    row(false, 8, TC_PER_SM, 2048, BLACKWELL_TC_SCALE),
    row(true, 8, TC_PER_SM, 2048, BLACKWELL_TC_SCALE),
    row(true, 16, TC_PER_SM, 1024, BLACKWELL_TC_SCALE),
    row(true, 32, TC_PER_SM, 512, BLACKWELL_TC_SCALE),
    row(true, 64, TC_PER_SM, 16, 1.0),
];

/// `FindCoreInfoForDType`: the rows of a CUDA compute capability, by major.
fn rows(cc: &ComputeCapability, unit: Unit) -> Option<&'static [Row]> {
    let ComputeCapability::Cuda { major, .. } = cc else {
        return None;
    };
    Some(match (major, unit) {
        (8, Unit::Vector) => AMPERE_VECTOR,
        (8, Unit::Matrix) => AMPERE_MATRIX,
        (9, Unit::Vector) => HOPPER_VECTOR,
        (9, Unit::Matrix) => HOPPER_MATRIX,
        (10, Unit::Vector) => BLACKWELL_VECTOR,
        (10, Unit::Matrix) => BLACKWELL_MATRIX,
        _ => return None,
    })
}

/// XLA's element types in the order of its `PrimitiveType` enum numbers, with
/// those numbers (the keys of a text proto's `rate_infos`). Complex types are
/// neither floating point nor integral to XLA's table, so they get no rate.
pub const PROTO_TYPES: &[(&str, i32)] = &[
    ("pred", 1),
    ("s8", 2),
    ("s16", 3),
    ("s32", 4),
    ("s64", 5),
    ("u8", 6),
    ("u16", 7),
    ("u32", 8),
    ("u64", 9),
    ("f16", 10),
    ("f32", 11),
    ("f64", 12),
    ("c64", 15),
    ("bf16", 16),
    ("c128", 18),
    ("f8e5m2", 19),
    ("f8e4m3fn", 20),
    ("s4", 21),
    ("u4", 22),
    ("f8e4m3b11fnuz", 23),
    ("f8e5m2fnuz", 24),
    ("f8e4m3fnuz", 25),
    ("s2", 26),
    ("u2", 27),
    ("f8e4m3", 28),
    ("f8e3m4", 29),
    ("s1", 30),
    ("u1", 31),
    ("f4e2m1fn", 32),
    ("f8e8m0fnu", 33),
    ("f6e3m2fn", 35),
    ("f6e2m3fn", 36),
];

/// The spelling of XLA's `PrimitiveType` number `key`.
pub fn proto_type_name(key: i64) -> Option<&'static str> {
    PROTO_TYPES
        .iter()
        .find(|(_, k)| i64::from(*k) == key)
        .map(|(n, _)| *n)
}

/// Whether XLA counts a type as floating point (`FloatingPointTypeForEach`) or
/// integral (`IntegralTypeForEach`), and its bit width; `None` for the rest
/// (pred, complex, tokens).
fn class(name: &str) -> Option<(bool, u32)> {
    let bits = |digits: &str| digits.parse::<u32>().ok();
    if name == "bf16" {
        return Some((true, 16));
    }
    if let Some(rest) = name.strip_prefix('f') {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return bits(&digits).map(|b| (true, b));
    }
    if let Some(rest) = name.strip_prefix(['s', 'u']) {
        return bits(rest).map(|b| (false, b));
    }
    None
}

/// `CreateEuDescription`: every float and integral type a row covers, with the
/// row's rate at the device's `clock_ghz`.
fn description(rows: &[Row], clock_ghz: f32) -> Vec<Rate> {
    PROTO_TYPES
        .iter()
        .filter_map(|(name, _)| {
            let (float, bits) = class(name)?;
            let r = rows.iter().find(|r| r.float == float && r.bits == bits)?;
            Some(Rate {
                dtype: (*name).to_string(),
                units_per_core: r.units_per_sm,
                clock_rate_ghz: r.clock_scale * clock_ghz,
                ops_per_clock: r.ops_per_clock,
            })
        })
        .collect()
}

/// `FillExecutionUnitDesc`: the matrix and vector units of a CUDA device of
/// capability `cc` at base clock `clock_ghz`; `None` for a generation the table
/// does not know (then XLA falls back to its CUDA-core estimate).
pub fn fill(cc: &ComputeCapability, clock_ghz: f64, unit: Unit) -> Option<Vec<Rate>> {
    rows(cc, unit).map(|r| description(r, clock_ghz as f32))
}

/// `GetFpusPerCore`: f32 CUDA cores per SM, from the table when it knows the
/// generation, else the CUDA best-practices guide's throughput table (192 on
/// 3.x; 64 on 6.0, 7.x and 8.0; 128 otherwise).
pub fn fpus_per_core(major: i64, minor: i64) -> i64 {
    let cc = ComputeCapability::Cuda { major, minor };
    if let Some(r) = rows(&cc, Unit::Vector).and_then(|rows| {
        rows.iter()
            .find(|r| r.float && r.bits == 32)
            .map(|r| r.units_per_sm)
    }) {
        return r;
    }
    match (major, minor) {
        (3, _) => 192,
        (6, 0) | (7, _) | (8, 0) => 64,
        _ => 128,
    }
}

/// The rate of `dtype` in a description (`ExecutionUnitDescription::GetRateInfo`).
pub fn rate_of<'a>(rates: &'a [Rate], dtype: &PrimitiveType) -> Option<&'a Rate> {
    let name = dtype.name();
    rates.iter().find(|r| r.dtype == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(major: i64, minor: i64) -> ComputeCapability {
        ComputeCapability::Cuda { major, minor }
    }

    #[test]
    fn h100_bf16_tensor_cores_peak_near_989_tflops() {
        let m = fill(&cc(9, 0), 1.98, Unit::Matrix).unwrap();
        let bf16 = rate_of(&m, &PrimitiveType::Bf16).unwrap();
        let tflops = bf16.ops_per_ns(132) / 1000.0;
        assert!((tflops - 989.0).abs() < 2.0, "{tflops}");
        // tf32 is f32 on the matrix units; f64 runs at the base clock.
        let f64_rate = rate_of(&m, &PrimitiveType::F64).unwrap();
        assert_eq!(f64_rate.clock_rate_ghz, 1.98);
        // pred and complex types have no rate.
        assert!(rate_of(&m, &PrimitiveType::Pred).is_none());
        assert!(rate_of(&m, &PrimitiveType::C64).is_none());
    }

    #[test]
    fn the_table_is_looked_up_by_major_and_falls_back_for_fpus() {
        assert!(fill(&cc(10, 3), 1.965, Unit::Matrix).is_some());
        assert!(fill(&cc(7, 0), 1.5, Unit::Matrix).is_none());
        assert!(fill(&ComputeCapability::Unknown, 1.5, Unit::Vector).is_none());
        assert_eq!(fpus_per_core(8, 0), 64);
        assert_eq!(fpus_per_core(8, 6), 64); // the Ampere row, not the guide's 128
        assert_eq!(fpus_per_core(7, 0), 64);
        assert_eq!(fpus_per_core(6, 0), 64);
        assert_eq!(fpus_per_core(3, 5), 192);
        assert_eq!(fpus_per_core(5, 2), 128);
        assert_eq!(proto_type_name(16), Some("bf16"));
    }
}
