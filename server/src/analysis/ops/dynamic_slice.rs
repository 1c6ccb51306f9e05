//! Dynamic-slice and dynamic-update-slice: the offsets are runtime variables.
//! Their ranges assume the slice stays in bounds, which is exactly XLA's clamping
//! of the offsets; every element reads every (scalar) offset operand.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap};
use crate::analysis::build::{d, from_scalar, identity, rt, to_scalar, var_in, vars, within};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::{OperandIndexing, OperandMap, RuntimeSource, RuntimeVar};
use crate::analysis::shape::ArrayShape;
use crate::analysis::unknown::Unknown;

/// Runtime variables for the offsets in operands `first..first + rank`, each read
/// through `(index space) -> ()`, with `rt_k in [0, big_k - small_k]`.
fn offset_vars(
    op: &OpInfo,
    first: usize,
    index_space: &[i64],
    big: &ArrayShape,
    small: &[i64],
) -> Result<(Vec<crate::algebra::Variable>, Vec<RuntimeVar>), Unknown> {
    if op.operands.len() != first + big.rank() || small.len() != big.rank() {
        return Err(Unknown::malformed(format!(
            "{}: expected one scalar offset per dimension",
            op.opcode
        )));
    }
    let mut variables = vec![];
    let mut runtime = vec![];
    #[allow(clippy::needless_range_loop)]
    for k in 0..big.rank() {
        if op.operand(first + k)?.rank() != 0 {
            return Err(Unknown::malformed(format!(
                "{}: offsets must be scalars",
                op.opcode
            )));
        }
        variables.push(var_in(0, big.dims[k] - small[k]));
        runtime.push(RuntimeVar {
            source: RuntimeSource::Operand(first + k),
            map: to_scalar(index_space),
        });
    }
    Ok((variables, runtime))
}

/// The slice's extents: `dynamic_slice_sizes`, else the output's. The slice has the
/// operand's rank (each of its dimensions is offset by one runtime variable).
fn slice_sizes(op: &OpInfo) -> Result<Vec<i64>, Unknown> {
    let out = op.output(0)?;
    let src = op.operand(0)?;
    op.same_rank(src.rank(), out.rank())?;
    Ok(op
        .attrs
        .dynamic_slice_sizes
        .clone()
        .unwrap_or_else(|| out.dims.clone()))
}

/// `(d..){rt..} -> (d0 + rt0, ..)` for the sliced operand, `(d..) -> ()` for offsets.
pub fn output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let src = op.operand(0)?;
    let sizes = slice_sizes(op)?;
    let (rt_vars, runtime_vars) = offset_vars(op, 1, &out.dims, src, &sizes)?;
    let results = (0..out.rank()).map(|k| d(k) + rt(k)).collect();
    let m = IndexingMap::new(vars(&out.dims), vec![], rt_vars, results, vec![]);
    let mut entries = vec![OperandIndexing::single(OperandMap {
        map: m,
        runtime_vars,
        replica_id: None,
    })];
    entries.extend((1..op.operands.len()).map(|_| OperandIndexing::plain(to_scalar(&out.dims))));
    Ok(entries)
}

/// Source element `d` lands at `d - rt` when that is inside the slice.
pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    if operand_id > 0 {
        return Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))]);
    }
    let src = op.operand(0)?;
    let sizes = slice_sizes(op)?;
    let (rt_vars, runtime_vars) = offset_vars(op, 1, &src.dims, src, &sizes)?;
    let results: Vec<Expr> = (0..src.rank()).map(|k| d(k) - rt(k)).collect();
    let constraints = results
        .iter()
        .enumerate()
        .map(|(k, e)| within(e.clone(), 0, out.dims[k] - 1))
        .collect();
    let m = IndexingMap::new(vars(&src.dims), vec![], rt_vars, results, constraints);
    Ok(vec![OperandIndexing::single(OperandMap {
        map: m,
        runtime_vars,
        replica_id: None,
    })])
}

/// The base is read at the same index (XLA's convention: also where the update
/// overwrites it); the update at `d - rt`.
pub fn update_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let upd = op.operand(1)?;
    let (rt_vars, runtime_vars) = offset_vars(op, 2, &out.dims, out, &upd.dims)?;
    let results = (0..out.rank()).map(|k| d(k) - rt(k)).collect();
    let m = IndexingMap::new(vars(&out.dims), vec![], rt_vars, results, vec![]);
    let mut entries = vec![
        OperandIndexing::plain(identity(&out.dims)),
        OperandIndexing::single(OperandMap {
            map: m,
            runtime_vars,
            replica_id: None,
        }),
    ];
    entries.extend((2..op.operands.len()).map(|_| OperandIndexing::plain(to_scalar(&out.dims))));
    Ok(entries)
}

pub fn update_input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let out = op.output(0)?;
    match operand_id {
        0 => Ok(vec![OperandIndexing::plain(identity(&out.dims))]),
        1 => {
            let upd = op.operand(1)?;
            let (rt_vars, runtime_vars) = offset_vars(op, 2, &upd.dims, out, &upd.dims)?;
            let results = (0..upd.rank()).map(|k| d(k) + rt(k)).collect();
            let m = IndexingMap::new(vars(&upd.dims), vec![], rt_vars, results, vec![]);
            Ok(vec![OperandIndexing::single(OperandMap {
                map: m,
                runtime_vars,
                replica_id: None,
            })])
        }
        _ => Ok(vec![OperandIndexing::plain(from_scalar(&out.dims))]),
    }
}
