//! Operand utilization: which fraction of an operand's elements the whole output
//! reads, and how often each read element is read (total reads / distinct
//! elements). Exact by enumerating the maps' domains when that fits a budget of
//! points; projections (every result a distinct variable, no constraints) are
//! counted in closed form; beyond the budget, sound bounds (`between a% and b%`).
//!
//! Runtime variables (gather indices, dynamic-slice offsets) make the set read
//! depend on run-time values. Every element of a source tensor holds one value, so
//! the free unknowns are the distinct source elements the maps look up; when every
//! assignment of values to them (each within its variable's range, as gather and
//! dynamic-slice clamp) times the domain fits the budget, all of them are
//! enumerated and the result is the exact least and most utilization over every
//! possible run; otherwise sound bounds. A scatter skips out-of-range indices
//! instead of clamping, which can read less than the least reported here.

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::operand_indexing::{OperandIndexing, OperandMap, RuntimeSource};
use super::shape::ArrayShape;
use crate::algebra::{CompiledMap, Expr, IndexingMap, Interval, VarKind};

/// Default enumeration budget (domain points per operand).
pub const DEFAULT_BUDGET: u128 = 10_000_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utilization {
    /// Distinct elements read / elements of the operand, in [0, 1]; with a
    /// [`Spread`], its most.
    pub fraction: f64,
    /// Total reads / distinct elements read (0 when nothing is read); with a
    /// [`Spread`], the multiplicity at the most fraction.
    pub multiplicity: f64,
    /// True when the one value above is what every run reads.
    pub exact: bool,
    /// When the reads depend on runtime values or are too many to count: the least
    /// and most fraction, each with its multiplicity.
    pub spread: Option<Spread>,
}

/// The range a utilization lies in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// `(fraction, multiplicity)` of the run that reads the fewest elements, or
    /// bounds (the least fraction, the most multiplicity).
    pub least: (f64, f64),
    /// `(fraction, multiplicity)` of the run that reads the most elements, or bounds
    /// (the most fraction, the least multiplicity).
    pub most: (f64, f64),
    /// True when both ends are reached by some run (every runtime value
    /// enumerated); false for bounds.
    pub attained: bool,
}

impl Utilization {
    fn exact(distinct: u128, total: u128, size: u128) -> Utilization {
        let (fraction, multiplicity) = ratio(distinct, total, size);
        Utilization {
            fraction,
            multiplicity,
            exact: true,
            spread: None,
        }
    }

    fn spread(least: (f64, f64), most: (f64, f64), attained: bool) -> Utilization {
        if attained && least == most {
            return Utilization {
                fraction: most.0,
                multiplicity: most.1,
                exact: true,
                spread: None,
            };
        }
        Utilization {
            fraction: most.0,
            multiplicity: most.1,
            exact: false,
            spread: Some(Spread {
                least,
                most,
                attained,
            }),
        }
    }

    /// The most times any run reads an element on average (the multiplicity a
    /// re-read warning compares with its budget).
    pub fn max_multiplicity(&self) -> f64 {
        match &self.spread {
            Some(s) => s.least.1.max(s.most.1),
            None => self.multiplicity,
        }
    }
}

/// `(fraction, multiplicity)` of `distinct` elements out of `size`, read `total` times.
fn ratio(distinct: u128, total: u128, size: u128) -> (f64, f64) {
    let fraction = if size == 0 {
        0.0
    } else {
        distinct as f64 / size as f64
    };
    let multiplicity = if distinct == 0 {
        0.0
    } else {
        total as f64 / distinct as f64
    };
    (fraction, multiplicity)
}

impl std::fmt::Display for Utilization {
    /// `utilization 100.0% of elements, each read 1.00×`; with runtime values
    /// `utilization between 6.2% (each read 3.00×) and 18.8% (each read 1.00×) of
    /// elements, by the runtime values`; bounds `utilization between 1.0% and 18.8%
    /// of elements, each read 1.00× to 3.00× (bounds)`: the one wording hovers and
    /// CLIs share.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.spread {
            None => write!(
                f,
                "utilization {:.1}% of elements, each read {:.2}×",
                self.fraction * 100.0,
                self.multiplicity
            ),
            Some(s) if s.attained => write!(
                f,
                "utilization between {:.1}% (each read {:.2}×) and {:.1}% (each read {:.2}×) of elements, by the runtime values",
                s.least.0 * 100.0,
                s.least.1,
                s.most.0 * 100.0,
                s.most.1
            ),
            Some(s) => {
                let (lo, hi) = (s.most.1.min(s.least.1), s.most.1.max(s.least.1));
                let (least, most) = (s.least.0 * 100.0, s.most.0 * 100.0);
                // Bounds that agree on the fraction say it once.
                if format!("{least:.1}") == format!("{most:.1}") {
                    write!(
                        f,
                        "utilization {least:.1}% of elements, each read {lo:.2}× to {hi:.2}× (bounds)"
                    )
                } else {
                    write!(
                        f,
                        "utilization between {least:.1}% and {most:.1}% of elements, each read {lo:.2}× to {hi:.2}× (bounds)"
                    )
                }
            }
        }
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
    let live: Vec<&OperandMap> = entry
        .maps
        .iter()
        .filter(|m| !m.map.is_known_empty())
        .collect();
    if size == 0 || live.is_empty() {
        return Some(Utilization::exact(0, 0, size));
    }
    // A map may have runtime variables without descriptions (an MLIR op's data-dependent
    // positions): counting points cannot evaluate it, bounds can.
    if live
        .iter()
        .any(|m| !m.runtime_vars.is_empty() || !m.map.runtime_vars().is_empty())
    {
        return Some(with_runtime(&live, operand, size, budget));
    }
    let maps: Vec<&IndexingMap> = live.iter().map(|m| &m.map).collect();
    if let [m] = maps[..] {
        if let Some(u) = projection(m, operand, size) {
            return Some(u);
        }
    }
    let points: u128 = maps
        .iter()
        .map(|m| domain_size(m))
        .fold(0u128, |a, b| a.saturating_add(b));
    if points <= budget && size <= budget.saturating_mul(8) {
        let (distinct, total) = count(&maps, operand, size);
        return Some(Utilization::exact(distinct, total, size));
    }
    Some(bounds(&maps, size, budget))
}

fn domain_size(m: &IndexingMap) -> u128 {
    m.dims()
        .iter()
        .chain(m.range_vars())
        .fold(1u128, |acc, v| acc.saturating_mul(v.bounds.size()))
}

/// Closed form when every result is a distinct plain variable or an in-bounds
/// constant and the domain is a box.
fn projection(m: &IndexingMap, operand: &ArrayShape, size: u128) -> Option<Utilization> {
    if !m.constraints().is_empty() || !m.runtime_vars().is_empty() {
        return None;
    }
    let mut used = vec![];
    for (e, &extent) in m.results().iter().zip(&operand.dims) {
        match (e.as_var(), e.as_const()) {
            (Some(v), _) if !used.contains(&v) => used.push(v),
            (None, Some(c)) if (0..extent).contains(&c) => {}
            _ => return None,
        }
    }
    let total = domain_size(m);
    let distinct = used
        .iter()
        .fold(1u128, |acc, v| acc.saturating_mul(m.var_bounds(*v).size()));
    if distinct > size || m.results().len() != operand.dims.len() {
        return None;
    }
    Some(Utilization::exact(distinct, total, size))
}

/// Distinct values the results that are distinct plain variables (not runtime ones)
/// take over a box domain: a lower bound of the distinct elements read.
fn bare_variables(m: &IndexingMap) -> u128 {
    let mut used = vec![];
    for e in m.results() {
        if let Some(v) = e.as_var() {
            if v.kind != VarKind::Runtime && !used.contains(&v) {
                used.push(v);
            }
        }
    }
    used.iter()
        .fold(1u128, |acc, v| acc.saturating_mul(m.var_bounds(*v).size()))
}

/// Calls `visit` with every point of a map's domain box (dimensions then range
/// variables), one buffer reused: a budget allows millions of points.
fn for_each_box_point(m: &IndexingMap, mut visit: impl FnMut(&[i64])) {
    let bounds: Vec<(i64, i64)> = m
        .dims()
        .iter()
        .chain(m.range_vars())
        .map(|v| (v.bounds.lo, v.bounds.hi))
        .collect();
    if bounds.iter().any(|(lo, hi)| lo > hi) {
        return;
    }
    let mut point: Vec<i64> = bounds.iter().map(|b| b.0).collect();
    loop {
        visit(&point);
        if !advance(&mut point, &bounds) {
            return;
        }
    }
}

/// Whether some point of `m`'s domain satisfies its constraints, found by walking
/// the domain box when it has at most `limit` points and no runtime variables;
/// `None` otherwise. Constraints the simplifier cannot combine (two `mod`s of one
/// sum, say) can leave a map with an empty domain that is not known to be empty.
pub fn has_point_within(m: &IndexingMap, limit: u128) -> Option<bool> {
    if !m.runtime_vars().is_empty() {
        return None;
    }
    let size = m
        .dims()
        .iter()
        .chain(m.range_vars())
        .fold(1u128, |acc, v| acc.saturating_mul(v.bounds.size()));
    if m.constraints().is_empty() {
        return Some(size > 0);
    }
    if size > limit {
        return None;
    }
    let mut compiled = CompiledMap::new(m)?;
    let mut idx = vec![0; m.results().len()];
    let mut found = false;
    for_each_box_point(m, |point| found |= compiled.results_at(point, &mut idx));
    Some(found)
}

/// Distinct elements and total reads of maps without runtime variables.
fn count(maps: &[&IndexingMap], operand: &ArrayShape, size: u128) -> (u128, u128) {
    let mut seen = Seen::new(size);
    for m in maps {
        let Some(mut compiled) = CompiledMap::new(m) else {
            continue;
        };
        let mut idx = vec![0; m.results().len()];
        for_each_box_point(m, |point| {
            if compiled.results_at(point, &mut idx) {
                seen.read(&idx, &operand.dims);
            }
        });
    }
    (seen.distinct, seen.total)
}

/// A bitset of the operand's elements read, with counts.
struct Seen {
    bits: Vec<u64>,
    distinct: u128,
    total: u128,
}

impl Seen {
    fn new(size: u128) -> Seen {
        Seen {
            bits: vec![0u64; (size as usize).div_ceil(64)],
            distinct: 0,
            total: 0,
        }
    }

    fn read(&mut self, idx: &[i64], dims: &[i64]) {
        if let Some(lin) = linear(idx, dims) {
            self.total += 1;
            let (w, b) = (lin / 64, lin % 64);
            if self.bits[w] & (1 << b) == 0 {
                self.bits[w] |= 1 << b;
                self.distinct += 1;
            }
        }
    }
}

/// Sound bounds without counting: at most the box of the result ranges (and the
/// operand), at least what the results that are plain distinct variables of a map
/// without constraints tell apart.
fn bounds(maps: &[&IndexingMap], size: u128, budget: u128) -> Utilization {
    let mut most = 0u128;
    let mut total_most = 0u128;
    let mut least = 0u128;
    for m in maps {
        let boxed = m.results().iter().fold(1u128, |acc, e: &Expr| {
            acc.saturating_mul(m.range_of(e).size())
        });
        most = most.saturating_add(boxed);
        total_most = total_most.saturating_add(domain_size(m));
        least = least.max(distinct_without_runtime(m, budget));
    }
    let most = most.min(size).min(total_most).max(least);
    let least_fraction = ratio(least, 0, size).0;
    let most_fraction = ratio(most, 0, size).0;
    // Reads per element: at least one; at most every read on the fewest elements.
    let multiplicity_most = if least == 0 {
        total_most as f64
    } else {
        total_most as f64 / least as f64
    };
    Utilization::spread(
        (least_fraction, multiplicity_most),
        (most_fraction, 1.0),
        false,
    )
}

/// A lower bound of the distinct elements one map reads: for a map whose constraints
/// do not involve runtime variables, the distinct values of its results that do not
/// involve them, counted when the domain fits the budget; else 1 when the domain is
/// not empty (0 otherwise).
fn distinct_without_runtime(m: &IndexingMap, budget: u128) -> u128 {
    let uses_runtime = |e: &Expr| mentions_runtime(e);
    if m.constraints().iter().any(|(e, _)| uses_runtime(e)) || domain_size(m) == 0 {
        return if domain_size(m) == 0 { 0 } else { 1 };
    }
    if domain_size(m) > budget {
        return if m.constraints().is_empty() {
            bare_variables(m)
        } else {
            1
        };
    }
    // The results that do not read runtime values, evaluated with those at their
    // least (no constraint reads them, so the domain does not depend on them).
    let free: Vec<Expr> = m
        .results()
        .iter()
        .filter(|e| !uses_runtime(e))
        .cloned()
        .collect();
    let ranges: Vec<Interval> = free.iter().map(|e| m.range_of(e)).collect();
    let only_free = IndexingMap::new(
        m.dims().to_vec(),
        m.range_vars().to_vec(),
        m.runtime_vars().to_vec(),
        free,
        m.constraints().to_vec(),
    );
    let Some(mut compiled) = CompiledMap::new(&only_free) else {
        return 0;
    };
    let runtime_lo: Vec<i64> = m.runtime_vars().iter().map(|v| v.bounds.lo).collect();
    let mut distinct = Distinct::new(&ranges, budget);
    let mut point = Vec::with_capacity(compiled.arity());
    let mut values = vec![0; ranges.len()];
    for_each_box_point(m, |at| {
        point.clear();
        point.extend_from_slice(at);
        point.extend_from_slice(&runtime_lo);
        if compiled.results_at(&point, &mut values) {
            distinct.insert(&values);
        }
    });
    distinct.count()
}

/// A set of value tuples: a bitset over the box of their ranges when that is
/// small, else a hash set.
enum Distinct {
    Bits {
        seen: Seen,
        lo: Vec<i64>,
        extents: Vec<i64>,
    },
    Hashed(FxHashSet<Vec<i64>>),
}

impl Distinct {
    fn new(ranges: &[Interval], budget: u128) -> Distinct {
        let cells = ranges
            .iter()
            .fold(1u128, |acc, r| acc.saturating_mul(r.size()));
        let extents: Option<Vec<i64>> = ranges
            .iter()
            .map(|r| i64::try_from(r.size()).ok())
            .collect();
        match extents {
            Some(extents) if cells <= budget.saturating_mul(8) => Distinct::Bits {
                seen: Seen::new(cells),
                lo: ranges.iter().map(|r| r.lo).collect(),
                extents,
            },
            _ => Distinct::Hashed(Default::default()),
        }
    }

    fn insert(&mut self, values: &[i64]) {
        match self {
            Distinct::Bits { seen, lo, extents } => {
                let shifted: SmallVec<[i64; 8]> = (values.iter().zip(lo.iter()))
                    .map(|(v, l)| v.checked_sub(*l).unwrap_or(-1))
                    .collect();
                seen.read(&shifted, extents);
            }
            Distinct::Hashed(set) => {
                if !set.contains(values) {
                    set.insert(values.to_vec());
                }
            }
        }
    }

    fn count(&self) -> u128 {
        match self {
            Distinct::Bits { seen, .. } => seen.distinct,
            Distinct::Hashed(set) => set.len() as u128,
        }
    }
}

fn mentions_runtime(e: &Expr) -> bool {
    match e {
        Expr::Var(v) => v.kind == VarKind::Runtime,
        _ => e
            .as_binary()
            .is_some_and(|(_, a, b)| mentions_runtime(a) || mentions_runtime(b)),
    }
}

/// One domain point of one map, with the runtime values it looks up.
struct Lookup {
    map: usize,
    point: Vec<i64>,
    /// For each runtime variable of the map: which unknown holds its value.
    unknowns: Vec<usize>,
}

/// Utilization of maps with runtime variables: the exact least and most over every
/// assignment of values to the source elements they look up, when that fits the
/// budget; else bounds.
fn with_runtime(
    live: &[&OperandMap],
    operand: &ArrayShape,
    size: u128,
    budget: u128,
) -> Utilization {
    let maps: Vec<&IndexingMap> = live.iter().map(|m| &m.map).collect();
    let points: u128 = maps
        .iter()
        .map(|m| domain_size(m))
        .fold(0u128, |a, b| a.saturating_add(b));
    // Each runtime variable needs its description (a map whose list disagrees with
    // its own variables cannot be enumerated).
    let described = live
        .iter()
        .all(|m| m.runtime_vars.len() == m.map.runtime_vars().len());
    if points > budget || size > budget.saturating_mul(8) || !described {
        return bounds(&maps, size, budget);
    }
    // The unknowns: distinct (source, index) pairs, each with the union of the
    // ranges of the variables that read it.
    let mut keys: FxHashMap<(RuntimeSource, Vec<i64>), usize> = FxHashMap::default();
    let mut ranges: Vec<Interval> = Vec::new();
    let mut lookups: Vec<Lookup> = Vec::new();
    for (mi, m) in live.iter().enumerate() {
        let nd = m.map.dims().len();
        let mut described = true;
        for_each_box_point(&m.map, |point| {
            if !described {
                return;
            }
            let (dims, symbols) = point.split_at(nd);
            let mut unknowns = Vec::with_capacity(m.runtime_vars.len());
            for (i, rt) in m.runtime_vars.iter().enumerate() {
                let nr = rt.map.range_vars().len().min(symbols.len());
                let Some(at) = rt.map.evaluate_at(dims, &symbols[..nr], &[]) else {
                    described = false;
                    return;
                };
                let bound = m.map.runtime_vars()[i].bounds;
                let next = keys.len();
                let k = *keys.entry((rt.source.clone(), at)).or_insert(next);
                if k == ranges.len() {
                    ranges.push(bound);
                } else {
                    ranges[k] = ranges[k].union(&bound);
                }
                unknowns.push(k);
            }
            lookups.push(Lookup {
                map: mi,
                point: point.to_vec(),
                unknowns,
            });
        });
        if !described {
            return bounds(&maps, size, budget);
        }
    }
    let assignments = ranges
        .iter()
        .fold(1u128, |acc, r| acc.saturating_mul(r.size()));
    if ranges.iter().any(|r| r.size() == 0)
        || assignments.saturating_mul(lookups.len().max(1) as u128) > budget
    {
        return bounds(&maps, size, budget);
    }
    let mut values: Vec<i64> = ranges.iter().map(|r| r.lo).collect();
    let bounds_of: Vec<(i64, i64)> = ranges.iter().map(|r| (r.lo, r.hi)).collect();
    let mut least: Option<(u128, u128)> = None;
    let mut most: Option<(u128, u128)> = None;
    let mut compiled: Vec<Option<CompiledMap>> = maps.iter().map(|m| CompiledMap::new(m)).collect();
    let mut idx: Vec<i64> = vec![0; operand.dims.len()];
    let mut point: Vec<i64> = Vec::new();
    loop {
        let mut seen = Seen::new(size);
        for l in &lookups {
            let m = maps[l.map];
            let Some(compiled) = compiled[l.map].as_mut() else {
                continue;
            };
            // The point, then each variable's value: the shared value clamped into
            // the variable's own range.
            point.clear();
            point.extend_from_slice(&l.point);
            point.extend(l.unknowns.iter().enumerate().map(|(i, &k)| {
                let b = m.runtime_vars()[i].bounds;
                values[k].clamp(b.lo, b.hi)
            }));
            idx.resize(m.results().len(), 0);
            if compiled.results_at(&point, &mut idx) {
                seen.read(&idx, &operand.dims);
            }
        }
        let run = (seen.distinct, seen.total);
        if least.is_none_or(|l| fewer(run, l)) {
            least = Some(run);
        }
        if most.is_none_or(|m| fewer(m, run)) {
            most = Some(run);
        }
        if !advance(&mut values, &bounds_of) {
            break;
        }
    }
    let (least, most) = (least.unwrap_or((0, 0)), most.unwrap_or((0, 0)));
    Utilization::spread(
        ratio(least.0, least.1, size),
        ratio(most.0, most.1, size),
        true,
    )
}

/// Orders runs by distinct elements, then by more reads per element first
/// (`a` reads less than `b`).
fn fewer(a: (u128, u128), b: (u128, u128)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 > b.1)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::{BinOp, Variable};
    use proptest::prelude::*;

    /// Small expressions over `d0`, `d1`, `s0` and, when `runtime`, `rt0`.
    fn expr(runtime: bool) -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (-3i64..=3).prop_map(Expr::constant),
            (0usize..2).prop_map(Expr::dim),
            Just(Expr::range(0)),
            Just(if runtime {
                Expr::runtime(0)
            } else {
                Expr::dim(0)
            }),
        ];
        leaf.prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Add, a, b)),
                (inner.clone(), -3i64..=4).prop_map(|(a, c)| Expr::raw(
                    BinOp::Mul,
                    a,
                    Expr::constant(c)
                )),
                (inner.clone(), 1i64..=4).prop_map(|(a, c)| Expr::raw(
                    BinOp::FloorDiv,
                    a,
                    Expr::constant(c)
                )),
                (inner.clone(), 1i64..=4).prop_map(|(a, c)| Expr::raw(
                    BinOp::Mod,
                    a,
                    Expr::constant(c)
                )),
            ]
        })
    }

    fn map() -> impl Strategy<Value = IndexingMap> {
        let var = (-2i64..=2, 0i64..=4).prop_map(|(lo, n)| Variable::new(lo, lo + n));
        (
            proptest::collection::vec(var.clone(), 3),
            var,
            proptest::collection::vec(expr(true), 1..=3),
            proptest::option::of((expr(false), -4i64..=4, 0i64..=6)),
        )
            .prop_map(|(vars, runtime, results, constraint)| {
                let constraints = constraint
                    .map(|(e, lo, n)| (e, Interval::new(lo, lo + n)))
                    .into_iter()
                    .collect();
                IndexingMap::new(
                    vars[..2].to_vec(),
                    vec![vars[2].clone()],
                    vec![runtime],
                    results,
                    constraints,
                )
            })
    }

    /// The distinct values of the results without runtime variables, by the trees.
    fn reference(m: &IndexingMap) -> u128 {
        let runtime_lo: Vec<i64> = m.runtime_vars().iter().map(|v| v.bounds.lo).collect();
        let mut seen = std::collections::HashSet::new();
        for_each_box_point(m, |point| {
            let (dims, ranges) = point.split_at(m.dims().len());
            if !m.contains_point(dims, ranges, &runtime_lo) {
                return;
            }
            let values: Option<Vec<i64>> = (m.results().iter())
                .filter(|e| !mentions_runtime(e))
                .map(|e| e.evaluate(dims, ranges, &runtime_lo))
                .collect();
            if let Some(v) = values {
                seen.insert(v);
            }
        });
        seen.len() as u128
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, .. ProptestConfig::default() })]

        /// Counted over a bitset (a budget that allows one) or a hash set (a budget
        /// that does not), the distinct values are the trees' count.
        #[test]
        fn distinct_values_without_runtime_match_the_trees(m in map()) {
            prop_assume!(!m.constraints().iter().any(|(e, _)| mentions_runtime(e)));
            let size = domain_size(&m);
            prop_assume!(size > 0);
            let expected = reference(&m);
            prop_assert_eq!(distinct_without_runtime(&m, 1_000_000), expected, "{}", m);
            prop_assert_eq!(distinct_without_runtime(&m, size), expected, "{}", m);
        }
    }

    #[test]
    fn a_hash_set_counts_what_a_bitset_counts() {
        let ranges = [Interval::new(-2, 5), Interval::new(0, 3)];
        let (mut bits, mut hashed) = (Distinct::new(&ranges, 1_000), Distinct::new(&ranges, 0));
        assert!(matches!(bits, Distinct::Bits { .. }) && matches!(hashed, Distinct::Hashed(_)));
        for values in [[-2, 0], [5, 3], [-2, 0], [0, 1], [5, 3]] {
            bits.insert(&values);
            hashed.insert(&values);
        }
        assert_eq!((bits.count(), hashed.count()), (3, 3));
    }
}
