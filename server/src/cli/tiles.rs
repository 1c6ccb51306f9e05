//! `hlo-lsp tiles FILE [--fusion NAME] [--sizes 4,128] [--json]`: the tiling
//! analysis of every tiled fusion (those with `output_tiles` in their
//! backend_config, or every fusion when `--sizes` is given): splits and their
//! holes, the minimal predicates, the tile each instruction reads, read
//! predicates, reductions with holes, violated constraints and the valid
//! tilings. Exit 1 when a tiling is invalid, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::model::{self, HloFile};
use crate::tiling::candidates::Candidate;
use crate::tiling::report::{
    analyze_file, offsets_text, FusionReport, OutputReport, ReportOptions,
};
use crate::tiling::split::join_sizes;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// Only this fusion instruction.
    #[arg(long, value_name = "NAME")]
    pub fusion: Option<String>,
    /// Tile sizes of output 0 instead of the backend_config's, comma-separated
    /// (`--sizes ""` for a rank-0 output).
    #[arg(long, value_name = "N,N,...", value_parser = parse_sizes)]
    pub sizes: Option<SizeList>,
    /// How many ranked valid tilings to list.
    #[arg(long, default_value_t = 5)]
    pub candidates: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Tile sizes as given to `--sizes`: `4,128`, or nothing at all (`--sizes ""`) for a
/// rank-0 (scalar) output, which has one tile and no size to give. A list of its own
/// rather than clap's delimited values, which turn `""` into one empty number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList(pub Vec<i64>);

fn parse_sizes(text: &str) -> Result<SizeList, String> {
    if text.trim().is_empty() {
        return Ok(SizeList(vec![]));
    }
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<i64>()
                .map_err(|e| format!("`{}`: {e}", s.trim()))
        })
        .collect::<Result<_, _>>()
        .map(SizeList)
}

pub fn run(args: Args) -> ExitCode {
    match report(&args) {
        Ok((out, valid)) => {
            print!("{out}");
            if valid {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(message) => super::fail(message),
    }
}

/// The output and whether every tiling is valid (the benchmarks call it too).
pub fn report(args: &Args) -> Result<(String, bool), String> {
    let text = super::read_text(&args.file)?;
    let sizes = args.sizes.as_ref().map(|s| s.0.clone());
    if let Some(bad) = sizes.iter().flatten().find(|&&s| s < 1) {
        return Err(format!("--sizes: tile size {bad} must be at least 1"));
    }
    let file = model::parse_hlo(&text);
    super::input::refuse_syntax_errors(&args.file, &text, &file.diagnostics)?;
    let options = ReportOptions {
        fusion: args.fusion.clone(),
        sizes: sizes.clone(),
        candidates: args.candidates,
        transaction_bytes: Some(crate::coalescing::Device::default().dram_to_l2_transaction_bytes),
    };
    let (reports, problems) = analyze_file(&file, &options);
    if let Some(p) = problems.first() {
        let (line, col) = crate::syntax::line_col(&text, p.error.range.start);
        return Err(format!(
            "{}:{line}:{col}: {}",
            args.file.display(),
            p.error.message
        ));
    }
    if reports.is_empty() {
        return Err(match (&args.fusion, &sizes) {
            (Some(f), Some(_)) => format!("{}: no fusion named {f}", args.file.display()),
            (Some(f), None) => format!(
                "{}: no fusion named {f} with tile sizes (give --sizes)",
                args.file.display()
            ),
            (None, _) => format!(
                "{}: no fusion with output_tiles in its backend_config (give --fusion and --sizes)",
                args.file.display()
            ),
        });
    }
    if let Some(sizes) = &sizes {
        if reports.iter().all(|r| r.outputs.is_empty()) {
            return Err(format!(
                "--sizes {}: no fusion output has rank {}",
                join_sizes(sizes),
                sizes.len()
            ));
        }
    }
    let valid = reports.iter().all(FusionReport::is_valid);
    let out = if args.json {
        let v =
            json!({ "fusions": reports.iter().map(|r| report_json(&file, r)).collect::<Vec<_>>() });
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    } else {
        reports
            .iter()
            .map(|r| report_text(&file, r))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok((out, valid))
}

fn fused_name(file: &HloFile, r: &FusionReport, i: usize) -> String {
    file.module(r.at.module)
        .computation(crate::model::ComputationId(r.fused as u32))
        .model()
        .instructions
        .get(i)
        .map_or_else(|| format!("#{i}"), |x| x.name.to_string())
}

fn report_text(file: &HloFile, r: &FusionReport) -> String {
    let mut s = format!(
        "fusion {} (calls {}): {}\n",
        r.name,
        r.fused_name,
        r.summary()
    );
    for e in &r.errors {
        s += &format!("  error: {e}\n");
    }
    for o in &r.outputs {
        s += &output_text(file, r, o);
    }
    s
}

fn output_text(file: &HloFile, r: &FusionReport, o: &OutputReport) -> String {
    let p = &o.propagation;
    let mut s = format!(
        "  output {}: extents {} tiled by {} (blocks {}), {} tiles\n",
        o.output,
        join_sizes(&p.space.extents()),
        join_sizes(&p.sizes),
        join_sizes(&p.space.tiles()),
        p.space.total_tiles()
    );
    for f in &o.splits {
        s += &format!(
            "  split d{}: extent {} by {}: {} tiles, {} holes in the last tile, guard {}\n",
            f.dim, f.extent, f.block, f.tiles, f.holes, f.predicate
        );
    }
    s += &format!("  predicates (minimal): {}\n", list_or_none(&o.predicates));
    for i in &o.implied {
        s += &format!("  implied: {i}\n");
    }
    let mut printed = std::collections::HashSet::new();
    for read in p.reads.iter().filter(|r| !r.tile.is_empty()) {
        let offsets = offsets_text(p, read);
        let sizes: Vec<String> = read.tile.iter().map(|t| t.size.to_string()).collect();
        let strides: Vec<String> = read.tile.iter().map(|t| t.stride.to_string()).collect();
        let line = format!(
            "  tile of {}: offsets ({}) sizes [{}] strides [{}]\n",
            read.name,
            offsets.join(", "),
            sizes.join(", "),
            strides.join(", ")
        );
        // Two maps can reach one instruction with the same tile (a parameter
        // read twice): print it once (a set: searching the text was quadratic).
        if !printed.contains(&line) {
            s += &line;
            printed.insert(line);
        }
    }
    for rp in &p.read_predicates {
        s += &format!("  read predicate on {}: {}\n", rp.name, rp.text);
    }
    for (i, m) in &o.non_contiguous {
        s += &format!(
            "  non-contiguous: {} merges dimensions (inner extent {}) split by {}: vectorized or TMA loads of this tile are invalid\n",
            fused_name(file, r, *i),
            m.inner_extent,
            m.tile
        );
    }
    for h in &p.reductions {
        if h.holes == 0 {
            continue;
        }
        s += &format!("  reduction {}: {}\n", h.name, h.describe());
    }
    for (i, c) in &o.violations {
        s += &format!(
            "  invalid: through {}: {}\n",
            fused_name(file, r, *i),
            c.condition
        );
    }
    for (i, why) in &p.unknown {
        s += &format!("  no tile for {}: {why}\n", fused_name(file, r, *i));
    }
    if let Some(c) = &o.suggestion {
        s += &format!("  nearest valid tiling: {}\n", candidate_text(c));
    }
    if !o.candidates.is_empty() {
        s += "  valid tilings (fewest holes, then predicates):\n";
        for c in &o.candidates {
            s += &format!("    {}\n", candidate_text(c));
        }
    }
    s
}

fn candidate_text(c: &Candidate) -> String {
    format!(
        "{} ({}, {})",
        join_sizes(&c.sizes),
        counted(c.predicates as i64, "predicate"),
        counted(c.holes, "hole")
    )
}

/// `1 predicate`, `2 predicates`.
fn counted(n: i64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn candidate_json(c: &Candidate) -> Value {
    json!({ "sizes": c.sizes, "predicates": c.predicates, "holes": c.holes })
}

fn report_json(file: &HloFile, r: &FusionReport) -> Value {
    let outputs: Vec<Value> = r
        .outputs
        .iter()
        .map(|o| {
            let p = &o.propagation;
            json!({
                "output": o.output,
                "extents": p.space.extents(),
                "sizes": p.sizes,
                "blocks": p.space.tiles(),
                "tiles": p.space.total_tiles(),
                "splits": o.splits.iter().map(|f| json!({
                    "dim": f.dim, "extent": f.extent, "tile": f.tile, "block": f.block,
                    "tiles": f.tiles, "holes": f.holes, "predicate": f.predicate,
                })).collect::<Vec<_>>(),
                "predicates": o.predicates,
                "implied": o.implied,
                "reads": p.reads.iter().map(|read| json!({
                    "instruction": read.name,
                    "parameter": read.parameter,
                    "offsets": offsets_text(p, read),
                    "sizes": read.tile.iter().map(|t| t.size).collect::<Vec<_>>(),
                    "strides": read.tile.iter().map(|t| t.stride).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "read_predicates": p.read_predicates.iter().map(|rp| json!({
                    "instruction": rp.name, "predicate": rp.text,
                })).collect::<Vec<_>>(),
                "non_contiguous": o.non_contiguous.iter().map(|(i, m)| json!({
                    "instruction": fused_name(file, r, *i),
                    "inner_extent": m.inner_extent, "tile": m.tile,
                })).collect::<Vec<_>>(),
                "reductions": p.reductions.iter().map(|h| json!({
                    "instruction": h.name,
                    "holes": h.holes,
                    "reducer": h.reducer.map(|x| x.to_string()),
                    "identity": h.identity,
                    "init": h.init,
                    "init_is_identity": h.init_is_identity,
                })).collect::<Vec<_>>(),
                "violations": o.violations.iter().map(|(i, c)| json!({
                    "instruction": fused_name(file, r, *i), "constraint": c.condition,
                })).collect::<Vec<_>>(),
                "unknown": p.unknown.iter().map(|(i, why)| json!({
                    "instruction": fused_name(file, r, *i), "reason": why.to_string(),
                })).collect::<Vec<_>>(),
                "valid": o.violations.is_empty(),
                "suggestion": o.suggestion.as_ref().map(candidate_json),
                "candidates": o.candidates.iter().map(candidate_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "fusion": r.name,
        "calls": r.fused_name,
        "summary": r.summary(),
        "valid": r.is_valid(),
        "errors": r.errors,
        "outputs": outputs,
    })
}
