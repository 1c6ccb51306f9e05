//! Reverse: reversed dimensions read `n - 1 - d`. The map is its own inverse, so
//! it serves both directions.

use super::OpResult;
use crate::analysis::build::{c, d, map};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let dims = op.dimensions(out.rank())?;
    let results = (0..out.rank())
        .map(|k| {
            if dims.contains(&k) {
                -d(k) + c(out.dims[k] - 1)
            } else {
                d(k)
            }
        })
        .collect();
    Ok(vec![OperandIndexing::plain(map(
        &out.dims,
        vec![],
        results,
        vec![],
    ))])
}
