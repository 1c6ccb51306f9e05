//! `hlo-lsp cost FILE [--device NAME|FILE] [--top N] [--computation C] [--json]`: one
//! step of each module, every kernel ranked by the time it takes per step
//! ([`crate::cost::step`]): while bodies weighted by their trip counts, launches
//! counted, identical kernels grouped, what no model covers listed apart and kept out
//! of the total. A CPU dump is judged only when `--device` asks for a GPU ("as if
//! compiled for ..."). With `--profile`, each kernel has beside its estimate the time
//! an XProf profile measured ([`crate::profile`]: the summed durations of its events
//! per execution, as the estimate per step counts every run) and the ratio
//! measured/estimated. Exit 0 with a report, 2 on bad input (a syntax error included).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::gpu;
use super::input;
use crate::cost::collective::SolConfig;
use crate::cost::report;
use crate::cost::step::{self, EmittedModel, Step, StepKernel, StepOptions, TileChoice};
use crate::cost::{Bound, Duration};
use crate::device::Device;
use crate::model::{Module, Opcode};
use crate::profile::{report as measured, ModuleProfile, Profile};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file (an XLA dump).
    pub file: PathBuf,
    /// The GPU: a preset (a6000, a100, h100, b200) or a GpuDeviceInfoProto /
    /// GpuTargetConfig text proto; default: a `*.gpu_target_config.pbtxt` beside FILE,
    /// else a6000.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Only the N costliest rows (the total still counts every kernel).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Only the kernels of computation C (a while body, a branch, ENTRY's name).
    #[arg(long, value_name = "C")]
    pub computation: Option<String>,
    /// XLA's `xla_gpu_analytical_latency_estimator_options` for the collectives' SoL
    /// model (`nic_speed_gbps=25,gpus_per_node=8,...`: the keys XLA's
    /// `SolGPUCostModel::GetConfig` reads).
    #[arg(long, value_name = "STRING")]
    pub latency_options: Option<String>,
    /// XLA's model of the kernels its emitters generate: `gpu` (GpuPerformanceModel,
    /// flops and bytes from its cost analysis; the default) or `indexing`
    /// (GpuPerformanceModelWithIndexingAnalysis: counted from the indexing maps).
    #[arg(long, value_name = "gpu|indexing", default_value = "gpu")]
    pub model: ModelArg,
    /// Cost fusion NAME as a tiled (Triton) fusion with these output tiles, `/`
    /// between outputs, and WARPS per block (default: what XLA's GetNumWarps
    /// gives): `--tiles fusion=16,128` or `--tiles fusion=1,4/16:8`; `--tiles NAME`
    /// alone: the best tiling XLA's search finds (repeatable).
    #[arg(long, value_name = "NAME[=SIZES[/SIZES][:WARPS]]")]
    pub tiles: Vec<String>,
    /// Only the module named NAME (or at 0-based place N) of a file with several.
    #[arg(long, value_name = "NAME|N")]
    pub module: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Beside each estimate, the time this profile measured: an XProf logdir (its
    /// newest `plugins/profile/<run>/`), a run folder, a `*.xplane.pb` or a
    /// `*.trace.json[.gz]`.
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
}

/// `--model`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModelArg {
    Gpu,
    Indexing,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

/// The step's options from `--latency-options`, `--model` and `--tiles`.
fn step_options(args: &Args) -> Result<StepOptions, String> {
    let latency = match &args.latency_options {
        Some(options) => {
            SolConfig::parse(options).map_err(|e| format!("--latency-options: {e}"))?
        }
        None => SolConfig::default(),
    };
    let tiles = args
        .tiles
        .iter()
        .map(|spec| TileChoice::parse(spec).map_err(|e| format!("--tiles {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(StepOptions {
        latency,
        emitted: match args.model {
            ModelArg::Gpu => EmittedModel::CostAnalysis,
            ModelArg::Indexing => EmittedModel::Indexing,
        },
        tiles,
    })
}

/// A duration in microseconds, `null` when infinite.
fn micros(d: Duration) -> Value {
    match d.is_infinite() {
        true => Value::Null,
        false => json!(d.as_micros_f64()),
    }
}

/// The modules of the file the arguments ask for, with their labels.
fn chosen_modules<'f>(
    args: &Args,
    modules: &'f [Module],
) -> Result<Vec<(String, &'f Module)>, String> {
    if let Some(wanted) = &args.module {
        let m = input::find_module(modules, wanted)
            .ok_or_else(|| format!("{}: no module {wanted}", args.file.display()))?;
        let index = modules.iter().position(|x| std::ptr::eq(x, m)).unwrap_or(0);
        return Ok(vec![(input::module_label(m, index), m)]);
    }
    Ok(modules
        .iter()
        .enumerate()
        .map(|(k, m)| (input::module_label(m, k), m))
        .collect())
}

fn run_inner(args: &Args) -> Result<String, String> {
    let chosen = gpu::device(args.device.as_deref(), &args.file)?;
    let options = step_options(args)?;
    let (_, file) = gpu::parse(&args.file)?;
    let modules = chosen_modules(args, &file.modules)?;
    for choice in &options.tiles {
        let is_fusion = |m: &Module| {
            m.find_instruction(&choice.fusion)
                .is_some_and(|(c, i)| m.computation(c).instruction(i).opcode == Opcode::Fusion)
        };
        if !modules.iter().any(|(_, m)| is_fusion(m)) {
            return Err(format!("--tiles: no fusion named {}", choice.fusion));
        }
    }
    let device = &chosen.device;
    let profile = match &args.profile {
        Some(path) => Some(Measured::read(
            path,
            &args.file,
            &modules,
            file.modules.len(),
        )?),
        None => None,
    };
    let cpu = gpu::is_cpu_dump(&args.file, modules[0].1);
    if cpu && !chosen.explicit {
        eprintln!("{}", gpu::cpu_note(&args.file, gpu::COST_MODEL));
        if let Some(path) = &args.profile {
            eprintln!(
                "hlo-lsp: note: the measured times alone: hlo-lsp profile {} {}",
                args.file.display(),
                path.display()
            );
        }
        return Ok(if args.json {
            let v = json!({
                "device": Value::Null, "backend": "cpu", "total_us": Value::Null, "kernels": [],
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        } else {
            String::new()
        });
    }
    let mut reports = vec![];
    for (k, (label, module)) in modules.iter().enumerate() {
        let Some(step) = step::step(module, device, &options) else {
            if modules.len() == 1 {
                return Err(format!("{}: no ENTRY computation", args.file.display()));
            }
            continue;
        };
        if let Some(c) = &args.computation {
            if module.computation_by_name(c).is_none() && modules.len() == 1 {
                return Err(format!("{}: no computation named {c}", args.file.display()));
            }
        }
        reports.push(ModuleReport {
            label: label.clone(),
            unfused: is_unfused(module),
            per_device: crate::sharding::per_device(module, Some(&args.file.to_string_lossy())),
            step,
            measured: profile.as_ref().and_then(|p| p.joined[k].clone()),
            source: profile.as_ref().map(|p| p.read.clone()),
        });
    }
    if args.json {
        let mut per_module: Vec<Value> = reports
            .iter()
            .map(|r| module_json(r, args, device, cpu))
            .collect();
        let v = if per_module.len() == 1 {
            per_module.remove(0)
        } else {
            json!({ "device": gpu::device_json(device), "modules": per_module })
        };
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ));
    }
    let mut out = String::new();
    for r in &reports {
        out.push_str(&module_text(r, args, device, cpu, reports.len() > 1));
    }
    Ok(out)
}

/// One module's step, and what the report says around it.
struct ModuleReport {
    label: String,
    unfused: bool,
    /// The devices a partitioned module runs on: its step is one device's.
    per_device: Option<i64>,
    step: Step,
    /// The profile joined to the module (`--profile`, when it measured this one).
    measured: Option<std::sync::Arc<ModuleProfile>>,
    /// The profile read (`--profile`).
    source: Option<std::sync::Arc<Profile>>,
}

/// `--profile`: the profile read, and joined to each module chosen.
struct Measured {
    read: std::sync::Arc<Profile>,
    /// Per chosen module (in order), when the profile measured it.
    joined: Vec<Option<std::sync::Arc<ModuleProfile>>>,
}

impl Measured {
    /// Reads the profile and joins it to each module; an error when it measured
    /// none of them (the first module's reason).
    fn read(
        path: &std::path::Path,
        file: &std::path::Path,
        modules: &[(String, &Module)],
        in_file: usize,
    ) -> Result<Measured, String> {
        let read = super::profile::read_profile(path)?;
        let mut first_error = None;
        let joined: Vec<Option<std::sync::Arc<ModuleProfile>>> = modules
            .iter()
            .map(
                |(_, m)| match super::profile::join_to(&read, m, file, in_file) {
                    Ok(j) => Some(std::sync::Arc::new(j)),
                    Err(e) => {
                        first_error.get_or_insert(e);
                        None
                    }
                },
            )
            .collect();
        if joined.iter().all(Option::is_none) {
            return Err(first_error.unwrap_or_else(|| "no module to join".to_string()));
        }
        Ok(Measured {
            read: std::sync::Arc::new(read),
            joined,
        })
    }
}

/// What the profile measured of a row's kernels, summed (`None`: none measured).
fn measured_us(profile: Option<&ModuleProfile>, row: &[&StepKernel]) -> Option<f64> {
    let profile = profile?;
    let times: Vec<f64> = row
        .iter()
        .filter_map(|k| profile.get(k.computation, k.instruction))
        .map(|m| m.mean_us)
        .collect();
    (!times.is_empty()).then(|| times.iter().sum())
}

/// Measured over estimated, when both are known and the estimate is not zero.
fn ratio(measured_us: Option<f64>, estimate: Option<Duration>) -> Option<f64> {
    let e = estimate.filter(|e| !e.is_infinite())?.as_micros_f64();
    (e > 0.0).then_some(measured_us? / e)
}

/// Whether no computation that launches kernels holds a fusion: a module printed
/// before XLA's fusion passes, where every instruction is costed as its own kernel.
fn is_unfused(module: &Module) -> bool {
    let mut kernels = 0usize;
    for c in module.computations() {
        if !report::launches_kernels(module, c.id) {
            continue;
        }
        for i in &c.model().instructions {
            if i.opcode == Opcode::Fusion {
                return false;
            }
            kernels += usize::from(crate::cost::is_kernel(i));
        }
    }
    kernels > 1
}

const UNFUSED_NOTE: &str = "no instruction of this module is fused (it was printed before XLA's \
     fusion passes): every instruction is costed as its own kernel, where XLA would fuse most \
     of them; `hlo-lsp fusion --simulate` shows what it fuses";

/// The rows of the ranking: kernels with the same estimate grouped, in the order of
/// their time per step.
fn rows<'s>(kernels: &[&'s StepKernel]) -> Vec<Vec<&'s StepKernel>> {
    let mut rows: Vec<Vec<&StepKernel>> = vec![];
    for &k in kernels {
        match rows.iter_mut().find(|r| report::same_estimate(r[0], k)) {
            Some(row) => row.push(k),
            None => rows.push(vec![k]),
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(per_step(row)));
    rows
}

/// The time a row of kernels takes per step, launches included.
fn per_step(row: &[&StepKernel]) -> Duration {
    row.iter()
        .filter_map(|k| k.total())
        .fold(Duration::ZERO, |s, t| s + t)
}

/// The kernels of `r` the arguments select, ranked.
fn selected<'r>(r: &'r ModuleReport, args: &Args) -> Vec<&'r StepKernel> {
    let mut kernels: Vec<&StepKernel> = r
        .step
        .kernels
        .iter()
        .filter(|k| {
            args.computation
                .as_deref()
                .is_none_or(|c| k.computation_name == c.trim_start_matches('%'))
        })
        .collect();
    kernels.sort_by_key(|k| std::cmp::Reverse(k.total().unwrap_or(Duration::ZERO)));
    kernels
}

fn module_text(r: &ModuleReport, args: &Args, device: &Device, cpu: bool, several: bool) -> String {
    let step = &r.step;
    let mut out = String::new();
    let kernels = selected(r, args);
    let (modelled, unmodelled): (Vec<&StepKernel>, Vec<&StepKernel>) =
        kernels.iter().partition(|k| k.estimate.is_ok());
    let _ = write!(
        out,
        "{}{}: {} on {}{}: step {} {}",
        args.file.display(),
        if several {
            format!(" (module {})", r.label)
        } else {
            String::new()
        },
        plural(modelled.len(), "kernel"),
        device.name,
        if cpu {
            format!(" (a CPU dump, as if compiled for {})", device.name)
        } else {
            String::new()
        },
        if step.lower_bound { "≥" } else { "≈" },
        step.total,
    );
    let _ = writeln!(
        out,
        " ({} per step, {} of launch overhead)",
        plural_es(
            usize::try_from(step.launches).unwrap_or(usize::MAX),
            "launch"
        ),
        step.launch_overhead
    );
    if let Some(n) = r.per_device {
        let _ = writeln!(
            out,
            "  per device: XLA partitioned the module over {n} devices, each runs this step on its own shard (the collectives join them)"
        );
    }
    for l in &step.loops {
        let _ = match l.trip_count {
            Some(n) => writeln!(
                out,
                "  loop %{} runs {n} times per entry ({})",
                l.name,
                l.source.name().replace('_', " ")
            ),
            None => writeln!(
                out,
                "  loop %{} runs × ? times: {}; its body is counted once, per iteration",
                l.name,
                l.reason.as_deref().unwrap_or("unknown trip count")
            ),
        };
    }
    if r.unfused {
        let _ = writeln!(out, "note: {UNFUSED_NOTE}");
    }
    if let Some(line) = profile_line(r, &kernels) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(c) = &args.computation {
        let part = modelled
            .iter()
            .filter_map(|k| k.total())
            .fold(Duration::ZERO, |s, t| s + t);
        let _ = writeln!(out, "computation {c}: {part} per step");
    }
    let all_rows = rows(&modelled);
    let shown = args.top.unwrap_or(all_rows.len()).min(all_rows.len());
    let total = step.total.as_secs_f64();
    let mut cumulative = 0.0;
    let profiled = r.source.is_some();
    let measured_profile = r.measured.as_deref();
    if !all_rows.is_empty() {
        let _ = writeln!(
            out,
            "  {:>10}  {:>6}  {:>6}  {:>7}  {}KERNEL",
            "PER STEP",
            "%",
            "CUM%",
            "RUNS",
            if profiled {
                format!("{:>10}  {:>6}  ", "MEASURED", "M/E")
            } else {
                String::new()
            }
        );
    }
    for row in &all_rows[..shown] {
        let first = row[0];
        let per_step = per_step(row);
        let percent = if total > 0.0 {
            per_step.as_secs_f64() / total * 100.0
        } else {
            0.0
        };
        cumulative += percent;
        let count: u64 = row.iter().map(|k| k.count.n).sum();
        let estimate = first.estimate.as_ref().ok();
        let measured_columns = if profiled {
            let m = measured_us(measured_profile, row);
            format!(
                "{:>10}  {:>6}  ",
                m.map(measured::time).unwrap_or_else(|| "-".into()),
                ratio(m, Some(per_step))
                    .map(measured::ratio)
                    .unwrap_or_else(|| "-".into())
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {:>10}  {:>5.1}%  {:>5.1}%  {:>7}  {measured_columns}{}{} ({}, {}){}  {}",
            per_step.to_string(),
            percent,
            cumulative.min(100.0),
            format!("× {count}{}", if first.count.unknown { "+" } else { "" }),
            first.name,
            identical(row),
            first.kind,
            first.computation_name,
            first
                .branch
                .as_deref()
                .map(|b| format!(" [{b}]"))
                .unwrap_or_default(),
            estimate.map(report::estimate_summary).unwrap_or_default(),
        );
        let indent = if profiled { 63 } else { 43 };
        if let Some(e) = estimate {
            if let Some(line) = report::roofline(e, device) {
                for l in line.lines() {
                    let _ = writeln!(out, "{:>indent$}{l}", "");
                }
            }
            if let Some(d) = report::dominant_operand(&e.cost) {
                let _ = writeln!(out, "{:>indent$}dominant read: {}", "", d.replace('`', ""));
            }
        }
    }
    if shown < all_rows.len() {
        let _ = writeln!(out, "  ({} more rows not shown)", all_rows.len() - shown);
    }
    if !unmodelled.is_empty() {
        let _ = writeln!(
            out,
            "not modelled (kept out of the total): {}",
            plural(unmodelled.len(), "kernel")
        );
        for row in rows(&unmodelled) {
            let first = row[0];
            let count: u64 = row.iter().map(|k| k.count.n).sum();
            let measured = match measured_us(measured_profile, &row) {
                Some(us) => format!(" (measured {})", measured::time(us)),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "  × {count}  {}{} ({}, {}){measured}: {}",
                first.name,
                identical(&row),
                first.kind,
                first.computation_name,
                first
                    .estimate
                    .as_ref()
                    .err()
                    .map(String::as_str)
                    .unwrap_or_default()
            );
        }
    }
    out
}

/// ` (+2 identical: dot.10, dot.11)`, ` (+8 identical: reduce.22, reduce.23, …)`.
fn identical(row: &[&StepKernel]) -> String {
    if row.len() < 2 {
        return String::new();
    }
    let mut names: Vec<&str> = row[1..].iter().take(2).map(|k| k.name.as_str()).collect();
    if row.len() > 3 {
        names.push("…");
    }
    format!(" (+{} identical: {})", row.len() - 1, names.join(", "))
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn plural_es(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "es" })
}

fn module_json(r: &ModuleReport, args: &Args, device: &Device, cpu: bool) -> Value {
    let step = &r.step;
    let total = step.total.as_secs_f64();
    let kernels = selected(r, args);
    let (modelled, unmodelled): (Vec<&StepKernel>, Vec<&StepKernel>) =
        kernels.iter().partition(|k| k.estimate.is_ok());
    let listed: Vec<Value> = modelled
        .iter()
        .chain(&unmodelled)
        .take(args.top.unwrap_or(usize::MAX))
        .map(|k| {
            let mut v = kernel_json(k, total);
            if r.source.is_some() {
                merge(&mut v, kernel_measured_json(r.measured.as_deref(), k));
            }
            v
        })
        .collect();
    let mut v = json!({
        "module": r.label,
        "device": gpu::device_json(device),
        "total_us": micros(step.total),
        "total_is_lower_bound": step.lower_bound,
        "launch_overhead_us": micros(step.launch_overhead),
        "unfused": r.unfused,
        "per_device_of": r.per_device,
        "loops": step.loops.iter().map(|l| json!({
            "name": l.name,
            "trip_count": l.trip_count,
            "source": l.source.name(),
            "reason": l.reason,
        })).collect::<Vec<_>>(),
        "kernels": listed,
    });
    if cpu {
        v["backend"] = json!("cpu");
        v["as_if_compiled_for"] = json!(device.name);
    }
    if let Some(read) = &r.source {
        v["profile"] = profile_json(read, r.measured.as_deref(), &kernels);
    }
    v
}

/// A kernel's `measured_us` (per execution, every run summed), `measured_count`
/// (its events per execution) and `ratio` (measured over `per_step_us`); null where
/// the profile has no event of it.
fn kernel_measured_json(profile: Option<&ModuleProfile>, k: &StepKernel) -> Value {
    let m = profile.and_then(|p| p.get(k.computation, k.instruction));
    let us = m.map(|m| m.mean_us);
    json!({
        "measured_us": us,
        "measured_count": m.map(|m| m.count),
        "ratio": ratio(us, k.total()),
    })
}

/// The module's `profile`: what was read and what it says of the step.
fn profile_json(read: &Profile, joined: Option<&ModuleProfile>, kernels: &[&StepKernel]) -> Value {
    let measured_kernels = joined.map_or(0, |p| {
        kernels
            .iter()
            .filter(|k| p.get(k.computation, k.instruction).is_some())
            .count()
    });
    json!({
        "file": read.source.file.display().to_string(),
        "format": read.source.format.as_str(),
        "run": read.source.run,
        "module": joined.map(|p| p.module.clone()),
        "program_id": joined.and_then(|p| p.program_id),
        "executions": joined.map(|p| p.executions),
        "step_us": joined.map(|p| p.step_us),
        "measured_kernels": measured_kernels,
    })
}

/// `measured: jit_f (program 6), 5 executions, step 1.20 ms; 12 of 14 kernels
/// measured (profile .../vm.xplane.pb)`, with `--profile`.
fn profile_line(r: &ModuleReport, kernels: &[&StepKernel]) -> Option<String> {
    let read = r.source.as_ref()?;
    let file = read.source.file.display();
    let Some(p) = r.measured.as_deref() else {
        return Some(format!(
            "measured: nothing of this module ({})",
            crate::profile::join::holdings(read)
        ));
    };
    let count = kernels
        .iter()
        .filter(|k| p.get(k.computation, k.instruction).is_some())
        .count();
    Some(format!(
        "measured: {}{}, {} execution{}, step {} (op time); {count} of {} kernels measured (profile {file})",
        p.module,
        p.program_id
            .map(|id| format!(" (program {id})"))
            .unwrap_or_default(),
        p.executions,
        if p.executions == 1 { "" } else { "s" },
        measured::time(p.step_us),
        kernels.len(),
    ))
}

fn kernel_json(k: &StepKernel, total: f64) -> Value {
    let per_step = k.total();
    let mut v = json!({
        "name": k.name,
        "computation": k.computation_name,
        "kind": k.kind,
        "count": k.count.n,
        "count_is_lower_bound": k.count.unknown,
        "branch": k.branch,
        "modelled": k.estimate.is_ok(),
        "per_step_us": per_step.map(micros),
        "percent": per_step.map(|t| if total > 0.0 { t.as_secs_f64() / total * 100.0 } else { 0.0 }),
    });
    match &k.estimate {
        Ok(e) => {
            let c = &e.cost;
            let fields = json!({
                "model": e.model.name(),
                "exec_time_us": micros(c.exec_time),
                "compute_time_us": micros(c.compute_time),
                "read_time_us": micros(c.read_time),
                "write_time_us": micros(c.write_time),
                "flops": c.flops,
                "bytes_read": c.bytes_read,
                "bytes_written": c.bytes_written,
                "bound": match c.bound { Bound::Memory => "memory", Bound::Compute => "compute" },
                "blocks": c.launch.num_blocks,
                "threads_per_block": c.launch.threads_per_block,
                "tiles": e.tiles.as_ref().map(|t| json!({
                    "output_tile_sizes": t.output_tile_sizes,
                    "num_warps": t.num_warps,
                    "refused": e.tiles_refused,
                })),
                "operands": c.operands.iter().map(|o| json!({
                    "index": o.index,
                    "name": o.name,
                    "bytes": o.bytes,
                    "coalesced": o.coalesced,
                    "utilization": o.utilization,
                })).collect::<Vec<_>>(),
            });
            merge(&mut v, fields);
        }
        Err(reason) => merge(
            &mut v,
            json!({ "model": Value::Null, "exec_time_us": Value::Null, "reason": reason }),
        ),
    }
    v
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), from) {
        a.extend(b);
    }
}
