//! Elementwise ops: the identity, except that a scalar operand of a non-scalar op
//! (`select(pred[], ..)`, `clamp(f32[], x, f32[])`) is read by every element.
//! Also `bitcast-convert` between element types of different widths (which adds or
//! drops a minor dimension) and `rng` (scalar parameters).

use super::OpResult;
use crate::analysis::build::{d, from_scalar, identity, map, s, to_scalar, var};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

/// Opcodes whose output element `i` reads exactly operand element `i`.
const ELEMENTWISE: &[&str] = &[
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "compare",
    "complex",
    "convert",
    "copy",
    "cosine",
    "count-leading-zeros",
    "divide",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "reduce-precision",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "xor",
    "domain",
];

pub fn is_elementwise(opcode: &str) -> bool {
    ELEMENTWISE.contains(&opcode)
}

/// `(d..) -> (d..)` per operand, `(d..) -> ()` for scalar operands.
pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    (0..op.operands.len())
        .map(|k| {
            let operand = op.operand(k)?;
            if operand.rank() == 0 && out.rank() > 0 {
                Ok(OperandIndexing::plain(to_scalar(&out.dims)))
            } else if operand.dims == out.dims {
                Ok(OperandIndexing::plain(identity(&out.dims)))
            } else {
                Err(Unknown::malformed(format!(
                    "{}: operand {k} shape differs from the output",
                    op.opcode
                )))
            }
        })
        .collect()
}

/// The identity, or `()[s..] -> (s..)` from a scalar operand.
pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(operand_id)?;
    if operand.rank() == 0 && out.rank() > 0 {
        Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))])
    } else if operand.dims == out.dims {
        Ok(vec![OperandIndexing::plain(identity(&operand.dims))])
    } else {
        Err(Unknown::malformed(format!(
            "{}: operand {operand_id} shape differs from the output",
            op.opcode
        )))
    }
}

/// `rng(a, b)`: every element reads the scalar parameters.
pub fn rng_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    (0..op.operands.len())
        .map(|k| {
            let operand = op.operand(k)?;
            if operand.rank() == 0 {
                Ok(OperandIndexing::plain(to_scalar(&out.dims)))
            } else {
                Err(Unknown::malformed("rng with non-scalar parameters"))
            }
        })
        .collect()
}

pub fn rng_input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))])
}

/// Same rank: identity. Wider output element: the output drops the operand's
/// minor dimension (`u8[4,4] -> f32[4]` reads `(d0)[s0] -> (d0, s0)`). Narrower:
/// the output adds one (`f32[4] -> u8[4,4]` reads `(d0, d1) -> (d0)`).
pub fn bitcast_convert_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let m = if operand.rank() == out.rank() && operand.dims == out.dims {
        identity(&out.dims)
    } else if operand.rank() == out.rank() + 1 && operand.dims[..out.rank()] == out.dims[..] {
        let minor = operand.dims[out.rank()];
        let mut results: Vec<_> = (0..out.rank()).map(d).collect();
        results.push(s(0));
        map(&out.dims, vec![var(minor)], results, vec![])
    } else if out.rank() == operand.rank() + 1 && out.dims[..operand.rank()] == operand.dims[..] {
        map(
            &out.dims,
            vec![],
            (0..operand.rank()).map(d).collect(),
            vec![],
        )
    } else {
        return Err(Unknown::malformed("bitcast-convert shapes do not match"));
    };
    Ok(vec![OperandIndexing::plain(m)])
}

pub fn bitcast_convert_input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let m = if operand.rank() == out.rank() && operand.dims == out.dims {
        identity(&out.dims)
    } else if operand.rank() == out.rank() + 1 && operand.dims[..out.rank()] == out.dims[..] {
        map(
            &operand.dims,
            vec![],
            (0..out.rank()).map(d).collect(),
            vec![],
        )
    } else if out.rank() == operand.rank() + 1 && out.dims[..operand.rank()] == operand.dims[..] {
        let minor = out.dims[operand.rank()];
        let mut results: Vec<_> = (0..operand.rank()).map(d).collect();
        results.push(s(0));
        map(&operand.dims, vec![var(minor)], results, vec![])
    } else {
        return Err(Unknown::malformed("bitcast-convert shapes do not match"));
    };
    Ok(vec![OperandIndexing::plain(m)])
}
