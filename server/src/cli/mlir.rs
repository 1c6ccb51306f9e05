//! `hlo-lsp mlir FILE [--json]`: the index maps of an MLIR file: every linalg op's
//! (and ByteIR `linalg_ext` op's, with what its loops mean) iteration domain and operand maps (output's view, simplified, utilization),
//! reshapes and slices, map attributes, transform-dialect tiling with its
//! targets, StableHLO ops with the maps of the HLO instruction each is
//! (`FILE:LINE:COL: %3 = stablehlo.subtract (subtract in @main)`, a line per
//! operand map), and the diagnostics (`FILE:LINE:COL: severity: message [code]`).
//! Exit 1 when there is an error diagnostic.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::algebra::{IndexingMap, PrintOptions};
use crate::mlir::{self, LinalgAnalysis, MlirAnalysis};
use crate::syntax::LineIndex;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// The MLIR text file.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn one_line(m: &IndexingMap) -> String {
    m.print(&PrintOptions {
        multiline: false,
        ..PrintOptions::default()
    })
}

pub fn run(args: Args) -> ExitCode {
    let text = match super::read_text(&args.file) {
        Ok(t) => t,
        Err(e) => return super::fail(e),
    };
    if let Err(message) = super::input::refuse_hlo(&args.file, &text) {
        return super::fail(message);
    }
    let a = mlir::analyze(&text);
    if shows_nothing(&text, &a) {
        return super::fail(format!(
            "{}: nothing to show: no linalg or StableHLO op, affine map or transform tiling in it",
            args.file.display()
        ));
    }
    let lines = LineIndex::new(&text);
    let pos = |b: usize| lines.line_col(&text, b);
    if args.json {
        println!("{}", to_json(&text, &a, &pos));
    } else {
        print!(
            "{}",
            to_text(&args.file.display().to_string(), &text, &a, &pos)
        );
    }
    if a.diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `true` when the text and JSON answers would list nothing: no op with maps,
/// no map, no tiling and no diagnostic (never an empty answer and success).
fn shows_nothing(src: &str, a: &MlirAnalysis) -> bool {
    a.linalg.is_empty()
        && a.moves.is_empty()
        && a.tiles.is_empty()
        && a.file.maps.is_empty()
        && a.diagnostics.is_empty()
        && stablehlo_ops(src, a).is_empty()
}

fn func_name(a: &MlirAnalysis, op: usize) -> String {
    a.file.ops[op]
        .func
        .and_then(|f| a.file.funcs.get(f))
        .map_or(String::new(), |f| f.name.clone())
}

fn map_text(src: &str, a: &MlirAnalysis, l: &LinalgAnalysis, k: usize) -> String {
    let m = &l.op.maps[k];
    match &m.source {
        mlir::ops::MapSource::Alias { range, alias } => {
            let value = alias
                .map(|i| &src[a.file.aliases[i].value_range.clone()])
                .unwrap_or("undefined");
            format!("{} = {value}", &src[range.clone()])
        }
        mlir::ops::MapSource::Inline { range, .. } => src[range.clone()].to_string(),
        mlir::ops::MapSource::Implied => m
            .map
            .as_ref()
            .map_or("?".into(), |m| format!("implied {}", m.to_affine_map())),
    }
}

/// What a `linalg_ext` op's map of operand `k` does not say by itself.
fn operand_note(l: &LinalgAnalysis, k: usize) -> Option<&str> {
    l.op.ext
        .as_ref()
        .and_then(|e| e.operand_notes.get(k))
        .and_then(|n| n.as_deref())
}

fn to_text(
    name: &str,
    src: &str,
    a: &MlirAnalysis,
    pos: &dyn Fn(usize) -> (usize, usize),
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for o in stablehlo_ops(src, a) {
        let (line, col) = pos(o.at.start);
        let place = match &o.region {
            Some(region) => format!("{}, {region}", o.func),
            None => o.func.clone(),
        };
        let _ = writeln!(
            out,
            "{name}:{line}:{col}: {} = {} ({} in {place})",
            o.value, o.op, o.opcode
        );
        for r in &o.operands {
            for m in &r.maps {
                let _ = writeln!(out, "  {}: {m}", r.name);
            }
            if let Some(why) = &r.unknown {
                let _ = writeln!(out, "  {}: unknown ({why})", r.name);
            }
        }
    }
    for l in &a.linalg {
        let op = &a.file.ops[l.op.op];
        let (line, col) = pos(op.name_range.start);
        let func = func_name(a, l.op.op);
        let _ = writeln!(out, "{name}:{line}:{col}: {} (func {func})", l.op.name);
        let iters: Vec<&str> = l
            .loops
            .iter()
            .map(|x| x.iterator.map_or("?", |i| i.as_str()))
            .collect();
        let _ = writeln!(out, "  domain: {}  [{}]", l.domain_text(), iters.join(", "));
        if let Some(e) = &l.op.ext {
            let _ = writeln!(out, "  semantics: {}", e.summary);
        }
        for (k, operand) in l.op.operands.iter().enumerate() {
            let role = if operand.is_output { "out" } else { "in" };
            let _ = writeln!(out, "  {role} #{k} {} : {}", operand.value, operand.ty_text);
            if let Some(note) = operand_note(l, k) {
                let _ = writeln!(out, "    note: {note}");
            }
            if k < l.op.maps.len() {
                let _ = writeln!(out, "    map: {}", map_text(src, a, l, k));
            }
            if let Some(Some(v)) = l.views.get(k) {
                let _ = writeln!(out, "    indexing: {}", one_line(&v.map));
                if let Some(u) = v.utilization {
                    let _ = writeln!(out, "    {u}");
                }
            }
        }
    }
    for m in &a.moves {
        let op = &a.file.ops[m.op];
        let (line, col) = pos(op.name_range.start);
        match &m.map {
            Some(map) => {
                let _ = writeln!(
                    out,
                    "{name}:{line}:{col}: {}: {} ({})",
                    op.name,
                    one_line(map),
                    m.note
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "{name}:{line}:{col}: {}: no static map: {}",
                    op.name, m.note
                );
            }
        }
    }
    for (i, site) in a.file.maps.iter().enumerate() {
        let (line, col) = pos(site.range.start);
        let alias = a
            .file
            .aliases
            .iter()
            .find(|al| al.map == Some(i))
            .map_or(String::new(), |al| format!("{} = ", al.name));
        if let Ok(m) = &site.map {
            let simplified = m.simplified();
            let shown = if site.kind == mlir::MapKind::XlaIndexingMap {
                one_line(&simplified)
            } else {
                simplified.to_affine_map()
            };
            let _ = writeln!(
                out,
                "{name}:{line}:{col}: {alias}{} → {shown}",
                &src[site.range.clone()]
            );
        }
    }
    for t in &a.tiles {
        let op = &a.file.ops[t.op];
        let (line, col) = pos(op.name_range.start);
        let _ = writeln!(
            out,
            "{name}:{line}:{col}: {} tile_sizes {:?} interchange {:?} ({})",
            op.name, t.tile_sizes, t.interchange, t.matcher
        );
        for &k in &t.targets {
            let target = &a.linalg[k];
            let (tl, tc) = pos(a.file.ops[target.op.op].name_range.start);
            let _ = writeln!(
                out,
                "  tiles {} at {tl}:{tc}: {}",
                target.op.name,
                target.domain_text()
            );
            if let Some(Ok(tiling)) = mlir::transform::tile(t, target) {
                for (d, s) in tiling
                    .space
                    .splits
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| tiling.tiled[*d])
                {
                    let _ = writeln!(
                        out,
                        "    d{d}: {} by {} → {} tiles, {} holes{}",
                        s.extent,
                        s.tile,
                        s.tile_count(),
                        s.holes(),
                        s.predicate(d)
                            .map_or(String::new(), |p| format!("; predicate {p}"))
                    );
                }
            }
        }
    }
    for d in &a.diagnostics {
        let (line, col) = pos(d.range.start);
        let _ = writeln!(
            out,
            "{name}:{line}:{col}: {}: {} [{}]",
            d.severity.as_str(),
            d.message,
            d.code
        );
    }
    out
}

/// The StableHLO ops with their maps, when the file holds StableHLO.
fn stablehlo_ops(src: &str, a: &MlirAnalysis) -> Vec<mlir::stablehlo::summary::OpMaps> {
    if mlir::stablehlo::is_stablehlo(&a.file) {
        mlir::stablehlo::summary::ops(src, &a.file)
    } else {
        Vec::new()
    }
}

fn to_json(src: &str, a: &MlirAnalysis, pos: &dyn Fn(usize) -> (usize, usize)) -> Value {
    let at = |b: usize| {
        let (l, c) = pos(b);
        json!({"line": l, "column": c})
    };
    let stablehlo: Vec<Value> = stablehlo_ops(src, a)
        .iter()
        .map(|o| {
            let operands: Vec<Value> = o
                .operands
                .iter()
                .map(|r| json!({"value": r.name, "maps": r.maps, "unknown": r.unknown}))
                .collect();
            json!({
                "name": o.op,
                "value": o.value,
                "opcode": o.opcode,
                "at": at(o.at.start),
                "func": o.func,
                "region": o.region,
                "operands": operands,
            })
        })
        .collect();
    let ops: Vec<Value> = a
        .linalg
        .iter()
        .map(|l| {
            let op = &a.file.ops[l.op.op];
            let operands: Vec<Value> = l
                .op
                .operands
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let view = l.views.get(k).and_then(|v| v.as_ref());
                    json!({
                        "value": o.value,
                        "type": o.ty_text,
                        "role": if o.is_output { "output" } else { "input" },
                        "map_source": if k < l.op.maps.len() { Value::from(map_text(src, a, l, k)) } else { Value::Null },
                        "affine_map": l.op.maps.get(k).and_then(|m| m.map.as_ref()).map(IndexingMap::to_affine_map),
                        "indexing_map": view.map(|v| one_line(&v.map)),
                        "utilization": view.and_then(|v| v.utilization).map(|u| super::utilization_json(&u)),
                        "note": operand_note(l, k),
                    })
                })
                .collect();
            json!({
                "name": l.op.name,
                "at": at(op.name_range.start),
                "func": func_name(a, l.op.op),
                "loops": l.loops.iter().map(|x| json!({
                    "extent": x.extent,
                    "iterator": x.iterator.map(|i| i.as_str()),
                })).collect::<Vec<_>>(),
                "operands": operands,
                "semantics": l.op.ext.as_ref().map(|e| e.summary.clone()),
            })
        })
        .collect();
    let maps: Vec<Value> = a
        .file
        .maps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "kind": s.kind.as_str(),
                "at": at(s.range.start),
                "alias": a.file.aliases.iter().find(|al| al.map == Some(i)).map(|al| al.name.clone()),
                "text": &src[s.range.clone()],
                "map": s.map.as_ref().ok().map(one_line),
                "simplified": s.map.as_ref().ok().map(|m| one_line(&m.simplified())),
                "affine_map": s.map.as_ref().ok().map(IndexingMap::to_affine_map),
                "error": s.map.as_ref().err().map(|e| e.message.clone()),
            })
        })
        .collect();
    let moves: Vec<Value> = a
        .moves
        .iter()
        .map(|m| {
            json!({
                "name": a.file.ops[m.op].name,
                "at": at(a.file.ops[m.op].name_range.start),
                "indexing_map": m.map.as_ref().map(one_line),
                "note": m.note,
            })
        })
        .collect();
    let tiles: Vec<Value> = a
        .tiles
        .iter()
        .map(|t| {
            let targets: Vec<Value> = t
                .targets
                .iter()
                .map(|&k| {
                    let target = &a.linalg[k];
                    let tiling = mlir::transform::tile(t, target).and_then(Result::ok);
                    let splits: Vec<Value> = tiling
                        .iter()
                        .flat_map(|tiling| {
                            tiling.space.splits.iter().enumerate().filter(|(d, _)| tiling.tiled[*d]).map(|(d, s)| {
                                json!({
                                    "loop": d, "extent": s.extent, "tile": s.tile, "tiles": s.tile_count(),
                                    "holes": s.holes(), "predicate": s.predicate(d).map(|p| p.to_string()),
                                    "reduction": tiling.reduction[d],
                                })
                            })
                        })
                        .collect();
                    json!({
                        "name": target.op.name,
                        "at": at(a.file.ops[target.op.op].name_range.start),
                        "splits": splits,
                        "holes": tiling.as_ref().map(|t| t.space.hole_elements()),
                    })
                })
                .collect();
            json!({
                "name": a.file.ops[t.op].name,
                "at": at(a.file.ops[t.op].name_range.start),
                "tile_sizes": t.tile_sizes,
                "interchange": t.interchange,
                "matcher": t.matcher,
                "targets": targets,
            })
        })
        .collect();
    let diagnostics: Vec<Value> = a
        .diagnostics
        .iter()
        .map(|d| {
            let (line, column) = pos(d.range.start);
            let (end_line, end_column) = pos(d.range.end);
            json!({
                "line": line, "column": column, "end_line": end_line, "end_column": end_column,
                "severity": d.severity.as_str(), "code": d.code, "message": d.message,
            })
        })
        .collect();
    json!({ "ops": ops, "stablehlo": stablehlo, "maps": maps, "moves": moves, "tiles": tiles, "diagnostics": diagnostics })
}
