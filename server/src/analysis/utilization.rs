//! Operand utilization: which fraction of an operand's elements the whole output
//! reads, and how often each read element is read (total reads / distinct
//! elements). Exact by enumerating the maps' domains when that fits a budget of
//! points; projections (every result a distinct variable, no constraints) are
//! counted in closed form; anything else is a bound from the result ranges,
//! marked as an estimate.
//!
//! Runtime variables make the set read depend on run-time values: those maps are
//! evaluated at the runtime variables' lower bounds (one possible run) and the
//! result is marked as an estimate.

use super::operand_indexing::OperandIndexing;
use super::shape::ArrayShape;
use crate::algebra::{Expr, IndexingMap};

/// Default enumeration budget (domain points per operand).
pub const DEFAULT_BUDGET: u128 = 10_000_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utilization {
    /// Distinct elements read / elements of the operand, in [0, 1].
    pub fraction: f64,
    /// Total reads / distinct elements read (0 when nothing is read).
    pub multiplicity: f64,
    /// True when computed by enumeration or closed form; false for estimates.
    pub exact: bool,
}

impl std::fmt::Display for Utilization {
    /// `utilization 100.0% of elements, each read 1.00×` (` (estimate)` when not exact):
    /// the one wording hovers and CLIs share.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "utilization {:.1}% of elements, each read {:.2}×{}",
            self.fraction * 100.0,
            self.multiplicity,
            if self.exact { "" } else { " (estimate)" }
        )
    }
}

/// Utilization of `operand` by the maps of `entry`; `None` for unknown indexing.
pub fn utilization(
    entry: &OperandIndexing,
    operand: &ArrayShape,
    budget: u128,
) -> Option<Utilization> {
    if entry.is_unknown() {
        return None;
    }
    let size = operand.element_count().filter(|&n| n >= 0)? as u128;
    if size == 0 {
        return Some(Utilization {
            fraction: 0.0,
            multiplicity: 0.0,
            exact: true,
        });
    }
    let live: Vec<&IndexingMap> = entry
        .maps
        .iter()
        .map(|m| &m.map)
        .filter(|m| !m.is_known_empty())
        .collect();
    if live.is_empty() {
        return Some(Utilization {
            fraction: 0.0,
            multiplicity: 0.0,
            exact: true,
        });
    }
    if live.len() == 1 {
        if let Some(u) = projection(live[0], size) {
            return Some(u);
        }
    }
    let points: u128 = live
        .iter()
        .map(|m| domain_size(m))
        .fold(0u128, |a, b| a.saturating_add(b));
    let has_runtime = live.iter().any(|m| !m.runtime_vars().is_empty());
    if points <= budget && size <= budget.saturating_mul(8) {
        return Some(enumerate(&live, operand, size, !has_runtime));
    }
    Some(estimate(&live, size))
}

fn domain_size(m: &IndexingMap) -> u128 {
    m.dims()
        .iter()
        .chain(m.range_vars())
        .fold(1u128, |acc, v| acc.saturating_mul(v.bounds.size()))
}

/// Closed form when every result is a distinct plain variable and the domain is a box.
fn projection(m: &IndexingMap, size: u128) -> Option<Utilization> {
    if !m.constraints().is_empty() || !m.runtime_vars().is_empty() {
        return None;
    }
    let mut used = vec![];
    for e in m.results() {
        match e.as_var() {
            Some(v) if !used.contains(&v) => used.push(v),
            _ => return None,
        }
    }
    let total = domain_size(m);
    let distinct = used
        .iter()
        .fold(1u128, |acc, v| acc.saturating_mul(m.var_bounds(*v).size()));
    if distinct > size {
        return None;
    }
    Some(Utilization {
        fraction: distinct as f64 / size as f64,
        multiplicity: if distinct == 0 {
            0.0
        } else {
            total as f64 / distinct as f64
        },
        exact: true,
    })
}

fn enumerate(maps: &[&IndexingMap], operand: &ArrayShape, size: u128, exact: bool) -> Utilization {
    let mut seen = vec![0u64; (size as usize).div_ceil(64)];
    let mut distinct = 0u128;
    let mut total = 0u128;
    for m in maps {
        let rts: Vec<i64> = m.runtime_vars().iter().map(|v| v.bounds.lo).collect();
        let nd = m.dims().len();
        let bounds: Vec<(i64, i64)> = m
            .dims()
            .iter()
            .chain(m.range_vars())
            .map(|v| (v.bounds.lo, v.bounds.hi))
            .collect();
        if bounds.iter().any(|(lo, hi)| lo > hi) {
            continue;
        }
        let mut point: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        loop {
            let (dims, ranges) = point.split_at(nd);
            if m.contains_point(dims, ranges, &rts) {
                if let Some(idx) = m.evaluate_at(dims, ranges, &rts) {
                    if let Some(lin) = linear(&idx, &operand.dims) {
                        total += 1;
                        let (w, b) = (lin / 64, lin % 64);
                        if seen[w] & (1 << b) == 0 {
                            seen[w] |= 1 << b;
                            distinct += 1;
                        }
                    }
                }
            }
            if !advance(&mut point, &bounds) {
                break;
            }
        }
    }
    Utilization {
        fraction: distinct as f64 / size as f64,
        multiplicity: if distinct == 0 {
            0.0
        } else {
            total as f64 / distinct as f64
        },
        exact,
    }
}

/// Upper bound of the distinct elements from the box of the result ranges.
fn estimate(maps: &[&IndexingMap], size: u128) -> Utilization {
    let mut distinct = 0u128;
    let mut total = 0u128;
    for m in maps {
        let boxed = m.results().iter().fold(1u128, |acc, e: &Expr| {
            acc.saturating_mul(m.range_of(e).size())
        });
        distinct = distinct.saturating_add(boxed);
        total = total.saturating_add(domain_size(m));
    }
    let distinct = distinct.min(size).max(1);
    Utilization {
        fraction: distinct as f64 / size as f64,
        multiplicity: (total as f64 / distinct as f64).max(1.0),
        exact: false,
    }
}

fn linear(idx: &[i64], dims: &[i64]) -> Option<usize> {
    if idx.len() != dims.len() {
        return None;
    }
    let mut lin = 0usize;
    for (&i, &n) in idx.iter().zip(dims) {
        if i < 0 || i >= n {
            return None;
        }
        lin = lin * n as usize + i as usize;
    }
    Some(lin)
}

fn advance(point: &mut [i64], bounds: &[(i64, i64)]) -> bool {
    for k in (0..point.len()).rev() {
        if point[k] < bounds[k].1 {
            point[k] += 1;
            return true;
        }
        point[k] = bounds[k].0;
    }
    false
}
