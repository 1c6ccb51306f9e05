//! FFT: each output element reads every element along the transformed (minor)
//! dimensions; batch dimensions map to themselves. Covers FFT, IFFT, RFFT, IRFFT
//! (the operand and output extents of the transformed dimensions may differ).

use super::OpResult;
use crate::analysis::build::{d, map, s, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

fn transformed(op: &OpInfo) -> Result<usize, Unknown> {
    let n = op
        .attrs
        .fft_length
        .as_ref()
        .map(Vec::len)
        .ok_or(Unknown::malformed("fft needs `fft_length`"))?;
    let operand = op.operand(0)?;
    if n > operand.rank() || op.output(0)?.rank() != operand.rank() {
        return Err(Unknown::malformed(
            "fft: `fft_length` does not match the operand",
        ));
    }
    Ok(n)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let n = transformed(op)?;
    let operand = op.operand(0)?;
    let out = op.output(0)?;
    let batch = operand.rank() - n;
    let ranges = (batch..operand.rank())
        .map(|k| var(operand.dims[k]))
        .collect();
    let results = (0..operand.rank())
        .map(|k| if k < batch { d(k) } else { s(k - batch) })
        .collect();
    Ok(vec![OperandIndexing::plain(map(
        &out.dims,
        ranges,
        results,
        vec![],
    ))])
}

pub fn input_to_output(op: &OpInfo) -> OpResult {
    let n = transformed(op)?;
    let operand = op.operand(0)?;
    let out = op.output(0)?;
    let batch = out.rank() - n;
    let ranges = (batch..out.rank()).map(|k| var(out.dims[k])).collect();
    let results = (0..out.rank())
        .map(|k| if k < batch { d(k) } else { s(k - batch) })
        .collect();
    Ok(vec![OperandIndexing::plain(map(
        &operand.dims,
        ranges,
        results,
        vec![],
    ))])
}
