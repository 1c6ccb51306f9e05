//! `hlo-lsp memory FILE [--json] [--top N] [--estimate] [--svg OUT [--computation C]]`:
//! the four totals of
//! `memory_analysis()`, the allocations, the peak and the buffers live at it, read
//! from XLA's buffer assignment beside an after-optimizations dump, or estimated from
//! the module text when it is not there. Every output says which. What is live at the
//! peak is also given grouped by the line of the user's program that made it.
//! `--svg OUT` also writes the timeline of ENTRY (or of computation C) as an SVG
//! ([`crate::memory::timeline`]): live ranges over the schedule, the peak marked.
//! On StableHLO, the arguments and outputs of `@main`'s signature ([`stablehlo`]).
//! Exit 0 with a report, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::memory::source::{by_source_line, group_lines, source_line};
use crate::memory::{self, human_bytes, timeline, Report};
use crate::model::stack_frames::StackFrameIndex;
use crate::model::Document;
use crate::syntax::ChunkKind;

pub mod stablehlo;

/// Buffers at the peak listed when `--top` is not given.
const DEFAULT_TOP: usize = 10;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An after-optimizations HLO dump; its `*-buffer-assignment.txt` and
    /// `*-live-range.txt` siblings are read when present.
    pub file: PathBuf,
    /// Only the N largest buffers live at the peak (default 10).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Estimate from the module text even when XLA's files are beside it.
    #[arg(long)]
    pub estimate: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the memory timeline (live ranges over the schedule, the peak
    /// marked) as an SVG to OUT (`-`: standard output, instead of the report).
    #[arg(long, value_name = "OUT")]
    pub svg: Option<PathBuf>,
    /// The computation the SVG draws: ENTRY by default, or one that runs in the
    /// schedule (a while body: its own steps).
    #[arg(long, value_name = "NAME", requires = "svg")]
    pub computation: Option<String>,
    /// The module to read when the file holds several: its name or its place
    /// (0-based); default: the first, named on stderr.
    #[arg(long, value_name = "NAME|N")]
    pub module: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let text = super::read_text(&args.file)?;
    if crate::language::detect(&args.file.to_string_lossy(), None, &text)
        == crate::language::Language::Mlir
    {
        return stablehlo::report(&args.file, &text, args.json);
    }
    let document = Document::parse(&text);
    let file = document.file();
    super::input::refuse_syntax_errors(&args.file, &text, &document.syntax_errors())?;
    // The estimate walks every computation of the module: built in parallel first,
    // not one by one as the walk reaches them.
    document.build_all();
    let module =
        super::input::pick_module(&args.file, &text, &file.modules, args.module.as_deref())?;
    let per_device = crate::sharding::per_device(module, Some(&args.file.to_string_lossy()));
    // The estimate runs on one thread: the name index the report's source lines look
    // up and the stack-frame tables are made on another meanwhile.
    let (report, frames) = rayon::join(
        || memory::analyze(Some(&args.file), module, args.estimate),
        || {
            module.index_instructions();
            StackFrameIndex::from_tables(
                document
                    .syntax()
                    .chunks()
                    .iter()
                    .filter(|c| c.kind() == ChunkKind::Table)
                    .map(|c| (c.start, c.text())),
            )
        },
    );
    let report = report.ok_or_else(|| format!("{}: no ENTRY computation", args.file.display()))?;
    for note in &report.notes {
        eprintln!("hlo-lsp: note: {note}");
    }
    let top = top_buffers(&report, args.top.unwrap_or(DEFAULT_TOP), module, &frames);
    if let Some(out) = &args.svg {
        let svg = timeline_svg(args, &report, module, &frames)?;
        if out.as_os_str() == "-" {
            return Ok(svg);
        }
        std::fs::write(out, svg).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let groups = report
        .peak
        .as_ref()
        .map(|peak| by_source_line(&report, peak, module, &frames))
        .unwrap_or_default();
    let out = if args.json {
        let mut json = to_json(&report, &top);
        if let Some(n) = per_device {
            json["per_device_of"] = json!(n);
        }
        json["timeline"] = timeline_json(&report, module, &frames);
        json["live_by_source"] = groups
            .iter()
            .map(|g| json!({"source": g.source, "bytes": g.bytes, "buffers": g.buffers, "largest": g.largest}))
            .collect();
        format!(
            "{}\n",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        )
    } else {
        let mut text = to_text(args, &report, &top, per_device);
        if !groups.is_empty() {
            text.push_str("  live at the peak by source line:\n");
            for line in group_lines(&groups, args.top.unwrap_or(DEFAULT_TOP)) {
                text.push_str(&format!("  {line}\n"));
            }
        }
        text
    };
    // The process ends right after: freeing the model (a tenth of a second and more
    // of a 60 MB module's time, on one thread) would only cost time.
    std::mem::forget(document);
    Ok(out)
}

/// The SVG of the timeline `args` asks for (ENTRY unless `--computation`).
fn timeline_svg(
    args: &Args,
    report: &Report,
    module: &crate::model::Module,
    frames: &StackFrameIndex,
) -> Result<String, String> {
    let name = match &args.computation {
        Some(name) => name.trim_start_matches('%').to_string(),
        None => module
            .entry_computation()
            .map(|c| c.model().name.clone())
            .ok_or_else(|| format!("{}: no ENTRY computation", args.file.display()))?,
    };
    let timeline = timeline::lay_out(report, module, &name, frames, timeline::DEFAULT_ROWS)
        .ok_or_else(|| {
            format!(
                "{}: %{name} does not run in the schedule (not ENTRY, a while body or a called computation)",
                args.file.display()
            )
        })?;
    Ok(timeline::svg::to_svg(&timeline))
}

/// The heap over the schedule as data: the bytes held at each step (XProf's rule,
/// the curve whose top is `peak_bytes`) and every buffer's live range.
fn timeline_json(
    report: &Report,
    module: &crate::model::Module,
    frames: &StackFrameIndex,
) -> Value {
    let steps: Vec<Value> = report
        .schedule
        .iter()
        .enumerate()
        .map(|(t, name)| {
            let live = report.heap.as_ref().map(|h| h.at(t as u64));
            json!({"step": t, "instruction": &**name, "live_bytes": live})
        })
        .collect();
    let mut sources: rustc_hash::FxHashMap<&str, Option<String>> = Default::default();
    let buffers: Vec<Value> = report
        .buffers
        .iter()
        .filter(|b| b.bytes > 0)
        .map(|b| {
            let source = sources
                .entry(&*b.instruction)
                .or_insert_with(|| source_line(module, frames, &b.instruction))
                .clone();
            let name = match &*b.shape_index {
                "{}" => b.instruction.to_string(),
                index => format!("{}{index}", b.instruction),
            };
            json!({"name": name, "bytes": b.bytes, "start": b.start, "end": b.end, "source": source})
        })
        .collect();
    json!({"steps": steps, "buffers": buffers})
}

/// A buffer live at the peak, as printed.
struct Top {
    instruction: String,
    shape_index: String,
    bytes: u64,
    live: (u64, u64),
    source: Option<String>,
}

fn top_buffers(
    report: &Report,
    n: usize,
    module: &crate::model::Module,
    frames: &StackFrameIndex,
) -> Vec<Top> {
    let Some(peak) = &report.peak else {
        return Vec::new();
    };
    peak.live
        .iter()
        .take(n)
        .map(|&i| {
            let b = &report.buffers[i];
            Top {
                instruction: b.instruction.to_string(),
                shape_index: b.shape_index.to_string(),
                bytes: b.bytes,
                live: (b.start, b.end),
                source: source_line(module, frames, &b.instruction),
            }
        })
        .collect()
}

fn to_json(report: &Report, top: &[Top]) -> Value {
    let t = report.totals;
    json!({
        "source": report.source.as_str(),
        "argument_bytes": t.argument,
        "output_bytes": t.output,
        "alias_bytes": t.alias,
        "temp_bytes": t.temp,
        "peak_bytes": report.peak.as_ref().map(|p| p.bytes),
        "peak_at": report.peak_at(),
        "peak_step": report.peak.as_ref().map(|p| p.time),
        "peak_rule": report.heap.as_ref().map(|h| match h.source {
            memory::viewer::HeapSource::Trace => "xprof: the heap simulator's trace (.hlo.pb)",
            memory::viewer::HeapSource::Buffers => "xprof: allocations and live ranges",
        }),
        "indefinite_bytes": report.heap.as_ref().map(|h| h.indefinite),
        "xla_live_range_peak_bytes": report.xla_live_range_peak.as_ref().map(|p| p.bytes),
        "xla_live_range_peak_step": report.xla_live_range_peak.as_ref().map(|p| p.time),
        "xla_live_range_peak_at": report.xla_live_range_peak_at(),
        "allocations": report.allocations.iter().map(|a| json!({
            "index": a.index,
            "size": a.size,
            "kind": a.kind_name(),
            "values": a.values.iter().map(|v| json!({
                "instruction": &*v.instruction,
                "shape_index": &*v.shape_index,
                "offset": v.offset,
                "size": v.size,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "top_buffers": top.iter().map(|b| json!({
            "instruction": b.instruction,
            "bytes": b.bytes,
            "live": [b.live.0, b.live.1],
            "source": b.source,
        })).collect::<Vec<_>>(),
    })
}

fn to_text(args: &Args, report: &Report, top: &[Top], per_device: Option<i64>) -> String {
    let t = report.totals;
    let mut out = format!(
        "{}: memory {}{}\n  arguments {} · outputs {} · aliased {} · temps {}\n",
        args.file.display(),
        report.source.describe(),
        per_device_text(per_device),
        human_bytes(t.argument),
        human_bytes(t.output),
        human_bytes(t.alias),
        human_bytes(t.temp),
    );
    if let Some(peak) = &report.peak {
        match report.peak_at() {
            Some(at) => out.push_str(&format!(
                "  peak {} at %{at} (step {} of {}) · {} buffers live\n",
                human_bytes(peak.bytes),
                peak.time,
                report.schedule.len(),
                peak.live.len(),
            )),
            None => out.push_str(&format!(
                "  peak {}: arguments, outputs and constants only (no temporary is ever live)\n",
                human_bytes(peak.bytes),
            )),
        }
        if let Some(line) = crate::memory::xla_line_if_different(report) {
            out.push_str(&format!("  {line}\n"));
        }
    }
    for b in top {
        out.push_str(&format!(
            "  {:>10}  %{}{}  live {} → {}{}\n",
            human_bytes(b.bytes),
            b.instruction,
            if b.shape_index == "{}" {
                ""
            } else {
                &b.shape_index
            },
            b.live.0,
            b.live.1,
            b.source
                .as_ref()
                .map(|s| format!("  {s}"))
                .unwrap_or_default(),
        ));
    }
    out
}

/// `, per device (XLA partitioned the module over 8 devices; each holds this)`.
pub fn per_device_text(per_device: Option<i64>) -> String {
    per_device.map_or(String::new(), |n| {
        format!(", per device (XLA partitioned the module over {n} devices; each holds this)")
    })
}
