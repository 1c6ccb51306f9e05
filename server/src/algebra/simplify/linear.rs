//! Linear forms `c1*a1 + ... + cn*an + c0` over "atoms" (variables, divisions,
//! modulos, min/max, non-constant products): the normal form the sum rules work
//! on, and the canonical term order results are printed in.

use std::cmp::Ordering;

use crate::algebra::expr::Expr;

/// `Σ coeff * atom + constant`, like terms merged, no zero coefficients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linear {
    pub terms: Vec<(Expr, i64)>,
    pub constant: i64,
}

impl Linear {
    pub fn constant(c: i64) -> Linear {
        Linear {
            terms: Vec::new(),
            constant: c,
        }
    }

    /// Flattens sums and constant products. `None` when a coefficient would
    /// overflow (the caller then leaves the expression alone).
    pub fn of(e: &Expr) -> Option<Linear> {
        let mut lin = Linear::constant(0);
        lin.add_scaled(e, 1)?;
        lin.normalize()?;
        Some(lin)
    }

    fn add_scaled(&mut self, e: &Expr, k: i64) -> Option<()> {
        match e {
            Expr::Const(c) => self.constant = self.constant.checked_add(c.checked_mul(k)?)?,
            Expr::Add(a, b) => {
                self.add_scaled(a, k)?;
                self.add_scaled(b, k)?;
            }
            Expr::Mul(a, b) if b.as_const().is_some() => {
                self.add_scaled(a, k.checked_mul(b.as_const()?)?)?
            }
            Expr::Mul(a, b) if a.as_const().is_some() => {
                self.add_scaled(b, k.checked_mul(a.as_const()?)?)?
            }
            atom => self.terms.push((atom.clone(), k)),
        }
        Some(())
    }

    /// Sorts by atom and merges like terms.
    pub fn normalize(&mut self) -> Option<()> {
        if self.terms.len() > 1 {
            self.terms.sort_by(|a, b| atom_cmp(&a.0, &b.0));
        }
        let mut merged: Vec<(Expr, i64)> = Vec::with_capacity(self.terms.len());
        for (atom, k) in self.terms.drain(..) {
            match merged.last_mut() {
                Some((last, lk)) if *last == atom => *lk = lk.checked_add(k)?,
                _ => merged.push((atom, k)),
            }
        }
        merged.retain(|(_, k)| *k != 0);
        self.terms = merged;
        Some(())
    }

    /// `self + k * other`.
    pub fn add_linear(&mut self, other: &Linear, k: i64) -> Option<()> {
        for (atom, c) in &other.terms {
            self.terms.push((atom.clone(), c.checked_mul(k)?));
        }
        self.constant = self.constant.checked_add(other.constant.checked_mul(k)?)?;
        self.normalize()
    }

    pub fn scaled(&self, k: i64) -> Option<Linear> {
        let mut out = Linear::constant(0);
        out.add_linear(self, k)?;
        Some(out)
    }

    /// Coefficient of `atom` (0 when absent).
    pub fn coefficient(&self, atom: &Expr) -> i64 {
        self.terms
            .iter()
            .find(|(a, _)| a == atom)
            .map_or(0, |(_, k)| *k)
    }

    /// Builds the expression in XLA's canonical order: products, then modulos,
    /// then divisions, then bare variables, then the constant.
    pub fn to_expr(&self) -> Expr {
        let mut order: Vec<&(Expr, i64)> = self.terms.iter().collect();
        order.sort_by(|a, b| {
            term_category(a)
                .cmp(&term_category(b))
                .then_with(|| atom_cmp(&a.0, &b.0))
        });
        let mut out: Option<Expr> = None;
        for (atom, k) in order {
            let term = if *k == 1 {
                atom.clone()
            } else {
                Expr::Mul(Box::new(atom.clone()), Box::new(Expr::Const(*k)))
            };
            out = Some(match out {
                None => term,
                Some(acc) => Expr::Add(Box::new(acc), Box::new(term)),
            });
        }
        match out {
            None => Expr::Const(self.constant),
            Some(acc) if self.constant == 0 => acc,
            Some(acc) => Expr::Add(Box::new(acc), Box::new(Expr::Const(self.constant))),
        }
    }

    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }
}

fn term_category((atom, k): &(Expr, i64)) -> u8 {
    if *k != 1 {
        return 0;
    }
    match atom {
        Expr::Mul(..) => 0,
        Expr::Mod(..) => 1,
        Expr::FloorDiv(..) | Expr::CeilDiv(..) => 2,
        Expr::Min(..) | Expr::Max(..) => 3,
        _ => 4,
    }
}

fn kind_rank(e: &Expr) -> u8 {
    match e {
        Expr::Mul(..) => 0,
        Expr::Mod(..) => 1,
        Expr::FloorDiv(..) => 2,
        Expr::CeilDiv(..) => 3,
        Expr::Min(..) => 4,
        Expr::Max(..) => 5,
        Expr::Add(..) => 6,
        Expr::Var(..) => 7,
        Expr::Const(..) => 8,
    }
}

/// A total order on expressions used to sort terms deterministically.
pub fn atom_cmp(a: &Expr, b: &Expr) -> Ordering {
    match (a, b) {
        (Expr::Var(x), Expr::Var(y)) => x.cmp(y),
        (Expr::Const(x), Expr::Const(y)) => x.cmp(y),
        _ => {
            let by_kind = kind_rank(a).cmp(&kind_rank(b));
            if by_kind != Ordering::Equal {
                return by_kind;
            }
            match (a.as_binary(), b.as_binary()) {
                (Some((_, a1, a2)), Some((_, b1, b2))) => {
                    atom_cmp(a1, b1).then_with(|| atom_cmp(a2, b2))
                }
                _ => Ordering::Equal,
            }
        }
    }
}

/// Greatest common divisor of absolute values (`gcd(0, x) = |x|`), in `u64` so
/// that `i64::MIN` is handled.
pub fn gcd(a: i64, b: i64) -> u64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
