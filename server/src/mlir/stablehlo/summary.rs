//! Every op of a StableHLO file's functions with the maps of the HLO instruction
//! it is: what `hlo-lsp mlir FILE.mlir` prints for StableHLO (the linalg summary's
//! counterpart), one record per op in text order, each operand's output-to-input
//! maps (or why they are unknown).

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
    pub operands: Vec<OperandMaps>,
}

/// An operand (`%arg0`) read by an op: its maps from the op's output index.
#[derive(Clone, Debug)]
pub struct OperandMaps {
    pub name: String,
    /// One line each: `(d0, d1) -> (d1), domain: ...`.
    pub maps: Vec<String>,
    /// Why the maps are not all known.
    pub unknown: Option<String>,
}

/// The ops of `file`'s functions (not of region bodies such as a reduce's
/// combiner) that have an HLO counterpart other than a parameter or constant.
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
                return out;
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
    out
}

/// The record of the instruction at `(computation, node)`, whose line is `line`;
/// `None` when its op is not directly in a function.
fn op_record(
    src: &str,
    file: &MlirFile,
    t: &Translation,
    line: &super::Line,
    module: &analysis::Module,
    (ci, ni): (usize, usize),
    options: &PrintOptions,
) -> Option<OpMaps> {
    let op = file.ops.iter().find(|o| o.range == line.mlir_op)?;
    let func = file.funcs.get(op.func?)?;
    let in_body = file.ops[func.op].regions.first() == Some(&op.region);
    if !in_body {
        return None;
    }
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
                    maps: vec![],
                    unknown: Some("the operand is not defined".into()),
                };
            }
            let (name, maps) = through_helper(t, line, module, ci, o, entry);
            OperandMaps {
                name: mlir_name(src, t, &name),
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
        operands,
    })
}

/// An operand's name and maps, read through a helper instruction the op was
/// written with (the reshape before a broadcast that stretches size-1
/// dimensions): the op's own operand, the maps composed.
fn through_helper(
    t: &Translation,
    line: &super::Line,
    module: &analysis::Module,
    ci: usize,
    operand: usize,
    entry: &analysis::OperandIndexing,
) -> (String, Vec<crate::algebra::IndexingMap>) {
    let c = module.computation(ci);
    let helper = &c.nodes[operand];
    let own = entry.maps.iter().map(|m| m.map.clone()).collect();
    let of_op = t
        .line_named(&format!("%{}", helper.name))
        .is_some_and(|l| !l.primary && l.mlir_op == line.mlir_op);
    let [inner] = helper.operands.as_slice() else {
        return (helper.name.clone(), own);
    };
    if !of_op {
        return (helper.name.clone(), own);
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
        return (helper.name.clone(), own);
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
    (c.nodes[*inner].name.clone(), maps)
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
