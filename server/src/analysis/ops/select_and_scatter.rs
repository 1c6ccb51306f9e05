//! Select-and-scatter (operand, source, init): output element `x` receives the
//! source values of the windows whose selected element it is. To know that, it
//! reads the source element of every window containing `x` and every operand
//! element of those windows (the select compares them all). Window `w` contains
//! `x` at position `t` when `x + pad_low = w * stride + t`.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap, Interval};
use crate::analysis::build::{c, d, from_scalar, s, to_scalar, var, vars, within};
use crate::analysis::op::{OpInfo, WindowDim};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

fn window(op: &OpInfo, rank: usize) -> Result<Vec<WindowDim>, Unknown> {
    let w = op.attrs.window.clone().ok_or(Unknown::malformed(
        "select-and-scatter needs a `window` attribute",
    ))?;
    if w.len() != rank
        || w.iter()
            .any(|x| x.stride <= 0 || x.base_dilation != 1 || x.window_dilation != 1)
    {
        return Err(Unknown::malformed("select-and-scatter: unsupported window"));
    }
    Ok(w)
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let source = op.operand(1)?;
    let win = window(op, out.rank())?;
    let mut ranges = vec![];
    let mut t_sym: Vec<Option<usize>> = vec![];
    for w in &win {
        t_sym.push(if w.size > 1 {
            ranges.push(var(w.size));
            Some(ranges.len() - 1)
        } else {
            None
        });
    }
    let mut window_constraints: Vec<(Expr, Interval)> = vec![];
    let mut source_results = vec![];
    let mut starts = vec![];
    for (k, w) in win.iter().enumerate() {
        // x + low - t = w * stride
        let mut pos = if w.pad_low == 0 {
            d(k)
        } else {
            d(k) + c(w.pad_low)
        };
        if let Some(t) = t_sym[k] {
            pos = pos - s(t);
        }
        window_constraints.push(within(pos.clone(), 0, (source.dims[k] - 1) * w.stride));
        if w.stride > 1 {
            window_constraints.push(within(pos.clone().modulo(w.stride), 0, 0));
            source_results.push(pos.clone().floor_div(w.stride));
        } else {
            source_results.push(pos.clone());
        }
        starts.push(pos);
    }
    let source_map = IndexingMap::new(
        vars(&out.dims),
        ranges.clone(),
        vec![],
        source_results,
        window_constraints.clone(),
    );
    let mut operand_ranges = ranges.clone();
    let mut operand_results = vec![];
    let mut operand_constraints = window_constraints;
    for (k, w) in win.iter().enumerate() {
        // Element u of window w: w * stride + u - low = (x + low - t) + u - low.
        let mut e = starts[k].clone() - c(w.pad_low);
        if w.size > 1 {
            operand_ranges.push(var(w.size));
            e = e + s(operand_ranges.len() - 1);
        }
        operand_constraints.push(within(e.clone(), 0, out.dims[k] - 1));
        operand_results.push(e);
    }
    let mut operand_map = IndexingMap::new(
        vars(&out.dims),
        operand_ranges,
        vec![],
        operand_results,
        operand_constraints,
    );
    operand_map.simplify();
    let mut source_map = source_map;
    source_map.simplify();
    Ok(vec![
        OperandIndexing::plain(operand_map),
        OperandIndexing::plain(source_map),
        OperandIndexing::plain(to_scalar(&out.dims)),
    ])
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    let source = op.operand(1)?;
    let win = window(op, out.rank())?;
    match operand_id {
        1 => {
            // Source element w is read by every element of window w.
            let mut ranges = vec![];
            let mut results = vec![];
            let mut constraints = vec![];
            for (k, w) in win.iter().enumerate() {
                let mut e = if w.stride == 1 { d(k) } else { d(k) * w.stride };
                if w.pad_low != 0 {
                    e = e - c(w.pad_low);
                }
                if w.size > 1 {
                    ranges.push(var(w.size));
                    e = e + s(ranges.len() - 1);
                }
                constraints.push(within(e.clone(), 0, out.dims[k] - 1));
                results.push(e);
            }
            let mut m = IndexingMap::new(vars(&source.dims), ranges, vec![], results, constraints);
            m.simplify();
            Ok(vec![OperandIndexing::plain(m)])
        }
        2 => Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))]),
        _ => Err(Unknown::not_modelled(
            "select-and-scatter: operand input-to-output is not modelled",
        )),
    }
}
