//! Reduce-window (variadic): the window is applied to the padded, base-dilated
//! input. Output index `d` and window position `s` give padded position
//! `d * stride + s * window_dilation`; it reads the input where that position
//! minus the low padding is a multiple of the base dilation inside the input.
//! This is XLA's composition of the window map with the pad map, built directly.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap, Interval, Variable};
use crate::analysis::build::{affine, c, d, from_scalar, s, to_scalar, var, vars, within};
use crate::analysis::op::{OpInfo, WindowDim};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

/// Output-to-input map through one window per dimension. Window dimensions of
/// size 1 get no range variable. `first_range` offsets the range variables.
pub struct WindowedDims {
    pub ranges: Vec<Variable>,
    pub results: Vec<Expr>,
    pub constraints: Vec<(Expr, Interval)>,
}

/// `out_index[k]` is the output index expression of dimension `k`, `input[k]` the
/// input extent, `out[k]` the output extent.
pub fn windowed(
    out_index: &[Expr],
    out: &[i64],
    input: &[i64],
    window: &[WindowDim],
) -> WindowedDims {
    let mut w = WindowedDims {
        ranges: vec![],
        results: vec![],
        constraints: vec![],
    };
    for (k, win) in window.iter().enumerate() {
        let mut padded = affine(out_index[k].clone(), win.stride, 0);
        let mut hi = (out[k] - 1) * win.stride;
        if win.size > 1 {
            w.ranges.push(var(win.size));
            padded = padded + affine(s(w.ranges.len() - 1), win.window_dilation, 0);
            hi += (win.size - 1) * win.window_dilation;
        }
        let (lo_ok, hi_ok) = (
            win.pad_low,
            win.pad_low + (input[k] - 1) * win.base_dilation,
        );
        if 0 < lo_ok || hi > hi_ok {
            w.constraints.push(within(padded.clone(), lo_ok, hi_ok));
        }
        let rel = if win.pad_low == 0 {
            padded
        } else {
            padded - c(win.pad_low)
        };
        if win.base_dilation > 1 {
            w.constraints
                .push(within(rel.clone().modulo(win.base_dilation), 0, 0));
            w.results.push(rel.floor_div(win.base_dilation));
        } else {
            w.results.push(rel);
        }
    }
    w
}

/// Input-to-output through one window per dimension: input index `x` lies in the
/// windows `w` with `x * base_dilation + low = w * stride + t * window_dilation`.
pub fn windowed_inverse(input: &[i64], out: &[i64], window: &[WindowDim]) -> WindowedDims {
    let mut w = WindowedDims {
        ranges: vec![],
        results: vec![],
        constraints: vec![],
    };
    for (k, win) in window.iter().enumerate() {
        let mut pos = affine(d(k), win.base_dilation, win.pad_low);
        if win.size > 1 {
            w.ranges.push(var(win.size));
            pos = pos - affine(s(w.ranges.len() - 1), win.window_dilation, 0);
        }
        w.constraints
            .push(within(pos.clone(), 0, (out[k] - 1) * win.stride));
        if win.stride > 1 {
            w.constraints
                .push(within(pos.clone().modulo(win.stride), 0, 0));
            w.results.push(pos.floor_div(win.stride));
        } else {
            w.results.push(pos);
        }
    }
    let _ = input;
    w
}

fn window(op: &OpInfo, rank: usize) -> Result<Vec<WindowDim>, Unknown> {
    let w = op.attrs.window.clone().ok_or(Unknown::malformed(
        "reduce-window needs a `window` attribute",
    ))?;
    if w.len() != rank
        || w.iter()
            .any(|x| x.stride <= 0 || x.base_dilation <= 0 || x.window_dilation <= 0)
    {
        return Err(Unknown::malformed(
            "reduce-window: `window` does not match the operand rank",
        ));
    }
    Ok(w)
}

pub fn output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let n = op.operands.len() / 2;
    let out = op.output(output_id)?;
    let input = op.operand(0)?;
    if input.rank() != out.rank() {
        return Err(Unknown::malformed(
            "reduce-window: operand and result ranks differ",
        ));
    }
    let win = window(op, out.rank())?;
    let index: Vec<Expr> = (0..out.rank()).map(d).collect();
    let w = windowed(&index, &out.dims, &input.dims, &win);
    let mut m = IndexingMap::new(vars(&out.dims), w.ranges, vec![], w.results, w.constraints);
    m.simplify();
    let mut entries: Vec<_> = (0..n).map(|_| OperandIndexing::plain(m.clone())).collect();
    entries.extend((0..n).map(|_| OperandIndexing::plain(to_scalar(&out.dims))));
    Ok(entries)
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let n = op.operands.len() / 2;
    let input = op.operand(0)?;
    (0..op.shape.output_count())
        .map(|j| {
            let out = op.output(j)?;
            if operand_id >= n {
                return Ok(OperandIndexing::plain(from_scalar(&out.dims)));
            }
            if input.rank() != out.rank() {
                return Err(Unknown::malformed(
                    "reduce-window: operand and result ranks differ",
                ));
            }
            let win = window(op, out.rank())?;
            let w = windowed_inverse(&input.dims, &out.dims, &win);
            let mut m = IndexingMap::new(
                vars(&input.dims),
                w.ranges,
                vec![],
                w.results,
                w.constraints,
            );
            m.simplify();
            Ok(OperandIndexing::plain(m))
        })
        .collect()
}
