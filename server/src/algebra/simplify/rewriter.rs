//! The expression rewriter: what the rules may know (variable bounds, the
//! constraints), the caches that make repeated questions cheap (ranges and
//! simplified forms per node, results of the division and modulo rules), the work
//! budget, and the bottom-up driver (XLA's `SimplifyOnce` / `Simplify`).
//!
//! The rules themselves live in `sum`, `floordiv`, `modulo`, `divisor_expr` and
//! `min_max`; each is one function named after what it does.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::arena::{Arena, Cost, Id, Node};
use super::linear::Linear;
use super::{floordiv, min_max, modulo, sum};
use crate::algebra::expr::BinOp;
use crate::algebra::interval::Interval;
use crate::algebra::variable::{Var, VarKind};

/// Bound on bottom-up passes over one expression.
const MAX_EXPR_ROUNDS: usize = 12;

/// Bounds of the variables of one kind, by position.
pub type KindBounds = SmallVec<[Interval; 4]>;

/// Declared bounds of every variable, by kind and position.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    pub dims: KindBounds,
    pub ranges: KindBounds,
    pub runtimes: KindBounds,
}

impl Clone for Bounds {
    /// Each kind copied in one move (`SmallVec`'s own clone pushes one by one).
    fn clone(&self) -> Bounds {
        Bounds {
            dims: KindBounds::from_slice(&self.dims),
            ranges: KindBounds::from_slice(&self.ranges),
            runtimes: KindBounds::from_slice(&self.runtimes),
        }
    }
}

impl Bounds {
    /// The bounds of `v` (FULL for a variable the map does not have).
    pub fn get(&self, v: Var) -> Interval {
        self.of_kind(v.kind)
            .get(v.index)
            .copied()
            .unwrap_or(Interval::FULL)
    }

    pub fn of_kind(&self, kind: VarKind) -> &KindBounds {
        match kind {
            VarKind::Dim => &self.dims,
            VarKind::Range => &self.ranges,
            VarKind::Runtime => &self.runtimes,
        }
    }

    pub fn of_kind_mut(&mut self, kind: VarKind) -> &mut KindBounds {
        match kind {
            VarKind::Dim => &mut self.dims,
            VarKind::Range => &mut self.ranges,
            VarKind::Runtime => &mut self.runtimes,
        }
    }
}

/// How often (in steps, a power of two) the simplifier asks whether its request
/// was cancelled or ran out of time: a few microseconds of work.
pub const BUDGET_CHECK_STEPS: u64 = 1 << 10;

/// The work budget of one simplification, in steps (a step is one rule tried on
/// one node, or one term of a sum handled). When it runs out every rule returns
/// its input unchanged, so the remaining work is a quick unwind, and the caller
/// leaves the map as it was.
#[derive(Clone, Copy, Debug)]
pub struct Fuel {
    left: u64,
    spent: u64,
}

impl Fuel {
    pub fn new(steps: u64) -> Fuel {
        Fuel {
            left: steps,
            spent: 0,
        }
    }

    /// Spends `n` steps; `false` once the budget is gone. Every
    /// [`BUDGET_CHECK_STEPS`] steps it also asks the request's [`crate::budget`]
    /// (cancelled, or out of time): then the fuel is gone too.
    pub fn spend(&mut self, n: u64) -> bool {
        if (self.spent ^ self.spent.saturating_add(n)) >= BUDGET_CHECK_STEPS
            && crate::budget::exhausted()
        {
            self.left = 0;
        }
        self.spent = self.spent.saturating_add(n);
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                true
            }
            None => {
                self.left = 0;
                false
            }
        }
    }

    pub fn is_exhausted(&self) -> bool {
        self.left == 0
    }

    pub fn spent(&self) -> u64 {
        self.spent
    }
}

/// Per-context memo tables, indexed by node id (a context is one set of bounds
/// and constraints: they are cleared whenever either changes).
#[derive(Default)]
pub struct Caches {
    ranges: Vec<Option<Interval>>,
    once: Vec<Option<Id>>,
    fixpoint: Vec<Option<Id>>,
    /// `floordiv_pos` / `mod_pos` results by (operand, divisor).
    pub(super) floordiv: FxHashMap<(Id, i64), Id>,
    pub(super) modulo: FxHashMap<(Id, i64), Id>,
    /// The same results computed while `floordiv::nest_by_factor` attempts are
    /// open, by (operand, divisor, open attempts); see [`Caches::nested`].
    nested_floordiv: FxHashMap<NestedKey, Id>,
    nested_modulo: FxHashMap<NestedKey, Id>,
}

/// Which of the nested-result tables.
#[derive(Clone, Copy)]
pub(super) enum DivOrMod {
    Div,
    Mod,
}

/// A division or modulo asked while nesting attempts are open: operand,
/// divisor, and the open attempts (a result may depend on which are open).
type NestedKey = (Id, i64, Nesting);

/// The open `nest_by_factor` attempts, outermost first.
pub(super) type Nesting = [Option<(Id, i64)>; MAX_NESTING];

/// How many `floordiv::nest_by_factor` attempts may be open at once (each tries
/// further rules on smaller divisors).
pub(super) const MAX_NESTING: usize = 2;

impl Caches {
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.once.clear();
        self.fixpoint.clear();
        self.floordiv.clear();
        self.modulo.clear();
        self.nested_floordiv.clear();
        self.nested_modulo.clear();
    }

    /// The table of results computed while nesting attempts are open.
    ///
    /// Such results are not kept in `floordiv` / `modulo` (a rule an open attempt
    /// blocks may be missing from them), so without this table the rules under
    /// an attempt ran again for every factor and every attempt that asked. What
    /// they compute depends only on the node, the divisor, the open attempts and
    /// the results kept in `floordiv` / `modulo`; those are only added while no
    /// attempt is open, so the table is emptied when the outermost attempt ends
    /// ([`Caches::end_nesting`]) and every result in it is the one the rules would
    /// compute again.
    pub(super) fn nested(&mut self, which: DivOrMod) -> &mut FxHashMap<NestedKey, Id> {
        match which {
            DivOrMod::Div => &mut self.nested_floordiv,
            DivOrMod::Mod => &mut self.nested_modulo,
        }
    }

    /// The outermost nesting attempt ended: results kept in `floordiv` /
    /// `modulo` may be added again, so the nested ones may no longer hold.
    pub(super) fn end_nesting(&mut self) {
        self.nested_floordiv.clear();
        self.nested_modulo.clear();
    }
}

fn slot<T: Copy>(table: &mut Vec<Option<T>>, id: Id) -> &mut Option<T> {
    if table.len() <= id.index() {
        table.resize(id.index() + 1, None);
    }
    &mut table[id.index()]
}

/// Everything a rule needs: the arena to build in, the context to reason in, the
/// caches and the budget.
pub struct Rewriter<'w> {
    pub arena: &'w mut Arena,
    bounds: &'w Bounds,
    constraints: &'w [(Id, Interval)],
    pub(super) caches: &'w mut Caches,
    fuel: &'w mut Fuel,
    /// Divisions `floordiv::nest_by_factor` is working on (numerator, divisor).
    pub(super) nesting: SmallVec<[(Id, i64); MAX_NESTING]>,
    /// For each open attempt, its numerator's form when the rules before
    /// nesting failed on it without asking for a division or modulo.
    quiet_failures: SmallVec<[Option<Linear>; MAX_NESTING]>,
    /// Divisions and modulos by a constant asked so far (cached or not).
    div_mod_asked: u64,
}

impl<'w> Rewriter<'w> {
    /// A rewriter for one context. The caches must belong to this context (clear
    /// them when bounds or constraints change).
    pub fn new(
        arena: &'w mut Arena,
        bounds: &'w Bounds,
        constraints: &'w [(Id, Interval)],
        caches: &'w mut Caches,
        fuel: &'w mut Fuel,
    ) -> Rewriter<'w> {
        Rewriter {
            arena,
            bounds,
            constraints,
            caches,
            fuel,
            nesting: SmallVec::new(),
            quiet_failures: SmallVec::new(),
            div_mod_asked: 0,
        }
    }

    /// Spends `n` steps of the budget; `false` when it is gone.
    pub fn spend(&mut self, n: usize) -> bool {
        self.fuel.spend(n as u64)
    }

    pub fn out_of_fuel(&self) -> bool {
        self.fuel.is_exhausted()
    }

    pub fn cost(&self, id: Id) -> Cost {
        self.arena.cost(id)
    }

    pub fn constant(&mut self, c: i64) -> Id {
        self.arena.constant(c)
    }

    pub fn bin(&mut self, op: BinOp, a: Id, b: Id) -> Id {
        self.arena.bin(op, a, b)
    }

    pub fn bin_const(&mut self, op: BinOp, a: Id, c: i64) -> Id {
        self.arena.bin_const(op, a, c)
    }

    /// The cached result of a division or modulo of `a` by `c`: the one kept for
    /// any context, or, while nesting attempts are open, the one computed under
    /// the same open attempts.
    pub(super) fn cached_div_mod(&self, which: DivOrMod, a: Id, c: i64) -> Option<Id> {
        let kept = match which {
            DivOrMod::Div => &self.caches.floordiv,
            DivOrMod::Mod => &self.caches.modulo,
        };
        if let Some(&done) = kept.get(&(a, c)) {
            return Some(done);
        }
        if self.nesting.is_empty() {
            return None;
        }
        let table = match which {
            DivOrMod::Div => &self.caches.nested_floordiv,
            DivOrMod::Mod => &self.caches.nested_modulo,
        };
        table.get(&(a, c, self.open_attempts())).copied()
    }

    /// Keeps a computed division or modulo (see [`Rewriter::cached_div_mod`]).
    /// Nothing is kept once the budget is gone (the result may be partial).
    pub(super) fn keep_div_mod(&mut self, which: DivOrMod, a: Id, c: i64, out: Id) {
        if self.out_of_fuel() {
            return;
        }
        if self.nesting.is_empty() {
            let kept = match which {
                DivOrMod::Div => &mut self.caches.floordiv,
                DivOrMod::Mod => &mut self.caches.modulo,
            };
            kept.insert((a, c), out);
        } else {
            let key = (a, c, self.open_attempts());
            self.caches.nested(which).insert(key, out);
        }
    }

    /// Counts a division or modulo by a constant asked for.
    pub(super) fn count_div_mod(&mut self) {
        self.div_mod_asked += 1;
    }

    /// Divisions and modulos by a constant asked for so far.
    pub(super) fn div_mod_asked(&self) -> u64 {
        self.div_mod_asked
    }

    /// Opens a `floordiv::nest_by_factor` attempt on `n floordiv c`;
    /// `quiet_failure` is `n`'s form when the rules before nesting failed on it
    /// without asking for a division or modulo.
    pub(super) fn open_attempt(&mut self, n: Id, c: i64, quiet_failure: Option<Linear>) {
        self.nesting.push((n, c));
        self.quiet_failures.push(quiet_failure);
    }

    /// Closes the innermost attempt.
    pub(super) fn close_attempt(&mut self) {
        self.nesting.pop();
        self.quiet_failures.pop();
        if self.nesting.is_empty() {
            self.caches.end_nesting();
        }
    }

    /// `true` when an open attempt is on `lin floordiv c` and the rules before
    /// nesting failed on it quietly.
    pub(super) fn is_open_attempt(&self, lin: &Linear, c: i64) -> bool {
        self.nesting
            .iter()
            .zip(&self.quiet_failures)
            .any(|(&(_, d), form)| d == c && form.as_ref() == Some(lin))
    }

    /// `true` when an open attempt divides by `c` and the rules before nesting
    /// failed on it quietly (a division by `c` of that attempt's form skips
    /// them, see [`Rewriter::is_open_attempt`]).
    pub(super) fn has_quiet_attempt_by(&self, c: i64) -> bool {
        self.nesting
            .iter()
            .zip(&self.quiet_failures)
            .any(|(&(_, d), form)| d == c && form.is_some())
    }

    fn open_attempts(&self) -> Nesting {
        let mut open = [None; MAX_NESTING];
        for (slot, &attempt) in open.iter_mut().zip(&self.nesting) {
            *slot = Some(attempt);
        }
        open
    }

    /// The cheaper of the current form and a candidate (ties keep the current).
    pub fn cheaper(&self, current: Id, candidate: Option<Id>) -> Id {
        match candidate {
            Some(c) if self.cost(c) < self.cost(current) => c,
            _ => current,
        }
    }

    /// Range of a node: interval arithmetic over the variable bounds, where any
    /// sub-expression that is constrained is intersected with its constraint
    /// (XLA's `RangeEvaluator::ComputeExpressionRange`). Cached per node.
    pub fn range(&mut self, e: Id) -> Interval {
        // Most questions are answered from the cache: look without growing it.
        if let Some(&Some(r)) = self.caches.ranges.get(e.index()) {
            return r;
        }
        let r = match self.arena.node(e) {
            Node::Const(c) => Interval::point(c),
            Node::Var(v) => self.bounds.get(v),
            Node::Bin(op, a, b) => {
                let (ia, ib) = (self.range(a), self.range(b));
                let own = match op {
                    BinOp::Add => ia.add(&ib),
                    BinOp::Mul => ia.mul(&ib),
                    BinOp::FloorDiv => ia.floor_div(&ib),
                    BinOp::CeilDiv => ia.ceil_div(&ib),
                    BinOp::Mod => ia.modulo(&ib),
                    BinOp::Min => ia.min(&ib),
                    BinOp::Max => ia.max(&ib),
                };
                self.constraints
                    .iter()
                    .filter(|(c, _)| *c == e)
                    .fold(own, |acc, (_, r)| acc.intersect(r))
            }
        };
        *slot(&mut self.caches.ranges, e) = Some(r);
        r
    }

    /// Range of the expression a linear form builds ([`Linear::to_id`]), without
    /// building it when no constraint could match one of its nodes: the same
    /// interval arithmetic in the same order.
    pub fn range_of_linear(&mut self, lin: &Linear) -> Interval {
        if let Some(r) = self.small_range(lin.constant, lin.terms.iter().copied()) {
            return r;
        }
        if !self.constraints.is_empty() {
            let id = lin.to_id(self.arena);
            return self.range(id);
        }
        let mut acc: Option<Interval> = None;
        for (atom, k) in lin.canonical_order(self.arena) {
            let r = self.range(atom);
            let term = if k == 1 {
                r
            } else {
                r.mul(&Interval::point(k))
            };
            acc = Some(match acc {
                None => term,
                Some(a) => a.add(&term),
            });
        }
        let c = Interval::point(lin.constant);
        match acc {
            None => c,
            Some(a) if lin.constant == 0 => a,
            Some(a) => a.add(&c),
        }
    }

    /// [`Rewriter::range_of_linear`] of `constant + Σ k*atom` when it needs
    /// neither the built node nor the canonical order: there are no
    /// constraints, and no term's range or coefficient is large, so interval
    /// arithmetic cannot overflow in any order. `None` otherwise. The rules
    /// ask it of a part of a form before building the part: most parts fail
    /// on their range.
    pub fn small_range(
        &mut self,
        constant: i64,
        terms: impl Iterator<Item = (Id, i64)>,
    ) -> Option<Interval> {
        const SMALL: i64 = 1 << 40;
        const SMALL_FACTOR: i64 = 1 << 20;
        const MOST_TERMS: usize = 6;
        if !self.constraints.is_empty() || constant.unsigned_abs() > SMALL as u64 {
            return None;
        }
        let (mut lo, mut hi) = (constant, constant);
        for (i, (atom, k)) in terms.enumerate() {
            let r = self.range(atom);
            let small = |v: i64| (-SMALL..=SMALL).contains(&v);
            if i == MOST_TERMS
                || !r.is_feasible()
                || !small(r.lo)
                || !small(r.hi)
                || k.unsigned_abs() > SMALL_FACTOR as u64
            {
                return None;
            }
            let (a, b) = (r.lo * k, r.hi * k);
            lo += a.min(b);
            hi += a.max(b);
        }
        Some(Interval::new(lo, hi))
    }

    /// Simplifies until nothing changes (or the round bound is hit). XLA's
    /// `AffineExprSimplifier::Simplify`.
    pub fn fixpoint(&mut self, e: Id) -> Id {
        if let Some(done) = *slot(&mut self.caches.fixpoint, e) {
            return done;
        }
        let mut cur = self.once(e);
        let mut converged = false;
        for _ in 1..MAX_EXPR_ROUNDS {
            let next = self.once(cur);
            if next == cur {
                converged = true;
                break;
            }
            cur = next;
        }
        if self.out_of_fuel() {
            return cur;
        }
        *slot(&mut self.caches.fixpoint, e) = Some(cur);
        if converged {
            *slot(&mut self.caches.fixpoint, cur) = Some(cur);
        }
        cur
    }

    /// One bottom-up pass (XLA's `SimplifyOnce`), memoized per node.
    pub fn once(&mut self, e: Id) -> Id {
        if let Some(&Some(done)) = self.caches.once.get(e.index()) {
            return done;
        }
        if !self.spend(1) {
            return e;
        }
        let out = self.once_uncached(e);
        if !self.out_of_fuel() {
            *slot(&mut self.caches.once, e) = Some(out);
        }
        out
    }

    fn once_uncached(&mut self, e: Id) -> Id {
        let out = match self.arena.node(e) {
            Node::Const(_) => return e,
            Node::Var(v) => {
                let r = self.bounds.get(v);
                return if r.is_point() { self.constant(r.lo) } else { e };
            }
            Node::Bin(BinOp::Add, ..) => sum::simplify_sum(self, e),
            Node::Bin(BinOp::Mul, a, b) => self.product(e, a, b),
            Node::Bin(BinOp::FloorDiv, a, b) => {
                let (a, b) = (self.once(a), self.once(b));
                floordiv::floordiv(self, a, b)
            }
            Node::Bin(BinOp::CeilDiv, a, b) => {
                let (a, b) = (self.once(a), self.once(b));
                floordiv::ceildiv(self, a, b)
            }
            Node::Bin(BinOp::Mod, a, b) => {
                let (a, b) = (self.once(a), self.once(b));
                modulo::modulo(self, a, b)
            }
            Node::Bin(op @ (BinOp::Min | BinOp::Max), a, b) => {
                let (a, b) = (self.once(a), self.once(b));
                min_max::min_max(self, a, b, op == BinOp::Min)
            }
        };
        self.fold_point(out)
    }

    /// A product: by a constant it is a sum's term (XLA's `RewriteMul`
    /// distributes constants over sums); otherwise its factors are simplified.
    fn product(&mut self, e: Id, a: Id, b: Id) -> Id {
        if self.arena.as_const(a).is_some() || self.arena.as_const(b).is_some() {
            return sum::simplify_sum(self, e);
        }
        let (a, b) = (self.once(a), self.once(b));
        if self.arena.as_const(a).is_some() || self.arena.as_const(b).is_some() {
            let folded = self.arena.mul(a, b);
            return sum::simplify_sum(self, folded);
        }
        self.bin(BinOp::Mul, a, b)
    }

    /// A sub-expression whose range is a single value is that value (XLA's
    /// `SimplifyPointDimensions::kReplace`).
    pub fn fold_point(&mut self, e: Id) -> Id {
        if self.arena.as_const(e).is_some() {
            return e;
        }
        let r = self.range(e);
        if r.is_point() {
            self.constant(r.lo)
        } else {
            e
        }
    }

    /// `op(once(a), once(b))`: the fallback when a rule cannot work on a node
    /// (a linear form would overflow). Built with the constructors' folding: a
    /// child simplified to `0` must not leave a `+ 0` (which the printed map would
    /// not read back).
    pub fn rebuild_children(&mut self, e: Id) -> Id {
        match self.arena.as_bin(e) {
            Some((op, a, b)) => {
                let (a, b) = (self.once(a), self.once(b));
                self.arena.binary(op, a, b)
            }
            None => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::expr::Expr;
    use proptest::prelude::*;

    proptest! {
        /// Where [`Rewriter::small_range`] answers, it is the range of the node
        /// the form builds: the unbuilt parts the rules ask it of fail or pass
        /// as the built ones would.
        #[test]
        fn small_ranges_are_the_built_forms_ranges(
            bounds in prop::collection::vec((-300i64..300, 0i64..600), 3),
            terms in prop::collection::vec((0usize..6, -40i64..40), 0..9),
            constant in -1000i64..1000,
        ) {
            let mut arena = Arena::default();
            let d = |i: usize| Expr::dim(i % 3);
            let atoms = [d(0), d(1), d(2), d(0).floor_div(7), d(1).modulo(5), d(2) * d(0)];
            let atoms: Vec<Id> = atoms.iter().map(|e| arena.from_expr(e)).collect();
            let mut lin = Linear::constant(constant);
            for (atom, k) in terms {
                lin.terms.push((atoms[atom], k));
            }
            lin.normalize(&arena).expect("small coefficients");
            let bounds = Bounds {
                dims: bounds.iter().map(|&(lo, len)| Interval::new(lo, lo + len)).collect(),
                ..Bounds::default()
            };
            let (mut caches, mut fuel) = (Caches::default(), Fuel::new(1 << 20));
            let mut rw = Rewriter::new(&mut arena, &bounds, &[], &mut caches, &mut fuel);
            let small = rw.small_range(lin.constant, lin.terms.iter().copied());
            let built = lin.to_id(rw.arena);
            prop_assert_eq!(small, Some(rw.range(built)), "six small terms at most");
        }
    }
}
