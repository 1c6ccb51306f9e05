//! Constraint simplification: simplify each constraint's expression, move
//! constant offsets, factors and floor divisions into the interval, drop
//! constraints the variable bounds already imply, turn constraints on a bare
//! variable into bounds, drop the part of a sum that cannot cross an aligned
//! bound, merge `x mod a = r` with `x mod b = r'` into one modulus (and round the
//! variable's bounds to it), and detect infeasible domains (KNOWN EMPTY).

use super::linear::{gcd, Linear};
use super::xla_rules::simplify_to_fixpoint;
use super::Context;
use crate::algebra::expr::Expr;
use crate::algebra::interval::{ceil_div, floor_div, floor_mod, Interval};
use crate::algebra::map::{IndexingMap, MapState};
use crate::algebra::variable::Var;

/// Bound on rewrites of one constraint.
const MAX_CONSTRAINT_STEPS: usize = 16;

/// Simplifies the constraints of `map` in place (may make it KNOWN EMPTY).
pub fn simplify_constraints(map: &mut IndexingMap) {
    if map.state != MapState::Defined || map.constraints.is_empty() {
        return;
    }
    let old = std::mem::take(&mut map.constraints);
    let mut rewritten = Vec::with_capacity(old.len());
    {
        let bounds = |v: Var| map.var_bounds(v);
        // Constraints are simplified against variable bounds only: using the
        // constraint itself would prove it redundant.
        let ctx = Context {
            bounds: &bounds,
            constraints: &[],
        };
        for (e, r) in old {
            rewritten.push(normalize_constraint(
                simplify_to_fixpoint(&e, &ctx),
                r,
                &ctx,
            ));
        }
    }
    for (e, r) in rewritten {
        map.add_constraint(e, r);
    }
    merge_mod_constraints(map);
    drop_implied(map);
}

/// Moves arithmetic from the expression into the interval until nothing applies.
fn normalize_constraint(mut e: Expr, mut r: Interval, ctx: &Context<'_>) -> (Expr, Interval) {
    for _ in 0..MAX_CONSTRAINT_STEPS {
        if !r.is_feasible() {
            break;
        }
        match step(&e, r, ctx) {
            Some((e2, r2)) => {
                e = e2;
                r = r2;
            }
            None => break,
        }
    }
    (e, r)
}

fn step(e: &Expr, r: Interval, ctx: &Context<'_>) -> Option<(Expr, Interval)> {
    if let Expr::FloorDiv(x, k) = e {
        let k = k.as_const().filter(|k| *k != 0)?;
        // floor(x / k) in [lo, hi]
        return Some((
            (**x).clone(),
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
        ));
    }
    let lin = Linear::of(e)?;
    if lin.terms.is_empty() {
        return None;
    }
    if lin.constant != 0 {
        let mut rest = lin.clone();
        rest.constant = 0;
        return Some((
            rest.to_expr(),
            Interval::new(
                r.lo.checked_sub(lin.constant)?,
                r.hi.checked_sub(lin.constant)?,
            ),
        ));
    }
    let g = lin.terms.iter().fold(0u64, |g, (_, k)| gcd(g as i64, *k)) as i64;
    let sign = if lin.terms[0].1 < 0 { -1 } else { 1 };
    let g = g * sign;
    if g != 1 {
        // g*X in [lo, hi]
        let reduced = lin.scaled(1).map(|mut l| {
            for t in &mut l.terms {
                t.1 /= g;
            }
            l
        })?;
        let iv = if g > 0 {
            Interval::new(ceil_div(r.lo, g)?, floor_div(r.hi, g)?)
        } else {
            Interval::new(ceil_div(r.hi, g)?, floor_div(r.lo, g)?)
        };
        return Some((reduced.to_expr(), iv));
    }
    independent_part(&lin, r, ctx)
}

/// `g*X + R in [a*g, b*g + g - 1]` with `0 <= R < g` is `X in [a, b]`.
fn independent_part(lin: &Linear, r: Interval, ctx: &Context<'_>) -> Option<(Expr, Interval)> {
    let mut candidates: Vec<i64> = lin
        .terms
        .iter()
        .map(|(_, k)| k.unsigned_abs() as i64)
        .filter(|g| *g > 1)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    for g in candidates {
        let mut x = Linear::constant(0);
        let mut rest = Linear::constant(0);
        for (atom, k) in &lin.terms {
            if k % g == 0 {
                x.terms.push((atom.clone(), k / g));
            } else {
                rest.terms.push((atom.clone(), *k));
            }
        }
        if x.terms.is_empty() || rest.terms.is_empty() {
            continue;
        }
        let rr = ctx.range(&rest.to_expr());
        if rr.lo < 0 || rr.hi >= g || floor_mod(r.lo, g)? != 0 || floor_mod(r.hi, g)? != g - 1 {
            continue;
        }
        return Some((x.to_expr(), Interval::new(r.lo / g, floor_div(r.hi, g)?)));
    }
    None
}

/// Drops constraints implied by the variable bounds; an impossible one empties
/// the map.
fn drop_implied(map: &mut IndexingMap) {
    let mut infeasible = false;
    let mut kept = Vec::with_capacity(map.constraints.len());
    for (e, r) in &map.constraints {
        let range = e.interval(&|v| map.var_bounds(v));
        if r.contains_interval(&range) {
            continue;
        }
        if !range.intersect(r).is_feasible() {
            infeasible = true;
        }
        kept.push((e.clone(), *r));
    }
    map.constraints = kept;
    if infeasible {
        map.reset_to_known_empty();
    }
}

/// Merges `x mod a in [r, r]` and `x mod b in [r', r']` on the same variable into
/// one constraint modulo `lcm(a, b)` (Chinese remainder), and rounds the
/// variable's bounds to the nearest values with that residue.
pub fn merge_mod_constraints(map: &mut IndexingMap) {
    let mut merged: Vec<(Var, i64, i64)> = Vec::new();
    let mut others = Vec::new();
    let old = std::mem::take(&mut map.constraints);
    for (e, r) in old {
        let modular = match &e {
            Expr::Mod(x, c) if r.is_point() => match (x.as_var(), c.as_const()) {
                (Some(v), Some(c)) if c > 0 && (0..c).contains(&r.lo) => Some((v, c, r.lo)),
                _ => None,
            },
            _ => None,
        };
        let Some((v, c, rem)) = modular else {
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
                    map.reset_to_known_empty();
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
        let b = map.var_bounds(v);
        let lo =
            b.lo.checked_add(floor_mod(rem.checked_sub(b.lo).unwrap_or(0), c).unwrap_or(0));
        let hi =
            b.hi.checked_sub(floor_mod(b.hi.checked_sub(rem).unwrap_or(0), c).unwrap_or(0));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            map.add_constraint(Expr::Var(v), Interval::new(lo, hi));
        }
        if map.state != MapState::Defined {
            return;
        }
        if c > 1 && !map.var_bounds(v).is_point() {
            map.constraints
                .push((Expr::Var(v).modulo(c), Interval::point(rem)));
        }
    }
}

/// Combines `x ≡ r1 (mod m1)` and `x ≡ r2 (mod m2)`: `Some(Some((lcm, r)))`,
/// `Some(None)` when inconsistent, `None` on overflow.
fn crt(m1: i64, r1: i64, m2: i64, r2: i64) -> Option<Option<(i64, i64)>> {
    let g = gcd(m1, m2) as i64;
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
