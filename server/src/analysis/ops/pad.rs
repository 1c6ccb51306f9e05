//! Pad: the inverse of a strided slice. Output index `d` reads operand index
//! `(d - low) / (interior + 1)` where that divides and lands inside the operand;
//! the padding value is read by every output element (XLA's convention).

use super::OpResult;
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::analysis::build::{affine, c, d, from_scalar, to_scalar, within};
use crate::analysis::op::{OpInfo, PadDim};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

/// The padding of each dimension, when it fits the operand and output shapes.
fn pad_dims(op: &OpInfo, operand: &[i64], out: &[i64]) -> Result<Vec<PadDim>, Unknown> {
    let dims = op
        .attrs
        .padding
        .clone()
        .ok_or(Unknown::malformed("pad needs a `padding` attribute"))?;
    op.same_rank(operand.len(), out.len())?;
    if dims.len() != out.len() || dims.iter().any(|p| p.interior < 0) {
        return Err(Unknown::malformed(
            "pad: `padding` does not match the operand rank",
        ));
    }
    // The last operand element's padded position, low + (extent - 1) * (interior + 1),
    // must be an i64 for the maps below.
    let fits = dims.iter().zip(operand).all(|(p, &n)| {
        (n - 1)
            .checked_mul(p.interior + 1)
            .and_then(|x| x.checked_add(p.low))
            .is_some()
    });
    if !fits {
        return Err(Unknown::malformed(
            "pad: the padded positions overflow 64-bit integers",
        ));
    }
    Ok(dims)
}

/// Output-to-input map of padding `operand` extents by `pads` into `out` extents.
pub fn pad_map(operand: &[i64], out: &[i64], pads: &[PadDim]) -> IndexingMap {
    let mut vars = vec![];
    let mut results = vec![];
    let mut constraints = vec![];
    for (k, p) in pads.iter().enumerate() {
        let step = p.interior + 1;
        let lo = p.low.max(0);
        let hi = (p.low + (operand[k] - 1) * step).min(out[k] - 1);
        vars.push(Variable::new(lo, hi));
        let shifted: Expr = if p.low == 0 { d(k) } else { d(k) - c(p.low) };
        if step == 1 {
            results.push(shifted);
        } else {
            results.push(shifted.clone().floor_div(step));
            constraints.push(within(shifted.modulo(step), 0, 0));
        }
    }
    IndexingMap::new(vars, vec![], vec![], results, constraints)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let pads = pad_dims(op, &operand.dims, &out.dims)?;
    Ok(vec![
        OperandIndexing::plain(pad_map(&operand.dims, &out.dims, &pads)),
        OperandIndexing::plain(to_scalar(&out.dims)),
    ])
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    if operand_id == 1 {
        return Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))]);
    }
    let operand = op.operand(0)?;
    let pads = pad_dims(op, &operand.dims, &out.dims)?;
    let mut vars = vec![];
    let mut results = vec![];
    for (k, p) in pads.iter().enumerate() {
        let step = p.interior + 1;
        // Operand indices i with 0 <= low + i * step <= out - 1.
        let lo = ceil_div(-p.low, step).max(0);
        let hi = floor_div(out.dims[k] - 1 - p.low, step).min(operand.dims[k] - 1);
        vars.push(Variable::new(lo, hi));
        results.push(affine(d(k), step, p.low));
    }
    let m = IndexingMap::new(vars, vec![], vec![], results, vec![]);
    Ok(vec![OperandIndexing::plain(m)])
}

fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}
