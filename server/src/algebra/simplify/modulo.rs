//! Floor modulo (XLA's `RewriteMod`, tinygrad's `fold_divmod_general` for
//! modulo). The rules for a positive constant modulus are tried in order by
//! [`mod_pos`]; the first that applies wins.

use super::arena::Id;
use super::divisor_expr::divide_by_expr;
use super::divmod::{
    binary_numerator, common_factor, one_bucket, remainders, residue_differs, split_by_gcd,
    DivRule, Residue, RESIDUES,
};
use super::floordiv::negate;
use super::linear::Linear;
use super::rewriter::{DivOrMod, Rewriter};
use crate::algebra::expr::BinOp;
use crate::algebra::interval::{floor_div, floor_mod, Interval};

/// Modulo with simplified operands.
pub fn modulo(rw: &mut Rewriter<'_>, a: Id, b: Id) -> Id {
    match rw.arena.as_const(b) {
        Some(0) => rw.bin(BinOp::Mod, a, b),
        Some(1) | Some(-1) => rw.constant(0),
        Some(c) if c > 0 => mod_pos(rw, a, c),
        Some(c) => negative_modulus(rw, a, b, c),
        None => divide_by_expr(rw, a, b, true),
    }
}

/// `x mod -c == -((-x) mod c)`, kept when that is cheaper.
fn negative_modulus(rw: &mut Rewriter<'_>, a: Id, b: Id, c: i64) -> Id {
    let current = rw.bin(BinOp::Mod, a, b);
    let candidate = (|| {
        let pc = c.checked_neg()?;
        let neg = negate(rw, a)?;
        let neg = rw.once(neg);
        let m = mod_pos(rw, neg, pc);
        negate(rw, m)
    })();
    rw.cheaper(current, candidate)
}

/// `a mod c` for a constant `c > 0`: the rules in order, memoized.
pub fn mod_pos(rw: &mut Rewriter<'_>, a: Id, c: i64) -> Id {
    rw.count_div_mod();
    if let Some(done) = rw.cached_div_mod(DivOrMod::Mod, a, c) {
        return done;
    }
    if !rw.spend(1) {
        return rw.bin_const(BinOp::Mod, a, c);
    }
    let out = mod_pos_uncached(rw, a, c);
    rw.keep_div_mod(DivOrMod::Mod, a, c, out);
    out
}

fn mod_pos_uncached(rw: &mut Rewriter<'_>, a: Id, c: i64) -> Id {
    let Some(lin) = Linear::of(rw.arena, a) else {
        return rw.bin_const(BinOp::Mod, a, c);
    };
    if lin.is_constant() {
        return match floor_mod(lin.constant, c) {
            Some(v) => rw.constant(v),
            None => rw.bin_const(BinOp::Mod, a, c),
        };
    }
    let range = rw.range(a);
    if let Some(e) = mod_without_wraparound(rw, &lin, range, c) {
        return e;
    }
    let rules: [DivRule; 6] = [
        remove_nested_mod,
        drop_multiples,
        congruence_mod,
        |rw, lin, c| split_by_gcd(rw, lin, c, true),
        |rw, lin, c| binary_numerator(rw, lin, c, true),
        gcd_with_remainder_mod,
    ];
    for rule in rules {
        if let Some(e) = rule(rw, &lin, c) {
            return e;
        }
        if rw.out_of_fuel() {
            break;
        }
    }
    let n = lin.to_id(rw.arena);
    rw.bin_const(BinOp::Mod, n, c)
}

/// Mod without wraparound: when the whole range lies in one bucket
/// `[q*c, q*c + c - 1]`, `a mod c = a - q*c` (XLA's `RewriteMod`: "if there's no
/// chance of wraparound, we can replace the mod with an add"; tinygrad's
/// `cancel_divmod`).
fn mod_without_wraparound(rw: &mut Rewriter<'_>, lin: &Linear, r: Interval, c: i64) -> Option<Id> {
    if !r.is_feasible() || r == Interval::FULL {
        return None;
    }
    let q = floor_div(r.lo, c)?;
    if floor_div(r.hi, c)? != q {
        return None;
    }
    let mut out = lin.clone();
    out.constant = out.constant.checked_sub(q.checked_mul(c)?)?;
    Some(out.to_id(rw.arena))
}

/// Inside `mod c`, a term `(y mod m)*k` with `c | m` is congruent to `y*k`
/// (tinygrad's `remove_nested_mod`).
fn remove_nested_mod(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let mut changed = false;
    let mut out = Linear::constant(lin.constant);
    for &(atom, k) in &lin.terms {
        match rw.arena.with_const_rhs(atom, BinOp::Mod) {
            Some((y, m)) if m != 0 && m % c == 0 => {
                let ly = Linear::of(rw.arena, y)?;
                out.add_linear(rw.arena, &ly, k)?;
                changed = true;
            }
            _ => out.terms.push((atom, k)),
        }
    }
    if !changed {
        return None;
    }
    out.normalize(rw.arena)?;
    let n = out.to_id(rw.arena);
    Some(mod_pos(rw, n, c))
}

/// Drops terms whose coefficient is a multiple of `c` and reduces the constant
/// (XLA's `RewriteMod`: "(a * 100 + ...) % 100 to (...) % 100").
fn drop_multiples(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let mut out = lin.clone();
    out.terms.retain(|(_, k)| *k % c != 0);
    out.constant = floor_mod(out.constant, c).unwrap_or(out.constant);
    if out == *lin {
        return None;
    }
    let n = out.to_id(rw.arena);
    Some(mod_pos(rw, n, c))
}

/// `(c*Q + R) mod c = R - k*c` when `R` stays in bucket `k`; otherwise reduces the
/// coefficients to their floor residues when that changes anything (tinygrad's
/// `fold_divmod_congruence` for modulo).
fn congruence_mod(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    for which in RESIDUES {
        if !residue_differs(lin, c, which) {
            continue;
        }
        let mut rem = remainders(rw, lin, c, which)?;
        if let Some(k) = one_bucket(rw, &rem, c) {
            rem.constant = rem.constant.checked_sub(k.checked_mul(c)?)?;
            return Some(rem.to_id(rw.arena));
        }
    }
    let rem = remainders(rw, lin, c, Residue::Floor)?;
    if rem != *lin {
        let n = rem.to_id(rw.arena);
        return Some(mod_pos(rw, n, c));
    }
    None
}

/// `(g*X + g*q + r) mod (g*c') = ((X + q) mod c')*g + r` (tinygrad's
/// `gcd_with_remainder` for modulo), kept only when cheaper than the plain
/// modulo.
fn gcd_with_remainder_mod(rw: &mut Rewriter<'_>, lin: &Linear, c: i64) -> Option<Id> {
    let n = lin.to_id(rw.arena);
    let current = rw.bin_const(BinOp::Mod, n, c);
    let candidate = (|| {
        let g = common_factor(lin, c)?;
        if g == c {
            return None;
        }
        let q = floor_div(lin.constant, g)?;
        let r = lin.constant.checked_sub(q.checked_mul(g)?)?;
        let mut reduced = Linear::constant(q);
        for &(atom, k) in &lin.terms {
            reduced.terms.push((atom, k / g));
        }
        let n = reduced.to_id(rw.arena);
        let inner = mod_pos(rw, n, c / g);
        let mut out = Linear::of(rw.arena, inner)?.scaled(g)?;
        out.constant = out.constant.checked_add(r)?;
        Some(out.to_id(rw.arena))
    })();
    Some(rw.cheaper(current, candidate))
}
