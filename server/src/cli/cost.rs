//! `hlo-lsp cost FILE [--device NAME|FILE] [--top N] [--json]`: every kernel of the
//! module ranked by the time XLA's GPU performance model estimates
//! ([`crate::cost::report::ranked_kernels`]). A CPU dump is judged only when `--device`
//! asks for a GPU ("as if compiled for ..."). Exit 0 with a report, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::gpu;
use crate::cost::report::{self, RankedKernel};
use crate::cost::{Bound, Duration};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file (an XLA dump).
    pub file: PathBuf,
    /// The GPU: a preset (a6000, a100, h100, b200) or a GpuDeviceInfoProto /
    /// GpuTargetConfig text proto; default: a `*.gpu_target_config.pbtxt` beside FILE,
    /// else a6000.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Only the N costliest kernels (the total still counts them all).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn micros(d: Duration) -> Value {
    match d.is_infinite() {
        true => Value::Null,
        false => json!(d.as_micros_f64()),
    }
}

fn run_inner(args: &Args) -> Result<String, String> {
    let chosen = gpu::device(args.device.as_deref(), &args.file)?;
    let (_, file) = gpu::parse(&args.file)?;
    let module = &file.modules[0];
    let cpu = gpu::is_cpu_dump(&args.file, module);
    let device = &chosen.device;
    if cpu && !chosen.explicit {
        eprintln!("{}", gpu::cpu_note(&args.file));
        return Ok(if args.json {
            let v = json!({
                "device": Value::Null, "backend": "cpu", "total_us": Value::Null, "kernels": [],
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        } else {
            String::new()
        });
    }
    let ranked = report::ranked_kernels(module, device);
    let total = ranked
        .iter()
        .fold(Duration::ZERO, |sum, k| sum + k.cost.exec_time);
    let shown = &ranked[..args.top.unwrap_or(ranked.len()).min(ranked.len())];
    if args.json {
        let mut v = json!({
            "device": gpu::device_json(device),
            "total_us": micros(total),
            "kernels": shown.iter().map(kernel_json).collect::<Vec<_>>(),
        });
        if cpu {
            v["backend"] = json!("cpu");
            v["as_if_compiled_for"] = json!(device.name);
        }
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ));
    }
    let mut out = format!(
        "{}: {} kernel{} on {}{}, total ≈ {total}\n",
        args.file.display(),
        ranked.len(),
        if ranked.len() == 1 { "" } else { "s" },
        device.name,
        if cpu {
            format!(" (a CPU dump, as if compiled for {})", device.name)
        } else {
            String::new()
        },
    );
    for k in shown {
        out.push_str(&format!(
            "{:>10}  {} ({}, {})  {}\n",
            k.cost.exec_time.to_string(),
            k.cost.name,
            k.kind,
            k.computation_name,
            report::summary(&k.cost)
        ));
        if let Some(d) = report::dominant_operand(&k.cost) {
            out.push_str(&format!(
                "            dominant read: {}\n",
                d.replace('`', "")
            ));
        }
    }
    if shown.len() < ranked.len() {
        out.push_str(&format!(
            "({} more kernel(s) not shown)\n",
            ranked.len() - shown.len()
        ));
    }
    Ok(out)
}

fn kernel_json(k: &RankedKernel) -> Value {
    let c = &k.cost;
    json!({
        "name": c.name,
        "computation": k.computation_name,
        "kind": k.kind,
        "exec_time_us": micros(c.exec_time),
        "compute_time_us": micros(c.compute_time),
        "read_time_us": micros(c.read_time),
        "write_time_us": micros(c.write_time),
        "flops": c.flops,
        "bytes_read": c.bytes_read,
        "bytes_written": c.bytes_written,
        "bound": match c.bound { Bound::Memory => "memory", Bound::Compute => "compute" },
        "operands": c.operands.iter().map(|o| json!({
            "index": o.index,
            "name": o.name,
            "bytes": o.bytes,
            "coalesced": o.coalesced,
            "utilization": o.utilization,
        })).collect::<Vec<_>>(),
    })
}
