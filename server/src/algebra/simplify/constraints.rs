//! Constraint simplification (XLA's `SimplifyConstraintExprs`,
//! `SimplifyConstraintRanges` and `MergeModConstraints`): simplify each
//! constraint's expression, move constant offsets, factors and floor divisions
//! into the interval, drop constraints the variable bounds already imply, turn
//! constraints on a bare variable into bounds, drop the part of a sum that cannot
//! cross an aligned bound, merge `x mod a = r` with `x mod b = r'` into one
//! modulus (and round the variable's bounds to it), and detect infeasible
//! domains (KNOWN EMPTY).

use super::arena::{Arena, Id, Node};
use super::linear::{gcd, gcd_i64, Linear};
use super::rewriter::{Caches, Fuel, Rewriter};
use super::working_map::{Constraints, WorkingMap};
use crate::algebra::expr::BinOp;
use crate::algebra::interval::{ceil_div, floor_div, floor_mod, Interval};
use crate::algebra::variable::Var;

/// Bound on rewrites of one constraint.
const MAX_CONSTRAINT_STEPS: usize = 16;

/// Simplifies the constraints of `map` in place (may make it known empty).
pub fn simplify_constraints(
    map: &mut WorkingMap,
    arena: &mut Arena,
    caches: &mut Caches,
    fuel: &mut Fuel,
) {
    if map.known_empty || map.constraints.is_empty() {
        return;
    }
    let old = std::mem::take(&mut map.constraints);
    let mut rewritten = Constraints::new();
    {
        // Constraints are simplified against variable bounds only: using the
        // constraint itself would prove it redundant.
        caches.clear();
        let mut rw = Rewriter::new(arena, &map.bounds, &[], caches, fuel);
        for (e, r) in old {
            let e = rw.fixpoint(e);
            rewritten.push(normalize_constraint(&mut rw, e, r));
        }
    }
    for (e, r) in rewritten {
        map.add_constraint(arena, e, r);
    }
    merge_mod_constraints(map, arena);
    if map.known_empty {
        return;
    }
    caches.clear();
    let mut rw = Rewriter::new(arena, &map.bounds, &[], caches, fuel);
    let (constraints, infeasible) = drop_implied(&mut rw, std::mem::take(&mut map.constraints));
    map.constraints = constraints;
    map.known_empty |= infeasible;
    caches.clear();
}

/// Moves arithmetic from the expression into the interval until nothing applies
/// (XLA's `SimplifyConstraintRange`).
fn normalize_constraint(rw: &mut Rewriter<'_>, mut e: Id, mut r: Interval) -> (Id, Interval) {
    for _ in 0..MAX_CONSTRAINT_STEPS {
        if !r.is_feasible() {
            break;
        }
        match constraint_step(rw, e, r) {
            Some((e2, r2)) => {
                e = e2;
                r = r2;
            }
            None => break,
        }
    }
    (e, r)
}

/// One rewrite of `e in r` (XLA's `SimplifyConstraintRangeOnce`).
fn constraint_step(rw: &mut Rewriter<'_>, e: Id, r: Interval) -> Option<(Id, Interval)> {
    if let Some((x, k)) = rw.arena.with_const_rhs(e, BinOp::FloorDiv) {
        return floordiv_into_interval(x, k, r);
    }
    let lin = Linear::of(rw.arena, e)?;
    if lin.terms.is_empty() {
        return None;
    }
    if lin.constant != 0 {
        return constant_into_interval(rw, &lin, r);
    }
    if let Some(step) = factor_into_interval(rw, &lin, r) {
        return step;
    }
    independent_part(rw, &lin, r)
}

/// `x floordiv k in [lo, hi]` is `x in [lo*k, hi*k + k - 1]` (for `k > 0`).
fn floordiv_into_interval(x: Id, k: i64, r: Interval) -> Option<(Id, Interval)> {
    if k == 0 {
        return None;
    }
    Some((
        x,
        if k > 0 {
            Interval::new(
                r.lo.checked_mul(k)?,
                r.hi.checked_mul(k)?.checked_add(k - 1)?,
            )
        } else {
            Interval::new(
                r.hi.checked_add(1)?.checked_mul(k)?.checked_add(1)?,
                r.lo.checked_mul(k)?,
            )
        },
    ))
}

/// `X + c in [lo, hi]` is `X in [lo - c, hi - c]` (XLA's `SimplifyAddConstraint`).
fn constant_into_interval(
    rw: &mut Rewriter<'_>,
    lin: &Linear,
    r: Interval,
) -> Option<(Id, Interval)> {
    let mut rest = lin.clone();
    rest.constant = 0;
    Some((
        rest.to_id(rw.arena),
        Interval::new(
            r.lo.checked_sub(lin.constant)?,
            r.hi.checked_sub(lin.constant)?,
        ),
    ))
}

/// `g*X in [lo, hi]` is `X in [ceil(lo/g), floor(hi/g)]`, with `g` the signed gcd
/// of the coefficients. `Some(None)` when the step overflows; `None` when `g` is 1.
fn factor_into_interval(
    rw: &mut Rewriter<'_>,
    lin: &Linear,
    r: Interval,
) -> Option<Option<(Id, Interval)>> {
    let g = lin.terms.iter().try_fold(0i64, |g, &(_, k)| gcd_i64(g, k));
    let Some(g) = g else {
        return Some(None);
    };
    let g = if lin.terms[0].1 < 0 { -g } else { g };
    if g == 1 {
        return None;
    }
    Some((|| {
        let mut reduced = lin.clone();
        for t in &mut reduced.terms {
            t.1 /= g;
        }
        let iv = if g > 0 {
            Interval::new(ceil_div(r.lo, g)?, floor_div(r.hi, g)?)
        } else {
            Interval::new(ceil_div(r.hi, g)?, floor_div(r.lo, g)?)
        };
        Some((reduced.to_id(rw.arena), iv))
    })())
}

/// `g*X + R in [a*g, b*g + g - 1]` with `0 <= R < g` is `X in [a, b]` (XLA's
/// `SimplifyAddConstraint`: "the value of b is irrelevant to this constraint").
fn independent_part(rw: &mut Rewriter<'_>, lin: &Linear, r: Interval) -> Option<(Id, Interval)> {
    let mut candidates: Vec<i64> = lin
        .terms
        .iter()
        .filter_map(|&(_, k)| k.checked_abs())
        .filter(|g| *g > 1)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    for g in candidates {
        let mut x = Linear::constant(0);
        let mut rest = Linear::constant(0);
        for &(atom, k) in &lin.terms {
            if k % g == 0 {
                x.terms.push((atom, k / g));
            } else {
                rest.terms.push((atom, k));
            }
        }
        if x.terms.is_empty() || rest.terms.is_empty() {
            continue;
        }
        let rr = rw.range_of_linear(&rest);
        if rr.lo < 0 || rr.hi >= g || floor_mod(r.lo, g)? != 0 || floor_mod(r.hi, g)? != g - 1 {
            continue;
        }
        return Some((
            x.to_id(rw.arena),
            Interval::new(r.lo / g, floor_div(r.hi, g)?),
        ));
    }
    None
}

/// Drops constraints implied by the variable bounds; returns the rest and
/// whether one is impossible.
fn drop_implied(rw: &mut Rewriter<'_>, constraints: Constraints) -> (Constraints, bool) {
    let mut infeasible = false;
    let mut kept = Constraints::new();
    for (e, r) in constraints {
        let range = rw.range(e);
        if r.contains_interval(&range) {
            continue;
        }
        if !range.intersect(&r).is_feasible() {
            infeasible = true;
        }
        kept.push((e, r));
    }
    (kept, infeasible)
}

/// Merges `x mod a in [r, r]` and `x mod b in [r', r']` on the same variable into
/// one constraint modulo `lcm(a, b)` (Chinese remainder), and rounds the
/// variable's bounds to the nearest values with that residue (XLA's
/// `MergeModConstraints`).
pub fn merge_mod_constraints(map: &mut WorkingMap, arena: &mut Arena) {
    if map.known_empty {
        return;
    }
    let mut merged: Vec<(Var, i64, i64)> = Vec::new();
    let mut others = Constraints::new();
    for (e, r) in std::mem::take(&mut map.constraints) {
        let Some((v, c, rem)) = var_mod_point(arena, e, r) else {
            others.push((e, r));
            continue;
        };
        if let Some(entry) = merged.iter_mut().find(|(w, _, _)| *w == v) {
            match crt(entry.1, entry.2, c, rem) {
                Some(Some((m, x))) => {
                    entry.1 = m;
                    entry.2 = x;
                }
                Some(None) => {
                    map.known_empty = true;
                    return;
                }
                None => others.push((e, r)),
            }
        } else {
            merged.push((v, c, rem));
        }
    }
    map.constraints = others;
    for (v, c, rem) in merged {
        let b = map.bounds.get(v);
        let lo =
            b.lo.checked_add(floor_mod(rem.checked_sub(b.lo).unwrap_or(0), c).unwrap_or(0));
        let hi =
            b.hi.checked_sub(floor_mod(b.hi.checked_sub(rem).unwrap_or(0), c).unwrap_or(0));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let var = arena.var(v);
            map.add_constraint(arena, var, Interval::new(lo, hi));
        }
        if map.known_empty {
            return;
        }
        if c > 1 && !map.bounds.get(v).is_point() {
            let var = arena.var(v);
            let m = arena.bin_const(BinOp::Mod, var, c);
            map.constraints.push((m, Interval::point(rem)));
        }
    }
}

/// `(x, c, r)` for a constraint `x mod c in [r, r]` on a variable, `0 <= r < c`.
fn var_mod_point(arena: &Arena, e: Id, r: Interval) -> Option<(Var, i64, i64)> {
    if !r.is_point() {
        return None;
    }
    let (x, c) = arena.with_const_rhs(e, BinOp::Mod)?;
    let Node::Var(v) = arena.node(x) else {
        return None;
    };
    (c > 0 && (0..c).contains(&r.lo)).then_some((v, c, r.lo))
}

/// Combines `x ≡ r1 (mod m1)` and `x ≡ r2 (mod m2)`: `Some(Some((lcm, r)))`,
/// `Some(None)` when inconsistent, `None` on overflow.
fn crt(m1: i64, r1: i64, m2: i64, r2: i64) -> Option<Option<(i64, i64)>> {
    let g = i64::try_from(gcd(m1, m2)).ok()?;
    if (r2 - r1) % g != 0 {
        return Some(None);
    }
    let lcm = (m1 / g).checked_mul(m2)?;
    // Search the lcm/m1 candidates r1 + k*m1 (moduli here are small).
    let steps = lcm / m1;
    if steps > 1_000_000 {
        return None;
    }
    let mut x = r1;
    for _ in 0..steps {
        if floor_mod(x, m2)? == r2 {
            return Some(Some((lcm, floor_mod(x, lcm)?)));
        }
        x = x.checked_add(m1)?;
    }
    Some(None)
}
