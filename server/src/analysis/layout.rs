//! The physical-layout view: maps between physical index spaces (dimensions in
//! major-to-minor order of each tensor's layout) instead of logical ones, as XLA's
//! tests compute with `use_physical_layout`.

use super::build::{d, map};
use super::operand_indexing::{InstructionIndexing, OperandMap};
use super::shape::ArrayShape;
use crate::algebra::{Expr, IndexingMap};

/// Physical index -> logical index of `shape`.
pub fn physical_to_logical(shape: &ArrayShape) -> IndexingMap {
    let m2m = shape.major_to_minor();
    let mut results = vec![Expr::constant(0); shape.rank()];
    for (p, &l) in m2m.iter().enumerate() {
        results[l] = d(p);
    }
    map(&shape.physical_dims(), vec![], results, vec![])
}

/// Logical index -> physical index of `shape`.
pub fn logical_to_physical(shape: &ArrayShape) -> IndexingMap {
    let m2m = shape.major_to_minor();
    map(
        &shape.dims,
        vec![],
        m2m.iter().map(|&l| d(l)).collect(),
        vec![],
    )
}

/// Rewrites `m` (from `from` to `to`, both logical) to go between physical spaces.
pub fn to_physical(m: &OperandMap, from: &ArrayShape, to: &ArrayShape) -> OperandMap {
    let before = physical_to_logical(from);
    let after = logical_to_physical(to);
    let mut map = before.compose(&m.map).compose(&after);
    map.simplify();
    let runtime_vars = m
        .runtime_vars
        .iter()
        .map(|rt| {
            let mut r = rt.clone();
            r.map = before.compose(&rt.map);
            r.map.simplify();
            r
        })
        .collect();
    let replica_id = m.replica_id.as_ref().map(|r| {
        let mut x = before.compose(r);
        x.simplify();
        x
    });
    OperandMap {
        map,
        runtime_vars,
        replica_id,
    }
}

/// Applies [`to_physical`] to every map of an indexing whose entries go from
/// `from` to `to[k]`.
pub fn indexing_to_physical(
    indexing: &mut InstructionIndexing,
    from: &ArrayShape,
    to: &[Option<&ArrayShape>],
) {
    for (k, entry) in indexing.entries.iter_mut().enumerate() {
        let Some(Some(target)) = to.get(k) else {
            continue;
        };
        for m in &mut entry.maps {
            *m = to_physical(m, from, target);
        }
    }
}
