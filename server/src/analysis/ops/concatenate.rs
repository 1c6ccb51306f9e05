//! Concatenate: operand `k` covers `[offset_k, offset_k + size_k)` of the
//! concatenated dimension; the output-to-input domains do not overlap.

use super::OpResult;
use crate::algebra::{IndexingMap, Variable};
use crate::analysis::build::{c, d, identity, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

fn concat_dim(op: &OpInfo) -> Result<usize, Unknown> {
    let out = op.output(0)?;
    let dims = op.dimensions(out.rank())?;
    match dims.as_slice() {
        [k] => Ok(*k),
        _ => Err(Unknown::malformed(
            "concatenate needs exactly one dimension",
        )),
    }
}

/// Offsets of every operand along the concatenated dimension.
fn offsets(op: &OpInfo, dim: usize) -> Result<Vec<i64>, Unknown> {
    let mut offset = 0i64;
    let mut out = vec![];
    for k in 0..op.operands.len() {
        out.push(offset);
        let n = op
            .operand(k)?
            .dims
            .get(dim)
            .copied()
            .ok_or(Unknown::malformed("concatenate: rank mismatch"))?;
        offset = offset
            .checked_add(n)
            .ok_or(Unknown::malformed("concatenate: size overflows"))?;
    }
    Ok(out)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let dim = concat_dim(op)?;
    let offsets = offsets(op, dim)?;
    (0..op.operands.len())
        .map(|k| {
            let operand = op.operand(k)?;
            let vars = (0..out.rank())
                .map(|i| {
                    if i == dim {
                        Variable::new(offsets[k], offsets[k] + operand.dims[i] - 1)
                    } else {
                        var(out.dims[i])
                    }
                })
                .collect();
            let results = (0..out.rank())
                .map(|i| {
                    if i == dim && offsets[k] != 0 {
                        d(i) - c(offsets[k])
                    } else {
                        d(i)
                    }
                })
                .collect();
            Ok(OperandIndexing::plain(IndexingMap::new(
                vars,
                vec![],
                vec![],
                results,
                vec![],
            )))
        })
        .collect()
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let dim = concat_dim(op)?;
    let offsets = offsets(op, dim)?;
    let operand = op.operand(operand_id)?;
    if offsets[operand_id] == 0 {
        return Ok(vec![OperandIndexing::plain(identity(&operand.dims))]);
    }
    let results = (0..operand.rank())
        .map(|i| {
            if i == dim {
                d(i) + c(offsets[operand_id])
            } else {
                d(i)
            }
        })
        .collect();
    let m = crate::analysis::build::map(&operand.dims, vec![], results, vec![]);
    Ok(vec![OperandIndexing::plain(m)])
}
