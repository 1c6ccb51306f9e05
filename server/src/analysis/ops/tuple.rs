//! Tuples: `get-tuple-element` reads the selected element at the same index;
//! output `k` of `tuple` (and `optimization-barrier`) is operand `k`;
//! `add-dependency` passes its first operand through.

use super::OpResult;
use crate::analysis::build::identity;
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;

pub fn gte_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    Ok(vec![OperandIndexing::plain(identity(&out.dims))])
}

pub fn gte_input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    Ok(vec![OperandIndexing::plain(identity(&out.dims))])
}

pub fn tuple_output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let out = op.output(output_id)?;
    if op.opcode == "optimization-barrier" {
        // One tuple operand passed through: element `output_id` of it.
        return Ok(vec![OperandIndexing::plain(identity(&out.dims))]);
    }
    Ok((0..op.operands.len())
        .map(|k| {
            if k == output_id {
                OperandIndexing::plain(identity(&out.dims))
            } else {
                OperandIndexing::none()
            }
        })
        .collect())
}

pub fn tuple_input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    Ok((0..op.shape.output_count())
        .map(|j| match op.output(j) {
            Ok(out) if j == operand_id || op.opcode == "optimization-barrier" => {
                OperandIndexing::plain(identity(&out.dims))
            }
            _ => OperandIndexing::none(),
        })
        .collect())
}

pub fn add_dependency_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let mut entries = vec![OperandIndexing::plain(identity(&out.dims))];
    entries.extend((1..op.operands.len()).map(|_| OperandIndexing::none()));
    Ok(entries)
}

pub fn add_dependency_input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    Ok(vec![if operand_id == 0 {
        OperandIndexing::plain(identity(&out.dims))
    } else {
        OperandIndexing::none()
    }])
}
