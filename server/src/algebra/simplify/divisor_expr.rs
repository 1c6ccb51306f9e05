//! Division and modulo by a non-constant divisor whose range excludes 0: exact
//! multiples, common factors, and multiples of the divisor moved out (tinygrad's
//! `divide_by_gcd` and `factor_remainder` for symbolic divisors; XLA leaves these
//! alone).

use smallvec::SmallVec;

use super::arena::{Id, Node};
use super::floordiv::floordiv;
use super::linear::{atom_cmp, gcd_i64, Linear};
use super::modulo::modulo;
use super::rewriter::Rewriter;
use crate::algebra::expr::BinOp;

/// Non-constant factors of a product.
type Factors = SmallVec<[Id; 4]>;

/// `a floordiv b` or `a mod b` for a non-constant `b`.
pub fn divide_by_expr(rw: &mut Rewriter<'_>, a: Id, b: Id, is_mod: bool) -> Id {
    let op = if is_mod { BinOp::Mod } else { BinOp::FloorDiv };
    let rb = rw.range(b);
    if rb.contains(0) {
        return rw.bin(op, a, b);
    }
    let la = Linear::of(rw.arena, a);
    if let Some(e) = la
        .as_ref()
        .and_then(|la| symbolic_divide(rw, la, b, is_mod))
    {
        return e;
    }
    let lb = Linear::of(rw.arena, b);
    if is_mod {
        if let Some(e) = mod_by_constant_quotient(rw, a, b, la.as_ref(), lb.as_ref()) {
            return e;
        }
    }
    if let (Some(la), Some(lb)) = (&la, &lb) {
        if let Some(q) = exact_multiple(la, lb) {
            return rw.constant(if is_mod { 0 } else { q });
        }
    }
    if is_mod && rb.lo > 0 {
        let ra = rw.range(a);
        if ra.lo >= 0 && ra.hi < rb.lo {
            return a;
        }
    }
    rw.bin(op, a, b)
}

/// `x mod y = x - y * q` when the quotient is the constant `q` (tinygrad's
/// `cancel_divmod` for modulo), kept when cheaper.
fn mod_by_constant_quotient(
    rw: &mut Rewriter<'_>,
    a: Id,
    b: Id,
    la: Option<&Linear>,
    lb: Option<&Linear>,
) -> Option<Id> {
    let div = rw.bin(BinOp::FloorDiv, a, b);
    let q = rw.range(div);
    if !q.is_point() {
        return None;
    }
    let current = rw.bin(BinOp::Mod, a, b);
    let candidate = (|| {
        let mut la = la?.clone();
        la.add_linear(rw.arena, lb?, q.lo.checked_neg()?)?;
        Some(la.to_id(rw.arena))
    })();
    Some(rw.cheaper(current, candidate))
}

/// `q` when `a == q * b` term by term (constants included).
fn exact_multiple(a: &Linear, b: &Linear) -> Option<i64> {
    let &(atom, kb) = b.terms.first()?;
    let ka = a.coefficient(atom);
    if ka.checked_rem(kb)? != 0 {
        return None;
    }
    let q = ka.checked_div(kb)?;
    (b.scaled(q)? == *a).then_some(q)
}

/// A product split into its constant and its non-constant factors (sorted).
fn factors(rw: &Rewriter<'_>, e: Id) -> (i64, Factors) {
    let mut coef = Some(1i64);
    let mut out = Factors::new();
    let mut stack: SmallVec<[Id; 8]> = SmallVec::new();
    stack.push(e);
    while let Some(f) = stack.pop() {
        match rw.arena.node(f) {
            Node::Bin(BinOp::Mul, a, b) => {
                stack.push(b);
                stack.push(a);
            }
            Node::Const(c) => coef = coef.and_then(|k| k.checked_mul(c)),
            _ => out.push(f),
        }
    }
    out.sort_by(|a, b| atom_cmp(rw.arena, *a, *b));
    // An overflowing constant product is kept as an opaque factor.
    match coef {
        Some(c) => (c, out),
        None => (1, SmallVec::from_slice(&[e])),
    }
}

/// `Some(a - b)` (multiset difference) when `b` is contained in `a`.
fn remove_factors(a: &[Id], b: &[Id]) -> Option<Factors> {
    let mut rest = Factors::from_slice(a);
    for f in b {
        let pos = rest.iter().position(|x| x == f)?;
        rest.remove(pos);
    }
    Some(rest)
}

/// `coef * f1 * f2 * ...` (the factors multiplied in order, the constant folded
/// in last).
fn product(rw: &mut Rewriter<'_>, coef: i64, fs: &[Id]) -> Id {
    let mut out: Option<Id> = None;
    for &f in fs {
        out = Some(match out {
            None => f,
            Some(acc) => rw.bin(BinOp::Mul, acc, f),
        });
    }
    match out {
        None => rw.constant(coef),
        Some(e) => {
            let k = rw.constant(coef);
            rw.arena.mul(e, k)
        }
    }
}

/// Division and modulo by a non-constant product `b` (whose range excludes 0):
/// divide numerator and divisor by their common factor (constant gcd and shared
/// variables), or move the terms that are multiples of `b` out of the division
/// (`(b*q + r) floordiv b = q + r floordiv b`, `(b*q + r) mod b = r mod b`).
fn symbolic_divide(rw: &mut Rewriter<'_>, a: &Linear, b: Id, is_mod: bool) -> Option<Id> {
    if matches!(rw.arena.node(b), Node::Bin(BinOp::Add, ..)) {
        return None;
    }
    let (cb, fb) = factors(rw, b);
    if cb == 0 {
        return None;
    }
    let terms: Vec<(i64, Factors)> = a
        .terms
        .iter()
        .map(|&(atom, k)| {
            let (c, f) = factors(rw, atom);
            c.checked_mul(k).map(|c| (c, f))
        })
        .collect::<Option<_>>()?;
    // Common factor of every term, the constant and the divisor.
    let g = terms
        .iter()
        .try_fold(gcd_i64(cb, a.constant)?, |g, (c, _)| gcd_i64(g, *c))?
        .max(1);
    let mut common: Factors = if a.constant == 0 {
        fb.clone()
    } else {
        Factors::new()
    };
    for (_, f) in &terms {
        common.retain(|x| f.contains(x));
    }
    if g > 1 || !common.is_empty() {
        let mut num = Linear::constant(a.constant / g);
        for (c, f) in &terms {
            let rest = remove_factors(f, &common)?;
            let atom = product(rw, 1, &rest);
            num.terms.push((atom, c / g));
        }
        num.normalize(rw.arena)?;
        let rest = remove_factors(&fb, &common)?;
        let divisor = product(rw, cb / g, &rest);
        let rebuilt = num.to_id(rw.arena);
        if !is_mod {
            return Some(floordiv(rw, rebuilt, divisor));
        }
        // (g*X) mod (g*Y) = g * (X mod Y)
        let inner = modulo(rw, rebuilt, divisor);
        let scaled = Linear::of(rw.arena, inner)?.scaled(g)?.to_id(rw.arena);
        return Some(if common.is_empty() {
            scaled
        } else {
            let common = product(rw, 1, &common);
            rw.arena.mul(scaled, common)
        });
    }
    let mut quotient = Linear::constant(0);
    let mut rest = Linear::constant(a.constant);
    for (&(atom, k), (c, f)) in a.terms.iter().zip(&terms) {
        match remove_factors(f, &fb) {
            Some(q) if c.checked_rem(cb) == Some(0) => {
                let q = product(rw, 1, &q);
                quotient.terms.push((q, c / cb));
            }
            _ => rest.terms.push((atom, k)),
        }
    }
    if quotient.terms.is_empty() {
        return None;
    }
    quotient.normalize(rw.arena)?;
    let r = rest.to_id(rw.arena);
    if is_mod {
        return Some(modulo(rw, r, b));
    }
    let inner = floordiv(rw, r, b);
    let li = Linear::of(rw.arena, inner)?;
    quotient.add_linear(rw.arena, &li, 1)?;
    Some(quotient.to_id(rw.arena))
}
