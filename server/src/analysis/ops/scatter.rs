//! Scatter (variadic: inputs `0..n`, indices `n`, updates `n+1..2n+1`).
//!
//! Output element `x` reads every input at `x` (the combiner sees all of them),
//! the whole indices tensor (to learn which updates target `x`), and the update
//! elements `u` whose target is `x`: with `u`'s window coordinates as range
//! variables and the start indices as runtime variables, the constraint
//! `x_j - start_j - window_j in [0, 0]` on every operand dimension says exactly
//! that. Runtime variables range over in-bounds starts; out-of-bounds updates are
//! skipped by XLA, which is what falling outside the domain means.

use super::OpResult;
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::analysis::build::{c, d, identity, map, s, var_in, vars, within};
use crate::analysis::op::{OpInfo, ScatterDims};
use crate::analysis::operand_indexing::{OperandIndexing, OperandMap, RuntimeSource, RuntimeVar};
use crate::analysis::unknown::Unknown;

/// Operand index expressions, runtime variable bounds and their meanings.
type Targets = (Vec<Expr>, Vec<Variable>, Vec<RuntimeVar>);

struct Layout {
    n: usize,
    dims: ScatterDims,
    /// Update dimensions that are not window dimensions (scatter batch dims).
    update_scatter: Vec<usize>,
    /// Operand dimensions that are window dimensions, paired with update_window_dims.
    operand_window: Vec<usize>,
}

fn layout(op: &OpInfo) -> Result<Layout, Unknown> {
    let dims = op
        .attrs
        .scatter
        .clone()
        .ok_or(Unknown::malformed("scatter needs its dimension numbers"))?;
    if op.operands.len() < 3 || op.operands.len().is_multiple_of(2) {
        return Err(Unknown::malformed(
            "scatter needs inputs, indices and as many updates",
        ));
    }
    let n = (op.operands.len() - 1) / 2;
    let operand = op.operand(0)?;
    let indices = op.operand(n)?;
    let update = op.operand(n + 1)?;
    let update_scatter: Vec<usize> = (0..update.rank())
        .filter(|k| !dims.update_window_dims.contains(k))
        .collect();
    let operand_window: Vec<usize> = (0..operand.rank())
        .filter(|j| !dims.inserted_window_dims.contains(j) && !dims.input_batching_dims.contains(j))
        .collect();
    let n_batch_indices = indices.rank() - usize::from(dims.index_vector_dim < indices.rank());
    let ok = operand_window.len() == dims.update_window_dims.len()
        && update_scatter.len() == n_batch_indices
        && dims.index_vector_dim <= indices.rank()
        && dims.update_window_dims.iter().all(|&k| k < update.rank())
        && dims
            .scatter_dims_to_operand_dims
            .iter()
            .all(|&j| j < operand.rank())
        && dims.input_batching_dims.len() == dims.scatter_indices_batching_dims.len();
    if !ok {
        return Err(Unknown::malformed(
            "scatter: inconsistent dimension numbers",
        ));
    }
    Ok(Layout {
        n,
        dims: *dims,
        update_scatter,
        operand_window,
    })
}

/// For update index expressions `u` (one per update dim), the start of every
/// operand dimension and its window coordinate, plus runtime variables.
fn targets(
    op: &OpInfo,
    l: &Layout,
    u: &[Expr],
    space: (&[i64], &[Variable]),
) -> Result<Targets, Unknown> {
    let operand = op.operand(0)?;
    let indices = op.operand(l.n)?;
    let update = op.operand(l.n + 1)?;
    let mut rt_vars = vec![];
    let mut runtime = vec![];
    let mut out = vec![];
    let indices_index = |at: Expr| -> Vec<Expr> {
        let mut b = l.update_scatter.iter();
        (0..indices.rank())
            .map(|k| {
                if k == l.dims.index_vector_dim {
                    at.clone()
                } else {
                    b.next().map(|&x| u[x].clone()).unwrap_or_else(|| c(0))
                }
            })
            .collect()
    };
    for j in 0..operand.rank() {
        let window_pos = l.operand_window.iter().position(|&w| w == j);
        let window_size = window_pos
            .map(|p| update.dims[l.dims.update_window_dims[p]])
            .unwrap_or(1);
        let window = window_pos.map(|p| u[l.dims.update_window_dims[p]].clone());
        let start = if let Some(p) = l
            .dims
            .scatter_dims_to_operand_dims
            .iter()
            .position(|&x| x == j)
        {
            rt_vars.push(var_in(0, operand.dims[j] - window_size));
            runtime.push(RuntimeVar {
                source: RuntimeSource::Operand(l.n),
                map: IndexingMap::new(
                    vars(space.0),
                    space.1.to_vec(),
                    vec![],
                    indices_index(c(p as i64)),
                    vec![],
                ),
            });
            Some(crate::analysis::build::rt(rt_vars.len() - 1))
        } else if let Some(q) = l.dims.input_batching_dims.iter().position(|&x| x == j) {
            let idim = l.dims.scatter_indices_batching_dims[q];
            let pos = (0..idim).filter(|&k| k != l.dims.index_vector_dim).count();
            Some(
                u[*l.update_scatter.get(pos).ok_or(Unknown::malformed(
                    "scatter: batching dimension out of range",
                ))?]
                .clone(),
            )
        } else {
            None
        };
        out.push(match (start, window) {
            (Some(a), Some(b)) => a + b,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => c(0),
        });
    }
    Ok((out, rt_vars, runtime))
}

pub fn output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let l = layout(op)?;
    let out = op.output(output_id)?;
    let indices = op.operand(l.n)?;
    let update = op.operand(l.n + 1)?;
    let mut entries: Vec<OperandIndexing> = (0..l.n)
        .map(|_| OperandIndexing::plain(identity(&out.dims)))
        .collect();
    let all_indices = map(
        &out.dims,
        vars(&indices.dims),
        (0..indices.rank()).map(s).collect(),
        vec![],
    );
    entries.push(OperandIndexing::plain(all_indices));
    let ranges = vars(&update.dims);
    let u: Vec<Expr> = (0..update.rank()).map(s).collect();
    let (target, rt_vars, runtime_vars) = targets(op, &l, &u, (&out.dims, &ranges))?;
    let constraints = target
        .iter()
        .enumerate()
        .map(|(j, t)| within(d(j) - t.clone(), 0, 0))
        .collect();
    let m = IndexingMap::new(vars(&out.dims), ranges, rt_vars, u, constraints);
    for _ in 0..l.n {
        entries.push(OperandIndexing::single(OperandMap {
            map: m.clone(),
            runtime_vars: runtime_vars.clone(),
            replica_id: None,
        }));
    }
    Ok(entries)
}

pub fn input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let l = layout(op)?;
    let outputs = op.shape.output_count();
    (0..outputs)
        .map(|j| {
            let out = op.output(j)?;
            if operand_id < l.n {
                return Ok(OperandIndexing::plain(identity(&out.dims)));
            }
            if operand_id == l.n {
                let indices = op.operand(l.n)?;
                let m = IndexingMap::new(
                    vars(&indices.dims),
                    vars(&out.dims),
                    vec![],
                    (0..out.rank()).map(s).collect(),
                    vec![],
                );
                return Ok(OperandIndexing::plain(m));
            }
            let update = op.operand(operand_id)?;
            let u: Vec<Expr> = (0..update.rank()).map(d).collect();
            let (target, rt_vars, runtime_vars) = targets(op, &l, &u, (&update.dims, &[]))?;
            let m = IndexingMap::new(vars(&update.dims), vec![], rt_vars, target, vec![]);
            Ok(OperandIndexing::single(OperandMap {
                map: m,
                runtime_vars,
                replica_id: None,
            }))
        })
        .collect()
}
