//! Floor and ceiling division (XLA's `RewriteFloorDiv`, tinygrad's
//! `fold_divmod_general` for division). The rules for a positive constant
//! divisor are tried in order by [`floordiv_pos`]; the first that applies wins.

use smallvec::SmallVec;

use super::arena::Id;
use super::divisor_expr::divide_by_expr;
use super::divmod::{
    binary_numerator, common_factor, one_bucket, residue_differs, residues, split_by_gcd, DivRule,
    RESIDUES,
};
use super::linear::Linear;
use super::modulo::mod_pos;
use super::rewriter::{DivOrMod, Rewriter, MAX_NESTING};
use crate::algebra::expr::BinOp;
use crate::algebra::interval::floor_div;

/// Floor division with simplified operands.
pub fn floordiv(rw: &mut Rewriter<'_>, a: Id, b: Id) -> Id {
    match rw.arena.as_const(b) {
        Some(0) => rw.bin(BinOp::FloorDiv, a, b),
        Some(1) => a,
        Some(c) if c > 0 => floordiv_pos(rw, a, c),
        Some(c) => negative_divisor(rw, a, b, c),
        None => divide_by_expr(rw, a, b, false),
    }
}

/// `x floordiv -c == (-x) floordiv c`, kept when that is cheaper.
fn negative_divisor(rw: &mut Rewriter<'_>, a: Id, b: Id, c: i64) -> Id {
    let current = rw.bin(BinOp::FloorDiv, a, b);
    let candidate = (|| {
        let pc = c.checked_neg()?;
        let neg = negate(rw, a)?;
        // No re-simplification: the result may itself be a negative-divisor
        // floordiv, which would come straight back here.
        let neg = rw.once(neg);
        Some(floordiv_pos(rw, neg, pc))
    })();
    rw.cheaper(current, candidate)
}

/// `-e` as a canonical linear form.
pub fn negate(rw: &mut Rewriter<'_>, e: Id) -> Option<Id> {
    Some(Linear::of(rw.arena, e)?.scaled(-1)?.to_id(rw.arena))
}

/// `a floordiv c` for a constant `c > 0`: the rules in order, memoized.
pub fn floordiv_pos(rw: &mut Rewriter<'_>, a: Id, c: i64) -> Id {
    if c == 1 {
        return a;
    }
    rw.count_div_mod();
    if let Some(done) = rw.cached_div_mod(DivOrMod::Div, a, c) {
        return done;
    }
    if !rw.spend(1) {
        return rw.bin_const(BinOp::FloorDiv, a, c);
    }
    let out = floordiv_pos_uncached(rw, a, c);
    rw.keep_div_mod(DivOrMod::Div, a, c, out);
    out
}

fn floordiv_pos_uncached(rw: &mut Rewriter<'_>, a: Id, c: i64) -> Id {
    let Some(lin) = Linear::of(rw.arena, a) else {
        return rw.bin_const(BinOp::FloorDiv, a, c);
    };
    if lin.is_constant() {
        return match floor_div(lin.constant, c) {
            Some(v) => rw.constant(v),
            None => rw.bin_const(BinOp::FloorDiv, a, c),
        };
    }
    if let Some(e) = first_rule(rw, &lin, c) {
        return e;
    }
    let n = lin.to_id(rw.arena);
    rw.bin_const(BinOp::FloorDiv, n, c)
}

/// The rules that come before [`nest_by_factor`], in order.
const BEFORE_NESTING: [DivRule; 7] = [
    div_of_div_or_mod,
    fold_inner_floordiv,
    divide_by_gcd,
    congruence_div,
    pull_multiples,
    |rw, lin, c| split_by_gcd(rw, lin, c, false),
    |rw, lin, c| binary_numerator(rw, lin, c, false),
];

/// The first rule that rewrites `lin floordiv c`, or `None`.
///
/// A division an open [`nest_by_factor`] attempt is working on comes back here
/// whenever a factor's two divisions recombine (`(n floordiv f) floordiv (c/f)`
/// folds to `n floordiv c` again). The rules before nesting already failed on it
/// without asking for any division or modulo, so they would fail again: only
/// the rule after nesting is tried (nesting itself refuses an open attempt).
fn first_rule(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    if !rw.is_open_attempt(lin, c) {
        let asked = rw.div_mod_asked();
        for rule in BEFORE_NESTING {
            if let Some(e) = rule(rw, lin, c) {
                return Some(e);
            }
            if rw.out_of_fuel() {
                return None;
            }
        }
        let quiet = rw.div_mod_asked() == asked;
        if let Some(e) = nest_by_factor(rw, lin, c, quiet) {
            return Some(e);
        }
        if rw.out_of_fuel() {
            return None;
        }
    }
    negated_numerator(rw, lin, c)
}

/// `(y floordiv c1) floordiv c → y floordiv (c1*c)` (XLA's `SimplifyDivDiv`) and
/// `(x mod (c*b)) floordiv c → (x floordiv c) mod b` (XLA's `SimplifyModDiv`).
fn div_of_div_or_mod(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let [(atom, 1)] = lin.terms[..] else {
        return None;
    };
    if lin.constant != 0 {
        return None;
    }
    if let Some((y, c1)) = rw.arena.with_const_rhs(atom, BinOp::FloorDiv) {
        if c1 == 0 {
            return None;
        }
        // floor(floor(y / c1) / c) = floor(y / (c1*c)) for c > 0; a negative c1
        // divides -y by -c1.
        let (y, c1) = if c1 > 0 {
            (y, c1)
        } else {
            (negate(rw, y)?, c1.checked_neg()?)
        };
        return Some(floordiv_pos(rw, y, c1.checked_mul(c)?));
    }
    let (x, m) = rw.arena.with_const_rhs(atom, BinOp::Mod)?;
    if m <= 0 || m % c != 0 {
        return None;
    }
    let inner = floordiv_pos(rw, x, c);
    Some(mod_pos(rw, inner, m / c))
}

/// `(X + y floordiv k) floordiv c → (X*k + y) floordiv (k*c)` for exactly one
/// inner floordiv with coefficient 1 (exact for integer X and k, c > 0). XLA's
/// `SimplifySumDiv` ("if we have an inner divisor ... we can remove a division");
/// tinygrad's `div_mod_recombine` #5 (nested division).
fn fold_inner_floordiv(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let mut found = None;
    for (i, &(atom, k)) in lin.terms.iter().enumerate() {
        if let Some((_, d)) = rw.arena.with_const_rhs(atom, BinOp::FloorDiv) {
            if d != 0 && d != i64::MIN {
                if found.is_some() || k != 1 {
                    return None;
                }
                found = Some(i);
            }
        }
    }
    let i = found?;
    let (y, d) = rw.arena.with_const_rhs(lin.terms[i].0, BinOp::FloorDiv)?;
    let (y, d) = if d > 0 { (y, d) } else { (negate(rw, y)?, -d) };
    let mut numerator = lin.without(i).scaled(d)?;
    let ly = Linear::of(rw.arena, y)?;
    numerator.add_linear(rw.arena, &ly, 1)?;
    let divisor = d.checked_mul(c)?;
    let n = numerator.to_id(rw.arena);
    Some(floordiv_pos(rw, n, divisor))
}

/// `(g*X + g*q + r) floordiv (g*c') → (X + q) floordiv c'` for `0 <= r < g`, where
/// `g` divides every coefficient and the divisor (tinygrad's `gcd_with_remainder`
/// for division).
fn divide_by_gcd(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let g = common_factor(lin, c)?;
    let mut reduced = Linear::constant(floor_div(lin.constant, g)?);
    for &(atom, k) in &lin.terms {
        reduced.terms.push((atom, k / g));
    }
    let n = reduced.to_id(rw.arena);
    Some(floordiv_pos(rw, n, c / g))
}

/// `floor((c*Q + R) / c) = Q + k` when the residue sum `R` stays in bucket `k`
/// (tinygrad's `fold_divmod_congruence` for division; floor and closest residues
/// are tried).
fn congruence_div(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    for which in RESIDUES {
        if !residue_differs(lin, c, which) {
            continue;
        }
        let (mut quot, rem) = residues(rw, lin, c, which)?;
        if let Some(k) = one_bucket(rw, &rem, c) {
            quot.constant = quot.constant.checked_add(k)?;
            return Some(quot.to_id(rw.arena));
        }
    }
    None
}

/// Terms whose coefficient is a multiple of `c` (and a constant multiple of `c`)
/// move out of the division: `(c*q + r) floordiv c = q + r floordiv c` (XLA's
/// `SimplifySumDiv`; tinygrad's `factor_remainder`).
fn pull_multiples(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let mut outside = Linear::constant(0);
    let mut inside = Linear::constant(lin.constant);
    if lin.constant % c == 0 {
        outside.constant = lin.constant / c;
        inside.constant = 0;
    }
    for &(atom, k) in &lin.terms {
        if k % c == 0 {
            outside.terms.push((atom, k / c));
        } else {
            inside.terms.push((atom, k));
        }
    }
    if outside.terms.is_empty() && outside.constant == 0 {
        return None;
    }
    if inside.terms.is_empty() && inside.constant == 0 {
        return Some(outside.to_id(rw.arena));
    }
    let n = inside.to_id(rw.arena);
    let inner = floordiv_pos(rw, n, c);
    let li = Linear::of(rw.arena, inner)?;
    outside.add_linear(rw.arena, &li, 1)?;
    Some(outside.to_id(rw.arena))
}

/// `x floordiv c → (x floordiv f) floordiv (c/f)` for a coefficient `f` that
/// divides `c`, when that is cheaper: dividing by the shared factor first lets
/// the inner division drop or merge terms (tinygrad's
/// `nest_div_by_smallest_factor`, `test_div_nest_by_factor_with_const`). Every
/// such factor is tried and the cheapest result wins, ties to the smallest
/// factor (`test_div_by_factor_tie_break`). Exact for any integer `x` and
/// positive `f`, `c/f`. `quiet`: the rules before this one failed on `lin`
/// without asking for a division or modulo (see [`first_rule`]).
fn nest_by_factor(rw: &mut Rewriter<'_>, lin: &Linear, c: i64, quiet: bool) -> Option<Id> {
    let mut factors: SmallVec<[i64; 6]> = lin
        .terms
        .iter()
        .filter_map(|&(_, k)| k.checked_abs())
        .filter(|&f| f > 1 && f < c && c % f == 0)
        .collect();
    if factors.is_empty() || rw.nesting.len() >= MAX_NESTING {
        return None;
    }
    factors.sort_unstable();
    factors.dedup();
    let n = lin.to_id(rw.arena);
    if rw.nesting.contains(&(n, c)) {
        return None;
    }
    let current = rw.bin_const(BinOp::FloorDiv, n, c);
    rw.open_attempt(n, c, quiet.then(|| lin.clone()));
    let mut best = current;
    for f in factors {
        let inner = floordiv_pos(rw, n, f);
        let outer = floordiv_pos(rw, inner, c / f);
        if rw.cost(outer) < rw.cost(best) {
            best = outer;
        }
    }
    rw.close_attempt();
    (best != current).then_some(best)
}

/// `floor(n / c) = floor(-n / -c)`: an all-negative numerator reads better
/// negated, when that is cheaper.
fn negated_numerator(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    if !lin.terms.iter().all(|(_, k)| *k < 0) {
        return None;
    }
    let n = lin.to_id(rw.arena);
    let current = rw.bin_const(BinOp::FloorDiv, n, c);
    let flipped = lin.scaled(-1).map(|neg| {
        let n = neg.to_id(rw.arena);
        rw.bin_const(BinOp::FloorDiv, n, -c)
    });
    Some(rw.cheaper(current, flipped))
}

/// Ceiling division with simplified operands: `ceil(a / c) == floor((a + c - 1) /
/// c)`, kept when that is cheaper.
pub fn ceildiv(rw: &mut Rewriter<'_>, a: Id, b: Id) -> Id {
    let current = rw.bin(BinOp::CeilDiv, a, b);
    match rw.arena.as_const(b) {
        Some(1) => a,
        Some(c) if c > 1 => {
            let candidate = Linear::of(rw.arena, a).and_then(|mut l| {
                l.constant = l.constant.checked_add(c - 1)?;
                let n = l.to_id(rw.arena);
                Some(floordiv_pos(rw, n, c))
            });
            rw.cheaper(current, candidate)
        }
        _ => current,
    }
}
