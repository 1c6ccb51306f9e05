//! Transpose: a permutation of dimensions. Output dimension `i` is operand
//! dimension `dimensions[i]`.

use super::OpResult;
use crate::algebra::IndexingMap;
use crate::analysis::build::{d, map};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;
use crate::model::shape::check_permutation;

/// Output to input of a transpose with permutation `perm` over output `extents`:
/// operand dimension `perm[i]` is `d{i}`.
pub fn permutation_map(out_extents: &[i64], perm: &[usize]) -> IndexingMap {
    let mut results = vec![d(0); perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        results[p] = d(i);
    }
    map(out_extents, vec![], results, vec![])
}

/// Input to output: output dimension `i` is `d{perm[i]}`.
pub fn inverse_permutation_map(in_extents: &[i64], perm: &[usize]) -> IndexingMap {
    map(
        in_extents,
        vec![],
        perm.iter().map(|&p| d(p)).collect(),
        vec![],
    )
}

/// The permutation, when it fits the output and the operand ranks.
fn permutation(op: &OpInfo, out: usize, operand: usize) -> Result<Vec<usize>, Unknown> {
    op.same_rank(operand, out)?;
    let perm = op.dimensions(out)?;
    check_permutation(&perm, out).map_err(|m| {
        Unknown::malformed(format!("transpose: `dimensions` is not a permutation: {m}"))
    })?;
    Ok(perm)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let perm = permutation(op, out.rank(), op.operand(0)?.rank())?;
    Ok(vec![OperandIndexing::plain(permutation_map(
        &out.dims, &perm,
    ))])
}

pub fn input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let perm = permutation(op, out.rank(), operand.rank())?;
    Ok(vec![OperandIndexing::plain(inverse_permutation_map(
        &operand.dims,
        &perm,
    ))])
}
