//! Broadcast: output dimension `dimensions[i]` is operand dimension `i`; the other
//! output dimensions do not exist in the operand (range variables input to output).

use super::OpResult;
use crate::analysis::build::{d, map, s, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let dims = broadcast_dims(op, operand.rank(), out.rank())?;
    if dims.len() != operand.rank() {
        return Err(Unknown::malformed(
            "broadcast: `dimensions` does not match the operand rank",
        ));
    }
    let results = dims.iter().map(|&k| d(k)).collect();
    Ok(vec![OperandIndexing::plain(map(
        &out.dims,
        vec![],
        results,
        vec![],
    ))])
}

pub fn input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let dims = broadcast_dims(op, operand.rank(), out.rank())?;
    if dims.len() != operand.rank() {
        return Err(Unknown::malformed(
            "broadcast: `dimensions` does not match the operand rank",
        ));
    }
    let mut ranges = vec![];
    let results = (0..out.rank())
        .map(|k| match dims.iter().position(|&x| x == k) {
            Some(i) => d(i),
            None => {
                ranges.push(var(out.dims[k]));
                s(ranges.len() - 1)
            }
        })
        .collect();
    Ok(vec![OperandIndexing::plain(map(
        &operand.dims,
        ranges,
        results,
        vec![],
    ))])
}

/// `dimensions`, which XLA lets a scalar operand omit.
fn broadcast_dims(
    op: &OpInfo,
    operand_rank: usize,
    out_rank: usize,
) -> Result<Vec<usize>, Unknown> {
    if op.attrs.dimensions.is_none() && operand_rank == 0 {
        return Ok(vec![]);
    }
    op.dimensions(out_rank)
}
