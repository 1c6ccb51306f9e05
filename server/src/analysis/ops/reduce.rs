//! Reduce (variadic): inputs `0..n`, init values `n..2n`. Kept dimensions map to
//! the output, reduced ones become range variables in increasing dimension order;
//! every output reads the same elements of every input.

use super::OpResult;
use crate::analysis::build::{d, from_scalar, map, s, to_scalar, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

fn reduced(op: &OpInfo) -> Result<(usize, Vec<usize>), Unknown> {
    let n = op.operands.len() / 2;
    if n == 0 || !op.operands.len().is_multiple_of(2) {
        return Err(Unknown::malformed(
            "reduce needs inputs and as many init values",
        ));
    }
    let input = op.operand(0)?;
    let mut dims = op.dimensions(input.rank())?;
    dims.sort_unstable();
    dims.dedup();
    Ok((n, dims))
}

pub fn output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let (n, dims) = reduced(op)?;
    let out = op.output(output_id)?;
    let mut entries = vec![];
    for k in 0..n {
        let input = op.operand(k)?;
        if input.rank() != out.rank() + dims.len() {
            return Err(Unknown::malformed(
                "reduce: output rank does not match the reduced dimensions",
            ));
        }
        let ranges = dims.iter().map(|&r| var(input.dims[r])).collect();
        let mut kept = 0;
        let results = (0..input.rank())
            .map(|j| match dims.iter().position(|&r| r == j) {
                Some(p) => s(p),
                None => {
                    kept += 1;
                    d(kept - 1)
                }
            })
            .collect();
        entries.push(OperandIndexing::plain(map(
            &out.dims,
            ranges,
            results,
            vec![],
        )));
    }
    entries.extend((0..n).map(|_| OperandIndexing::plain(to_scalar(&out.dims))));
    Ok(entries)
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let (n, dims) = reduced(op)?;
    let outputs = op.shape.output_count();
    (0..outputs)
        .map(|j| {
            let out = op.output(j)?;
            if operand_id >= n {
                return Ok(OperandIndexing::plain(from_scalar(&out.dims)));
            }
            let input = op.operand(operand_id)?;
            let results = (0..input.rank())
                .filter(|k| !dims.contains(k))
                .map(d)
                .collect();
            Ok(OperandIndexing::plain(map(
                &input.dims,
                vec![],
                results,
                vec![],
            )))
        })
        .collect()
}
