//! `hlo-lsp device NAME|FILE [--json]`: what the cost model assumes of a GPU (a
//! preset, or a `GpuTargetConfig` / `GpuDeviceInfoProto` text proto): SMs,
//! clock, memory and host bandwidths, caches, shared memory, and the peak
//! TFLOP/s of the matrix (tensor core) and vector (CUDA core) units per element
//! type, as XLA's `FillExecutionUnitDesc` gives them. Exit 0, or 2 with one line
//! for a name that is neither a preset nor a readable device file.

use std::process::ExitCode;

use serde_json::{json, Map, Value};

use crate::device::{ComputeCapability, Device, Unit};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A preset (a6000, a100, h100, b200) or a GPU target config / device info text proto.
    pub device: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let device = super::gpu::resolve(&args.device)?;
    if args.json {
        let text = serde_json::to_string_pretty(&to_json(&device)).unwrap_or_default();
        Ok(format!("{text}\n"))
    } else {
        Ok(to_text(&device))
    }
}

/// TFLOP/s of every element type `unit` has a rate for, in XLA's order.
fn peaks(d: &Device, unit: Unit) -> Vec<(String, f64)> {
    d.units(unit)
        .iter()
        .map(|r| (r.dtype.clone(), r.ops_per_ns(d.sm_count) / 1000.0))
        .collect()
}

fn rounded(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

fn capability(d: &Device) -> String {
    match &d.compute_capability {
        ComputeCapability::Cuda { major, minor } => format!("sm_{major}{minor}"),
        ComputeCapability::Rocm { gcn_arch_name } => gcn_arch_name.clone(),
        ComputeCapability::Unknown => "unknown".into(),
    }
}

/// Type name to TFLOP/s; on the matrix units f32 runs as tf32, so it is also
/// listed under that name.
fn peak_map(d: &Device, unit: Unit) -> Value {
    let mut map: Map<String, Value> = peaks(d, unit)
        .into_iter()
        .map(|(t, tflops)| (t, json!(rounded(tflops, 3))))
        .collect();
    if unit == Unit::Matrix {
        if let Some(f32_rate) = map.get("f32").cloned() {
            map.insert("tf32".into(), f32_rate);
        }
    }
    Value::Object(map)
}

fn to_json(d: &Device) -> Value {
    json!({
        "name": d.name,
        "compute_capability": capability(d),
        "sm_count": d.sm_count,
        "clock_ghz": d.clock_rate_ghz,
        "memory_bandwidth_gbps": d.memory_bandwidth as f64 / 1e9,
        "host_bandwidth_gbps": d.host_bandwidth as f64 / 1e9,
        "l2_bytes": d.l2_cache_size,
        "l1_bytes_per_sm": d.l1_cache_size_per_sm,
        "device_memory_bytes": d.device_memory_size,
        "shared_memory_per_block": d.shared_memory_per_block,
        "shared_memory_per_block_optin": d.shared_memory_per_block_optin,
        "shared_memory_per_sm": d.shared_memory_per_core,
        "threads_per_sm": d.threads_per_sm,
        "warp_size": d.warp_size,
        "fpus_per_sm": d.fpus_per_core,
        "peak_tflops": { "matrix": peak_map(d, Unit::Matrix), "vector": peak_map(d, Unit::Vector) },
    })
}

fn bytes(n: i64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (MIB * 1024.0))
    } else if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / MIB)
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

/// One line per unit kind: `bf16 989.4, f16 989.4, ...` (none: the fallback).
fn peak_line(d: &Device, unit: Unit) -> String {
    let p = peaks(d, unit);
    if p.is_empty() {
        return "none described (GEMMs fall back to the CUDA cores)".into();
    }
    p.iter()
        .map(|(t, v)| match (unit, t.as_str()) {
            (Unit::Matrix, "f32") => format!("tf32 {v:.1}"),
            _ => format!("{t} {v:.1}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn to_text(d: &Device) -> String {
    let host = if d.host_bandwidth > 0 {
        format!("{:.1} GB/s", d.host_bandwidth as f64 / 1e9)
    } else {
        "unknown".into()
    };
    let lines = [
        format!("{} ({})", d.name, capability(d)),
        format!(
            "  {} SMs at {} GHz, {} FP32 units and {} threads per SM, warp {}",
            d.sm_count, d.clock_rate_ghz, d.fpus_per_core, d.threads_per_sm, d.warp_size
        ),
        format!(
            "  memory {:.1} GB/s, host link {host}, device memory {}",
            d.memory_bandwidth as f64 / 1e9,
            bytes(d.device_memory_size)
        ),
        format!(
            "  L2 {}, L1 counted per SM {}, shared memory {} per block ({} opt-in), {} per SM",
            bytes(d.l2_cache_size),
            bytes(d.l1_cache_size_per_sm),
            bytes(d.shared_memory_per_block),
            bytes(d.shared_memory_per_block_optin),
            bytes(d.shared_memory_per_core)
        ),
        format!(
            "  matrix units, peak TFLOP/s: {}",
            peak_line(d, Unit::Matrix)
        ),
        format!(
            "  vector units, peak TFLOP/s: {}",
            peak_line(d, Unit::Vector)
        ),
    ];
    lines.join("\n") + "\n"
}
