//! tinygrad's div/mod folding (`tinygrad/uop/divandmod.py`): exact multiples,
//! divide by gcd, gcd with remainder, congruence (coefficients replaced by their
//! residues; the floor residue and the closest residue are both tried), nested mod
//! removal when the outer modulus divides the inner, and binary-numerator
//! interpolation. Whole-range-in-one-bucket cancellation is the point-range rule
//! of the driver.

use super::linear::{gcd, Linear};
use super::xla_rules::{floordiv_pos, mod_pos};
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

/// Splits each coefficient `k = q*c + r` (floor residue, or the closest residue
/// when `closest`). Returns (quotient part, residue part).
fn residues(lin: &Linear, c: i64, closest: bool) -> Option<(Linear, Linear)> {
    let mut quot = Linear::constant(floor_div(lin.constant, c)?);
    let mut rem = Linear::constant(floor_mod(lin.constant, c)?);
    for (atom, k) in &lin.terms {
        let mut r = floor_mod(*k, c)?;
        if closest && r.checked_mul(2)? > c {
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
    for closest in [false, true] {
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
    for closest in [false, true] {
        let (_, mut rem) = residues(lin, c, closest)?;
        if let Some(k) = one_bucket(&rem, c, ctx) {
            rem.constant = rem.constant.checked_sub(k.checked_mul(c)?)?;
            return Some(rem.to_expr());
        }
    }
    let (_, rem) = residues(lin, c, false)?;
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
