//! `hlo-lsp profile DUMP PROFILE [--json] [--top N] [--computation C] [--device NAME|FILE]`:
//! each instruction's measured time from an XProf profile ([`crate::profile`]), its
//! share of the step and the cumulative share, its count per execution, and with
//! `--device` the GPU cost model's estimate and the ratio measured/estimated.
//! DUMP is an after-optimizations HLO dump, or the dump folder (the module the profile
//! measured is picked); PROFILE an XProf logdir, a run folder, a `.xplane.pb` or a
//! `.trace.json[.gz]`. Exit 0 with a report, 2 on bad input.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};

use super::gpu;
use crate::dump::naming::DumpName;
use crate::profile::report::{self, Estimates, Row};
use crate::profile::{self, ModuleProfile, Profile, Progress};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The after-optimizations HLO dump (`module_NNNN.jit_f.cpu_after_optimizations.txt`),
    /// or the dump folder.
    pub dump: PathBuf,
    /// An XProf logdir (its newest `plugins/profile/<run>/`), a run folder, a
    /// `*.xplane.pb` or a `*.trace.json[.gz]`.
    pub profile: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Only the N instructions of the most time.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Only the instructions of computation C (the step and its shares stay whole).
    #[arg(long, value_name = "C")]
    pub computation: Option<String>,
    /// Beside each time, XLA's GPU cost model's estimate on this GPU (a preset: a6000,
    /// a100, h100, b200, or a GpuDeviceInfoProto / GpuTargetConfig text proto) and the
    /// ratio measured/estimated.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

/// `measured` joined to `module` of the file `path` (the dump's module id is read
/// from its name when the file holds one module).
pub(super) fn join_to(
    measured: &Profile,
    module: &crate::model::Module,
    path: &Path,
    modules_in_file: usize,
) -> Result<ModuleProfile, String> {
    let module_id = (modules_in_file == 1)
        .then(|| DumpName::parse(path).map(|n| n.module_id))
        .flatten();
    Ok(profile::join(measured, module, module_id)?)
}

fn run_inner(args: &Args) -> Result<String, String> {
    let measured = read_profile(&args.profile)?;
    let dump = if args.dump.is_dir() {
        let chosen = profile::join::dump_for(&args.dump, &measured)?;
        eprintln!("hlo-lsp: note: reading {}", chosen.display());
        chosen
    } else {
        args.dump.clone()
    };
    let (_, file) = gpu::parse(&dump)?;
    let module = &file.modules[0];
    let module_id = DumpName::parse(&dump).map(|n| n.module_id);
    let joined = profile::join(&measured, module, module_id)?;
    if let Some(c) = &args.computation {
        if module.computation_by_name(c).is_none() {
            return Err(format!("{}: no computation named {c}", dump.display()));
        }
    }
    let chosen = match &args.device {
        Some(spec) => Some(gpu::device(Some(spec), &dump)?.device),
        None => None,
    };
    let estimates = chosen.as_ref().map(|d| Estimates::of(module, d));
    let mut rows = report::rows(&joined, args.computation.as_deref(), estimates.as_ref());
    rows.truncate(args.top.unwrap_or(rows.len()));
    let cpu_as_gpu = chosen
        .as_ref()
        .filter(|_| gpu::is_cpu_dump(&dump, module))
        .map(|d| d.name.clone());
    Ok(if args.json {
        let mut v = json!({
            "module": joined.module,
            "program_id": joined.program_id,
            "executions": joined.executions,
            "executions_inferred": joined.executions_inferred,
            "step_us": joined.step_us,
            "instructions": rows.iter().map(row_json).collect::<Vec<_>>(),
            "unmatched": joined.unmatched.iter().map(|u| json!({
                "name": u.name, "module": u.module, "events": u.events,
            })).collect::<Vec<_>>(),
            "never_ran": joined.never_ran.iter().map(|n| json!({
                "name": n.name, "computation": n.computation_name,
            })).collect::<Vec<_>>(),
            "dump": dump.display().to_string(),
            "profile": source_json(&measured),
        });
        if let Some(d) = &chosen {
            v["device"] = gpu::device_json(d);
        }
        if let Some(name) = cpu_as_gpu {
            v["as_if_compiled_for"] = json!(name);
        }
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    } else {
        text(
            &joined,
            &measured,
            &rows,
            &dump,
            chosen.is_some(),
            cpu_as_gpu,
        )
    })
}

/// Reads the profile, showing progress on a terminal for a large file (also for
/// `cost --profile` and `graph --profile`).
pub(super) fn read_profile(path: &Path) -> Result<Profile, String> {
    const SHOWN_FROM: u64 = 64 << 20;
    let source = profile::locate::locate(path)?;
    if let Some(note) = &source.note {
        eprintln!("hlo-lsp: note: {}: {note}", source.file.display());
    }
    let show = std::io::stderr().is_terminal();
    let mut last = 0u64;
    let mut progress = |p: Progress| {
        if show && p.total >= SHOWN_FROM {
            let tenth = p.done * 10 / p.total.max(1);
            if tenth > last {
                last = tenth;
                eprint!("\rhlo-lsp: reading the profile: {}%", tenth * 10);
            }
        }
        true
    };
    let read = profile::read_source(source, &mut progress);
    if last > 0 {
        eprintln!();
    }
    Ok(read?)
}

fn row_json(r: &Row) -> Value {
    let m = r.measured;
    json!({
        "name": m.name,
        "computation": m.computation_name,
        "measured_us": m.mean_us,
        "min_us": m.min_us,
        "max_us": m.max_us,
        "self_us": m.self_us,
        "count": m.count,
        "percent": r.percent,
        "cumulative_percent": r.cumulative_percent,
        "estimate_us": r.estimate_us,
        "ratio": r.ratio,
    })
}

fn source_json(p: &Profile) -> Value {
    json!({
        "file": p.source.file.display().to_string(),
        "format": p.source.format.as_str(),
        "run": p.source.run,
        "measured_on": p.tier.map(|t| t.describe()),
        "not_counted_events": p.not_counted,
        "disordered_events": p.disorder,
    })
}

fn text(
    joined: &ModuleProfile,
    measured: &Profile,
    rows: &[Row],
    dump: &Path,
    estimates: bool,
    cpu_as_gpu: Option<String>,
) -> String {
    let mut out = format!(
        "{}{}: {} execution{}{}, step {} (op time of one execution)\n",
        joined.module,
        joined
            .program_id
            .map(|p| format!(" (program {p})"))
            .unwrap_or_default(),
        joined.executions,
        if joined.executions == 1 { "" } else { "s" },
        if joined.executions_inferred {
            " (no run_id in the profile: counted by the entry's instructions)"
        } else {
            ""
        },
        report::time(joined.step_us),
    );
    out.push_str(&format!(
        "dump: {}\nprofile: {}{} ({})\n",
        dump.display(),
        measured.source.file.display(),
        measured
            .source
            .run
            .as_ref()
            .map(|r| format!(", run {r}"))
            .unwrap_or_default(),
        measured.tier.map_or("no op event", |t| t.describe()),
    ));
    if let Some(gpu) = cpu_as_gpu {
        out.push_str(&format!(
            "estimates: a CPU dump, as if compiled for {gpu}\n"
        ));
    }
    out.push_str(&format!(
        "{:>11}  {:>6}  {:>6}  {:>5}{}  instruction (computation)\n",
        "measured",
        "step",
        "cumul.",
        "count",
        if estimates {
            format!("  {:>11}  {:>7}", "estimate", "ratio")
        } else {
            String::new()
        },
    ));
    for r in rows {
        let m = r.measured;
        let estimate = if estimates {
            format!(
                "  {:>11}  {:>7}",
                r.estimate_us
                    .map(report::time)
                    .unwrap_or_else(|| "-".into()),
                r.ratio.map(report::ratio).unwrap_or_else(|| "-".into()),
            )
        } else {
            String::new()
        };
        let own = if m.self_us + 1e-9 < m.mean_us {
            format!(", {} its own (the rest inside it)", report::time(m.self_us))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:>11}  {:>6}  {:>6}  {:>5}{estimate}  {} ({}){own}\n",
            report::time(m.mean_us),
            report::percent(r.percent),
            report::percent(r.cumulative_percent),
            report::count(m.count),
            m.name,
            m.computation_name,
        ));
    }
    let listed = rows.len();
    let all = joined.instructions.len();
    if listed < all {
        out.push_str(&format!(
            "({} more measured instruction(s) not shown)\n",
            all - listed
        ));
    }
    if !joined.never_ran.is_empty() {
        let names: Vec<String> = joined
            .never_ran
            .iter()
            .map(|n| format!("{} ({})", n.name, n.computation_name))
            .collect();
        out.push_str(&format!("never ran (no event): {}\n", names.join(", ")));
    }
    if !joined.unmatched.is_empty() {
        let events: u64 = joined.unmatched.iter().map(|u| u.events).sum();
        let names: Vec<String> = joined
            .unmatched
            .iter()
            .take(10)
            .map(|u| format!("{} ({}, {} events)", u.name, u.module, u.events))
            .collect();
        out.push_str(&format!(
            "not in this dump: {} op(s), {events} event(s): {}{}\n",
            joined.unmatched.len(),
            names.join(", "),
            if joined.unmatched.len() > 10 {
                ", ..."
            } else {
                ""
            }
        ));
    }
    if measured.not_counted > 0 {
        out.push_str(&format!(
            "not counted: {} op event(s) of the host (the device's kernels are measured)\n",
            measured.not_counted
        ));
    }
    if measured.disorder > 0 {
        out.push_str(&format!(
            "note: {} event(s) out of time order on their thread: taken as top-level\n",
            measured.disorder
        ));
    }
    out
}
