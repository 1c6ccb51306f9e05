//! Rules that floor division and modulo by a positive constant share: splitting
//! off small terms by a common factor, coefficient residues, and the
//! two-valued numerator.

use smallvec::SmallVec;

use super::arena::Id;
use super::floordiv::floordiv_pos;
use super::linear::{gcd_i64, Linear};
use super::modulo::mod_pos;
use super::rewriter::Rewriter;
use crate::algebra::interval::{floor_div, floor_mod};

/// A rule for division or modulo by a positive constant: the rewritten node, or
/// `None` when it does not apply.
pub type DivRule = fn(&mut Rewriter<'_>, &Linear, i64) -> Option<Id>;

/// Splits `g*X + R` with `0 <= R < g` (g dividing c): `(g*X + R) floordiv c =
/// X floordiv (c/g)` and `(g*X + R) mod c = (X mod (c/g))*g + R`. XLA's
/// `SplitSumByGcd` as used by `SimplifySumDiv` and `RewriteMod`. For division,
/// when the constant keeps `R` out of `[0, g)`, its multiple of `g` moves into `X`
/// (tinygrad's `test_div_drop_small_terms`).
pub fn split_by_gcd(rw: &mut Rewriter<'_>, lin: &Linear, c: i64, is_mod: bool) -> Option<Id> {
    let mut candidates: SmallVec<[i64; 6]> = lin
        .terms
        .iter()
        .filter_map(|&(_, k)| gcd_i64(k, c))
        .filter(|g| *g > 1)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    for g in candidates {
        // Moving the constant changes nothing when it is already in `[0, g)`.
        let moves = !is_mod && !(0..g).contains(&lin.constant);
        let Some((x, r)) = small_part(rw, lin, g, false)
            .or_else(|| moves.then(|| small_part(rw, lin, g, true)).flatten())
        else {
            continue;
        };
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

/// `lin = g*X + R` with `0 <= R < g`: the terms whose coefficient `g` divides go
/// to `X`, the others to `R`; the constant stays in `R`, or (`move_constant`) its
/// multiple of `g` goes to `X` when `R` has terms. `None` when `R` is not in
/// `[0, g)` or either part is missing.
fn small_part(
    rw: &mut Rewriter<'_>,
    lin: &Linear,
    g: i64,
    move_constant: bool,
) -> Option<(Linear, Linear)> {
    let (xc, rc) = if move_constant {
        (floor_div(lin.constant, g)?, floor_mod(lin.constant, g)?)
    } else {
        (0, lin.constant)
    };
    // The small part's range first, unbuilt when it can be: most candidates
    // fail on it, and then neither part is built.
    let small = |&(_, k): &(Id, i64)| k % g != 0;
    let r_terms = lin.terms.iter().filter(|t| small(t)).count();
    let x_has_terms = r_terms < lin.terms.len();
    if !x_has_terms || (r_terms == 0 && (move_constant || rc == 0)) {
        return None;
    }
    let mut r = Linear::constant(rc);
    let rr = match rw.small_range(rc, lin.terms.iter().copied().filter(small)) {
        Some(rr) => rr,
        None => {
            r.terms.extend(lin.terms.iter().copied().filter(small));
            rw.range_of_linear(&r)
        }
    };
    if rr.lo < 0 || rr.hi >= g {
        return None;
    }
    if r.terms.len() < r_terms {
        r.terms.extend(lin.terms.iter().copied().filter(small));
    }
    let mut x = Linear::constant(xc);
    for &(atom, k) in &lin.terms {
        if k % g == 0 {
            x.terms.push((atom, k / g));
        }
    }
    Some((x, r))
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

/// `true` when `which` splits the coefficients of `lin` differently from every
/// variant before it in [`RESIDUES`] (so trying it can give something new).
pub fn residue_differs(lin: &Linear, c: i64, which: Residue) -> bool {
    let floor_residue = |k: i64| floor_mod(k, c).unwrap_or(0);
    match which {
        Residue::Floor => true,
        // Differs from the floor residue when some residue is above c/2.
        Residue::Closest => lin
            .terms
            .iter()
            .any(|&(_, k)| floor_residue(k).saturating_mul(2) > c),
        // Differs from the closest residue when some residue is exactly c/2.
        Residue::ClosestNegativeTies => lin
            .terms
            .iter()
            .any(|&(_, k)| floor_residue(k).saturating_mul(2) == c),
    }
}

/// The residue part of `lin` modulo `c`: each coefficient `k = q*c + r` split
/// by the chosen residue, and the constant by its floor residue, keeping `r`.
/// `None` when a split overflows. Normalized: `lin` is (every rule's form is),
/// and the part keeps some of its terms in order with non-zero coefficients,
/// so it needs no sorting again. The rules ask for the residue part first and
/// for the quotient part ([`quotients`], which overflows exactly when this
/// does) only once the residues fall in one bucket.
pub fn remainders(rw: &Rewriter<'_>, lin: &Linear, c: i64, which: Residue) -> Option<Linear> {
    debug_assert!(
        lin.is_normalized(rw.arena),
        "rules work on normalized forms"
    );
    floor_div(lin.constant, c)?;
    let mut rem = Linear::constant(floor_mod(lin.constant, c)?);
    for &(atom, k) in &lin.terms {
        let (_, r) = split_coefficient(k, c, which)?;
        if r != 0 {
            rem.terms.push((atom, r));
        }
    }
    Some(rem)
}

/// The quotient part of `lin` divided by `c`, the counterpart of
/// [`remainders`]: each coefficient's `q`, and the floor quotient of the
/// constant.
pub fn quotients(lin: &Linear, c: i64, which: Residue) -> Option<Linear> {
    floor_mod(lin.constant, c)?;
    let mut quot = Linear::constant(floor_div(lin.constant, c)?);
    for &(atom, k) in &lin.terms {
        let (q, _) = split_coefficient(k, c, which)?;
        if q != 0 {
            quot.terms.push((atom, q));
        }
    }
    Some(quot)
}

/// `k = q*c + r` with `r` the chosen residue; `None` on overflow.
fn split_coefficient(k: i64, c: i64, which: Residue) -> Option<(i64, i64)> {
    let mut r = floor_mod(k, c)?;
    let twice = r.checked_mul(2)?;
    if (which == Residue::Closest && twice > c)
        || (which == Residue::ClosestNegativeTies && twice >= c)
    {
        r -= c;
    }
    let q = k.checked_sub(r)? / c;
    Some((q, r))
}

/// The bucket `floor(x / c)` when it is the same over the whole range of `lin`
/// (tinygrad's `cancel_divmod`).
pub fn one_bucket(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<i64> {
    let r = rw.range_of_linear(lin);
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
