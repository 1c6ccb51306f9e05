//! Reshape and bitcast.
//!
//! A reshape splits into groups of consecutive dimensions with equal element
//! counts (XLA's factorization). Within a group the output index is linearized and
//! delinearized into the input dimensions: a single input dimension is an expand
//! (`d0 * 8 + d1`), a single output dimension a collapse (`d0 floordiv 8, d0 mod 8`),
//! anything else the generic composition of both. The map is simplified, as XLA's
//! tests expect.
//!
//! A bitcast reinterprets the physical buffer: logical output index -> physical
//! output index (its layout) -> row-major reshape to the physical input shape ->
//! logical input index. A pure permutation prints as a transpose.

use super::transpose::permutation_map;
use super::OpResult;
use crate::algebra::{Expr, IndexingMap};
use crate::analysis::build::{affine, c, d, map};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::shape::ArrayShape;
use crate::analysis::unknown::Unknown;

/// Output-to-input map of a row-major reshape from `input` extents to `output`
/// extents (dimensions of the map: the output).
pub fn reshape_map(input: &[i64], output: &[i64]) -> Result<IndexingMap, Unknown> {
    let in_count = crate::analysis::build::product(input)?;
    let out_count = crate::analysis::build::product(output)?;
    if in_count != out_count {
        return Err(Unknown::malformed(format!(
            "reshape: element counts differ ({in_count} vs {out_count})"
        )));
    }
    if in_count == 0 {
        return Ok(map(
            output,
            vec![],
            input.iter().map(|_| c(0)).collect(),
            vec![],
        ));
    }
    let mut results: Vec<Expr> = Vec::with_capacity(input.len());
    for (in_group, out_group) in groups(input, output) {
        results.extend(group_exprs(input, output, &in_group, &out_group));
    }
    let mut m = map(output, vec![], results, vec![]);
    m.simplify();
    Ok(m)
}

/// Pairs of (input dims, output dims) with equal products, in order. Dimensions
/// of size 1 join the current group, as in XLA.
fn groups(input: &[i64], output: &[i64]) -> Vec<(Vec<usize>, Vec<usize>)> {
    let (mut i, mut j) = (0, 0);
    let mut out = vec![];
    while i < input.len() || j < output.len() {
        let (mut gi, mut go) = (vec![], vec![]);
        let (mut pi, mut po) = (1i128, 1i128);
        loop {
            if i < input.len() && (gi.is_empty() || pi < po || (pi == po && input[i] == 1)) {
                pi *= input[i] as i128;
                gi.push(i);
                i += 1;
            } else if j < output.len() && (go.is_empty() || po < pi || (pi == po && output[j] == 1))
            {
                po *= output[j] as i128;
                go.push(j);
                j += 1;
            } else {
                break;
            }
        }
        out.push((gi, go));
    }
    out
}

/// Input index expressions for one group.
fn group_exprs(input: &[i64], output: &[i64], gi: &[usize], go: &[usize]) -> Vec<Expr> {
    // Linearize the output dimensions of the group (size-1 dimensions are 0).
    let mut linear: Option<Expr> = None;
    let mut stride = 1i64;
    for &o in go.iter().rev() {
        if output[o] == 1 {
            continue;
        }
        let term = affine(d(o), stride, 0);
        linear = Some(match linear {
            None => term,
            Some(rest) => term + rest,
        });
        stride = stride.saturating_mul(output[o]);
    }
    let linear = linear.unwrap_or_else(|| c(0));
    let outermost = gi.iter().copied().find(|&k| input[k] != 1);
    // Delinearize into the input dimensions.
    let mut exprs = vec![];
    for (pos, &k) in gi.iter().enumerate() {
        if input[k] == 1 {
            exprs.push(c(0));
            continue;
        }
        let inner: i64 = gi[pos + 1..].iter().map(|&x| input[x]).product();
        let mut e = linear.clone();
        if inner > 1 {
            e = e.floor_div(inner);
        }
        if Some(k) != outermost {
            e = e.modulo(input[k]);
        }
        exprs.push(e);
    }
    exprs
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    Ok(vec![OperandIndexing::plain(reshape_map(
        &operand.dims,
        &out.dims,
    )?)])
}

pub fn input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    Ok(vec![OperandIndexing::plain(reshape_map(
        &out.dims,
        &operand.dims,
    )?)])
}

/// Output-to-input map of a bitcast from `input` to `output` (layouts included).
pub fn bitcast_map(input: &ArrayShape, output: &ArrayShape) -> Result<IndexingMap, Unknown> {
    let in_phys = input.physical_dims();
    let out_phys = output.physical_dims();
    let out_m2m = output.major_to_minor();
    let in_m2m = input.major_to_minor();
    if in_phys == out_phys {
        // A permutation: logical output dim out_m2m[p] is logical input dim in_m2m[p].
        let mut perm = vec![0; output.rank()];
        for p in 0..output.rank() {
            perm[out_m2m[p]] = in_m2m[p];
        }
        return Ok(permutation_map(&output.dims, &perm));
    }
    if input.has_default_layout() && output.has_default_layout() {
        return reshape_map(&input.dims, &output.dims);
    }
    // logical out -> physical out: physical dim p is logical dim out_m2m[p].
    let to_physical = map(
        &output.dims,
        vec![],
        out_m2m.iter().map(|&l| d(l)).collect(),
        vec![],
    );
    let reshape = reshape_map(&in_phys, &out_phys)?;
    // physical in -> logical in: logical dim in_m2m[p] is physical dim p.
    let mut to_logical = vec![c(0); input.rank()];
    for (p, &l) in in_m2m.iter().enumerate() {
        to_logical[l] = d(p);
    }
    let to_logical = map(&in_phys, vec![], to_logical, vec![]);
    let mut composed = to_physical.compose(&reshape).compose(&to_logical);
    composed.simplify();
    Ok(composed)
}

pub fn bitcast_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    Ok(vec![OperandIndexing::plain(bitcast_map(operand, out)?)])
}

pub fn bitcast_input_to_output(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    Ok(vec![OperandIndexing::plain(bitcast_map(out, operand)?)])
}
