//! Every op of a StableHLO file's functions with the maps of the HLO instruction
//! it is: what `hlo-lsp mlir FILE.mlir` prints for StableHLO (the linalg summary's
//! counterpart), one record per op in text order, each operand's output-to-input
//! maps (or why they are unknown).
//!
//! Ops inside regions are there too: a while's `cond` and `body`, a case's
//! branches, a shard_map's body, a reducer or comparator. Each region is a
//! computation of the translation, so an op's maps are relative to its region's
//! block arguments (a while body's carried values, as an HLO while body reads its
//! tuple parameter; a shard_map body's per-shard arrays). [`region_coverage`] says,
//! for every op in a region, its maps or why it has none.

use std::ops::Range;

use super::{translate, Translation};
use crate::algebra::PrintOptions;
use crate::analysis::{self, view, Direction, Query};
use crate::mlir::reader::MlirFile;

/// One op and its maps.
#[derive(Clone, Debug)]
pub struct OpMaps {
    /// The op's name in the MLIR text (`stablehlo.broadcast_in_dim`).
    pub op: String,
    /// Where the op's name is written.
    pub at: Range<usize>,
    /// The value it defines (`%3`).
    pub value: String,
    /// The HLO opcode it is (`broadcast`).
    pub opcode: String,
    /// The function it is in (`@main`).
    pub func: String,
    /// The region it is in when not directly in the function's body
    /// (`body of %5 = stablehlo.while`).
    pub region: Option<String>,
    /// Its index in [`MlirFile::ops`].
    pub index: usize,
    /// The extents of its (first) result; `None` for a tuple.
    pub dims: Option<Vec<i64>>,
    pub operands: Vec<OperandMaps>,
}

/// An operand (`%arg0`) read by an op: its maps from the op's output index.
#[derive(Clone, Debug)]
pub struct OperandMaps {
    pub name: String,
    /// Its extents; `None` for a tuple.
    pub dims: Option<Vec<i64>>,
    /// One line each: `(d0, d1) -> (d1), domain: ...`.
    pub maps: Vec<String>,
    /// Why the maps are not all known.
    pub unknown: Option<String>,
}

/// The ops of `file`'s functions, those in regions included, that have an HLO
/// counterpart other than a parameter or constant.
pub fn ops(src: &str, file: &MlirFile) -> Vec<OpMaps> {
    let t = translate(src, file);
    let (_, modules) = view::parse(&t.hlo);
    let Some(module) = modules.first() else {
        return Vec::new();
    };
    let options = PrintOptions {
        multiline: false,
        ..PrintOptions::default()
    };
    let mut lines = t.lines.iter();
    let mut out = Vec::new();
    for (ci, c) in module.computations().enumerate() {
        for (ni, node) in c.nodes.iter().enumerate() {
            // The instructions are written in the order of their lines.
            let Some(line) = lines.next() else {
                break;
            };
            let skip = matches!(node.op.opcode.as_str(), "parameter" | "constant");
            if skip || !line.primary {
                continue;
            }
            let Some(record) = op_record(src, file, &t, line, module, (ci, ni), &options) else {
                continue;
            };
            out.push(record);
        }
    }
    // Computations are written regions first; the records follow the text.
    out.sort_by_key(|r| r.at.start);
    out
}

/// The record of the instruction at `(computation, node)`, whose line is `line`;
/// `None` when its op is in no function.
fn op_record(
    src: &str,
    file: &MlirFile,
    t: &Translation,
    line: &super::Line,
    module: &analysis::Module,
    (ci, ni): (usize, usize),
    options: &PrintOptions,
) -> Option<OpMaps> {
    let index = file.ops.iter().position(|o| o.range == line.mlir_op)?;
    let op = &file.ops[index];
    let func = file.funcs.get(op.func?)?;
    let in_body = file.ops[func.op].regions.first() == Some(&op.region);
    let region = (!in_body).then(|| region_name(src, file, op.region));
    let c = module.computation(ci);
    let node = &c.nodes[ni];
    let query = Query {
        computation: ci,
        instruction: ni,
        direction: Direction::OutputToInput,
        output_id: 0,
        operand_id: 0,
        physical_layout: false,
    };
    let indexing = analysis::analyze(module, &query);
    let operands = node
        .operands
        .iter()
        .zip(&indexing.entries)
        .map(|(&o, entry)| {
            if o >= c.nodes.len() {
                // A use of a value no instruction defines (`check` says where).
                return OperandMaps {
                    name: "?".into(),
                    dims: None,
                    maps: vec![],
                    unknown: Some("the operand is not defined".into()),
                };
            }
            let (read, maps) = through_helper(t, line, module, ci, o, entry);
            OperandMaps {
                name: mlir_name(src, t, &c.nodes[read].name),
                dims: dims(&c.nodes[read].op.shape),
                maps: maps.iter().map(|m| m.print(options)).collect(),
                unknown: entry.unknown.as_ref().map(ToString::to_string),
            }
        })
        .collect();
    Some(OpMaps {
        op: op.name.clone(),
        at: op.name_range.clone(),
        value: src[line.mlir_name.clone()].to_string(),
        opcode: node.op.opcode.clone(),
        func: func.name.clone(),
        region,
        index,
        dims: dims(&node.op.shape),
        operands,
    })
}

fn dims(shape: &analysis::Shape) -> Option<Vec<i64>> {
    shape.as_array().map(|a| a.dims.clone())
}

/// What a region is to the op that holds it: `body of %5 = stablehlo.while`.
pub fn region_name(src: &str, file: &MlirFile, region: usize) -> String {
    let Some(owner) = file.regions.get(region).and_then(|r| r.op) else {
        return "a region".into();
    };
    let op = &file.ops[owner];
    let k = op.regions.iter().position(|&r| r == region).unwrap_or(0);
    let base = op.name.rsplit('.').next().unwrap_or(&op.name);
    let role = match (base, k) {
        ("while", 0) => "cond".to_string(),
        ("while", _) => "body".to_string(),
        ("if", 0) => "true branch".to_string(),
        ("if", _) => "false branch".to_string(),
        ("case", k) => format!("branch {k}"),
        ("sort", _) => "comparator".to_string(),
        ("select_and_scatter", 0) => "select".to_string(),
        ("select_and_scatter", _) => "scatter".to_string(),
        ("manual_computation", _) => "per-shard body".to_string(),
        ("reduce" | "reduce_window" | "scatter" | "all_reduce" | "reduce_scatter", _) => {
            "reducer".to_string()
        }
        (_, k) => format!("region {k}"),
    };
    let value = op
        .results
        .first()
        .map(|&r| format!("{} = ", src.get(file.values[r].range.clone()).unwrap_or("")))
        .unwrap_or_default();
    format!("{role} of {value}{}", op.name)
}

/// An op in a region and what is known of it: its maps, or why it has none.
#[derive(Clone, Debug)]
pub struct RegionOp {
    /// Its index in [`MlirFile::ops`].
    pub index: usize,
    /// The region it is in, as [`region_name`] says it.
    pub region: String,
    pub coverage: Coverage,
}

#[derive(Clone, Debug)]
pub enum Coverage {
    /// Its record, with each operand's maps or why they are unknown.
    Maps(OpMaps),
    /// Why it has no maps of its own (a constant, the region's return).
    Reason(String),
    /// Nothing: an op the translation lost (a bug, which the tests count).
    Missing,
}

/// Every op inside a region of a StableHLO op (not those directly in a function's
/// body), in text order, with its maps or the reason it has none.
pub fn region_coverage(src: &str, file: &MlirFile) -> Vec<RegionOp> {
    region_coverage_of(src, file, ops(src, file))
}

/// [`region_coverage`] from the records [`ops`] made.
pub fn region_coverage_of(src: &str, file: &MlirFile, records: Vec<OpMaps>) -> Vec<RegionOp> {
    let mut by_op: std::collections::HashMap<usize, OpMaps> =
        records.into_iter().map(|r| (r.index, r)).collect();
    // A region of an op, not a function's body nor a module's.
    let in_function_body = |o: &crate::mlir::reader::Op| {
        let owner = file.regions.get(o.region).and_then(|r| r.op);
        owner.is_none_or(|k| {
            let name = file.ops[k].name.as_str();
            file.funcs.iter().any(|f| f.op == k) || matches!(name, "module" | "builtin.module")
        })
    };
    (0..file.ops.len())
        .filter(|&k| !in_function_body(&file.ops[k]) && file.ops[k].func.is_some())
        .map(|k| {
            let op = &file.ops[k];
            let coverage = match by_op.remove(&k) {
                Some(r) => Coverage::Maps(r),
                None => reason(&op.name).map_or(Coverage::Missing, |r| Coverage::Reason(r.into())),
            };
            RegionOp {
                index: k,
                region: region_name(src, file, op.region),
                coverage,
            }
        })
        .collect()
}

/// Why an op has no maps of its own.
fn reason(name: &str) -> Option<&'static str> {
    let base = name.rsplit('.').next().unwrap_or(name);
    match base {
        "constant" => Some("a constant reads no operand"),
        "return" | "yield" => Some(
            "the region's result: the values it returns are its computation's root, read by the op that holds the region",
        ),
        _ => None,
    }
}

/// An operand (its node) and maps, read through a helper instruction the op was
/// written with (the reshape before a broadcast that stretches size-1
/// dimensions): the op's own operand, the maps composed.
fn through_helper(
    t: &Translation,
    line: &super::Line,
    module: &analysis::Module,
    ci: usize,
    operand: usize,
    entry: &analysis::OperandIndexing,
) -> (usize, Vec<crate::algebra::IndexingMap>) {
    let c = module.computation(ci);
    let helper = &c.nodes[operand];
    let own = entry.maps.iter().map(|m| m.map.clone()).collect();
    let of_op = t
        .line_named(&format!("%{}", helper.name))
        .is_some_and(|l| !l.primary && l.mlir_op == line.mlir_op);
    let [inner] = helper.operands.as_slice() else {
        return (operand, own);
    };
    if !of_op {
        return (operand, own);
    }
    let query = Query {
        computation: ci,
        instruction: operand,
        direction: Direction::OutputToInput,
        output_id: 0,
        operand_id: 0,
        physical_layout: false,
    };
    let producer = analysis::analyze(module, &query);
    let Some(first) = producer.entries.first().filter(|e| e.unknown.is_none()) else {
        return (operand, own);
    };
    let maps = entry
        .maps
        .iter()
        .flat_map(|m| {
            first.maps.iter().map(|p| {
                let mut composed = m.map.compose(&p.map);
                composed.simplify();
                composed
            })
        })
        .collect();
    (*inner, maps)
}

/// The MLIR value an HLO operand stands for (`%4` for the helper `%4.reshape`).
fn mlir_name(src: &str, t: &Translation, hlo: &str) -> String {
    t.line_named(&format!("%{hlo}"))
        .and_then(|l| src.get(l.mlir_name.clone()))
        .map_or_else(|| format!("%{hlo}"), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_ops_with_their_maps() {
        let src = "func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4xf32> {\n  %cst = stablehlo.constant dense<0.0> : tensor<f32>\n  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n  %1 = stablehlo.negate %0 : tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n";
        let ops = ops(src, &crate::mlir::read(src));
        let shown: Vec<String> = ops
            .iter()
            .map(|o| {
                let reads: Vec<String> = o
                    .operands
                    .iter()
                    .map(|r| format!("{} {}", r.name, r.maps.join(" | ")))
                    .collect();
                format!("{} {} {}: {}", o.value, o.opcode, o.func, reads.join("; "))
            })
            .collect();
        assert_eq!(
            shown,
            [
                "%0 reduce @main: %arg0 (d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]; %cst (d0) -> (), domain: d0 in [0, 3]",
                "%1 negate @main: %0 (d0) -> (d0), domain: d0 in [0, 3]"
            ]
        );
    }
}
