//! Gather, in general form (XLA maps only the simplified form; the general one is
//! as exact): operand dimension `j` reads `start_j + offset_j`, where `start_j` is
//! a runtime variable read from the indices row of the output's batch position
//! (clamped so the slice stays in bounds: `rt_j in [0, operand_j - slice_j]`),
//! a batch coordinate for operand batching dimensions, or 0; `offset_j` is the
//! output's offset dimension for window dimensions and 0 for collapsed ones.
//! The indices operand is read along the whole index vector.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::analysis::build::{c, d, rt, s, var, var_in, vars};
use crate::analysis::op::{GatherDims, OpInfo};
use crate::analysis::operand_indexing::{OperandIndexing, OperandMap, RuntimeSource, RuntimeVar};
use crate::analysis::unknown::Unknown;

/// Output dimensions that are batch dimensions (not offset dimensions).
fn batch_dims(out_rank: usize, g: &GatherDims) -> Vec<usize> {
    (0..out_rank)
        .filter(|k| !g.offset_dims.contains(k))
        .collect()
}

/// Index into the indices tensor for the batch position of the output, with
/// `at_vector` at `index_vector_dim` (if that dimension exists).
fn indices_index(
    indices_rank: usize,
    g: &GatherDims,
    batch: &[usize],
    at_vector: Expr,
) -> Vec<Expr> {
    let mut out = vec![];
    let mut b = batch.iter();
    for k in 0..indices_rank {
        if k == g.index_vector_dim {
            out.push(at_vector.clone());
        } else {
            out.push(b.next().map(|&o| d(o)).unwrap_or_else(|| c(0)));
        }
    }
    out
}

fn validate(op: &OpInfo, g: &GatherDims) -> Result<(), Unknown> {
    let operand = op.operand(0)?;
    let indices = op.operand(1)?;
    let out = op.output(0)?;
    let window: Vec<usize> = (0..operand.rank())
        .filter(|j| !g.collapsed_slice_dims.contains(j) && !g.operand_batching_dims.contains(j))
        .collect();
    let n_batch_indices = indices.rank() - usize::from(g.index_vector_dim < indices.rank());
    let ok = g.slice_sizes.len() == operand.rank()
        && window.len() == g.offset_dims.len()
        && g.offset_dims.iter().all(|&o| o < out.rank())
        && g.index_vector_dim <= indices.rank()
        && n_batch_indices == out.rank() - g.offset_dims.len()
        && g.start_index_map.iter().all(|&j| j < operand.rank())
        && g.operand_batching_dims.len() == g.start_indices_batching_dims.len();
    if !ok {
        return Err(Unknown::malformed("gather: inconsistent dimension numbers"));
    }
    Ok(())
}

pub fn output_to_input(op: &OpInfo) -> OpResult {
    let g = op
        .attrs
        .gather
        .clone()
        .ok_or(Unknown::malformed("gather needs its dimension numbers"))?;
    validate(op, &g)?;
    let operand = op.operand(0)?;
    let indices = op.operand(1)?;
    let out = op.output(0)?;
    let batch = batch_dims(out.rank(), &g);
    let window: Vec<usize> = (0..operand.rank())
        .filter(|j| !g.collapsed_slice_dims.contains(j) && !g.operand_batching_dims.contains(j))
        .collect();
    let vector_len = if g.index_vector_dim < indices.rank() {
        indices.dims[g.index_vector_dim]
    } else {
        1
    };
    if g.start_index_map.len() as i64 != vector_len {
        return Err(Unknown::malformed(
            "gather: start_index_map does not match the index vector",
        ));
    }
    let mut rt_vars: Vec<Variable> = vec![];
    let mut runtime_vars = vec![];
    let mut results = vec![];
    for j in 0..operand.rank() {
        let offset = match window.iter().position(|&w| w == j) {
            Some(p) => d(g.offset_dims[p]),
            None => c(0),
        };
        let start = if let Some(p) = g.start_index_map.iter().position(|&x| x == j) {
            let index = indices_index(indices.rank(), &g, &batch, c(p as i64));
            runtime_vars.push(RuntimeVar {
                source: RuntimeSource::Operand(1),
                map: IndexingMap::new(vars(&out.dims), vec![], vec![], index, vec![]),
            });
            rt_vars.push(var_in(0, operand.dims[j] - g.slice_sizes[j]));
            Some(rt(rt_vars.len() - 1))
        } else if let Some(q) = g.operand_batching_dims.iter().position(|&x| x == j) {
            let idim = g.start_indices_batching_dims[q];
            let pos = (0..idim).filter(|&k| k != g.index_vector_dim).count();
            Some(d(*batch.get(pos).ok_or(Unknown::malformed(
                "gather: batching dimension out of range",
            ))?))
        } else {
            None
        };
        results.push(match (start, window.contains(&j)) {
            (Some(st), true) => offset + st,
            (Some(st), false) => st,
            (None, _) => offset,
        });
    }
    let m = IndexingMap::new(vars(&out.dims), vec![], rt_vars, results, vec![]);
    let index_map = if g.index_vector_dim < indices.rank() {
        let index = indices_index(indices.rank(), &g, &batch, s(0));
        IndexingMap::new(
            vars(&out.dims),
            vec![var(vector_len)],
            vec![],
            index,
            vec![],
        )
    } else {
        IndexingMap::new(
            vars(&out.dims),
            vec![],
            vec![],
            indices_index(indices.rank(), &g, &batch, c(0)),
            vec![],
        )
    };
    Ok(vec![
        OperandIndexing::single(OperandMap {
            map: m,
            runtime_vars,
            replica_id: None,
        }),
        OperandIndexing::plain(index_map),
    ])
}

/// Indices element (batch position `b`, vector position `v`) is read by every
/// output element of batch position `b`; which output elements read an operand
/// element depends on the index values, so that direction is unknown.
pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    if operand_id != 1 {
        return Err(Unknown::no_indexing(
            "gather: which output elements read an operand element depends on the index values",
        ));
    }
    let g = op
        .attrs
        .gather
        .clone()
        .ok_or(Unknown::malformed("gather needs its dimension numbers"))?;
    validate(op, &g)?;
    let indices = op.operand(1)?;
    let out = op.output(0)?;
    let batch_indices: Vec<usize> = (0..indices.rank())
        .filter(|&k| k != g.index_vector_dim)
        .collect();
    let mut ranges = vec![];
    let mut b = batch_indices.iter();
    let results = (0..out.rank())
        .map(|k| {
            if g.offset_dims.contains(&k) {
                ranges.push(var(out.dims[k]));
                s(ranges.len() - 1)
            } else {
                b.next().map(|&i| d(i)).unwrap_or_else(|| c(0))
            }
        })
        .collect();
    let m = IndexingMap::new(vars(&indices.dims), ranges, vec![], results, vec![]);
    Ok(vec![OperandIndexing::plain(m)])
}
