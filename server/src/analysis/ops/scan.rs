//! Scan, as XLA's indexing analysis describes it: the per-step access. Output
//! element `i` of a scanned output reads input element `i` and the carries; the
//! final carries read `() -> ()`. (The dependence through the carry on earlier
//! elements is not part of XLA's maps.)

use super::OpResult;
use crate::analysis::build::{identity, to_scalar};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

pub fn output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let out = op.output(output_id)?;
    let carries = op.attrs.num_carries.unwrap_or(0).max(0) as usize;
    let inputs = op
        .operands
        .len()
        .checked_sub(carries)
        .ok_or(Unknown::malformed("scan: more carries than operands"))?;
    let scanned_outputs = op
        .shape
        .output_count()
        .checked_sub(carries)
        .ok_or(Unknown::malformed("scan: more carries than outputs"))?;
    (0..op.operands.len())
        .map(|k| {
            if output_id >= scanned_outputs || k >= inputs {
                return Ok(OperandIndexing::plain(to_scalar(&out.dims)));
            }
            if op.operand(k)?.dims == out.dims {
                Ok(OperandIndexing::plain(identity(&out.dims)))
            } else {
                Err(Unknown::malformed(
                    "scan: scanned operand shape differs from the output",
                ))
            }
        })
        .collect()
}
