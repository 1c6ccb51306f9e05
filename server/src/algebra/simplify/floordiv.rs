//! Floor and ceiling division (XLA's `RewriteFloorDiv`, tinygrad's
//! `fold_divmod_general` for division). The rules for a positive constant
//! divisor are tried in order by [`floordiv_pos`]; the first that applies wins.

use smallvec::SmallVec;

use super::arena::Id;
use super::divisor_expr::divide_by_expr;
use super::divmod::{
    binary_numerator, common_factor, one_bucket, quotients, remainders, residue_differs,
    split_by_gcd, DivRule, RESIDUES,
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
    let i = unit_floordiv_term(rw, lin)?;
    let (y, d) = rw.arena.with_const_rhs(lin.terms[i].0, BinOp::FloorDiv)?;
    let (y, d) = if d > 0 { (y, d) } else { (negate(rw, y)?, -d) };
    let mut numerator = lin.without(i).scaled(d)?;
    let ly = Linear::of(rw.arena, y)?;
    numerator.add_linear(rw.arena, &ly, 1)?;
    let divisor = d.checked_mul(c)?;
    let n = numerator.to_id(rw.arena);
    Some(floordiv_pos(rw, n, divisor))
}

/// The term [`fold_inner_floordiv`] works on: the only floordiv by a constant
/// (other than 0 and `i64::MIN`) among the terms, when its coefficient is 1.
fn unit_floordiv_term(rw: &Rewriter<'_>, lin: &Linear) -> Option<usize> {
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
    found
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
    let quot = congruence_quotient(rw, lin, c)?;
    Some(quot.to_id(rw.arena))
}

/// The form [`congruence_div`] rewrites to, or `None` when it does not apply.
fn congruence_quotient(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Linear> {
    for which in RESIDUES {
        if !residue_differs(lin, c, which) {
            continue;
        }
        let rem = remainders(rw, lin, c, which)?;
        if let Some(k) = one_bucket(rw, &rem, c) {
            let mut quot = quotients(lin, c, which)?;
            quot.constant = quot.constant.checked_add(k)?;
            return Some(quot);
        }
    }
    None
}

/// Terms whose coefficient is a multiple of `c` (and a constant multiple of `c`)
/// move out of the division: `(c*q + r) floordiv c = q + r floordiv c` (XLA's
/// `SimplifySumDiv`; tinygrad's `factor_remainder`).
fn pull_multiples(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    if (lin.constant == 0 || lin.constant % c != 0) && lin.terms.iter().all(|&(_, k)| k % c != 0) {
        return None; // no multiple of `c` to pull (the common case)
    }
    let (mut outside, inside) = split_multiples(lin, c);
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

/// `lin = c*outside + inside`: the terms whose coefficient is a multiple of `c`
/// (and the constant, when it is one), divided by `c`, and the rest. Both keep
/// `lin`'s order, so a normalized `lin` gives normalized parts.
fn split_multiples(lin: &Linear, c: i64) -> (Linear, Linear) {
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
    (outside, inside)
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
        let outer = nest_once(rw, lin, n, c, f);
        if rw.cost(outer) < rw.cost(best) {
            best = outer;
        }
    }
    rw.close_attempt();
    (best != current).then_some(best)
}

/// One factor's candidate in [`nest_by_factor`]: `(n floordiv f) floordiv
/// (c/f)`, where `n` is `lin`'s node and the attempt on `n floordiv c` is open.
/// When [`folds_back`] sees that the outer division would come back to
/// `n floordiv c`, that division is asked directly.
fn nest_once(rw: &mut Rewriter<'_>, lin: &Linear, n: Id, c: i64, f: i64) -> Id {
    if fold_back_checked() && folds_back(rw, lin, n, c, f) {
        let outer = floordiv_pos(rw, n, c);
        #[cfg(test)]
        tests::check_fold_back(rw, n, c, f, outer);
        return outer;
    }
    let inner = floordiv_pos(rw, n, f);
    floordiv_pos(rw, inner, c / f)
}

/// `true` when `(n floordiv f) floordiv (c/f)` is `n floordiv c` asked again
/// under the open attempt: the inner division only pulls the multiples of `f`
/// out around a remainder division that stays as it is, and the outer one puts
/// them back. Most attempts end this way (the remainder is not smaller in any
/// way that helps), and seeing it costs the remainder division only, where
/// trying it built the inner sum and ran the outer division's rules on it.
///
/// Why the answer is the one the two divisions give (`lin` is `n`'s
/// normalized form, and every atom of it is one [`Linear::of`] stops at):
/// * The inner division `n floordiv f` is not cached (a cached one is used as
///   it is) and is not an open attempt's form, so its rules run in order.
///   Rule 0 needs a lone term with coefficient 1, and `f` is some term's
///   coefficient above 1. Rules 1, 2 and 3 are checked to fail:
///   [`unit_floordiv_term`] finds no term, no common factor with `f`,
///   [`congruence_quotient`] finds no bucket. Rule 4 ([`pull_multiples`]) then
///   splits `lin = f*Q + R` ([`split_multiples`]) and asks `R floordiv f`,
///   which is asked here in the same context, and comes back as the plain node
///   `R floordiv f`. The inner result is the sum `Q + (R floordiv f)`.
/// * The outer division of that sum by `c/f` (at least 2; `f` divides `c`): no
///   open attempt divides by `c/f` with its rules skipped. Rule 0 needs one
///   term, and `Q` has at least the term `f` came from. Rule 1 applies: `Q`
///   has no floordiv atom, so `R floordiv f` is the only one, with coefficient
///   one. It rebuilds `Q*f + R`, which is `lin` (the parts are disjoint and
///   normalized, and no coefficient changes), as `n`, and asks `n floordiv
///   (f * (c/f))`, that is `n floordiv c`, under the same open attempts.
/// * A cached outer result was computed the same way, and so is the cached
///   `n floordiv c` or equal to it: results kept outside attempts do not change
///   while one is open, and results cached inside one depend only on the node,
///   the divisor and the open attempts.
///
/// Skipping the two divisions leaves their results out of the caches (they are
/// computed again if asked) and spends fewer steps of the budget.
fn folds_back(rw: &mut Rewriter<'_>, lin: &Linear, n: Id, c: i64, f: i64) -> bool {
    // The structural conditions first, then the cache, then the ranges.
    if rw.has_quiet_attempt_by(c / f)
        || matches!(lin.terms[..], [(_, 1)])
        || unit_floordiv_term(rw, lin).is_some()
        || common_factor(lin, f).is_some()
    {
        return false;
    }
    let (outside, inside) = split_multiples(lin, f);
    let inner_division =
        |(atom, _): &(Id, i64)| rw.arena.with_const_rhs(*atom, BinOp::FloorDiv).is_some();
    if outside.terms.is_empty()
        || inside.terms.is_empty()
        || outside.terms.iter().any(inner_division)
        || rw.is_open_attempt(lin, f)
        || rw.cached_div_mod(DivOrMod::Div, n, f).is_some()
        || congruence_quotient(rw, lin, f).is_some()
    {
        return false;
    }
    let r = inside.to_id(rw.arena);
    let d = floordiv_pos(rw, r, f);
    rw.arena.with_const_rhs(d, BinOp::FloorDiv) == Some((r, f))
}

#[cfg(test)]
fn fold_back_checked() -> bool {
    tests::FOLD_BACK.get().check
}

#[cfg(not(test))]
fn fold_back_checked() -> bool {
    true
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::map::IndexingMap;
    use std::cell::Cell;

    /// Whether [`nest_once`] asks [`folds_back`], whether it then also
    /// computes the two divisions skipped, and how often it answered `true`.
    #[derive(Clone, Copy)]
    pub(super) struct Switch {
        pub check: bool,
        verify: bool,
        hits: u64,
    }

    thread_local! {
        pub(super) static FOLD_BACK: Cell<Switch> = const {
            Cell::new(Switch { check: true, verify: false, hits: 0 })
        };
    }

    /// Counts [`folds_back`]'s `true` answers; when verifying, the two
    /// divisions it skipped are computed as well and must give the same node.
    pub(super) fn check_fold_back(rw: &mut Rewriter<'_>, n: Id, c: i64, f: i64, outer: Id) {
        let mut s = FOLD_BACK.get();
        s.hits += 1;
        FOLD_BACK.set(s);
        if !s.verify {
            return;
        }
        let inner = floordiv_pos(rw, n, f);
        let tried = floordiv_pos(rw, inner, c / f);
        if !rw.out_of_fuel() {
            assert_eq!(rw.arena.to_expr(tried), rw.arena.to_expr(outer));
        }
    }

    /// A small deterministic generator (xorshift), so the test needs no seed file.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick(&mut self, from: &[i64]) -> i64 {
            from[self.below(from.len())]
        }
    }

    /// A chain of sums, products and divisions by constants around one
    /// variable, like tinygrad's fuzz expressions (the ones nesting works on).
    fn chain(rng: &mut Rng, vars: usize, steps: usize) -> String {
        let mut e = format!("d{}", rng.below(vars));
        for _ in 0..steps {
            e = match rng.below(20) {
                0..=5 => format!("({e} + d{})", rng.below(vars)),
                6..=8 => format!("({e} + {})", rng.pick(&[-5, -4, -2, -1, 1, 2, 3, 5])),
                9..=12 => format!("({e} * {})", rng.pick(&[-4, -3, -2, -1, 2, 3, 4, 5, 6, 8])),
                13..=18 => format!(
                    "({e} floordiv {})",
                    rng.pick(&[2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 20, 21, 30, 32, 84, 252])
                ),
                _ => format!("({e} mod {})", rng.pick(&[2, 3, 4, 8, 9, 16])),
            };
        }
        e
    }

    /// A random tree of the same operations.
    fn tree(rng: &mut Rng, vars: usize, depth: usize) -> String {
        if depth == 0 || rng.below(8) == 0 {
            return format!("d{}", rng.below(vars));
        }
        let a = tree(rng, vars, depth - 1);
        match rng.below(10) {
            0..=3 => format!("({a} + {})", tree(rng, vars, depth - 1)),
            4 => format!("({a} * {})", rng.pick(&[-3, 2, 3, 4, 6, 8, 16])),
            5..=7 => format!(
                "({a} floordiv {})",
                rng.pick(&[2, 3, 4, 6, 8, 12, 16, 24, 30, 64])
            ),
            _ => format!("({a} mod {})", rng.pick(&[2, 3, 4, 6, 8, 16, 32])),
        }
    }

    /// Nested divisions of sums that mix `x`, `x floordiv c` and `x mod c`
    /// terms (the div/mod recombination patterns), `depth` divisions deep: the
    /// family on which running the sum rule on [`fold_inner_floordiv`]'s
    /// numerators early changes answers (see
    /// `numerators_fold_inner_floordiv_builds_are_divided_as_built`), which
    /// the chains and trees above never showed.
    fn mixed(rng: &mut Rng, vars: usize, depth: usize) -> String {
        let terms = 1 + rng.below(3);
        let mut e = mixed_sum(rng, vars, terms);
        for _ in 0..depth {
            let c = rng.pick(&[2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 30, 32]);
            let terms = rng.below(3);
            e = format!("(({e} floordiv {c}) + {})", mixed_sum(rng, vars, terms));
            if rng.below(4) == 0 {
                e = format!("({e} * {})", rng.pick(&[-1, 2, 3, -4, 4]));
            }
            if rng.below(5) == 0 {
                e = format!("({e} mod {})", rng.pick(&[4, 8, 16, 30, 64]));
            }
        }
        format!("({e} floordiv {})", rng.pick(&[2, 3, 4, 6, 8, 12, 16, 32]))
    }

    /// `extra + 1` terms of [`mixed`]'s atoms with small coefficients, and
    /// sometimes a constant.
    fn mixed_sum(rng: &mut Rng, vars: usize, extra: usize) -> String {
        const COEFFICIENTS: [i64; 14] = [1, -1, 2, -2, 3, -3, 4, -4, 5, 6, 8, -8, 12, 16];
        let mut e = format!("({} * {})", mixed_atom(rng, vars), rng.pick(&COEFFICIENTS));
        for _ in 0..extra {
            let atom = mixed_atom(rng, vars);
            e = format!("({e} + ({atom} * {}))", rng.pick(&COEFFICIENTS));
        }
        if rng.below(2) == 0 {
            e = format!("({e} + {})", rng.pick(&[-9, -4, -1, 1, 3, 7]));
        }
        e
    }

    /// A variable (or `v * k + w`), itself or divided, reduced, or both.
    fn mixed_atom(rng: &mut Rng, vars: usize) -> String {
        let mut x = format!("d{}", rng.below(vars));
        if rng.below(3) == 0 {
            let k = rng.pick(&[2, 3, 4, -1, -2, 5]);
            x = format!("({x} * {k} + d{})", rng.below(vars));
        }
        let c = rng.pick(&[2, 3, 4, 5, 6, 8, 9, 12, 16]);
        match rng.below(6) {
            0 => x,
            1 | 2 => format!("({x} floordiv {c})"),
            3 | 4 => format!("({x} mod {c})"),
            _ => format!("(({x} floordiv {c}) mod {})", rng.pick(&[2, 3, 4, 8])),
        }
    }

    /// A map of `expr` over `vars` dimensions with random small bounds.
    fn map_over(rng: &mut Rng, vars: usize, expr: &str) -> String {
        let dims: Vec<String> = (0..vars).map(|v| format!("d{v}")).collect();
        let domain: Vec<String> = (0..vars)
            .map(|v| {
                let lo = [0, 0, 0, -3][rng.below(4)];
                let hi = [1, 2, 4, 5, 7, 8, 15, 16, 63, 64, 127, 255][rng.below(12)];
                format!("d{v} in [{lo}, {hi}]")
            })
            .collect();
        format!(
            "({}) -> ({expr}), domain: {}",
            dims.join(", "),
            domain.join(", ")
        )
    }

    /// `text` simplifies to the same answer with and without [`folds_back`]
    /// (and with every pair of divisions it skips computed too); how often it
    /// answered `true`.
    fn same_with_and_without_fold_back(text: &str) -> u64 {
        let (old, none) = simplified(text, false, false);
        assert_eq!(none, 0, "the switch turns the check off");
        let (new, hits) = simplified(text, true, false);
        assert_eq!(new, old, "{text}");
        let (verified, _) = simplified(text, true, true);
        assert_eq!(verified, old, "{text}");
        hits
    }

    /// The simplified text of `text` and how often [`folds_back`] answered
    /// `true`, with or without it (and verifying its answers).
    fn simplified(text: &str, check: bool, verify: bool) -> (String, u64) {
        let hits = FOLD_BACK.get().hits;
        FOLD_BACK.set(Switch {
            check,
            verify,
            hits,
        });
        let mut map = IndexingMap::parse(text).expect("generated maps parse");
        map.simplify();
        let after = FOLD_BACK.get().hits;
        FOLD_BACK.set(Switch {
            check: true,
            verify: false,
            hits: after,
        });
        (map.to_string(), after - hits)
    }

    /// Maps whose answers change when the numerator [`fold_inner_floordiv`]
    /// builds goes through the sum rule (`Rewriter::once`, or only its
    /// recombination) before it is divided. That shortcut would let each
    /// division run once where today the next pass divides the recombined
    /// numerator again (`test_fuzz_failure6` computes its divisions by 30 and 32
    /// twice so), but it changes the order the rules apply in: on 200,000
    /// random maps of nested divisions over sums of `x`, `x floordiv c` and
    /// `x mod c` terms it changed 384 answers (2026-11-29, issue 47). The
    /// answers are pinned so that such a shortcut fails here, and each is
    /// checked against its input at every point of the domain.
    #[test]
    fn numerators_fold_inner_floordiv_builds_are_divided_as_built() {
        let cases = [
            (
                "(d0) -> ((((((((((d0 * 5 + d0) floordiv 8) * 4) + ((d0 mod 4) * -1)) floordiv 3) \
                 + ((d0 * -8) + -3)) floordiv 16) + ((d0 floordiv 4) * -1)) floordiv 8)), \
                 domain: d0 in [0, 64]",
                "(d0) -> ((-(d0 floordiv 4) + (d0 * -7 - 4) floordiv 16) floordiv 8), \
                 domain: d0 in [0, 64]",
            ),
            (
                "(d0) -> (((((((((d0 floordiv 5) * 2) + ((d0 mod 9) * -1)) + ((d0 floordiv 8) * 16)) \
                 + (((d0 * 4 + d0) mod 2) * 4)) floordiv 30) + ((d0 * -8) + 0)) floordiv 2)), \
                 domain: d0 in [0, 16]",
                "(d0) -> (d0 * -4 + ((d0 mod 2) * 4 - d0 mod 9 + (d0 floordiv 5) * 2 \
                 + (d0 floordiv 8) * 16) floordiv 60), domain: d0 in [0, 16]",
            ),
            (
                "(d0, d1) -> (((((((((d0 floordiv 2) * 2) + (d1 * -1)) + (((d0 * 2 + d0) mod 9) * 4)) \
                 + ((d1 mod 3) * 3)) floordiv 8) + ((d0 * -3) + -6)) floordiv 3)), \
                 domain: d0 in [0, 16], d1 in [0, 3]",
                "(d0, d1) -> (-d0 + (((d0 * 3) mod 9) * 4 + (d1 mod 3) * 3 + (d0 floordiv 2) * 2 \
                 - d1) floordiv 24 - 2), domain: d0 in [0, 16], d1 in [0, 3]",
            ),
        ];
        for (input, expected) in cases {
            let map = IndexingMap::parse(input).expect("the case parses");
            let simplified = map.simplified();
            let printed = simplified.to_string();
            let one_line = printed.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(one_line, expected, "{input}");
            for d0 in 0..=64 {
                for d1 in 0..=3 {
                    let point = [d0, d1];
                    let dims = &point[..map.dims().len()];
                    if map
                        .dims()
                        .iter()
                        .zip(dims)
                        .all(|(v, &x)| v.bounds.contains(x))
                    {
                        assert_eq!(simplified.evaluate(dims, &[]), map.evaluate(dims, &[]));
                    }
                }
            }
        }
    }

    /// Differential test of [`folds_back`]: random nested maps simplify to the
    /// same text with and without it (and with every skipped pair of divisions
    /// computed too), and it is taken often.
    #[test]
    fn skipping_attempts_that_fold_back_changes_no_result() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut total_hits = 0;
        for i in 0..4_000 {
            let vars = 1 + rng.below(4);
            let expr = if i % 2 == 0 {
                let steps = 5 + rng.below(24);
                chain(&mut rng, vars, steps)
            } else {
                let depth = 2 + rng.below(5);
                tree(&mut rng, vars, depth)
            };
            let text = map_over(&mut rng, vars, &expr);
            total_hits += same_with_and_without_fold_back(&text);
        }
        assert!(total_hits > 1_000, "fold-backs seen: {total_hits}");
    }

    /// [`skipping_attempts_that_fold_back_changes_no_result`] on [`mixed`]
    /// numerators.
    #[test]
    fn skipping_attempts_that_fold_back_changes_no_result_on_mixed_numerators() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let mut total_hits = 0;
        for _ in 0..1_500 {
            let vars = 1 + rng.below(3);
            let depth = 1 + rng.below(4);
            let expr = mixed(&mut rng, vars, depth);
            let text = map_over(&mut rng, vars, &expr);
            total_hits += same_with_and_without_fold_back(&text);
        }
        assert!(total_hits > 100, "fold-backs seen: {total_hits}");
    }
}
