//! `hlo-lsp fusion FILE ...`: XLA's GPU fusion rules ([`crate::fusible`]) and its
//! performance model together ([`crate::fusible::explain`]).
//!
//! * `--producer P [--consumer C]...`: may P be fused into C (all of P's users when no
//!   consumer is named), in XLA's words, and the time it would save;
//! * `--instruction I [--with J]`: every rule fact of I (of the pair I, J);
//! * `--simulate`: priority fusion's producer selection with the cost model.
//!
//! Names may be written `COMPUTATION/NAME`. Exit 0 with an answer, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::gpu;
use crate::cost::Duration;
use crate::fusible::explain::{self, Fact, FusionQuery, Step, StepKind};
use crate::fusible::process_dump::{self, ProcessDump, Verdict};
use crate::fusible::run::{self, Fused, StepSummary};
use crate::fusible::{FusionDecision, Hlo, Instr};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// The producer to fuse.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["instruction", "simulate"])]
    pub producer: Option<String>,
    /// A consumer to fuse the producer into (repeatable); default: all its users. A
    /// consumer may read the producer through a get-tuple-element of its tuple.
    #[arg(long, value_name = "NAME", requires = "producer")]
    pub consumer: Vec<String>,
    /// With --producer P --consumer C: multi-output fusion (P stays an output of the
    /// fused kernel), XLA's multi-output fusion rules and
    /// `EstimateRunTimesForMultiOutputFusion`.
    #[arg(long, requires = "consumer")]
    pub multi_output: bool,
    /// Print the rule facts of this instruction.
    #[arg(long, value_name = "NAME", conflicts_with = "simulate")]
    pub instruction: Option<String>,
    /// With --instruction: the second instruction of pair facts (consumer or sibling).
    #[arg(long = "with", value_name = "NAME", requires = "instruction")]
    pub with: Option<String>,
    /// Run priority fusion's producer selection with the cost model.
    #[arg(long)]
    pub simulate: bool,
    /// With --simulate: write the fused module to FILE (the output then shows a
    /// before/after summary instead of the module).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "simulate"
    )]
    pub output: Option<PathBuf>,
    /// The GPU: a preset (a6000, a100, h100, b200) or a target config text proto;
    /// default: a `*.gpu_target_config.pbtxt` beside FILE, else a6000.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn pretty(v: &Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

fn micros(d: Option<Duration>) -> Value {
    match d {
        Some(d) if !d.is_infinite() => json!(d.as_micros_f64()),
        _ => Value::Null,
    }
}

fn run_inner(args: &Args) -> Result<String, String> {
    if args.producer.is_none() && args.instruction.is_none() && !args.simulate {
        return Err("fusion: give --producer P, --instruction I or --simulate".into());
    }
    let chosen = gpu::device(args.device.as_deref(), &args.file)?;
    let (text, file) = gpu::parse(&args.file)?;
    let module = &file.modules[0];
    let h = Hlo::new(module);
    if gpu::is_cpu_dump(&args.file, module) && !chosen.explicit {
        eprintln!("{}", gpu::cpu_note(&args.file, gpu::COST_MODEL));
        return Ok(if args.json {
            pretty(&json!({ "backend": "cpu" }))
        } else {
            String::new()
        });
    }
    let device = &chosen.device;
    if let Some(producer) = &args.producer {
        let producer = gpu::find(&h, producer)?;
        let consumers = args
            .consumer
            .iter()
            .map(|c| gpu::find(&h, c))
            .collect::<Result<Vec<_>, _>>()?;
        for &c in &consumers {
            if !explain::reads(&h, c, producer) {
                return Err(format!(
                    "%{} does not read %{} (its users: {})",
                    h.name(c),
                    h.name(producer),
                    names(&h, &h.users(producer))
                ));
            }
        }
        let q = if args.multi_output {
            let [consumer] = consumers[..] else {
                return Err("fusion --multi-output: give exactly one --consumer".into());
            };
            explain::query_multi_output(&h, producer, consumer, device)
        } else {
            let named = (!consumers.is_empty()).then_some(consumers.as_slice());
            let q = explain::query(&h, producer, named, device);
            if let Some(v) = xla_verdict(&args.file, h.name(producer))? {
                return Ok(dumped(&h, &q, &v, args.json));
            }
            q
        };
        return Ok(if args.json {
            pretty(&query_json(&h, &q))
        } else {
            query_text(&h, &q)
        });
    }
    if let Some(i) = &args.instruction {
        let i = gpu::find(&h, i)?;
        let with = args.with.as_deref().map(|j| gpu::find(&h, j)).transpose()?;
        let facts = explain::facts(&h, i, with, device);
        return Ok(if args.json {
            let mut v = serde_json::Map::new();
            v.insert("instruction".into(), json!(h.name(i)));
            if let Some(j) = with {
                v.insert("with".into(), json!(h.name(j)));
            }
            for (k, f) in &facts {
                v.insert((*k).into(), fact_json(f));
            }
            pretty(&Value::Object(v))
        } else {
            let mut s = format!(
                "%{}{} on {}\n",
                h.name(i),
                with.map(|j| format!(" with %{}", h.name(j)))
                    .unwrap_or_default(),
                device.name
            );
            for (k, f) in &facts {
                s.push_str(&format!("  {k}: {}\n", fact_text(f)));
            }
            s
        });
    }
    let steps = explain::simulate(&h, device);
    // The first round's fusions are in `steps`; the run goes on from there.
    let run = run::run(&text, device);
    let first_round = steps.iter().filter(|s| s.kind == StepKind::Fusion).count();
    let later = run.fusions.get(first_round..).unwrap_or_default();
    let before = run::summary(&text, device);
    let after = run::summary(&run.module, device);
    if let Some(out) = &args.output {
        std::fs::write(out, &run.module)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    const NOTE: &str = "priorities are those of the first round; later rounds list the \
                        fusions they make, each round re-reading the fused module";
    Ok(if args.json {
        let mut all: Vec<Value> = steps.iter().map(|s| step_json(&h, s)).collect();
        all.extend(later.iter().map(fused_json));
        pretty(&json!({
            "device": device.name,
            "steps": all,
            "module": run.module,
            "output": args.output.as_ref().map(|p| p.display().to_string()),
            "before": summary_json(before.as_ref()),
            "after": summary_json(after.as_ref()),
            "stopped": run.stopped,
            "note": NOTE,
        }))
    } else {
        let mut s = format!("priority fusion on {}:\n", device.name);
        for step in &steps {
            s.push_str(&format!("  {}\n", step_text(&h, step)));
        }
        for f in later {
            s.push_str(&format!("  {}\n", fused_text(f)));
        }
        if let Some(why) = &run.stopped {
            s.push_str(&format!("({why})\n"));
        }
        s.push_str(&format!("({NOTE})\n\n"));
        s.push_str(&format!("fusions made: {}\n", run.fusions.len()));
        s.push_str(&format!("  before: {}\n", summary_text(before.as_ref())));
        s.push_str(&format!("  after:  {}\n", summary_text(after.as_ref())));
        match &args.output {
            Some(out) => s.push_str(&format!("fused module written to {}\n", out.display())),
            None => s.push_str(&format!(
                "fused module: {} lines (write it with -o FILE)\n",
                run.module.lines().count()
            )),
        }
        s
    })
}

fn summary_json(s: Option<&StepSummary>) -> Value {
    match s {
        Some(s) => json!({
            "kernels": s.kernels,
            "launches": s.launches,
            "total_us": s.total.as_micros_f64(),
            "lower_bound": s.lower_bound,
        }),
        None => Value::Null,
    }
}

/// `12 kernels (800 launches per step), estimated step 1.23 ms`.
fn summary_text(s: Option<&StepSummary>) -> String {
    match s {
        Some(s) => format!(
            "{} kernels ({} launches per step), estimated step {}{}",
            s.kernels,
            s.launches,
            if s.lower_bound { "≥ " } else { "" },
            s.total
        ),
        None => "no ENTRY computation".into(),
    }
}

fn fused_json(f: &Fused) -> Value {
    json!({
        "kind": "fusion",
        "producer": f.producer,
        "consumer": f.consumer,
        "consumers": [f.consumer],
        "reason": Value::Null,
        "time_unfused_us": f.time_unfused_us,
        "time_fused_us": f.time_fused_us,
    })
}

fn fused_text(f: &Fused) -> String {
    let times = match (f.time_unfused_us, f.time_fused_us) {
        (Some(u), Some(t)) => format!(" ({u:.2} µs unfused, {t:.2} µs fused)"),
        _ => String::new(),
    };
    format!("fusion: %{} into %{}{times}", f.producer, f.consumer)
}

fn names(h: &Hlo, is: &[Instr]) -> String {
    if is.is_empty() {
        return "none".into();
    }
    is.iter()
        .map(|&i| format!("%{}", h.name(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn reason(d: &FusionDecision) -> Value {
    match d.is_allowed() {
        true => Value::Null,
        false => json!(d.message()),
    }
}

/// XLA's own verdict on `producer` from the priority-fusion dump beside `file`.
fn xla_verdict(file: &std::path::Path, producer: &str) -> Result<Option<Verdict>, String> {
    let Some(path) = process_dump::beside(file) else {
        return Ok(None);
    };
    let text = super::read_text(&path)?;
    let dump = ProcessDump::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(dump.verdict(producer))
}

/// A fusion query answered by XLA's dump: its reason and times, labelled as XLA's.
fn dumped(h: &Hlo, q: &FusionQuery, v: &Verdict, json: bool) -> String {
    let fusible = v.fused || (v.reason.is_none() && v.us_unfused.is_some());
    if json {
        return pretty(&json!({
            "producer": h.name(q.producer),
            "consumers": q.consumers.iter().map(|&c| h.name(c)).collect::<Vec<_>>(),
            "fusible": fusible,
            "reason": v.reason,
            "time_unfused_us": v.us_unfused,
            "time_fused_us": v.us_fused,
            "source": "xla-dump",
        }));
    }
    let producer = h.name(q.producer);
    let mut s = match &v.reason {
        Some(r) => format!("%{producer} is not fused (XLA's fusion dump): {r}"),
        None if v.fused => format!(
            "%{producer} was fused into {} (XLA's fusion dump)",
            names(h, &q.consumers)
        ),
        None => format!("%{producer} was not fused (XLA's fusion dump)"),
    };
    if let (Some(u), Some(f)) = (v.us_unfused, v.us_fused) {
        s.push_str(&format!(
            " · XLA's times: {u:.2} µs unfused, {f:.2} µs fused"
        ));
    }
    s.push('\n');
    s
}

/// The times are the performance model's also for a fusion the rules refuse (what
/// XLA's `EstimateRunTimes` would answer); `saved_us` is null then.
fn query_json(h: &Hlo, q: &FusionQuery) -> Value {
    let per_consumer: Vec<Value> = q
        .per_consumer
        .iter()
        .map(|c| {
            json!({
                "consumer": h.name(c.consumer),
                "fusible": c.decision.is_allowed(),
                "reason": reason(&c.decision),
                "time_unfused_us": micros(Some(c.times.time_unfused)),
                "time_fused_us": micros(Some(c.times.time_fused)),
                "saved_us": c.saved_micros(),
            })
        })
        .collect();
    json!({
        "producer": h.name(q.producer),
        "consumers": q.consumers.iter().map(|&c| h.name(c)).collect::<Vec<_>>(),
        "multi_output": q.multi_output,
        "fusible": q.decision.is_allowed(),
        "reason": reason(&q.decision),
        "time_unfused_us": micros(Some(q.times.time_unfused)),
        "time_fused_us": micros(Some(q.times.time_fused)),
        "saved_us": q.saved_micros(),
        "per_consumer": per_consumer,
        "source": "rules",
    })
}

/// `%x may be fused into %y · fusing would save 3.20 µs (...)`, then one line per
/// consumer with its own times. A fusion the rules refuse gets its reason and no
/// saving: it cannot happen.
fn query_text(h: &Hlo, q: &FusionQuery) -> String {
    let producer = h.name(q.producer);
    let how = if q.multi_output {
        " as a multi-output fusion"
    } else {
        ""
    };
    let mut s = if q.decision.is_allowed() {
        format!(
            "%{producer} may be fused into {}{how} (XLA's fusion rules allow it)",
            names(h, &q.consumers)
        )
    } else {
        let with = q
            .refused_by
            .map(|c| format!(" with %{}", h.name(c)))
            .unwrap_or_default();
        format!(
            "%{producer} is not fused{with}{how}: {}",
            q.decision.message()
        )
    };
    if q.decision.is_allowed() {
        s.push_str(&saving(q.times.time_unfused, q.times.time_fused));
    }
    s.push('\n');
    if q.per_consumer.len() > 1 || !q.decision.is_allowed() {
        for c in &q.per_consumer {
            let name = h.name(c.consumer);
            if c.decision.is_allowed() {
                s.push_str(&format!(
                    "  into %{name} alone: {}\n",
                    saving(c.times.time_unfused, c.times.time_fused).trim_start_matches(" · ")
                ));
            } else {
                s.push_str(&format!(
                    "  %{name}: not fused: {} · {} unfused\n",
                    c.decision.message(),
                    c.times.time_unfused
                ));
            }
        }
    }
    s
}

/// ` · fusing would save X (U unfused, F fused)`, or what it would cost.
fn saving(unfused: Duration, fused: Duration) -> String {
    if unfused.is_infinite() || fused.is_infinite() {
        return " · no time estimate: XLA's model cannot run one of the kernels".into();
    }
    if unfused >= fused {
        format!(
            " · fusing would save {} ({unfused} unfused, {fused} fused)",
            unfused - fused
        )
    } else {
        format!(
            " · fusing would cost {} more ({unfused} unfused, {fused} fused)",
            fused - unfused
        )
    }
}

fn fact_json(f: &Fact) -> Value {
    match f {
        Fact::Bool(b) => json!(b),
        Fact::Int(n) => json!(n),
        Fact::Kind(k) => json!(k),
        Fact::Decision(d) => json!({ "ok": d.is_allowed(), "reason": d.message() }),
    }
}

fn fact_text(f: &Fact) -> String {
    match f {
        Fact::Bool(b) => b.to_string(),
        Fact::Int(n) => n.to_string(),
        Fact::Kind(k) => k.to_string(),
        Fact::Decision(d) if d.is_allowed() => "ok".into(),
        Fact::Decision(d) => format!("no: {}", d.message()),
    }
}

fn step_json(h: &Hlo, s: &Step) -> Value {
    let consumer = match s.kind {
        StepKind::Fusion => s.consumers.first().map(|&c| json!(h.name(c))),
        _ => None,
    };
    json!({
        "kind": s.kind.name(),
        "producer": h.name(s.producer),
        "consumer": consumer.unwrap_or(Value::Null),
        "consumers": s.consumers.iter().map(|&c| h.name(c)).collect::<Vec<_>>(),
        "reason": s.reason,
        "time_unfused_us": micros(s.time_unfused),
        "time_fused_us": micros(s.time_fused),
    })
}

fn step_text(h: &Hlo, s: &Step) -> String {
    let p = h.name(s.producer);
    let times = match (s.time_unfused, s.time_fused) {
        (Some(u), Some(f)) => format!(" ({u} unfused, {f} fused)"),
        _ => String::new(),
    };
    match s.kind {
        StepKind::Fusion => format!("fusion: %{p} into {}{times}", names(h, &s.consumers)),
        StepKind::ProducerIneligible => format!(
            "producer_ineligible: %{p}: {}",
            s.reason.as_deref().unwrap_or_default()
        ),
        StepKind::UpdatePriority => match &s.reason {
            Some(r) => format!("update_priority: %{p}: {r}"),
            None => format!(
                "update_priority: %{p} into {}{times}",
                names(h, &s.consumers)
            ),
        },
    }
}
