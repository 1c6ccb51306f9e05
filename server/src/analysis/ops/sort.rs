//! Sort and top-k: an output element depends on the whole row along the sort
//! dimension of every operand (the comparator sees keys of all operands), so the
//! sort dimension becomes a range variable.

use super::OpResult;
use crate::analysis::build::{d, map, s, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::shape::ArrayShape;
use crate::analysis::unknown::Unknown;

fn row_map(index_extents: &[i64], operand: &ArrayShape, dim: usize) -> crate::algebra::IndexingMap {
    let results = (0..operand.rank())
        .map(|k| if k == dim { s(0) } else { d(k) })
        .collect();
    map(index_extents, vec![var(operand.dims[dim])], results, vec![])
}

fn sort_dim(op: &OpInfo) -> Result<usize, Unknown> {
    let rank = op.operand(0)?.rank();
    match op.dimensions(rank)?.as_slice() {
        [k] => Ok(*k),
        _ => Err(Unknown::malformed("sort needs exactly one dimension")),
    }
}

pub fn output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let out = op.output(output_id)?;
    let dim = sort_dim(op)?;
    (0..op.operands.len())
        .map(|k| {
            let operand = op.operand(k)?;
            if operand.dims != out.dims {
                return Err(Unknown::malformed("sort: operand shapes differ"));
            }
            Ok(OperandIndexing::plain(row_map(&out.dims, operand, dim)))
        })
        .collect()
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let dim = sort_dim(op)?;
    let operand = op.operand(operand_id)?;
    (0..op.shape.output_count())
        .map(|j| {
            Ok(OperandIndexing::plain(row_map(
                &operand.dims,
                op.output(j)?,
                dim,
            )))
        })
        .collect()
}

/// `topk(x)` along the last dimension: every output element reads its whole row.
pub fn topk_output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let out = op.output(output_id)?;
    let operand = op.operand(0)?;
    let last = operand
        .rank()
        .checked_sub(1)
        .ok_or(Unknown::malformed("topk of a scalar"))?;
    if out.rank() != operand.rank() {
        return Err(Unknown::malformed(
            "topk: output rank differs from the operand",
        ));
    }
    Ok(vec![OperandIndexing::plain(row_map(
        &out.dims, operand, last,
    ))])
}

pub fn topk_input_to_output(op: &OpInfo) -> OpResult {
    let operand = op.operand(0)?;
    let last = operand
        .rank()
        .checked_sub(1)
        .ok_or(Unknown::malformed("topk of a scalar"))?;
    (0..op.shape.output_count())
        .map(|j| {
            Ok(OperandIndexing::plain(row_map(
                &operand.dims,
                op.output(j)?,
                last,
            )))
        })
        .collect()
}
