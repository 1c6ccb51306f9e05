//! An indexing map in the simplifier's form: bounds, results and constraints as
//! arena nodes. Built from an [`IndexingMap`] at the start of a simplification and
//! written back only when something changed.

use smallvec::SmallVec;

use super::arena::{Arena, Id, Node};
use super::rewriter::Bounds;
use crate::algebra::interval::Interval;
use crate::algebra::map::{IndexingMap, MapState};

/// Constraints as nodes with their intervals.
pub type Constraints = SmallVec<[(Id, Interval); 4]>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkingMap {
    pub bounds: Bounds,
    pub results: SmallVec<[Id; 4]>,
    pub constraints: Constraints,
    /// The domain is provably infeasible.
    pub known_empty: bool,
}

impl WorkingMap {
    /// The working form of a defined map.
    pub fn of(map: &IndexingMap, arena: &mut Arena) -> WorkingMap {
        let bounds_of = |vars: &[crate::algebra::Variable]| vars.iter().map(|v| v.bounds).collect();
        WorkingMap {
            bounds: Bounds {
                dims: bounds_of(map.dims()),
                ranges: bounds_of(map.range_vars()),
                runtimes: bounds_of(map.runtime_vars()),
            },
            results: map.results().iter().map(|e| arena.from_expr(e)).collect(),
            constraints: map
                .constraints()
                .iter()
                .map(|(e, r)| (arena.from_expr(e), *r))
                .collect(),
            known_empty: map.state() == MapState::KnownEmpty,
        }
    }

    /// Writes bounds, results and constraints back into `map`, which `original`
    /// was made from (results that did not change are kept as they are).
    pub fn write_back(&self, original: &WorkingMap, arena: &Arena, map: &mut IndexingMap) {
        if self.known_empty {
            map.reset_to_known_empty();
            return;
        }
        for (var, b) in map.dims.iter_mut().zip(&self.bounds.dims) {
            var.bounds = *b;
        }
        for (var, b) in map.range_vars.iter_mut().zip(&self.bounds.ranges) {
            var.bounds = *b;
        }
        for (var, b) in map.runtime_vars.iter_mut().zip(&self.bounds.runtimes) {
            var.bounds = *b;
        }
        for ((result, &now), &before) in map
            .results
            .iter_mut()
            .zip(&self.results)
            .zip(&original.results)
        {
            if now != before {
                *result = arena.to_expr(now);
            }
        }
        if self.constraints != original.constraints {
            map.constraints = self
                .constraints
                .iter()
                .map(|&(e, r)| (arena.to_expr(e), r))
                .collect();
        }
    }

    /// Adds `expr in range` as [`IndexingMap::add_constraint`] does: intersects
    /// with an existing constraint on the same expression, tightens bounds for a
    /// bare variable, checks a constant, and marks the map known empty when the
    /// result is infeasible.
    pub fn add_constraint(&mut self, arena: &Arena, expr: Id, range: Interval) {
        if self.known_empty {
            return;
        }
        if !range.is_feasible() {
            self.known_empty = true;
            return;
        }
        match arena.node(expr) {
            Node::Var(v) => {
                let Some(b) = self.bounds.of_kind_mut(v.kind).get_mut(v.index) else {
                    return;
                };
                *b = b.intersect(&range);
                if !b.is_feasible() {
                    self.known_empty = true;
                }
            }
            Node::Const(c) => {
                if !range.contains(c) {
                    self.known_empty = true;
                }
            }
            Node::Bin(..) => {
                if let Some(existing) = self.constraints.iter_mut().find(|(e, _)| *e == expr) {
                    existing.1 = existing.1.intersect(&range);
                    if !existing.1.is_feasible() {
                        self.known_empty = true;
                    }
                } else {
                    self.constraints.push((expr, range));
                }
            }
        }
    }
}
