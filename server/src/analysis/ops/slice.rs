//! Slice: output index `d` reads `d * stride + start`; input to output only the
//! strided elements of `[start, limit)` map back.

use super::OpResult;
use crate::algebra::IndexingMap;
use crate::algebra::Variable;
use crate::analysis::build::{affine, c, d, map, within};
use crate::analysis::op::{OpInfo, SliceDim};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

fn slice_dims(op: &OpInfo, rank: usize) -> Result<Vec<SliceDim>, Unknown> {
    let dims = op
        .attrs
        .slice
        .clone()
        .ok_or(Unknown::malformed("slice needs a `slice` attribute"))?;
    if dims.len() != rank || dims.iter().any(|s| s.stride <= 0) {
        return Err(Unknown::malformed(
            "slice: `slice` does not match the operand rank or has a bad stride",
        ));
    }
    Ok(dims)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let dims = slice_dims(op, out.rank())?;
    let results = dims
        .iter()
        .enumerate()
        .map(|(k, sd)| affine(d(k), sd.stride, sd.start))
        .collect();
    Ok(vec![OperandIndexing::plain(map(
        &out.dims,
        vec![],
        results,
        vec![],
    ))])
}

pub fn input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let dims = slice_dims(op, out.rank())?;
    let mut vars = vec![];
    let mut results = vec![];
    let mut constraints = vec![];
    for (k, sd) in dims.iter().enumerate() {
        let last = sd.start + (out.dims[k] - 1) * sd.stride;
        vars.push(Variable::new(sd.start, last));
        let shifted = if sd.start == 0 {
            d(k)
        } else {
            d(k) - c(sd.start)
        };
        if sd.stride == 1 {
            results.push(shifted);
        } else {
            results.push(shifted.clone().floor_div(sd.stride));
            constraints.push(within(shifted.modulo(sd.stride), 0, 0));
        }
    }
    let m = IndexingMap::new(vars, vec![], vec![], results, constraints);
    Ok(vec![OperandIndexing::plain(m)])
}
