//! XLA's per-dtype peak rates (`cuda_core_info_table_test.cc`; 28 records in
//! `tests/data/conformance/xla/device_peak_rates.jsonl`) against
//! `hlo_lsp::device::units`: `FillExecutionUnitDesc` at the record's capability,
//! SM count and clock, the peak of the matrix (tensor core) or vector (CUDA
//! core) units in TFLOP/s within XLA's 2%, `GetFpusPerCore`, and the table chosen
//! by the capability's major. `PASSING` is a floor; every failing record is
//! printed with its cause.

use hlo_lsp::device::{units, ComputeCapability, Device, Unit};
use hlo_lsp::model::PrimitiveType;
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 28;

/// `"9.0"` or `"Ampere (8.0)"`: the major and minor in it.
fn capability(text: &str) -> (i64, i64) {
    let inner = text
        .rsplit_once('(')
        .map_or(text, |(_, r)| r.trim_end_matches(')'));
    let (major, minor) = inner.split_once('.').expect("major.minor");
    (major.trim().parse().unwrap(), minor.trim().parse().unwrap())
}

fn device(args: &Value) -> Device {
    let (major, minor) = capability(args["cuda_compute_capability"].as_str().unwrap());
    let mut d = Device::empty("record");
    d.sm_count = args["core_count"].as_i64().unwrap_or(0);
    d.clock_rate_ghz = args["clock_rate_ghz"].as_f64().unwrap();
    d.set_compute_capability(ComputeCapability::Cuda { major, minor });
    d.fill_units();
    d
}

fn run(record: &Value) -> Result<(), String> {
    let args = &record["args"];
    let expected = &record["expected"];
    let function = record["function"].as_str().unwrap();
    if function.starts_with("GetFpusPerCore") {
        let (major, minor) = capability(args["cuda_compute_capability"].as_str().unwrap());
        let got = units::fpus_per_core(major, minor);
        let want = expected["fpus_per_core"].as_i64().unwrap();
        return if got == want {
            Ok(())
        } else {
            Err(format!("fpus_per_core {got}, expected {want}"))
        };
    }
    let d = device(args);
    if let Some(want) =
        expected["matrix_unit_description.GetRateInfo(BF16).units_per_core"].as_i64()
    {
        let got = units::rate_of(&d.matrix_units, &PrimitiveType::Bf16)
            .ok_or("no bf16 matrix rate")?
            .units_per_core;
        return if got == want {
            Ok(())
        } else {
            Err(format!("units_per_core {got}, expected {want}"))
        };
    }
    let unit = if args["is_matrix_unit"].as_bool().unwrap() {
        Unit::Matrix
    } else {
        Unit::Vector
    };
    let dtype = PrimitiveType::from_name(&args["dtype"].as_str().unwrap().to_ascii_lowercase());
    let ops = d
        .peak_ops_per_ns(unit, &dtype)
        .ok_or_else(|| format!("no {unit:?} rate for {dtype}"))?;
    // XLA keeps the rate in a float.
    let tflops = f64::from(ops as f32) / 1000.0;
    let want = expected["peak_tflops"].as_f64().unwrap();
    let tolerance = expected["tolerance_tflops"].as_f64().unwrap();
    if (tflops - want).abs() <= tolerance {
        Ok(())
    } else {
        Err(format!(
            "{tflops:.1} TFLOP/s, expected {want} ± {tolerance}"
        ))
    }
}

#[test]
fn peak_rates_match_xlas_table() {
    let records = crate::conformance_support::xla_records("device_peak_rates.jsonl");
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}
