//! Collectives. `all-gather` along dimension `g` reads the local index
//! `d_g mod n` on replica `d_g floordiv n` (n = operand extent), so the map carries
//! a replica-id map. `all-reduce` and `collective-permute` read the same index
//! (on other replicas), like an elementwise op; variadic ones pair output `k`
//! with operand `k`.

use super::OpResult;
use crate::analysis::build::{d, identity, map};
use crate::analysis::op::OpInfo;
use crate::analysis::operand_indexing::{OperandIndexing, OperandMap};
use crate::analysis::unknown::Unknown;

pub fn all_gather_output_to_input(op: &OpInfo) -> OpResult {
    let out = op.output(0)?;
    let operand = op.operand(0)?;
    let g = match op.dimensions(out.rank())?.as_slice() {
        [g] => *g,
        _ => return Err(Unknown::malformed("all-gather needs exactly one dimension")),
    };
    // `dimensions` is checked against the output's rank; the operand may have another.
    let n = operand.dims.get(g).copied().unwrap_or(0);
    if n <= 0 || operand.rank() != out.rank() {
        return Err(Unknown::malformed(
            "all-gather: operand does not match the output",
        ));
    }
    let results = (0..out.rank())
        .map(|k| if k == g { d(k).modulo(n) } else { d(k) })
        .collect();
    let replica = map(&out.dims, vec![], vec![d(g).floor_div(n)], vec![]);
    Ok(vec![OperandIndexing::single(OperandMap {
        map: map(&out.dims, vec![], results, vec![]),
        runtime_vars: vec![],
        replica_id: Some(replica),
    })])
}

pub fn all_gather_input_to_output(_op: &OpInfo) -> OpResult {
    Err(Unknown::no_indexing(
        "all-gather: where an element lands depends on the replica holding it",
    ))
}

pub fn all_reduce_output_to_input(op: &OpInfo, output_id: usize) -> OpResult {
    let out = op.output(output_id)?;
    if op.shape.output_count() > 1 || matches!(*op.shape, crate::analysis::shape::Shape::Tuple(_)) {
        return Ok((0..op.operands.len())
            .map(|k| {
                if k == output_id {
                    OperandIndexing::plain(identity(&out.dims))
                } else {
                    OperandIndexing::none()
                }
            })
            .collect());
    }
    (0..op.operands.len())
        .map(|k| {
            if op.operand(k)?.dims == out.dims {
                Ok(OperandIndexing::plain(identity(&out.dims)))
            } else {
                Err(Unknown::malformed(format!(
                    "{}: operand shape differs from the output",
                    op.opcode
                )))
            }
        })
        .collect()
}

pub fn all_reduce_input_to_output(op: &OpInfo, operand_id: usize) -> OpResult {
    let operand = op.operand(operand_id)?;
    Ok((0..op.shape.output_count())
        .map(|j| {
            if op.shape.output_count() == 1 || j == operand_id {
                OperandIndexing::plain(identity(&operand.dims))
            } else {
                OperandIndexing::none()
            }
        })
        .collect())
}
