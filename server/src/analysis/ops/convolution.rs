//! Convolution: spatial dimensions are windows over the padded, lhs-dilated input
//! (as reduce-window, with the kernel's `rhs_dilation`); the input feature is a
//! range variable within the feature group; the kernel is read at the window
//! position (reversed where `rhs_reversal` says so), the input feature and the
//! output feature. Range variables: spatial window positions, then the input
//! feature, then (with `batch_group_count > 1`) the batch group, which XLA leaves
//! free rather than tying it to the output feature.

use super::reduce_window::{windowed, windowed_inverse};
use super::OpResult;
use crate::algebra::{Expr, IndexingMap};
use crate::analysis::build::{affine, c, d, s, var, vars};
use crate::analysis::op::{ConvDims, OpInfo, WindowDim};
use crate::analysis::operand_indexing::OperandIndexing;
use crate::analysis::unknown::Unknown;

struct Conv {
    dims: ConvDims,
    window: Vec<WindowDim>,
    groups: i64,
    batch_groups: i64,
}

/// The convolution's attributes, when they fit the operand ranks (`lhs`, `rhs`) and
/// the output rank (`out`).
fn conv(op: &OpInfo, lhs: usize, rhs: usize, out: usize) -> Result<Conv, Unknown> {
    let dims = op
        .attrs
        .conv
        .clone()
        .ok_or(Unknown::malformed("convolution needs `dim_labels`"))?;
    let n = dims.input_spatial.len();
    let window = match op.attrs.window.clone() {
        Some(w) => w,
        None if n == 0 => vec![],
        None => return Err(Unknown::malformed("convolution needs a `window` attribute")),
    };
    if window.len() != n || dims.kernel_spatial.len() != n || dims.output_spatial.len() != n {
        return Err(Unknown::malformed(
            "convolution: window does not match the spatial dimensions",
        ));
    }
    let within = |rank: usize, dims: &[usize]| rank == n + 2 && dims.iter().all(|&k| k < rank);
    let lhs_dims = [
        &[dims.input_batch, dims.input_feature][..],
        &dims.input_spatial,
    ];
    let rhs_dims = [
        &[dims.kernel_input_feature, dims.kernel_output_feature][..],
        &dims.kernel_spatial,
    ];
    let out_dims = [
        &[dims.output_batch, dims.output_feature][..],
        &dims.output_spatial,
    ];
    if !(within(lhs, &lhs_dims.concat())
        && within(rhs, &rhs_dims.concat())
        && within(out, &out_dims.concat()))
    {
        return Err(Unknown::malformed(format!(
            "convolution: `dim_labels` name {} dimensions, but the ranks are {lhs}, {rhs} -> {out}",
            n + 2
        )));
    }
    let groups = op.attrs.feature_group_count.unwrap_or(1);
    let batch_groups = op.attrs.batch_group_count.unwrap_or(1);
    if groups <= 0 || batch_groups <= 0 {
        return Err(Unknown::malformed(
            "convolution: group counts must be positive",
        ));
    }
    Ok(Conv {
        dims: *dims,
        window,
        groups,
        batch_groups,
    })
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let lhs = op.operand(0)?;
    let rhs = op.operand(1)?;
    let cv = conv(op, lhs.rank(), rhs.rank(), out.rank())?;
    let dn = &cv.dims;
    let spatial_out: Vec<Expr> = dn.output_spatial.iter().map(|&k| d(k)).collect();
    let out_spatial_ext: Vec<i64> = dn.output_spatial.iter().map(|&k| out.dims[k]).collect();
    let in_spatial_ext: Vec<i64> = dn.input_spatial.iter().map(|&k| lhs.dims[k]).collect();
    let w = windowed(&spatial_out, &out_spatial_ext, &in_spatial_ext, &cv.window);
    let mut ranges = w.ranges.clone();
    // Map window symbols back to spatial dimension positions.
    let mut window_symbol = vec![None; cv.window.len()];
    let mut next = 0;
    for (k, win) in cv.window.iter().enumerate() {
        if win.size > 1 {
            window_symbol[k] = Some(next);
            next += 1;
        }
    }
    let in_feature_size = rhs.dims[dn.kernel_input_feature];
    let feature_symbol = if in_feature_size > 1 {
        ranges.push(var(in_feature_size));
        Some(s(ranges.len() - 1))
    } else {
        None
    };
    let out_features = out.dims[dn.output_feature];
    let mut lhs_results = vec![c(0); lhs.rank()];
    for (k, &dim) in dn.input_spatial.iter().enumerate() {
        lhs_results[dim] = w.results[k].clone();
    }
    let feature_base = if cv.groups > 1 {
        let per_group = out_features / cv.groups;
        Some(affine(
            d(dn.output_feature).floor_div(per_group),
            in_feature_size,
            0,
        ))
    } else {
        None
    };
    lhs_results[dn.input_feature] = match (feature_base, feature_symbol.clone()) {
        (Some(b), Some(f)) => b + f,
        (Some(b), None) => b,
        (None, Some(f)) => f,
        (None, None) => c(0),
    };
    lhs_results[dn.input_batch] = if cv.batch_groups > 1 {
        ranges.push(var(cv.batch_groups));
        affine(s(ranges.len() - 1), out.dims[dn.output_batch], 0) + d(dn.output_batch)
    } else {
        d(dn.output_batch)
    };
    let mut lhs_map = IndexingMap::new(
        vars(&out.dims),
        ranges.clone(),
        vec![],
        lhs_results,
        w.constraints,
    );
    lhs_map.simplify();
    let rhs_ranges = ranges[..ranges.len() - usize::from(cv.batch_groups > 1)].to_vec();
    let mut rhs_results = vec![c(0); rhs.rank()];
    for (k, &dim) in dn.kernel_spatial.iter().enumerate() {
        rhs_results[dim] = match window_symbol[k] {
            Some(sym) if cv.window[k].reversal => c(cv.window[k].size - 1) - s(sym),
            Some(sym) => s(sym),
            None => c(0),
        };
    }
    rhs_results[dn.kernel_input_feature] = feature_symbol.unwrap_or_else(|| c(0));
    rhs_results[dn.kernel_output_feature] = d(dn.output_feature);
    let mut rhs_map = IndexingMap::new(vars(&out.dims), rhs_ranges, vec![], rhs_results, vec![]);
    rhs_map.simplify();
    Ok(vec![
        OperandIndexing::plain(lhs_map),
        OperandIndexing::plain(rhs_map),
    ])
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    let lhs = op.operand(0)?;
    let rhs = op.operand(1)?;
    let cv = conv(op, lhs.rank(), rhs.rank(), out.rank())?;
    if cv.batch_groups > 1 {
        return Err(Unknown::not_modelled(
            "convolution: input-to-output with batch groups is not modelled",
        ));
    }
    let dn = &cv.dims;
    let out_spatial_ext: Vec<i64> = dn.output_spatial.iter().map(|&k| out.dims[k]).collect();
    let in_spatial_ext: Vec<i64> = dn.input_spatial.iter().map(|&k| lhs.dims[k]).collect();
    let out_features = out.dims[dn.output_feature];
    let per_group_out = out_features / cv.groups;
    let per_group_in = rhs.dims[dn.kernel_input_feature];
    match operand_id {
        0 => {
            // Input spatial dims of the lhs are numbered by their lhs position.
            let spatial_inputs: Vec<i64> = in_spatial_ext.clone();
            let w = windowed_inverse(&spatial_inputs, &out_spatial_ext, &cv.window);
            let remap = |e: &Expr| {
                e.map_vars(&|v| match v.kind {
                    crate::algebra::VarKind::Dim => d(dn.input_spatial[v.index]),
                    _ => Expr::var(v),
                })
            };
            let mut ranges = w.ranges.clone();
            ranges.push(var(per_group_out));
            let sym = s(ranges.len() - 1);
            let mut results = vec![c(0); out.rank()];
            for (k, &dim) in dn.output_spatial.iter().enumerate() {
                results[dim] = remap(&w.results[k]);
            }
            results[dn.output_batch] = d(dn.input_batch);
            results[dn.output_feature] = if cv.groups > 1 {
                affine(
                    d(dn.input_feature).floor_div(per_group_in),
                    per_group_out,
                    0,
                ) + sym
            } else {
                sym
            };
            let constraints = w.constraints.iter().map(|(e, i)| (remap(e), *i)).collect();
            let mut m = IndexingMap::new(vars(&lhs.dims), ranges, vec![], results, constraints);
            m.simplify();
            Ok(vec![OperandIndexing::plain(m)])
        }
        1 => Err(Unknown::not_modelled(
            "convolution: kernel input-to-output is not modelled",
        )),
        _ => Err(Unknown::malformed("convolution has two operands")),
    }
}
