//! `hlo-lsp coalescing FILE [--instruction NAME] [--sizes 16,16] [--device a6000]
//! [--json]`: whether each operand read of a fusion is coalesced
//! ([`crate::coalescing`]). Without `--instruction` the ENTRY ROOT of every
//! module; an instruction that is not a fusion is a fusion of that one op.
//! `--sizes` analyzes the tiles of those sizes instead of XLA's emitter.
//! Exit 0 with a report, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::analysis;
use crate::coalescing::{
    self, picture, Device, Evidence, OperandVerdict, Options, Report, Subject,
};
use crate::model::{self, HloFile};

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
    /// The GPU: a6000 (default, as XLA's tests), a100, h100.
    #[arg(long, value_name = "NAME", default_value = "a6000")]
    pub device: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    super::print_or_fail(run_inner(&args))
}

fn run_inner(args: &Args) -> Result<String, String> {
    let device = Device::preset(&args.device).ok_or_else(|| {
        format!(
            "--device {}: unknown device (presets: {})",
            args.device,
            coalescing::device::PRESETS.join(", ")
        )
    })?;
    if let Some(bad) = args.sizes.iter().flatten().find(|&&s| s < 1) {
        return Err(format!("--sizes: tile size {bad} must be at least 1"));
    }
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let file = model::parse_hlo(&text);
    let options = Options {
        sizes: args.sizes.clone(),
        device,
        operand: None,
    };
    let reports = reports(&file, &text, args, &options)?;
    if args.json {
        let v = json!({ "instructions": reports.iter().map(report_json).collect::<Vec<_>>() });
        Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        ))
    } else {
        Ok(reports
            .iter()
            .map(|r| report_text(r, &options))
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

/// The reports asked for: the named instruction, or each module's ENTRY ROOT.
fn reports(
    file: &HloFile,
    text: &str,
    args: &Args,
    options: &Options,
) -> Result<Vec<Report>, String> {
    let path = args.file.display();
    let mut out = vec![];
    for module in &file.modules {
        let target = match &args.instruction {
            Some(name) => module
                .find_instruction(name.trim_start_matches('%'))
                .map(|(c, i)| (module.computation(c), i)),
            None => module
                .entry_computation()
                .and_then(|c| c.root.map(|r| (c, r))),
        };
        let Some((computation, id)) = target else {
            continue;
        };
        let instruction = computation.instruction(id);
        let view = analysis::view::borrowed(module);
        let subject = Subject::new(module, &view, computation, instruction).map_err(|e| {
            let (line, col) =
                crate::syntax::line_col(text, computation.abs(instruction.name_range).start);
            format!("{path}:{line}:{col}: {e}")
        })?;
        check_sizes(&subject, options)?;
        out.push(coalescing::analyze(&subject, options, None));
    }
    if out.is_empty() {
        return Err(match &args.instruction {
            Some(name) => format!("{path}: no instruction named {name}"),
            None => format!("{path}: no ENTRY computation with a ROOT instruction"),
        });
    }
    Ok(out)
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

fn report_text(r: &Report, options: &Options) -> String {
    let mut s = format!(
        "{}: {} (device {})\n",
        r.name,
        r.family.describe(),
        options.device.name
    );
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
