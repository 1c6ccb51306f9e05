//! `IndexingMap`: result expressions over dimension, range and runtime variables,
//! with a domain (variable bounds plus constraints `expr in [lo, hi]`), and the
//! special states UNDEFINED (nothing is known) and KNOWN EMPTY (the domain is
//! provably infeasible).
//!
//! Structural operations live here; composition is in `compose`, simplification in
//! `simplify`, text in `parse` and `print`.

use super::expr::{BinOp, Expr};
use super::interval::{self, Interval};
use super::variable::{Var, VarKind, Variable};

/// Which of the three states a map is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapState {
    /// A map with results and a (possibly) feasible domain.
    Defined,
    /// No information: XLA's `IndexingMap::GetUndefined()`.
    Undefined,
    /// The domain is empty: no point maps anywhere.
    KnownEmpty,
}

/// An indexing map `(dims)[range vars]{runtime vars} -> (results), domain: ...`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexingMap {
    pub(crate) state: MapState,
    pub(crate) dims: Vec<Variable>,
    pub(crate) range_vars: Vec<Variable>,
    pub(crate) runtime_vars: Vec<Variable>,
    pub(crate) results: Vec<Expr>,
    pub(crate) constraints: Vec<(Expr, Interval)>,
}

impl IndexingMap {
    /// Builds a map; infeasible variable bounds or constraints make it KNOWN EMPTY,
    /// constraints on a bare variable tighten that variable's bounds (as XLA's
    /// `AddConstraint` does).
    pub fn new(
        dims: Vec<Variable>,
        range_vars: Vec<Variable>,
        runtime_vars: Vec<Variable>,
        results: Vec<Expr>,
        constraints: Vec<(Expr, Interval)>,
    ) -> IndexingMap {
        let mut map = IndexingMap {
            state: MapState::Defined,
            dims,
            range_vars,
            runtime_vars,
            results,
            constraints: Vec::with_capacity(constraints.len()),
        };
        if map.all_variables().any(|v| !v.bounds.is_feasible()) {
            map.reset_to_known_empty();
            return map;
        }
        for (expr, range) in constraints {
            map.add_constraint(expr, range);
        }
        map
    }

    /// The identity map on a tensor with the given extents: `(d0, ..) -> (d0, ..)`.
    pub fn identity(extents: &[i64]) -> IndexingMap {
        let dims = extents.iter().map(|&n| Variable::new(0, n - 1)).collect();
        let results = (0..extents.len()).map(Expr::dim).collect();
        IndexingMap::new(dims, vec![], vec![], results, vec![])
    }

    /// The map about which nothing is known.
    pub fn undefined() -> IndexingMap {
        IndexingMap {
            state: MapState::Undefined,
            dims: vec![],
            range_vars: vec![],
            runtime_vars: vec![],
            results: vec![],
            constraints: vec![],
        }
    }

    /// A map with an infeasible domain and `num_results` results (all `0`).
    pub fn known_empty(num_dims: usize, num_results: usize) -> IndexingMap {
        let mut map = IndexingMap {
            state: MapState::Defined,
            dims: vec![Variable::new(0, -1); num_dims],
            range_vars: vec![],
            runtime_vars: vec![],
            results: vec![Expr::Const(0); num_results],
            constraints: vec![],
        };
        map.reset_to_known_empty();
        map
    }

    /// Turns this map into the canonical KNOWN EMPTY form (XLA's
    /// `ResetToKnownEmpty`): results become `0`, bounds empty, constraints dropped.
    pub fn reset_to_known_empty(&mut self) {
        self.state = MapState::KnownEmpty;
        for r in &mut self.results {
            *r = Expr::Const(0);
        }
        for v in self.dims.iter_mut().chain(self.range_vars.iter_mut()) {
            v.bounds = Interval::new(0, -1);
        }
        self.constraints.clear();
    }

    pub fn is_undefined(&self) -> bool {
        self.state == MapState::Undefined
    }

    pub fn is_known_empty(&self) -> bool {
        self.state == MapState::KnownEmpty
    }

    pub fn state(&self) -> MapState {
        self.state
    }

    pub fn dims(&self) -> &[Variable] {
        &self.dims
    }
    pub fn range_vars(&self) -> &[Variable] {
        &self.range_vars
    }
    pub fn runtime_vars(&self) -> &[Variable] {
        &self.runtime_vars
    }
    pub fn results(&self) -> &[Expr] {
        &self.results
    }
    pub fn constraints(&self) -> &[(Expr, Interval)] {
        &self.constraints
    }

    /// Replaces the result expressions (the domain is unchanged).
    pub fn set_results(&mut self, results: Vec<Expr>) {
        self.results = results;
    }

    /// The declared variables of one kind.
    pub fn variables(&self, kind: VarKind) -> &[Variable] {
        match kind {
            VarKind::Dim => &self.dims,
            VarKind::Range => &self.range_vars,
            VarKind::Runtime => &self.runtime_vars,
        }
    }

    pub(crate) fn variables_mut(&mut self, kind: VarKind) -> &mut Vec<Variable> {
        match kind {
            VarKind::Dim => &mut self.dims,
            VarKind::Range => &mut self.range_vars,
            VarKind::Runtime => &mut self.runtime_vars,
        }
    }

    fn all_variables(&self) -> impl Iterator<Item = &Variable> {
        self.dims
            .iter()
            .chain(&self.range_vars)
            .chain(&self.runtime_vars)
    }

    /// The first variable a result or constraint uses that the map does not
    /// declare: such a map prints text that does not parse back (`rt0` with no
    /// `{rt0}`), so every map the tool shows must answer `None`.
    pub fn undeclared_variable(&self) -> Option<Var> {
        let mut found = None;
        for e in self
            .results
            .iter()
            .chain(self.constraints.iter().map(|(e, _)| e))
        {
            e.for_each_var(&mut |v| {
                if found.is_none() && v.index >= self.variables(v.kind).len() {
                    found = Some(v);
                }
            });
        }
        found
    }

    /// Declared bounds of a variable (FULL for a variable the map does not have).
    pub fn var_bounds(&self, var: Var) -> Interval {
        self.variables(var.kind)
            .get(var.index)
            .map_or(Interval::FULL, |v| v.bounds)
    }

    /// Adds `expr in range`. Intersects with an existing constraint on the same
    /// expression, tightens bounds for a bare variable, checks a constant, and turns
    /// the map KNOWN EMPTY when the result is infeasible.
    pub fn add_constraint(&mut self, expr: Expr, range: Interval) {
        if self.state != MapState::Defined {
            return;
        }
        if !range.is_feasible() {
            self.reset_to_known_empty();
            return;
        }
        match expr {
            Expr::Var(v) => {
                let Some(var) = self.variables_mut(v.kind).get_mut(v.index) else {
                    return;
                };
                var.bounds = var.bounds.intersect(&range);
                if !var.bounds.is_feasible() {
                    self.reset_to_known_empty();
                }
            }
            Expr::Const(c) => {
                if !range.contains(c) {
                    self.reset_to_known_empty();
                }
            }
            expr => {
                if let Some(existing) = self.constraints.iter_mut().find(|(e, _)| *e == expr) {
                    existing.1 = existing.1.intersect(&range);
                    if !existing.1.is_feasible() {
                        self.reset_to_known_empty();
                    }
                } else {
                    self.constraints.push((expr, range));
                }
            }
        }
    }

    /// Evaluates the results at a point (no runtime variables). `None` when a
    /// result is undefined there (division by zero, overflow) or the map is not
    /// defined.
    pub fn evaluate(&self, dims: &[i64], ranges: &[i64]) -> Option<Vec<i64>> {
        self.evaluate_at(dims, ranges, &[])
    }

    /// Evaluates the results at a point including runtime variable values.
    pub fn evaluate_at(&self, dims: &[i64], ranges: &[i64], runtimes: &[i64]) -> Option<Vec<i64>> {
        if self.state != MapState::Defined {
            return None;
        }
        self.results
            .iter()
            .map(|e| e.evaluate(dims, ranges, runtimes))
            .collect()
    }

    /// `true` when the point lies in the domain: within every variable's bounds and
    /// satisfying every constraint.
    pub fn contains_point(&self, dims: &[i64], ranges: &[i64], runtimes: &[i64]) -> bool {
        if self.state != MapState::Defined
            || dims.len() != self.dims.len()
            || ranges.len() != self.range_vars.len()
            || runtimes.len() != self.runtime_vars.len()
        {
            return false;
        }
        let in_bounds = |vars: &[Variable], vals: &[i64]| {
            vars.iter().zip(vals).all(|(v, x)| v.bounds.contains(*x))
        };
        in_bounds(&self.dims, dims)
            && in_bounds(&self.range_vars, ranges)
            && in_bounds(&self.runtime_vars, runtimes)
            && self.constraints.iter().all(|(e, r)| {
                e.evaluate(dims, ranges, runtimes)
                    .is_some_and(|v| r.contains(v))
            })
    }

    /// Range of `expr` over the domain: interval arithmetic over the variable
    /// bounds, where any sub-expression that is constrained is intersected with
    /// its constraint.
    pub fn range_of(&self, expr: &Expr) -> Interval {
        let bounds = |v: Var| self.var_bounds(v);
        range_with_constraints(expr, &bounds, &self.constraints)
    }

    /// Removes range and runtime variables that no result uses and that are not
    /// tied to a used variable by a constraint; drops constraints over only
    /// removed variables. Returns `true` when something was removed.
    pub fn remove_unused_symbols(&mut self) -> bool {
        self.remove_unused(&[VarKind::Range, VarKind::Runtime])
    }

    /// Removes dimensions that no result uses (see `remove_unused_symbols`).
    pub fn remove_unused_dimensions(&mut self) -> bool {
        self.remove_unused(&[VarKind::Dim])
    }

    /// Removes unused dimensions and symbols.
    pub fn remove_unused_vars(&mut self) -> bool {
        self.remove_unused(&[VarKind::Dim, VarKind::Range, VarKind::Runtime])
    }

    fn remove_unused(&mut self, kinds: &[VarKind]) -> bool {
        if self.state != MapState::Defined {
            return false;
        }
        let used = self.used_variables(kinds);
        let removable = |v: Var| kinds.contains(&v.kind) && !used.contains(&v);
        let mut any = false;
        for kind in [VarKind::Dim, VarKind::Range, VarKind::Runtime] {
            any |= (0..self.variables(kind).len()).any(|i| removable(Var { kind, index: i }));
        }
        if !any {
            return false;
        }
        // Constraints over only removable variables go away with them.
        self.constraints.retain(|(e, _)| {
            let mut keeps = false;
            e.for_each_var(&mut |v| keeps |= !removable(v));
            keeps
        });
        let mut renumber: [Vec<Option<usize>>; 3] = [vec![], vec![], vec![]];
        for (slot, kind) in [VarKind::Dim, VarKind::Range, VarKind::Runtime]
            .into_iter()
            .enumerate()
        {
            let mut next = 0;
            let vars = std::mem::take(self.variables_mut(kind));
            let mut kept = Vec::with_capacity(vars.len());
            for (i, var) in vars.into_iter().enumerate() {
                if removable(Var { kind, index: i }) {
                    renumber[slot].push(None);
                } else {
                    renumber[slot].push(Some(next));
                    next += 1;
                    kept.push(var);
                }
            }
            *self.variables_mut(kind) = kept;
        }
        let rename = |v: Var| {
            let slot = v.kind as usize;
            let index = renumber[slot]
                .get(v.index)
                .copied()
                .flatten()
                .unwrap_or(v.index);
            Expr::Var(Var {
                kind: v.kind,
                index,
            })
        };
        self.results = self.results.iter().map(|e| e.map_vars(&rename)).collect();
        for (e, _) in &mut self.constraints {
            *e = e.map_vars(&rename);
        }
        true
    }

    /// Variables used by a result, or by a constraint that shares a variable with
    /// something used (to a fixpoint). Variables of the kinds not being removed
    /// count as used: a constraint `d0 - rt0 in [0, 0]` restricts `d0`, so `rt0`
    /// must stay declared with it (dropping it printed `rt0` undeclared).
    fn used_variables(&self, removing: &[VarKind]) -> Vec<Var> {
        let mut used: Vec<Var> = [VarKind::Dim, VarKind::Range, VarKind::Runtime]
            .into_iter()
            .filter(|kind| !removing.contains(kind))
            .flat_map(|kind| (0..self.variables(kind).len()).map(move |index| Var { kind, index }))
            .collect();
        for r in &self.results {
            r.for_each_var(&mut |v| {
                if !used.contains(&v) {
                    used.push(v)
                }
            });
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (e, _) in &self.constraints {
                let mut vars = Vec::new();
                e.for_each_var(&mut |v| vars.push(v));
                if vars.iter().any(|v| used.contains(v)) {
                    for v in vars {
                        if !used.contains(&v) {
                            used.push(v);
                            changed = true;
                        }
                    }
                }
            }
        }
        used
    }

    /// Rewrites range variables that have a constraint `s mod c in [r, r]` as
    /// `s = c * s' + r` with `s'` rescaled bounds, removing the constraint (XLA's
    /// `RescaleSymbols`). Returns `true` when a variable was rescaled.
    pub fn rescale_symbols(&mut self) -> bool {
        if self.state != MapState::Defined {
            return false;
        }
        super::simplify::merge_mod_constraints(self);
        if self.state != MapState::Defined {
            return false;
        }
        let mut changed = false;
        for index in 0..self.range_vars.len() {
            let var = Var::range(index);
            let found = self.constraints.iter().position(|(e, r)| {
                r.is_point()
                    && matches!(e, Expr::Mod(x, c) if x.as_var() == Some(var) && c.as_const().is_some_and(|c| c > 0))
            });
            let Some(pos) = found else { continue };
            let (expr, r) = self.constraints.remove(pos);
            let Expr::Mod(_, c) = expr else {
                unreachable!()
            };
            let c = c.as_const().expect("constant modulus");
            let rem = r.lo;
            let bounds = self.range_vars[index].bounds;
            let lo = bounds
                .lo
                .checked_sub(rem)
                .and_then(|x| interval::ceil_div(x, c));
            let hi = bounds
                .hi
                .checked_sub(rem)
                .and_then(|x| interval::floor_div(x, c));
            let (Some(lo), Some(hi)) = (lo, hi) else {
                self.constraints.insert(
                    pos,
                    (
                        Expr::Mod(Box::new(Expr::Var(var)), Box::new(Expr::Const(c))),
                        r,
                    ),
                );
                continue;
            };
            self.range_vars[index].bounds = Interval::new(lo, hi);
            let replacement = Expr::Var(var) * c + rem;
            let subst = |v: Var| {
                if v == var {
                    replacement.clone()
                } else {
                    Expr::Var(v)
                }
            };
            self.results = self.results.iter().map(|e| e.map_vars(&subst)).collect();
            let old = std::mem::take(&mut self.constraints);
            for (e, r) in old {
                self.add_constraint(e.map_vars(&subst), r);
            }
            changed = true;
            if !self.range_vars[index].bounds.is_feasible() || !r.is_feasible() {
                self.reset_to_known_empty();
                return true;
            }
        }
        changed
    }

    /// Turns every range variable into a dimension appended after the existing ones
    /// (XLA's `ConvertRangeVariablesToDimensions` with all range variables).
    pub fn convert_range_vars_to_dims(&mut self) {
        let all: Vec<usize> = (0..self.range_vars.len()).collect();
        self.convert_range_vars_to_dims_at(&all);
    }

    /// Turns the range variables at `indices` into dimensions appended in that order.
    pub fn convert_range_vars_to_dims_at(&mut self, indices: &[usize]) {
        if self.state == MapState::Undefined {
            return;
        }
        let num_dims = self.dims.len();
        let mut new_index: Vec<Var> = Vec::with_capacity(self.range_vars.len());
        let mut kept = Vec::new();
        let mut moved = Vec::new();
        for (i, var) in self.range_vars.iter().enumerate() {
            if let Some(k) = indices.iter().position(|&j| j == i) {
                moved.push((k, var.clone()));
                new_index.push(Var::dim(num_dims + k));
            } else {
                new_index.push(Var::range(kept.len()));
                kept.push(var.clone());
            }
        }
        moved.sort_by_key(|(k, _)| *k);
        self.dims.extend(moved.into_iter().map(|(_, v)| v));
        self.range_vars = kept;
        let rename = |v: Var| match v.kind {
            VarKind::Range => Expr::Var(new_index[v.index]),
            _ => Expr::Var(v),
        };
        self.rename_everywhere(&rename);
    }

    /// Turns every range and runtime variable into a dimension (XLA's
    /// `ConvertSymbolsToDimensions`).
    pub fn convert_symbols_to_dims(&mut self) {
        if self.state == MapState::Undefined {
            return;
        }
        let num_dims = self.dims.len();
        let num_ranges = self.range_vars.len();
        let rename = |v: Var| match v.kind {
            VarKind::Dim => Expr::Var(v),
            VarKind::Range => Expr::dim(num_dims + v.index),
            VarKind::Runtime => Expr::dim(num_dims + num_ranges + v.index),
        };
        let mut ranges = std::mem::take(&mut self.range_vars);
        let mut runtimes = std::mem::take(&mut self.runtime_vars);
        self.dims.append(&mut ranges);
        self.dims.append(&mut runtimes);
        self.rename_everywhere(&rename);
    }

    fn rename_everywhere(&mut self, rename: &dyn Fn(Var) -> Expr) {
        self.results = self.results.iter().map(|e| e.map_vars(rename)).collect();
        for (e, _) in &mut self.constraints {
            *e = e.map_vars(rename);
        }
    }

    /// `true` when both maps are equal after simplification (names ignored).
    pub fn equivalent(&self, other: &IndexingMap) -> bool {
        let strip = |m: &IndexingMap| {
            let mut m = m.simplified();
            for v in m
                .dims
                .iter_mut()
                .chain(&mut m.range_vars)
                .chain(&mut m.runtime_vars)
            {
                v.name.clear();
            }
            m.constraints
                .sort_by_key(|(e, r)| (format!("{e:?}"), r.lo, r.hi));
            m
        };
        strip(self) == strip(other)
    }

    /// Total floor division and modulo nodes of results and constraints.
    pub fn div_mod_count(&self) -> usize {
        self.results
            .iter()
            .chain(self.constraints.iter().map(|(e, _)| e))
            .map(Expr::div_mod_count)
            .sum()
    }
}

/// Interval of `expr` with variable bounds from `bounds`, intersecting every
/// sub-expression that has a constraint with that constraint's interval.
pub(crate) fn range_with_constraints(
    expr: &Expr,
    bounds: &dyn Fn(Var) -> Interval,
    constraints: &[(Expr, Interval)],
) -> Interval {
    let own = match expr {
        Expr::Const(c) => Interval::point(*c),
        Expr::Var(v) => bounds(*v),
        _ => {
            let (op, a, b) = expr.as_binary().expect("binary node");
            let ia = range_with_constraints(a, bounds, constraints);
            let ib = range_with_constraints(b, bounds, constraints);
            match op {
                BinOp::Add => ia.add(&ib),
                BinOp::Mul => ia.mul(&ib),
                BinOp::FloorDiv => ia.floor_div(&ib),
                BinOp::CeilDiv => ia.ceil_div(&ib),
                BinOp::Mod => ia.modulo(&ib),
                BinOp::Min => ia.min(&ib),
                BinOp::Max => ia.max(&ib),
            }
        }
    };
    if constraints.is_empty() || matches!(expr, Expr::Const(_) | Expr::Var(_)) {
        return own;
    }
    constraints
        .iter()
        .filter(|(e, _)| e == expr)
        .fold(own, |acc, (_, r)| acc.intersect(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XLA's scatter update map: `rt0` is used only by a constraint that also
    /// restricts `d0`, so it stays (removing it left `rt0` undeclared in the text).
    #[test]
    fn a_symbol_tied_to_a_dimension_by_a_constraint_is_kept() {
        let text = "(d0, d1)[s0, s1]{rt0} -> (s0, 0, s1), domain: d0 in [0, 15], d1 in [0, 7], \
                    s0 in [0, 2], s1 in [0, 7], rt0 in [0, 15], -rt0 + d0 in [0, 0], -s1 + d1 in [0, 0]";
        let mut map = IndexingMap::parse(text).unwrap();
        let before = map.clone();
        assert!(!map.remove_unused_symbols());
        assert_eq!(map, before);
        assert_eq!(map.undeclared_variable(), None);
    }

    /// A symbol whose constraints mention only removed symbols goes, with them.
    #[test]
    fn a_symbol_only_in_its_own_constraint_is_removed() {
        let text = "(d0)[s0, s1] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1], s1 in [0, 9], \
                    s1 mod 2 in [0, 0]";
        let mut map = IndexingMap::parse(text).unwrap();
        assert!(map.remove_unused_symbols());
        assert_eq!(map.range_vars().len(), 1);
        assert!(map.constraints().is_empty());
        assert_eq!(map.undeclared_variable(), None);
    }
}
