//! tinygrad's div/mod folding (`tinygrad/uop/divandmod.py`): exact multiples,
//! divide by gcd, gcd with remainder, congruence (coefficients replaced by their
//! residues; the floor residue and the closest residue are both tried), nested mod
//! removal when the outer modulus divides the inner, and binary-numerator
//! interpolation. Whole-range-in-one-bucket cancellation is the point-range rule
//! of the driver.

use super::linear::atom_cmp;
use super::linear::{gcd, Linear};
use super::xla_rules::{floordiv, floordiv_pos, mod_pos, modulo};
use super::Context;
use crate::algebra::expr::Expr;
use crate::algebra::interval::{floor_div, floor_mod};

/// `q` when `a == q * b` term by term (constants included).
pub fn exact_multiple(a: &Linear, b: &Linear) -> Option<i64> {
    let (atom, kb) = b.terms.first()?;
    let ka = a.coefficient(atom);
    if ka % kb != 0 {
        return None;
    }
    let q = ka / kb;
    let scaled = b.scaled(q)?;
    (scaled == *a).then_some(q)
}

/// `(g*X + g*q + r) floordiv (g*c') → (X + q) floordiv c'` for `0 <= r < g`, where
/// `g` divides every coefficient and the divisor.
pub fn divide_by_gcd(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    let g = lin
        .terms
        .iter()
        .fold(c.unsigned_abs(), |g, (_, k)| gcd(g as i64, *k)) as i64;
    if g <= 1 {
        return None;
    }
    let q = floor_div(lin.constant, g)?;
    let mut reduced = Linear::constant(q);
    for (atom, k) in &lin.terms {
        reduced.terms.push((atom.clone(), k / g));
    }
    Some(floordiv_pos(reduced.to_expr(), c / g, ctx))
}

/// The same for modulo: `(g*X + g*q + r) mod (g*c') = (X + q) mod c' * g + r`.
/// Returned as a candidate; the caller keeps it only when it is cheaper.
pub fn gcd_with_remainder_mod(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    let g = lin
        .terms
        .iter()
        .fold(c.unsigned_abs(), |g, (_, k)| gcd(g as i64, *k)) as i64;
    if g <= 1 || g == c {
        return None;
    }
    let q = floor_div(lin.constant, g)?;
    let r = lin.constant - q * g;
    let mut reduced = Linear::constant(q);
    for (atom, k) in &lin.terms {
        reduced.terms.push((atom.clone(), k / g));
    }
    let inner = mod_pos(reduced.to_expr(), c / g, ctx);
    let mut out = Linear::of(&inner)?.scaled(g)?;
    out.constant = out.constant.checked_add(r)?;
    Some(out.to_expr())
}

/// Which residue of a coefficient to keep: the floor residue in `[0, c)`, or the
/// one closest to zero (ties broken either way; both are tried).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Residue {
    Floor,
    Closest,
    ClosestNegativeTies,
}

const RESIDUES: [Residue; 3] = [
    Residue::Floor,
    Residue::Closest,
    Residue::ClosestNegativeTies,
];

/// Splits each coefficient `k = q*c + r` (floor residue, or the closest residue
/// when `closest`). Returns (quotient part, residue part).
fn residues(lin: &Linear, c: i64, closest: Residue) -> Option<(Linear, Linear)> {
    let mut quot = Linear::constant(floor_div(lin.constant, c)?);
    let mut rem = Linear::constant(floor_mod(lin.constant, c)?);
    for (atom, k) in &lin.terms {
        let mut r = floor_mod(*k, c)?;
        let twice = r.checked_mul(2)?;
        if (closest == Residue::Closest && twice > c)
            || (closest == Residue::ClosestNegativeTies && twice >= c)
        {
            r -= c;
        }
        let q = (k.checked_sub(r)?) / c;
        if q != 0 {
            quot.terms.push((atom.clone(), q));
        }
        if r != 0 {
            rem.terms.push((atom.clone(), r));
        }
    }
    quot.normalize()?;
    rem.normalize()?;
    Some((quot, rem))
}

/// `floor((c*Q + R) / c) = Q + k` when the residue sum `R` stays in bucket `k`.
pub fn congruence_div(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    for closest in RESIDUES {
        let (mut quot, rem) = residues(lin, c, closest)?;
        if let Some(k) = one_bucket(&rem, c, ctx) {
            quot.constant = quot.constant.checked_add(k)?;
            return Some(quot.to_expr());
        }
    }
    None
}

/// `(c*Q + R) mod c = R - k*c` when `R` stays in bucket `k`; otherwise reduces the
/// coefficients to their floor residues when that changes anything.
pub fn congruence_mod(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    for closest in RESIDUES {
        let (_, mut rem) = residues(lin, c, closest)?;
        if let Some(k) = one_bucket(&rem, c, ctx) {
            rem.constant = rem.constant.checked_sub(k.checked_mul(c)?)?;
            return Some(rem.to_expr());
        }
    }
    let (_, rem) = residues(lin, c, Residue::Floor)?;
    if rem != *lin {
        return Some(mod_pos(rem.to_expr(), c, ctx));
    }
    None
}

/// The bucket `floor(x / c)` when it is the same for the whole range of `lin`.
fn one_bucket(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<i64> {
    let r = ctx.range(&lin.to_expr());
    if !r.is_feasible() || r.lo == i64::MIN || r.hi == i64::MAX {
        return None;
    }
    let k = floor_div(r.lo, c)?;
    (floor_div(r.hi, c)? == k).then_some(k)
}

/// Inside `mod c`, a term `(y mod m)*k` with `c | m` is congruent to `y*k`.
pub fn remove_nested_mod(lin: &Linear, c: i64) -> Option<Linear> {
    let mut changed = false;
    let mut out = Linear::constant(lin.constant);
    for (atom, k) in &lin.terms {
        match atom {
            Expr::Mod(y, m) if m.as_const().is_some_and(|m| m != 0 && m % c == 0) => {
                out.add_linear(&Linear::of(y)?, *k)?;
                changed = true;
            }
            _ => out.terms.push((atom.clone(), *k)),
        }
    }
    if !changed {
        return None;
    }
    out.normalize()?;
    Some(out)
}

/// With one non-constant term taking exactly two values `v0, v0+1`, the division
/// or modulo is the line through its two values.
pub fn binary_numerator(lin: &Linear, c: i64, ctx: &Context<'_>, is_mod: bool) -> Option<Expr> {
    if lin.terms.len() != 1 {
        return None;
    }
    let (atom, k) = &lin.terms[0];
    let r = ctx.range(atom);
    if !r.is_feasible() || r.hi.checked_sub(r.lo)? != 1 {
        return None;
    }
    let at = |v: i64| -> Option<i64> {
        let x = k.checked_mul(v)?.checked_add(lin.constant)?;
        if is_mod {
            floor_mod(x, c)
        } else {
            floor_div(x, c)
        }
    };
    let (f0, f1) = (at(r.lo)?, at(r.hi)?);
    let slope = f1.checked_sub(f0)?;
    let mut out = Linear::constant(f0.checked_sub(slope.checked_mul(r.lo)?)?);
    if slope != 0 {
        out.terms.push((atom.clone(), slope));
    }
    Some(out.to_expr())
}

/// A product split into its constant and its non-constant factors (sorted).
fn factors(e: &Expr) -> (i64, Vec<Expr>) {
    fn walk(e: &Expr, coef: &mut Option<i64>, out: &mut Vec<Expr>) {
        match e {
            Expr::Mul(a, b) => {
                walk(a, coef, out);
                walk(b, coef, out);
            }
            Expr::Const(c) => *coef = coef.and_then(|k| k.checked_mul(*c)),
            other => out.push(other.clone()),
        }
    }
    let mut coef = Some(1);
    let mut out = Vec::new();
    walk(e, &mut coef, &mut out);
    out.sort_by(atom_cmp);
    // An overflowing constant product is kept as an opaque factor.
    match coef {
        Some(c) => (c, out),
        None => (1, vec![e.clone()]),
    }
}

/// `Some(a - b)` (multiset difference) when `b` is contained in `a`.
fn remove_factors(a: &[Expr], b: &[Expr]) -> Option<Vec<Expr>> {
    let mut rest = a.to_vec();
    for f in b {
        let pos = rest.iter().position(|x| x == f)?;
        rest.remove(pos);
    }
    Some(rest)
}

fn product(coef: i64, fs: &[Expr]) -> Expr {
    let mut out: Option<Expr> = None;
    for f in fs {
        out = Some(match out {
            None => f.clone(),
            Some(acc) => Expr::Mul(Box::new(acc), Box::new(f.clone())),
        });
    }
    match out {
        None => Expr::Const(coef),
        Some(e) => e * coef,
    }
}

/// Division and modulo by a non-constant product `b` (whose range excludes 0):
/// divide numerator and divisor by their common factor (constant gcd and shared
/// variables), or move the terms that are multiples of `b` out of the division
/// (`(b*q + r) floordiv b = q + r floordiv b`, `(b*q + r) mod b = r mod b`).
pub fn symbolic_divide(a: &Linear, b: &Expr, ctx: &Context<'_>, is_mod: bool) -> Option<Expr> {
    if matches!(b, Expr::Add(..)) {
        return None;
    }
    let (cb, fb) = factors(b);
    if cb == 0 {
        return None;
    }
    let terms: Vec<(i64, Vec<Expr>)> = a
        .terms
        .iter()
        .map(|(atom, k)| {
            let (c, f) = factors(atom);
            c.checked_mul(*k).map(|c| (c, f))
        })
        .collect::<Option<_>>()?;
    // Common factor of every term, the constant and the divisor.
    let g = terms
        .iter()
        .fold(gcd(cb, a.constant), |g, (c, _)| gcd(g as i64, *c))
        .max(1) as i64;
    let mut common: Vec<Expr> = if a.constant == 0 {
        fb.clone()
    } else {
        Vec::new()
    };
    for (_, f) in &terms {
        common.retain(|x| f.contains(x));
    }
    if g > 1 || !common.is_empty() {
        let mut num = Linear::constant(a.constant / g);
        for (c, f) in &terms {
            num.terms
                .push((product(1, &remove_factors(f, &common)?), c / g));
        }
        num.normalize()?;
        let divisor = product(cb / g, &remove_factors(&fb, &common)?);
        let rebuilt = num.to_expr();
        if !is_mod {
            return Some(floordiv(rebuilt, divisor, ctx));
        }
        // (g*X) mod (g*Y) = g * (X mod Y)
        let inner = modulo(rebuilt, divisor, ctx);
        let scaled = Linear::of(&inner)?.scaled(g)?.to_expr();
        return Some(if common.is_empty() {
            scaled
        } else {
            scaled * product(1, &common)
        });
    }
    let mut quotient = Linear::constant(0);
    let mut rest = Linear::constant(a.constant);
    for ((atom, k), (c, f)) in a.terms.iter().zip(&terms) {
        match remove_factors(f, &fb) {
            Some(q) if c % cb == 0 => quotient.terms.push((product(1, &q), c / cb)),
            _ => rest.terms.push((atom.clone(), *k)),
        }
    }
    if quotient.terms.is_empty() {
        return None;
    }
    quotient.normalize()?;
    if is_mod {
        return Some(modulo(rest.to_expr(), b.clone(), ctx));
    }
    let inner = floordiv(rest.to_expr(), b.clone(), ctx);
    quotient.add_linear(&Linear::of(&inner)?, 1)?;
    Some(quotient.to_expr())
}
