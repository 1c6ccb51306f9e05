//! The simplifier: rewrites result and constraint expressions to simpler equal
//! ones using variable bounds and constraints, to a fixpoint (bounded).
//!
//! Rules: `xla_rules` (XLA's `SymbolicExprSimplifier`), `tinygrad_rules`
//! (tinygrad's div/mod folding), `constraints` (moving arithmetic into bounds,
//! dropping implied constraints, tightening bounds, merging modulus constraints,
//! detecting infeasible domains).

pub mod constraints;
pub mod linear;
pub mod tinygrad_rules;
pub mod xla_rules;

use super::expr::Expr;
use super::interval::Interval;
use super::map::{range_with_constraints, IndexingMap, MapState};
use super::variable::Var;

/// Upper bound on map-level rounds (each round simplifies every expression and the
/// constraints); real maps converge in two or three.
const MAX_MAP_ROUNDS: usize = 8;

/// What the rules may know about variables: their bounds and the constraints.
pub struct Context<'a> {
    pub bounds: &'a dyn Fn(Var) -> Interval,
    pub constraints: &'a [(Expr, Interval)],
}

impl Context<'_> {
    /// Range of an expression (constraint-aware interval arithmetic).
    pub fn range(&self, e: &Expr) -> Interval {
        range_with_constraints(e, self.bounds, self.constraints)
    }
}

/// Simplifies one expression under a context, to a fixpoint.
pub fn simplify_expr(e: &Expr, ctx: &Context<'_>) -> Expr {
    xla_rules::simplify_to_fixpoint(e, ctx)
}

impl IndexingMap {
    /// Simplifies results and constraints in place, to a fixpoint. Returns `true`
    /// when anything changed.
    pub fn simplify(&mut self) -> bool {
        if self.state != MapState::Defined {
            return false;
        }
        let before = self.clone();
        for _ in 0..MAX_MAP_ROUNDS {
            // Results are simplified to a fixpoint for a given domain, so another
            // round is needed only when the constraints changed the domain.
            let domain = self.domain_snapshot();
            constraints::simplify_constraints(self);
            if self.state != MapState::Defined {
                break;
            }
            let unchanged = domain == self.domain_snapshot();
            self.simplify_results();
            if unchanged {
                break;
            }
        }
        *self != before
    }

    /// A simplified copy.
    pub fn simplified(&self) -> IndexingMap {
        let mut m = self.clone();
        m.simplify();
        m
    }

    /// Bounds and constraints: what the result simplification depends on.
    fn domain_snapshot(&self) -> (Vec<Interval>, Vec<(Expr, Interval)>) {
        let bounds = self
            .dims
            .iter()
            .chain(&self.range_vars)
            .chain(&self.runtime_vars)
            .map(|v| v.bounds)
            .collect();
        (bounds, self.constraints.clone())
    }

    fn simplify_results(&mut self) {
        let dims = &self.dims;
        let ranges = &self.range_vars;
        let runtimes = &self.runtime_vars;
        let bounds = |v: Var| {
            let vars = match v.kind {
                super::variable::VarKind::Dim => dims,
                super::variable::VarKind::Range => ranges,
                super::variable::VarKind::Runtime => runtimes,
            };
            vars.get(v.index).map_or(Interval::FULL, |x| x.bounds)
        };
        let ctx = Context {
            bounds: &bounds,
            constraints: &self.constraints,
        };
        let results: Vec<Expr> = self
            .results
            .iter()
            .map(|e| simplify_expr(e, &ctx))
            .collect();
        self.results = results;
    }
}
