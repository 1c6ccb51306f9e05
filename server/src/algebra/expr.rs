//! Affine-plus expressions over dimension, range and runtime variables: constants,
//! `+`, `*`, floor division, ceiling division, floor modulo, `min` and `max`.
//!
//! The tree mirrors what XLA builds and prints; the smart constructors fold
//! constants (with checked arithmetic: an overflowing fold is left unfolded) and
//! put constants on the right of `+` and `*`, as MLIR's and XLA's construction-time
//! canonicalization does. The simplifier (`simplify`) does everything else.

use std::ops;

use super::interval::{self, Interval};
pub use super::variable::{Var, VarKind};

/// An expression tree. Children are boxed: trees are small and built once per
/// simplification step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(i64),
    Var(Var),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    FloorDiv(Box<Expr>, Box<Expr>),
    CeilDiv(Box<Expr>, Box<Expr>),
    Mod(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
}

/// The binary operators, for code that treats them uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Mul,
    FloorDiv,
    CeilDiv,
    Mod,
    Min,
    Max,
}

impl BinOp {
    /// `op(a, b)` on values; `None` on overflow or division by zero. The one
    /// evaluation of an operator, for expression trees and compiled maps alike.
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            BinOp::Add => a.checked_add(b),
            BinOp::Mul => a.checked_mul(b),
            BinOp::FloorDiv => interval::floor_div(a, b),
            BinOp::CeilDiv => interval::ceil_div(a, b),
            BinOp::Mod => interval::floor_mod(a, b),
            BinOp::Min => Some(a.min(b)),
            BinOp::Max => Some(a.max(b)),
        }
    }
}

impl Expr {
    pub fn constant(v: i64) -> Expr {
        Expr::Const(v)
    }
    pub fn dim(i: usize) -> Expr {
        Expr::Var(Var::dim(i))
    }
    pub fn range(i: usize) -> Expr {
        Expr::Var(Var::range(i))
    }
    pub fn runtime(i: usize) -> Expr {
        Expr::Var(Var::runtime(i))
    }
    pub fn var(v: Var) -> Expr {
        Expr::Var(v)
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<i64> {
        match self {
            Expr::Const(c) => Some(*c),
            _ => None,
        }
    }

    pub fn as_var(&self) -> Option<Var> {
        match self {
            Expr::Var(v) => Some(*v),
            _ => None,
        }
    }

    /// Operator and operands of a binary node.
    pub fn as_binary(&self) -> Option<(BinOp, &Expr, &Expr)> {
        Some(match self {
            Expr::Add(a, b) => (BinOp::Add, &**a, &**b),
            Expr::Mul(a, b) => (BinOp::Mul, a, b),
            Expr::FloorDiv(a, b) => (BinOp::FloorDiv, a, b),
            Expr::CeilDiv(a, b) => (BinOp::CeilDiv, a, b),
            Expr::Mod(a, b) => (BinOp::Mod, a, b),
            Expr::Min(a, b) => (BinOp::Min, a, b),
            Expr::Max(a, b) => (BinOp::Max, a, b),
            Expr::Const(_) | Expr::Var(_) => return None,
        })
    }

    /// Builds `op(a, b)` with construction-time folding.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        match op {
            BinOp::Add => Expr::add_of(a, b),
            BinOp::Mul => Expr::mul_of(a, b),
            BinOp::FloorDiv => a.floor_div(b),
            BinOp::CeilDiv => a.ceil_div(b),
            BinOp::Mod => a.modulo(b),
            BinOp::Min => a.min(b),
            BinOp::Max => a.max(b),
        }
    }

    /// Builds `op(a, b)` exactly, without any folding (the parser uses this so that
    /// text round-trips).
    pub fn raw(op: BinOp, a: Expr, b: Expr) -> Expr {
        let (a, b) = (Box::new(a), Box::new(b));
        match op {
            BinOp::Add => Expr::Add(a, b),
            BinOp::Mul => Expr::Mul(a, b),
            BinOp::FloorDiv => Expr::FloorDiv(a, b),
            BinOp::CeilDiv => Expr::CeilDiv(a, b),
            BinOp::Mod => Expr::Mod(a, b),
            BinOp::Min => Expr::Min(a, b),
            BinOp::Max => Expr::Max(a, b),
        }
    }

    fn add_of(a: Expr, b: Expr) -> Expr {
        match (&a, &b) {
            (Expr::Const(x), Expr::Const(y)) => match x.checked_add(*y) {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::Add, a, b),
            },
            (_, Expr::Const(0)) => a,
            (Expr::Const(0), _) => b,
            (Expr::Const(_), _) => Expr::raw(BinOp::Add, b, a),
            _ => Expr::raw(BinOp::Add, a, b),
        }
    }

    fn mul_of(a: Expr, b: Expr) -> Expr {
        match (&a, &b) {
            (Expr::Const(x), Expr::Const(y)) => match x.checked_mul(*y) {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::Mul, a, b),
            },
            (_, Expr::Const(1)) => a,
            (Expr::Const(1), _) => b,
            (Expr::Const(_), _) => Expr::mul_of(b, a),
            (Expr::Mul(x, c1), Expr::Const(c2)) => {
                match c1.as_const().and_then(|c1| c1.checked_mul(*c2)) {
                    Some(c) => Expr::mul_of((**x).clone(), Expr::Const(c)),
                    None => Expr::raw(BinOp::Mul, a, b),
                }
            }
            _ => Expr::raw(BinOp::Mul, a, b),
        }
    }

    /// Floor division (rounds toward negative infinity).
    pub fn floor_div(self, d: impl Into<Expr>) -> Expr {
        let d = d.into();
        match (&self, &d) {
            (Expr::Const(x), Expr::Const(y)) => match interval::floor_div(*x, *y) {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::FloorDiv, self, d),
            },
            (_, Expr::Const(1)) => self,
            _ => Expr::raw(BinOp::FloorDiv, self, d),
        }
    }

    /// Ceiling division (rounds toward positive infinity).
    pub fn ceil_div(self, d: impl Into<Expr>) -> Expr {
        let d = d.into();
        match (&self, &d) {
            (Expr::Const(x), Expr::Const(y)) => match interval::ceil_div(*x, *y) {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::CeilDiv, self, d),
            },
            (_, Expr::Const(1)) => self,
            _ => Expr::raw(BinOp::CeilDiv, self, d),
        }
    }

    /// Floor modulo: the result has the sign of the divisor.
    pub fn modulo(self, d: impl Into<Expr>) -> Expr {
        let d = d.into();
        match (&self, &d) {
            (Expr::Const(x), Expr::Const(y)) => match interval::floor_mod(*x, *y) {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::Mod, self, d),
            },
            (_, Expr::Const(1)) | (_, Expr::Const(-1)) => Expr::Const(0),
            _ => Expr::raw(BinOp::Mod, self, d),
        }
    }

    pub fn min(self, other: impl Into<Expr>) -> Expr {
        let other = other.into();
        match (&self, &other) {
            (Expr::Const(x), Expr::Const(y)) => Expr::Const(*x.min(y)),
            _ => Expr::raw(BinOp::Min, self, other),
        }
    }

    pub fn max(self, other: impl Into<Expr>) -> Expr {
        let other = other.into();
        match (&self, &other) {
            (Expr::Const(x), Expr::Const(y)) => Expr::Const(*x.max(y)),
            _ => Expr::raw(BinOp::Max, self, other),
        }
    }

    /// Evaluates at a point. `None` on division by zero, overflow, or a variable
    /// without a value.
    pub fn evaluate(&self, dims: &[i64], ranges: &[i64], runtimes: &[i64]) -> Option<i64> {
        self.eval_with(&|v: Var| {
            match v.kind {
                VarKind::Dim => dims.get(v.index),
                VarKind::Range => ranges.get(v.index),
                VarKind::Runtime => runtimes.get(v.index),
            }
            .copied()
        })
    }

    /// Evaluates with variable values from a lookup function.
    pub fn eval_with(&self, value: &dyn Fn(Var) -> Option<i64>) -> Option<i64> {
        match self {
            Expr::Const(c) => Some(*c),
            Expr::Var(v) => value(*v),
            _ => {
                let (op, a, b) = self.as_binary().expect("binary node");
                op.apply(a.eval_with(value)?, b.eval_with(value)?)
            }
        }
    }

    /// Substitutes every variable by the expression at its position; a variable
    /// without a replacement stays as it is. Rebuilds with construction folding.
    pub fn replace_vars(&self, dims: &[Expr], ranges: &[Expr], runtimes: &[Expr]) -> Expr {
        self.map_vars(&|v: Var| {
            let table = match v.kind {
                VarKind::Dim => dims,
                VarKind::Range => ranges,
                VarKind::Runtime => runtimes,
            };
            table.get(v.index).cloned().unwrap_or(Expr::Var(v))
        })
    }

    /// Rebuilds the tree with each variable replaced by `f(var)`.
    pub fn map_vars(&self, f: &dyn Fn(Var) -> Expr) -> Expr {
        match self {
            Expr::Const(c) => Expr::Const(*c),
            Expr::Var(v) => f(*v),
            _ => {
                let (op, a, b) = self.as_binary().expect("binary node");
                Expr::binary(op, a.map_vars(f), b.map_vars(f))
            }
        }
    }

    /// Calls `f` on every variable occurrence.
    pub fn for_each_var(&self, f: &mut dyn FnMut(Var)) {
        match self {
            Expr::Const(_) => {}
            Expr::Var(v) => f(*v),
            _ => {
                let (_, a, b) = self.as_binary().expect("binary node");
                a.for_each_var(f);
                b.for_each_var(f);
            }
        }
    }

    /// `true` when the variable occurs in the expression.
    pub fn uses_var(&self, var: Var) -> bool {
        let mut found = false;
        self.for_each_var(&mut |v| found |= v == var);
        found
    }

    /// Interval of values over the box `bounds` (interval arithmetic; sound, not
    /// always tight).
    pub fn interval(&self, bounds: &dyn Fn(Var) -> Interval) -> Interval {
        match self {
            Expr::Const(c) => Interval::point(*c),
            Expr::Var(v) => bounds(*v),
            Expr::Add(a, b) => a.interval(bounds).add(&b.interval(bounds)),
            Expr::Mul(a, b) => a.interval(bounds).mul(&b.interval(bounds)),
            Expr::FloorDiv(a, b) => a.interval(bounds).floor_div(&b.interval(bounds)),
            Expr::CeilDiv(a, b) => a.interval(bounds).ceil_div(&b.interval(bounds)),
            Expr::Mod(a, b) => a.interval(bounds).modulo(&b.interval(bounds)),
            Expr::Min(a, b) => a.interval(bounds).min(&b.interval(bounds)),
            Expr::Max(a, b) => a.interval(bounds).max(&b.interval(bounds)),
        }
    }

    /// Number of nodes (constants and variables count one each).
    pub fn node_count(&self) -> usize {
        match self.as_binary() {
            None => 1,
            Some((_, a, b)) => 1 + a.node_count() + b.node_count(),
        }
    }

    /// Number of floor division, ceiling division and modulo nodes: the expensive
    /// operations the simplifier exists to remove.
    pub fn div_mod_count(&self) -> usize {
        match self.as_binary() {
            None => 0,
            Some((op, a, b)) => {
                let own = matches!(op, BinOp::FloorDiv | BinOp::CeilDiv | BinOp::Mod) as usize;
                own + a.div_mod_count() + b.div_mod_count()
            }
        }
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Const(v)
    }
}

impl From<Var> for Expr {
    fn from(v: Var) -> Expr {
        Expr::Var(v)
    }
}

impl<T: Into<Expr>> ops::Add<T> for Expr {
    type Output = Expr;
    fn add(self, rhs: T) -> Expr {
        Expr::add_of(self, rhs.into())
    }
}

impl<T: Into<Expr>> ops::Sub<T> for Expr {
    type Output = Expr;
    fn sub(self, rhs: T) -> Expr {
        Expr::add_of(self, -rhs.into())
    }
}

impl<T: Into<Expr>> ops::Mul<T> for Expr {
    type Output = Expr;
    fn mul(self, rhs: T) -> Expr {
        Expr::mul_of(self, rhs.into())
    }
}

impl ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        match self {
            Expr::Const(c) => match c.checked_neg() {
                Some(v) => Expr::Const(v),
                None => Expr::raw(BinOp::Mul, Expr::Const(c), Expr::Const(-1)),
            },
            e => Expr::mul_of(e, Expr::Const(-1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn construction_folds_constants_and_puts_them_right() {
        assert_eq!(Expr::constant(2) + 3, Expr::constant(5));
        assert_eq!(Expr::constant(2) * Expr::dim(0), Expr::dim(0) * 2);
        assert_eq!(Expr::dim(0) + 0, Expr::dim(0));
        let overflow = Expr::constant(i64::MAX) + 1;
        assert!(matches!(overflow, Expr::Add(..)));
        assert_eq!(overflow.evaluate(&[], &[], &[]), None);
    }

    #[test]
    fn evaluate_uses_floor_semantics() {
        let e = Expr::dim(0).floor_div(-3) + Expr::dim(0).modulo(-3);
        assert_eq!(e.evaluate(&[7], &[], &[]), Some(-3 + -2));
        assert_eq!(
            Expr::dim(0)
                .floor_div(Expr::dim(1))
                .evaluate(&[1, 0], &[], &[]),
            None
        );
    }
}
