//! `hlo-lsp coalescing FILE [--instruction NAME] [--sizes 16,16] [--device NAME|FILE]
//! [--json]`: whether each operand read of a fusion is coalesced
//! ([`crate::coalescing`]). Without `--instruction` the ENTRY ROOT of every
//! module; an instruction that is not a fusion is a fusion of that one op.
//! `--sizes` analyzes the tiles of those sizes instead of XLA's emitter.
//! Exit 0 with a report, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::analysis;
use crate::coalescing::{self, picture, Evidence, OperandVerdict, Options, Report, Subject};
use crate::cost::class::{classify, KernelClass};
use crate::cost::report::launches_kernels;
use crate::model::{self, ComputationId, HloFile, InstrId, Module};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// The fusion (or any instruction) to analyze; default: the ENTRY ROOT.
    #[arg(long, value_name = "NAME")]
    pub instruction: Option<String>,
    /// Tile sizes of the output (comma-separated): analyze tiled reads.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    pub sizes: Option<Vec<i64>>,
    /// The GPU: a preset (a6000, a100, h100, b200) or a GpuDeviceInfoProto /
    /// GpuTargetConfig text proto; default: a `*.gpu_target_config.pbtxt` beside
    /// FILE, else a6000 (as XLA's tests). A CPU dump is read as if compiled for a
    /// GPU only when one is named.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let chosen = super::gpu::device(args.device.as_deref(), &args.file)?;
    if let Some(bad) = args.sizes.iter().flatten().find(|&&s| s < 1) {
        return Err(format!("--sizes: tile size {bad} must be at least 1"));
    }
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let file = model::parse_hlo(&text);
    super::input::refuse_syntax_errors(&args.file, &text, &file.diagnostics)?;
    let cpu = file
        .modules
        .first()
        .is_some_and(|m| super::gpu::is_cpu_dump(&args.file, m));
    if cpu && !chosen.explicit {
        // XLA's CPU backend has no warps: a CPU dump is not judged as GPU kernels.
        eprintln!(
            "{}",
            super::gpu::cpu_note(&args.file, "XLA's GPU coalescing analysis does not apply")
        );
        return Ok(if args.json {
            let v = json!({ "backend": "cpu", "instructions": [] });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        } else {
            String::new()
        });
    }
    let options = Options {
        sizes: args.sizes.clone(),
        device: chosen.device,
        operand: None,
    };
    let Analysed { reports, note } = reports(&file, &text, args, &options)?;
    // A CPU dump read for a named GPU says so beside every verdict, as `cost` does.
    let device = if cpu {
        format!("a CPU dump, as if compiled for {}", options.device.name)
    } else {
        format!("device {}", options.device.name)
    };
    if args.json {
        let mut v = json!({ "instructions": reports.iter().map(report_json).collect::<Vec<_>>() });
        if let Some(note) = &note {
            v["note"] = json!(note);
        }
        if cpu {
            v["backend"] = json!("cpu");
            v["as_if_compiled_for"] = json!(options.device.name);
        }
        return Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ));
    }
    let Some(note) = note else {
        return Ok(reports
            .iter()
            .map(|r| report_text(r, &device))
            .collect::<Vec<_>>()
            .join("\n"));
    };
    // Every kernel of a dump: the ones with an uncoalesced read, in full.
    let uncoalesced: Vec<&Report> = reports
        .iter()
        .filter(|r| r.operands.iter().any(|o| !o.coalesced))
        .collect();
    let mut out = format!(
        "{note}: {} of {} read an operand uncoalesced{}\n",
        uncoalesced.len(),
        reports.len(),
        if uncoalesced.is_empty() { "" } else { ":" }
    );
    for r in uncoalesced {
        out.push('\n');
        out.push_str(&report_text(r, &device));
    }
    Ok(out)
}

/// The reports asked for: the named instruction, or each module's ENTRY ROOT.
/// What the command analysed: the reports, and when the ENTRY ROOT is not a kernel
/// (a tuple of a real dump), the note that says every kernel was analysed instead.
struct Analysed {
    reports: Vec<Report>,
    note: Option<String>,
}

/// The reports asked for: the named instruction, or each module's ENTRY ROOT; when
/// that ROOT launches no kernel of its own (a tuple, a get-tuple-element), every
/// kernel of the module.
fn reports(file: &HloFile, text: &str, args: &Args, options: &Options) -> Result<Analysed, String> {
    let path = args.file.display();
    let mut out = vec![];
    let mut notes = vec![];
    for module in &file.modules {
        let view = analysis::view::borrowed(module);
        let targets = match &args.instruction {
            Some(name) => module
                .find_instruction(name.trim_start_matches('%'))
                .into_iter()
                .collect(),
            None => {
                let Some(entry) = module.entry_computation() else {
                    continue;
                };
                let Some(root) = entry.root else { continue };
                let root_instr = entry.instruction(root);
                if classify(module, entry, root_instr) == KernelClass::NotLaunched {
                    if options.sizes.is_some() {
                        return Err(format!(
                            "--sizes: the ENTRY ROOT %{} is a {}, not a kernel: name one with --instruction",
                            root_instr.name,
                            root_instr.opcode.name()
                        ));
                    }
                    let kernels = every_kernel(module);
                    notes.push(format!(
                        "the ENTRY ROOT %{} is a {}, not a kernel: every kernel of the module is analysed ({})",
                        root_instr.name,
                        root_instr.opcode.name(),
                        kernels.len()
                    ));
                    kernels
                } else {
                    vec![(entry.id, root)]
                }
            }
        };
        for (c, id) in targets {
            let computation = module.computation(c);
            let instruction = computation.instruction(id);
            let subject = Subject::new(module, &view, computation, instruction).map_err(|e| {
                let (line, col) =
                    crate::syntax::line_col(text, computation.abs(instruction.name_range).start);
                format!("{path}:{line}:{col}: {e}")
            })?;
            check_sizes(&subject, options)?;
            out.push(coalescing::analyze(&subject, options, None));
        }
    }
    if out.is_empty() && notes.is_empty() {
        return Err(match &args.instruction {
            Some(name) => format!("{path}: no instruction named {name}"),
            None => format!("{path}: no ENTRY computation with a ROOT instruction"),
        });
    }
    Ok(Analysed {
        reports: out,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

/// Every kernel XLA's emitters generate (the reads coalescing judges), in the
/// computations that launch kernels.
fn every_kernel(module: &Module) -> Vec<(ComputationId, InstrId)> {
    let mut out = vec![];
    for c in module.computations() {
        if !launches_kernels(module, c.id) {
            continue;
        }
        for i in &c.model().instructions {
            if !i.synthetic
                && matches!(
                    classify(module, c, i),
                    KernelClass::Emitted | KernelClass::Tiled
                )
            {
                out.push((c.id, i.id));
            }
        }
    }
    out
}

/// `--sizes` must match the rank of some output.
fn check_sizes(subject: &Subject<'_>, options: &Options) -> Result<(), String> {
    let Some(sizes) = &options.sizes else {
        return Ok(());
    };
    let per_output = coalescing::tiled::sizes_for_outputs(subject, sizes);
    if per_output.iter().all(Vec::is_empty) {
        return Err(format!(
            "--sizes {}: no output of {} has rank {}",
            crate::tiling::split::join_sizes(sizes),
            subject.name,
            sizes.len()
        ));
    }
    Ok(())
}

fn report_json(r: &Report) -> Value {
    json!({
        "name": r.name,
        "operands": r.operands.iter().map(|o| json!({
            "index": o.index,
            "coalesced": o.coalesced,
            "bandwidth_utilization": o.bandwidth_utilization,
            "reason": o.reason,
        })).collect::<Vec<_>>(),
    })
}

/// One instruction's verdicts; `device` names what they were judged on.
fn report_text(r: &Report, device: &str) -> String {
    let mut s = format!("{}: {} ({device})\n", r.name, r.family.describe());
    for o in &r.operands {
        s.push_str(&format!("  {}\n", o.line()));
        if !o.coalesced {
            for line in evidence_lines(o) {
                s.push_str(&format!("    {line}\n"));
            }
        }
    }
    s
}

/// The warp's read map (or the tile) and the picture of an uncoalesced read.
fn evidence_lines(o: &OperandVerdict) -> Vec<String> {
    let mut out = vec![];
    let (shape, offsets) = match &o.evidence {
        Evidence::Warp(warps) => {
            let Some(w) = warps.iter().find(|w| !w.coalesced).or(warps.first()) else {
                return out;
            };
            out.push(format!(
                "first warp reads: {}",
                w.map.to_string().replace('\n', " ")
            ));
            let Some(shape) = o.tensor.clone() else {
                return out;
            };
            (shape, w.offsets.clone())
        }
        Evidence::Tile(tiles) => {
            let Some(t) = tiles.iter().find(|t| !t.coalesced).or(tiles.first()) else {
                return out;
            };
            out.push(format!(
                "tile: sizes {:?}, strides {:?}, contiguous {} elements",
                t.sizes, t.strides, t.contiguous
            ));
            (t.shape.clone(), picture::tile_offsets(t))
        }
        Evidence::None => return out,
    };
    if offsets.is_empty() {
        return out;
    }
    let p = picture::draw(&shape, &offsets);
    out.push(p.caption());
    out.extend(p.lines());
    out
}
