//! The combiner of a linalg reduction, read from the op's body (`arith.addf` ...), and
//! the identity the holes of a tiled reduction loop must contribute (0 for an add, 1 for
//! a multiply, -inf for a float maximum ...), from the shared [`crate::tiling::Reducer`].

use super::domain::LinalgAnalysis;
use super::reader::MlirFile;
use crate::tiling::Reducer;

/// The combiner of `target`: the first combining op in its body, or the sum that a
/// named contraction (matmul, matvec, vecmat, dot, convolutions) implies.
pub fn combiner(file: &MlirFile, target: &LinalgAnalysis) -> Option<(String, Reducer)> {
    body_combiner(file, target).or_else(|| {
        let name = &target.op.name;
        let contraction = ["matmul", "matvec", "vecmat", "dot", "conv"]
            .iter()
            .any(|k| name.contains(k));
        contraction.then(|| (format!("the sum of {name}"), Reducer::Add))
    })
}

/// The first combining op in the body of `target`: its name and reducer.
fn body_combiner(file: &MlirFile, target: &LinalgAnalysis) -> Option<(String, Reducer)> {
    region_combiner(file, target.op.op)
}

/// The first combining op in the body of op `op` (an index into [`MlirFile::ops`]).
pub fn region_combiner(file: &MlirFile, op: usize) -> Option<(String, Reducer)> {
    body_ops(file, op)
        .into_iter()
        .find_map(|o| reducer_of(&file.ops[o].name).map(|r| (file.ops[o].name.clone(), r)))
}

/// The ops of the body of op `op`: the first region nested in the op's own region
/// that starts after the op's header and before the next op (an op without a
/// region has no body, not the next op's).
pub fn body_ops(file: &MlirFile, op: usize) -> Vec<usize> {
    let Some(o) = file.ops.get(op) else {
        return vec![];
    };
    let next_op = file.ops.get(op + 1).map_or(usize::MAX, |n| n.range.start);
    let body = file
        .regions
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.parent == Some(o.region) && r.range.start >= o.range.end && r.range.start < next_op
        })
        .min_by_key(|(_, r)| r.range.start)
        .map(|(i, _)| i);
    match body {
        Some(body) => (0..file.ops.len())
            .filter(|&i| file.ops[i].region == body)
            .collect(),
        None => vec![],
    }
}

/// The reducer an `arith` op computes, as XLA's opcodes name it.
fn reducer_of(op: &str) -> Option<Reducer> {
    let opcode = match op {
        "arith.addf" | "arith.addi" => "add",
        "arith.mulf" | "arith.muli" => "multiply",
        "arith.maximumf" | "arith.maxnumf" | "arith.maxf" | "arith.maxsi" | "arith.maxui" => {
            "maximum"
        }
        "arith.minimumf" | "arith.minnumf" | "arith.minf" | "arith.minsi" | "arith.minui" => {
            "minimum"
        }
        "arith.andi" => "and",
        "arith.ori" => "or",
        _ => return None,
    };
    Reducer::from_opcode(opcode)
}

/// The identity of `reducer` for MLIR element type `element` (`f32`, `i32`, `i1`),
/// spelled as the tiling module does for XLA types.
pub fn identity(reducer: Reducer, element: &str) -> String {
    let xla = match element {
        "i1" => "pred".to_string(),
        e if e.starts_with('i') => format!("s{}", &e[1..]),
        e if e.starts_with("ui") => format!("u{}", &e[2..]),
        e => e.to_string(),
    };
    reducer.identity(&xla)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::analyze;

    fn body(op: &str, ty: &str) -> String {
        format!(
            "func.func @r(%a: tensor<8x16x{ty}>, %o: tensor<8x{ty}>) -> tensor<8x{ty}> {{\n  %0 = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = [\"parallel\", \"reduction\"]}} ins(%a : tensor<8x16x{ty}>) outs(%o : tensor<8x{ty}>) {{\n  ^bb0(%x: {ty}, %y: {ty}):\n    %s = {op} %x, %y : {ty}\n    linalg.yield %s : {ty}\n  }} -> tensor<8x{ty}>\n  return %0 : tensor<8x{ty}>\n}}\n"
        )
    }

    #[test]
    fn the_combiner_and_its_identity_come_from_the_body() {
        for (op, ty, expected) in [
            ("arith.addf", "f32", "0"),
            ("arith.mulf", "f32", "1"),
            ("arith.maximumf", "f32", "-inf"),
            ("arith.minimumf", "f16", "inf"),
            ("arith.addi", "i32", "0"),
            ("arith.andi", "i1", "true"),
        ] {
            let src = body(op, ty);
            let analysis = analyze(&src);
            let (name, reducer) = combiner(&analysis.file, &analysis.linalg[0])
                .unwrap_or_else(|| panic!("no combiner for {op}"));
            assert_eq!(name, op);
            assert_eq!(identity(reducer, ty), expected, "{op} {ty}");
        }
        let src = body("arith.subf", "f32");
        let analysis = analyze(&src);
        assert!(combiner(&analysis.file, &analysis.linalg[0]).is_none());
    }

    #[test]
    fn a_named_contraction_sums() {
        let src = "func.func @m(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  %0 = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>\n  return %0 : tensor<4x8xf32>\n}\n";
        let analysis = analyze(src);
        let (name, reducer) = combiner(&analysis.file, &analysis.linalg[0]).expect("matmul");
        assert_eq!(name, "the sum of linalg.matmul");
        assert_eq!(identity(reducer, "f32"), "0");
    }
}
