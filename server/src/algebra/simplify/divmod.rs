//! Rules that floor division and modulo by a positive constant share: splitting
//! off small terms by a common factor, coefficient residues, and the
//! two-valued numerator.

use super::arena::Id;
use super::floordiv::floordiv_pos;
use super::linear::{gcd_i64, Linear};
use super::modulo::mod_pos;
use super::rewriter::Rewriter;
use crate::algebra::interval::{floor_div, floor_mod};

/// A rule for division or modulo by a positive constant: the rewritten node, or
/// `None` when it does not apply.
pub type DivRule = fn(&mut Rewriter<'_>, &Linear, i64) -> Option<Id>;

/// Splits `g*X + R` with `0 <= R < g` (g dividing c, the constant's multiple of
/// `g` moved into `X`): `(g*X + R) floordiv c = X floordiv (c/g)` and
/// `(g*X + R) mod c = (X mod (c/g))*g + R`. XLA's `SplitSumByGcd` as used by
/// `SimplifySumDiv` and `RewriteMod`; tinygrad's `test_div_drop_small_terms`.
pub fn split_by_gcd(rw: &mut Rewriter<'_>, lin: &Linear, c: i64, is_mod: bool) -> Option<Id> {
    let mut candidates: Vec<i64> = lin
        .terms
        .iter()
        .filter_map(|&(_, k)| gcd_i64(k, c))
        .filter(|g| *g > 1)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    for g in candidates {
        let mut x = Linear::constant(0);
        let mut r = Linear::constant(lin.constant);
        for &(atom, k) in &lin.terms {
            if k % g == 0 {
                x.terms.push((atom, k / g));
            } else {
                r.terms.push((atom, k));
            }
        }
        if x.terms.is_empty() || (r.terms.is_empty() && r.constant == 0) {
            continue;
        }
        let r_id = r.to_id(rw.arena);
        let rr = rw.range(r_id);
        if !(rr.lo >= 0 && rr.hi < g) {
            continue;
        }
        let x_id = x.to_id(rw.arena);
        return Some(if is_mod {
            let inner = mod_pos(rw, x_id, c / g);
            let mut out = Linear::of(rw.arena, inner)?.scaled(g)?;
            out.add_linear(rw.arena, &r, 1)?;
            out.to_id(rw.arena)
        } else {
            floordiv_pos(rw, x_id, c / g)
        });
    }
    None
}

/// Which residue of a coefficient to keep: the floor residue in `[0, c)`, or the
/// one closest to zero (ties broken either way; all are tried).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Residue {
    Floor,
    Closest,
    ClosestNegativeTies,
}

pub const RESIDUES: [Residue; 3] = [
    Residue::Floor,
    Residue::Closest,
    Residue::ClosestNegativeTies,
];

/// Splits each coefficient `k = q*c + r` by the chosen residue. Returns
/// (quotient part, residue part).
pub fn residues(
    rw: &Rewriter<'_>,
    lin: &Linear,
    c: i64,
    which: Residue,
) -> Option<(Linear, Linear)> {
    let mut quot = Linear::constant(floor_div(lin.constant, c)?);
    let mut rem = Linear::constant(floor_mod(lin.constant, c)?);
    for &(atom, k) in &lin.terms {
        let mut r = floor_mod(k, c)?;
        let twice = r.checked_mul(2)?;
        if (which == Residue::Closest && twice > c)
            || (which == Residue::ClosestNegativeTies && twice >= c)
        {
            r -= c;
        }
        let q = k.checked_sub(r)? / c;
        if q != 0 {
            quot.terms.push((atom, q));
        }
        if r != 0 {
            rem.terms.push((atom, r));
        }
    }
    quot.normalize(rw.arena)?;
    rem.normalize(rw.arena)?;
    Some((quot, rem))
}

/// The bucket `floor(x / c)` when it is the same over the whole range of `lin`
/// (tinygrad's `cancel_divmod`).
pub fn one_bucket(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<i64> {
    let id = lin.to_id(rw.arena);
    let r = rw.range(id);
    if !r.is_feasible() || r.lo == i64::MIN || r.hi == i64::MAX {
        return None;
    }
    let k = floor_div(r.lo, c)?;
    (floor_div(r.hi, c)? == k).then_some(k)
}

/// With one non-constant term taking exactly two values `v0, v0+1`, the division
/// or modulo is the line through its two values (tinygrad's
/// `fold_binary_numerator`).
pub fn binary_numerator(rw: &mut Rewriter<'_>, lin: &Linear, c: i64, is_mod: bool) -> Option<Id> {
    let [(atom, k)] = lin.terms[..] else {
        return None;
    };
    let r = rw.range(atom);
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
        out.terms.push((atom, slope));
    }
    Some(out.to_id(rw.arena))
}

/// `gcd(|c|, every coefficient)`, or `None` when it is 1 (or does not fit).
pub fn common_factor(lin: &Linear, c: i64) -> Option<i64> {
    let g = lin.terms.iter().try_fold(c, |g, &(_, k)| gcd_i64(g, k))?;
    (g > 1).then_some(g)
}
