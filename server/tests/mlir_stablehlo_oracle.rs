//! StableHLO regions and the converter oracle, over the JAX programs of
//! `tests/data/stablehlo/programs.jsonl` (each lowered by JAX as StableHLO and as
//! the HLO XLA's converter makes of it, `as_text(dialect='hlo')`).
//!
//! * Every op inside a region (a while's cond and body, a case's branches, a
//!   shard_map's per-shard body, a reducer or comparator) has maps or a stated
//!   reason (a constant reads nothing; a return is its region's result).
//! * The oracle: each op's maps (what `hlo-lsp mlir` prints) equal the maps of the
//!   HLO instructions XLA's converter makes of it, composed when it makes several
//!   (a broadcast that stretches a size-1 dimension is a reshape then a
//!   broadcast). Ops are paired with instructions by signature: the output's
//!   extents and each operand's, the opcode when it is the same (XLA writes some
//!   ops as another opcode: a broadcast to `[1]` of a scalar as a reshape), in
//!   program order among the unpaired instructions of that signature, preferring
//!   one with equal maps when several share the signature (the converter's CSE and
//!   loop rewriting change the order, and there is no op name in the text to pair
//!   by). An op no instruction pairs with (the converter folded or removed it) is
//!   counted as not compared; every compared op must be equal.

use std::collections::HashSet;

use hlo_lsp::algebra::{IndexingMap, PrintOptions};
use hlo_lsp::analysis::{self, view, Direction, Module, Query};
use hlo_lsp::mlir::{self, stablehlo};
use stablehlo::summary::{self, Coverage};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// `(name, stablehlo, hlo)` of every shipped program.
fn programs() -> Vec<(String, String, String)> {
    let path = format!("{DATA}/stablehlo/programs.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("stablehlo"), s("hlo"))
        })
        .collect()
}

/// Ops in regions, across the programs, with maps or a reason: at least this many.
const REGION_OPS: usize = 150;

#[test]
fn every_op_in_a_region_has_maps_or_a_reason() {
    let (mut with_maps, mut with_reason, mut missing) = (0, 0, vec![]);
    let mut regions_seen = HashSet::new();
    for (name, src, _) in programs() {
        let file = mlir::read(&src);
        for op in summary::region_coverage(&src, &file) {
            regions_seen.insert(op.region.split(" of ").next().unwrap_or("").to_string());
            match op.coverage {
                Coverage::Maps(_) => with_maps += 1,
                Coverage::Reason(_) => with_reason += 1,
                Coverage::Missing => missing.push(format!(
                    "{name}: {} in {}",
                    file.ops[op.index].name, op.region
                )),
            }
        }
    }
    let total = with_maps + with_reason + missing.len();
    eprintln!(
        "ops in regions: {} of {total} covered ({with_maps} with maps, {with_reason} with a reason); regions: {regions_seen:?}",
        with_maps + with_reason
    );
    assert!(
        missing.is_empty(),
        "ops in regions without maps or a reason:\n{}",
        missing.join("\n")
    );
    assert!(total >= REGION_OPS, "only {total} ops in regions");
    for role in [
        "cond",
        "body",
        "branch 0",
        "per-shard body",
        "reducer",
        "comparator",
    ] {
        assert!(
            regions_seen.contains(role),
            "no op in a {role}: {regions_seen:?}"
        );
    }
}

/// A shard_map's body is written on per-shard shapes: its ops' domains are those
/// of one shard (8 rows of 64 on 8 devices), relative to the body's argument.
#[test]
fn a_shard_map_body_has_per_shard_maps() {
    let (_, src, _) = programs()
        .into_iter()
        .find(|p| p.0 == "shard_map")
        .expect("the shard_map program");
    let file = mlir::read(&src);
    let ops = summary::ops(&src, &file);
    let sine = ops.iter().find(|o| o.op == "stablehlo.sine").expect("sine");
    assert_eq!(sine.dims, Some(vec![8, 4]));
    assert_eq!(
        sine.operands[0].maps,
        ["(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 3]"]
    );
    assert_eq!(sine.operands[0].name, "%arg1");
    assert!(sine
        .region
        .as_deref()
        .unwrap_or("")
        .starts_with("per-shard body of %0"));
    let psum = ops
        .iter()
        .find(|o| o.op == "stablehlo.all_reduce")
        .expect("psum");
    assert_eq!(psum.opcode, "all-reduce");
}

/// A while body's ops read the carried values (its block arguments) as an HLO
/// while body reads the elements of its tuple parameter.
#[test]
fn a_while_body_reads_its_carried_values() {
    let (_, src, _) = programs()
        .into_iter()
        .find(|p| p.0 == "newton_vmap")
        .expect("the Newton program");
    let file = mlir::read(&src);
    let ops = summary::ops(&src, &file);
    let body: Vec<_> = ops
        .iter()
        .filter(|o| {
            o.region
                .as_deref()
                .is_some_and(|r| r.starts_with("body of"))
        })
        .collect();
    assert!(body.len() >= 20, "{} ops in the body", body.len());
    let select = body
        .iter()
        .find(|o| o.opcode == "select")
        .expect("a select");
    let read: Vec<&str> = select.operands.iter().map(|r| r.name.as_str()).collect();
    assert!(read.contains(&"%iterArg_2"), "{read:?}");
    assert!(select
        .operands
        .iter()
        .all(|r| r.maps == ["(d0) -> (d0), domain: d0 in [0, 15]"]));
}

/// An HLO instruction of XLA's conversion, as one op of the StableHLO program
/// it stands for: its maps per operand, read through the reshape XLA writes
/// before it (when that is how the op's operand has its own extents).
#[derive(Debug)]
struct Converted {
    opcode: String,
    dims: Vec<i64>,
    /// Per operand: (extents, printed maps), directly and through a reshape.
    direct: Vec<(Option<Vec<i64>>, Vec<String>)>,
    through: Vec<(Option<Vec<i64>>, Vec<String>)>,
}

fn print(maps: &[IndexingMap]) -> Vec<String> {
    let options = PrintOptions {
        multiline: false,
        ..PrintOptions::default()
    };
    maps.iter().map(|m| m.print(&options)).collect()
}

fn query(c: usize, i: usize) -> Query {
    Query {
        computation: c,
        instruction: i,
        direction: Direction::OutputToInput,
        output_id: 0,
        operand_id: 0,
        physical_layout: false,
    }
}

/// Every instruction with maps (one array output) of XLA's conversion.
fn converted(m: &Module) -> Vec<Converted> {
    let mut out = vec![];
    for (ci, c) in m.computations().enumerate() {
        for (ni, n) in c.nodes.iter().enumerate() {
            let skip = matches!(
                n.op.opcode.as_str(),
                "parameter" | "constant" | "tuple" | "get-tuple-element"
            );
            let Some(shape) = n.op.shape.as_array().filter(|_| !skip) else {
                continue;
            };
            let entries = analysis::analyze(m, &query(ci, ni)).entries;
            let mut direct = vec![];
            let mut through = vec![];
            for (&o, e) in n.operands.iter().zip(&entries) {
                let own: Vec<IndexingMap> = e.maps.iter().map(|x| x.map.clone()).collect();
                let producer = &c.nodes[o];
                let dims = producer.op.shape.as_array().map(|a| a.dims.clone());
                direct.push((dims.clone(), print(&own)));
                let reshaped = producer.op.opcode == "reshape" && producer.operands.len() == 1;
                let inner = reshaped
                    .then(|| analysis::analyze(m, &query(ci, o)).entries)
                    .and_then(|p| p.into_iter().next())
                    .filter(|p| p.unknown.is_none());
                match inner {
                    Some(p) => {
                        let composed: Vec<IndexingMap> = own
                            .iter()
                            .flat_map(|a| {
                                p.maps.iter().map(move |b| {
                                    let mut x = a.compose(&b.map);
                                    x.simplify();
                                    x
                                })
                            })
                            .collect();
                        let from = &c.nodes[producer.operands[0]];
                        let dims = from.op.shape.as_array().map(|a| a.dims.clone());
                        through.push((dims, print(&composed)));
                    }
                    None => through.push((dims, print(&own))),
                }
            }
            out.push(Converted {
                opcode: n.op.opcode.clone(),
                dims: shape.dims.clone(),
                direct,
                through,
            });
        }
    }
    out
}

/// Ops compared with XLA's conversion (and equal): at least this many.
const ORACLE_COMPARED: usize = 350;

#[test]
fn each_op_has_the_maps_of_the_instructions_xla_converts_it_to() {
    let (mut compared, mut unique, mut unpaired) = (0, 0, 0);
    let mut differ = vec![];
    for (name, src, hlo) in programs() {
        let file = mlir::read(&src);
        let (_, modules) = view::parse(&hlo);
        let Some(m) = modules.first() else {
            panic!("{name}: XLA's HLO does not parse");
        };
        let theirs = converted(m);
        let mut used = vec![false; theirs.len()];
        for op in summary::ops(&src, &file) {
            let Some(dims) = op.dims.clone() else {
                continue;
            };
            if op.operands.iter().any(|r| r.unknown.is_some()) {
                continue;
            }
            let ours: Vec<(Option<Vec<i64>>, Vec<String>)> = op
                .operands
                .iter()
                .map(|r| (r.dims.clone(), r.maps.clone()))
                .collect();
            let signature = |t: &Converted, way: &[(Option<Vec<i64>>, Vec<String>)]| {
                t.dims == dims
                    && way.len() == ours.len()
                    && way.iter().zip(&ours).all(|(a, b)| a.0 == b.0)
            };
            // Same opcode first, then any (XLA spells some ops otherwise).
            let mut candidates: Vec<(usize, bool)> = vec![];
            for same_opcode in [true, false] {
                for (k, t) in theirs.iter().enumerate() {
                    if used[k] || (t.opcode == op.opcode) != same_opcode {
                        continue;
                    }
                    for way in [&t.direct, &t.through] {
                        if signature(t, way) {
                            let equal = way.iter().zip(&ours).all(|(a, b)| a.1 == b.1);
                            candidates.push((k, equal));
                            break;
                        }
                    }
                }
                if !candidates.is_empty() {
                    break;
                }
            }
            let Some(&(k, equal)) = candidates
                .iter()
                .find(|c| c.1)
                .or_else(|| candidates.first())
            else {
                unpaired += 1;
                continue;
            };
            used[k] = true;
            compared += 1;
            if candidates.len() == 1 {
                unique += 1;
            }
            if !equal {
                differ.push(format!(
                    "{name}: {} = {} ({}) vs XLA's {:?}",
                    op.value, op.op, op.opcode, theirs[k]
                ));
            }
        }
    }
    eprintln!(
        "oracle: {compared} ops compared with XLA's conversion ({unique} with one candidate instruction), {} equal, {unpaired} with no instruction of their signature",
        compared - differ.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(compared >= ORACLE_COMPARED, "only {compared} compared");
}

/// Hovers reach ops in regions: on a value of a while body, the HLO hover of the
/// instruction it is (its maps from the carried values), placed on the value.
#[test]
fn hover_in_a_while_body() {
    use hlo_lsp::ide::{self, Config};
    let (_, src, _) = programs()
        .into_iter()
        .find(|p| p.0 == "newton_vmap")
        .expect("the Newton program");
    let snapshot = ide::snapshot::MlirSnapshot::new(std::sync::Arc::new(
        hlo_lsp::model::Document::parse(&src),
    ));
    let config = Config::default();
    let at = src.find("%29 = stablehlo.select").expect("the select") + 1;
    let hover = ide::mlir::hover(&snapshot, at, &config).expect("a hover on %29");
    assert_eq!(&src[hover.range.clone()], "%29");
    assert!(hover.markdown.contains("select"), "{}", hover.markdown);
    // It reads the carried value `%iterArg_2` elementwise.
    assert!(
        hover.markdown.contains("`%iterArg_2`: identity"),
        "{}",
        hover.markdown
    );
}
