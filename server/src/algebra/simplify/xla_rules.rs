//! The expression simplifier: XLA's `SymbolicExprSimplifier` rules (mod without
//! wraparound becomes a subtraction, dropping multiples of the divisor, splitting
//! sums by gcd, `(x mod ab) floordiv a → (x floordiv a) mod b`, nested floordivs,
//! folding an inner floordiv into the outer one, mod/div recombination into the
//! original variable, negative-multiple floordiv terms rewritten to mod form,
//! distributing constants, merging like terms, point ranges become constants),
//! driven bottom-up to a bounded fixpoint. tinygrad's div/mod folding lives in
//! `tinygrad_rules` and is called from the division and modulo cases here.

use super::linear::{gcd, Linear};
use super::tinygrad_rules;
use super::Context;
use crate::algebra::expr::Expr;
use crate::algebra::interval::{floor_div, floor_mod, Interval};

/// Bound on bottom-up passes over one expression.
const MAX_EXPR_ROUNDS: usize = 12;

/// Simplifies until nothing changes (or the round bound is hit).
pub fn simplify_to_fixpoint(e: &Expr, ctx: &Context<'_>) -> Expr {
    let mut cur = simplify_once(e, ctx);
    for _ in 1..MAX_EXPR_ROUNDS {
        let next = simplify_once(&cur, ctx);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

/// (div+mod count, node count): the order in which "simpler" is judged.
pub fn cost(e: &Expr) -> (usize, usize) {
    (e.div_mod_count(), e.node_count())
}

/// Picks the cheaper of the current form and a candidate (ties keep the current).
fn cheaper(current: Expr, candidate: Option<Expr>) -> Expr {
    match candidate {
        Some(c) if cost(&c) < cost(&current) => c,
        _ => current,
    }
}

/// One bottom-up pass.
pub fn simplify_once(e: &Expr, ctx: &Context<'_>) -> Expr {
    let out = match e {
        Expr::Const(_) => return e.clone(),
        Expr::Var(v) => {
            let r = (ctx.bounds)(*v);
            return if r.is_point() {
                Expr::Const(r.lo)
            } else {
                e.clone()
            };
        }
        Expr::Add(..) => simplify_sum(e, ctx),
        Expr::Mul(a, b) => {
            if a.as_const().is_some() || b.as_const().is_some() {
                simplify_sum(e, ctx)
            } else {
                let (a, b) = (simplify_once(a, ctx), simplify_once(b, ctx));
                if a.as_const().is_some() || b.as_const().is_some() {
                    simplify_sum(&(a * b), ctx)
                } else {
                    Expr::Mul(Box::new(a), Box::new(b))
                }
            }
        }
        Expr::FloorDiv(a, b) => floordiv(simplify_once(a, ctx), simplify_once(b, ctx), ctx),
        Expr::CeilDiv(a, b) => ceildiv(simplify_once(a, ctx), simplify_once(b, ctx), ctx),
        Expr::Mod(a, b) => modulo(simplify_once(a, ctx), simplify_once(b, ctx), ctx),
        Expr::Min(a, b) => min_max(simplify_once(a, ctx), simplify_once(b, ctx), true, ctx),
        Expr::Max(a, b) => min_max(simplify_once(a, ctx), simplify_once(b, ctx), false, ctx),
    };
    fold_point(out, ctx)
}

/// A sub-expression whose range is a single value is that value.
fn fold_point(e: Expr, ctx: &Context<'_>) -> Expr {
    if matches!(e, Expr::Const(_)) {
        return e;
    }
    let r = ctx.range(&e);
    if r.is_point() {
        Expr::Const(r.lo)
    } else {
        e
    }
}

/// Simplifies a sum (or constant multiple): simplifies each atom, merges like
/// terms, applies the recombination rules, and rebuilds in canonical order.
fn simplify_sum(e: &Expr, ctx: &Context<'_>) -> Expr {
    let Some(raw) = Linear::of(e) else {
        return rebuild_children(e, ctx);
    };
    let mut lin = Linear::constant(raw.constant);
    for (atom, k) in &raw.terms {
        let s = simplify_once(atom, ctx);
        let Some(part) = Linear::of(&s) else {
            return rebuild_children(e, ctx);
        };
        if lin.add_linear(&part, *k).is_none() {
            return rebuild_children(e, ctx);
        }
    }
    for _ in 0..8 {
        match recombine(&lin, ctx) {
            Some(next) => lin = next,
            None => break,
        }
    }
    lin.to_expr()
}

/// Fallback when a linear form would overflow: simplify children only.
fn rebuild_children(e: &Expr, ctx: &Context<'_>) -> Expr {
    match e.as_binary() {
        Some((op, a, b)) => Expr::raw(op, simplify_once(a, ctx), simplify_once(b, ctx)),
        None => e.clone(),
    }
}

/// One recombination step on a sum, or `None` when no rule applies.
fn recombine(lin: &Linear, ctx: &Context<'_>) -> Option<Linear> {
    for (i, (atom, k)) in lin.terms.iter().enumerate() {
        match atom {
            Expr::Mod(x, c) => {
                let Some(c) = c.as_const().filter(|c| *c > 0) else {
                    continue;
                };
                if let Some(next) = recombine_mod_div(lin, i, x, c, *k, ctx) {
                    return Some(next);
                }
                if let Some(next) = recombine_mod_mod(lin, i, x, c, *k, ctx) {
                    return Some(next);
                }
            }
            Expr::FloorDiv(x, c) => {
                let Some(c) = c.as_const().filter(|c| *c > 0) else {
                    continue;
                };
                if let Some(next) = sub_is_mod(lin, i, x, c, *k) {
                    return Some(next);
                }
            }
            _ => {}
        }
    }
    None
}

/// `lin` minus `sub`, when every division or modulo term of `sub` appears in
/// `lin` with exactly that coefficient (so the subtraction removes divisions and
/// only adds or cancels plain terms).
fn remove_exact(lin: &Linear, sub: &Linear) -> Option<Linear> {
    if sub
        .terms
        .iter()
        .any(|(a, k)| a.div_mod_count() > 0 && lin.coefficient(a) != *k)
    {
        return None;
    }
    let mut out = lin.clone();
    out.add_linear(sub, -1)?;
    Some(out)
}

/// `(x mod c)*k + (x floordiv c)*(c*k) → x*k` (the reshape-cancelling rule). The
/// floordiv term is matched in simplified form, so `(x floordiv c)` may appear as
/// a sum of several terms.
fn recombine_mod_div(
    lin: &Linear,
    i: usize,
    x: &Expr,
    c: i64,
    k: i64,
    ctx: &Context<'_>,
) -> Option<Linear> {
    let div = simplify_to_fixpoint(
        &Expr::FloorDiv(Box::new(x.clone()), Box::new(Expr::Const(c))),
        ctx,
    );
    let div_lin = Linear::of(&div)?.scaled(c.checked_mul(k)?)?;
    if div_lin.is_constant() {
        return None;
    }
    let mut rest = lin.clone();
    rest.terms.remove(i);
    let div_lin = align_divisions(&div_lin, &rest)?;
    let mut rest = remove_exact(&rest, &div_lin)?;
    rest.add_linear(&Linear::of(x)?, k)?;
    Some(rest)
}

/// Rewrites each `floordiv` atom `n1 floordiv c` of `sub` that `lin` lacks as the
/// equal `n2 floordiv c + L` for an atom `n2 floordiv c` of `lin` with
/// `n1 - n2 = c*L` (floor((n2 + c*L)/c) = floor(n2/c) + L).
fn align_divisions(sub: &Linear, lin: &Linear) -> Option<Linear> {
    let mut out = Linear::constant(sub.constant);
    for (atom, t) in &sub.terms {
        let aligned = if lin.coefficient(atom) == 0 {
            shifted_division(atom, lin)
        } else {
            None
        };
        match aligned {
            Some((other, shift)) => {
                out.terms.push((other, *t));
                out.add_linear(&shift, *t)?;
            }
            None => out.terms.push((atom.clone(), *t)),
        }
    }
    out.normalize()?;
    Some(out)
}

/// An atom `n2 floordiv c` of `lin` and `L` with `atom = n2 floordiv c + L`.
fn shifted_division(atom: &Expr, lin: &Linear) -> Option<(Expr, Linear)> {
    let Expr::FloorDiv(n1, c1) = atom else {
        return None;
    };
    let c = c1.as_const().filter(|c| *c > 0)?;
    let l1 = Linear::of(n1)?;
    lin.terms.iter().find_map(|(other, _)| {
        let Expr::FloorDiv(n2, c2) = other else {
            return None;
        };
        if c2.as_const() != Some(c) {
            return None;
        }
        let mut diff = l1.clone();
        diff.add_linear(&Linear::of(n2)?, -1)?;
        Some((other.clone(), divide_exact(&diff, c)?))
    })
}

/// `l / c` when every coefficient and the constant are multiples of `c`.
pub(crate) fn divide_exact(l: &Linear, c: i64) -> Option<Linear> {
    if l.constant % c != 0 || l.terms.iter().any(|(_, k)| k % c != 0) {
        return None;
    }
    let mut out = Linear::constant(l.constant / c);
    out.terms = l.terms.iter().map(|(a, k)| (a.clone(), k / c)).collect();
    Some(out)
}

/// `true` when `a - b` is a multiple of `c` term by term (so `a ≡ b (mod c)`).
fn congruent(a: &Expr, b: &Expr, c: i64) -> bool {
    let (Some(la), Some(lb)) = (Linear::of(a), Linear::of(b)) else {
        return false;
    };
    let mut diff = la;
    diff.add_linear(&lb, -1).is_some() && divide_exact(&diff, c).is_some()
}

/// `(y mod a)*k + ((y floordiv a) mod b)*(a*k) → (y mod (a*b))*k`.
fn recombine_mod_mod(
    lin: &Linear,
    i: usize,
    y: &Expr,
    a: i64,
    k: i64,
    ctx: &Context<'_>,
) -> Option<Linear> {
    let div = simplify_to_fixpoint(
        &Expr::FloorDiv(Box::new(y.clone()), Box::new(Expr::Const(a))),
        ctx,
    );
    let want = a.checked_mul(k)?;
    // The partner is `(D mod b)*(a*k)` with `D` the simplified `y floordiv a`, or
    // `((z floordiv a) mod b)*(a*k)` with `z ≡ y (mod a)` (then `y mod a = z mod a`
    // and the merged modulo is over `z`).
    let mut base = y.clone();
    let (j, b) = lin
        .terms
        .iter()
        .enumerate()
        .find_map(|(j, (atom, kj))| match atom {
            Expr::Mod(inner, b) if j != i && *kj == want => {
                let b = b.as_const().filter(|b| *b > 0)?;
                if **inner == div {
                    return Some((j, b));
                }
                match &**inner {
                    Expr::FloorDiv(z, a2) if a2.as_const() == Some(a) && congruent(z, y, a) => {
                        base = (**z).clone();
                        Some((j, b))
                    }
                    _ => None,
                }
            }
            _ => None,
        })?;
    let ab = a.checked_mul(b)?;
    let mut out = lin.clone();
    let (hi, lo) = if i > j { (i, j) } else { (j, i) };
    out.terms.remove(hi);
    out.terms.remove(lo);
    out.terms
        .push((Expr::Mod(Box::new(base), Box::new(Expr::Const(ab))), k));
    out.normalize()?;
    Some(out)
}

/// `m*x + (x floordiv c)*(-c*m) → (x mod c)*m` when the sum holds at least `m*x`
/// (each term of `m*x` present with the same sign and no smaller magnitude).
fn sub_is_mod(lin: &Linear, i: usize, x: &Expr, c: i64, k: i64) -> Option<Linear> {
    if k % c != 0 {
        return None;
    }
    let m = -(k / c);
    let lx = Linear::of(x)?.scaled(m)?;
    if lx.is_constant() {
        return None;
    }
    let dominated = |have: i64, need: i64| {
        need == 0 || (have.signum() == need.signum() && have.abs() >= need.abs())
    };
    if !lx
        .terms
        .iter()
        .all(|(a, need)| dominated(lin.coefficient(a), *need))
    {
        return None;
    }
    if !dominated(lin.constant, lx.constant) {
        return None;
    }
    let mut out = lin.clone();
    out.terms.remove(i);
    out.add_linear(&lx, -1)?;
    out.terms
        .push((Expr::Mod(Box::new(x.clone()), Box::new(Expr::Const(c))), m));
    out.normalize()?;
    Some(out)
}

/// Floor division with simplified operands.
pub(crate) fn floordiv(a: Expr, b: Expr, ctx: &Context<'_>) -> Expr {
    match b.as_const() {
        Some(0) => Expr::FloorDiv(Box::new(a), Box::new(b)),
        Some(1) => a,
        Some(c) if c > 0 => floordiv_pos(a, c, ctx),
        Some(c) => {
            let current = Expr::FloorDiv(Box::new(a.clone()), Box::new(b));
            // x floordiv -c == (-x) floordiv c
            let candidate = c.checked_neg().and_then(|pc| {
                let neg = Linear::of(&a)?.scaled(-1)?.to_expr();
                // No re-simplification: the result may itself be a negative-divisor
                // floordiv, which would come straight back here.
                Some(floordiv_pos(simplify_once(&neg, ctx), pc, ctx))
            });
            cheaper(current, candidate)
        }
        None => divide_by_expr(a, b, ctx, false),
    }
}

/// Division or modulo by a non-constant: exact multiples only.
fn divide_by_expr(a: Expr, b: Expr, ctx: &Context<'_>, is_mod: bool) -> Expr {
    let rb = ctx.range(&b);
    if !rb.contains(0) {
        if let Some(e) =
            Linear::of(&a).and_then(|la| tinygrad_rules::symbolic_divide(&la, &b, ctx, is_mod))
        {
            return e;
        }
        if is_mod {
            // x mod y = x - y * q when the quotient is the constant q.
            let q = ctx.range(&Expr::FloorDiv(Box::new(a.clone()), Box::new(b.clone())));
            if q.is_point() {
                let candidate = Linear::of(&a).zip(Linear::of(&b)).and_then(|(mut la, lb)| {
                    la.add_linear(&lb, q.lo.checked_neg()?)?;
                    Some(la.to_expr())
                });
                return cheaper(Expr::Mod(Box::new(a), Box::new(b)), candidate);
            }
        }
        if let (Some(la), Some(lb)) = (Linear::of(&a), Linear::of(&b)) {
            if let Some(q) = tinygrad_rules::exact_multiple(&la, &lb) {
                return if is_mod {
                    Expr::Const(0)
                } else {
                    Expr::Const(q)
                };
            }
        }
        if is_mod && rb.lo > 0 {
            let ra = ctx.range(&a);
            if ra.lo >= 0 && ra.hi < rb.lo {
                return a;
            }
        }
    }
    if is_mod {
        Expr::Mod(Box::new(a), Box::new(b))
    } else {
        Expr::FloorDiv(Box::new(a), Box::new(b))
    }
}

/// `a floordiv c` for a constant `c > 0`.
pub(crate) fn floordiv_pos(a: Expr, c: i64, ctx: &Context<'_>) -> Expr {
    if c == 1 {
        return a;
    }
    let Some(lin) = Linear::of(&a) else {
        return Expr::FloorDiv(Box::new(a), Box::new(Expr::Const(c)));
    };
    if lin.is_constant() {
        return floor_div(lin.constant, c).map_or_else(
            || Expr::FloorDiv(Box::new(a), Box::new(Expr::Const(c))),
            Expr::Const,
        );
    }
    if let Some(e) = floordiv_of_single(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = fold_inner_floordiv(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = tinygrad_rules::divide_by_gcd(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = tinygrad_rules::congruence_div(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = pull_multiples(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = split_by_gcd(&lin, c, ctx, false) {
        return e;
    }
    if let Some(e) = tinygrad_rules::binary_numerator(&lin, c, ctx, false) {
        return e;
    }
    let current = Expr::FloorDiv(Box::new(lin.to_expr()), Box::new(Expr::Const(c)));
    // floor(n / c) = floor(-n / -c): an all-negative numerator reads better negated.
    if lin.terms.iter().all(|(_, k)| *k < 0) {
        let flipped = lin
            .scaled(-1)
            .map(|n| Expr::FloorDiv(Box::new(n.to_expr()), Box::new(Expr::Const(-c))));
        return cheaper(current, flipped);
    }
    current
}

/// `-e` as a canonical linear form.
fn negate(e: &Expr) -> Option<Expr> {
    Some(Linear::of(e)?.scaled(-1)?.to_expr())
}

/// `(y floordiv c1) floordiv c → y floordiv (c1*c)` and
/// `(x mod (c*b)) floordiv c → (x floordiv c) mod b`.
fn floordiv_of_single(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    if lin.constant != 0 || lin.terms.len() != 1 || lin.terms[0].1 != 1 {
        return None;
    }
    match &lin.terms[0].0 {
        Expr::FloorDiv(y, c1) => {
            let c1 = c1.as_const().filter(|c1| *c1 != 0)?;
            // floor(floor(y / c1) / c) = floor(y / (c1*c)) for c > 0; a negative c1
            // divides -y by -c1.
            let (y, c1) = if c1 > 0 {
                ((**y).clone(), c1)
            } else {
                (negate(y)?, c1.checked_neg()?)
            };
            Some(floordiv_pos(y, c1.checked_mul(c)?, ctx))
        }
        Expr::Mod(x, m) => {
            let m = m.as_const().filter(|m| *m > 0 && *m % c == 0)?;
            let inner = floordiv_pos((**x).clone(), c, ctx);
            Some(mod_pos(inner, m / c, ctx))
        }
        _ => None,
    }
}

/// `(X + y floordiv k) floordiv c → (X*k + y) floordiv (k*c)` for exactly one
/// inner floordiv with coefficient 1 (exact for integer X and k, c > 0).
fn fold_inner_floordiv(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    let mut found = None;
    for (i, (atom, k)) in lin.terms.iter().enumerate() {
        if let Expr::FloorDiv(_, d) = atom {
            if d.as_const().is_some_and(|d| d != 0 && d != i64::MIN) {
                if found.is_some() || *k != 1 {
                    return None;
                }
                found = Some(i);
            }
        }
    }
    let i = found?;
    let Expr::FloorDiv(y, d) = &lin.terms[i].0 else {
        return None;
    };
    let d = d.as_const()?;
    let (y, d) = if d > 0 {
        ((**y).clone(), d)
    } else {
        (negate(y)?, -d)
    };
    let mut rest = lin.clone();
    rest.terms.remove(i);
    let mut numerator = rest.scaled(d)?;
    numerator.add_linear(&Linear::of(&y)?, 1)?;
    let divisor = d.checked_mul(c)?;
    Some(floordiv_pos(numerator.to_expr(), divisor, ctx))
}

/// Terms whose coefficient is a multiple of `c` (and a constant multiple of `c`)
/// move out of the division.
fn pull_multiples(lin: &Linear, c: i64, ctx: &Context<'_>) -> Option<Expr> {
    let mut outside = Linear::constant(0);
    let mut inside = Linear::constant(lin.constant);
    if lin.constant % c == 0 {
        outside.constant = lin.constant / c;
        inside.constant = 0;
    }
    for (atom, k) in &lin.terms {
        if k % c == 0 {
            outside.terms.push((atom.clone(), k / c));
        } else {
            inside.terms.push((atom.clone(), *k));
        }
    }
    if outside.terms.is_empty() && outside.constant == 0 {
        return None;
    }
    if inside.terms.is_empty() && inside.constant == 0 {
        return Some(outside.to_expr());
    }
    let inner = floordiv_pos(inside.to_expr(), c, ctx);
    outside.add_linear(&Linear::of(&inner)?, 1)?;
    Some(outside.to_expr())
}

/// Splits `g*X + R` with `0 <= R < g` (g dividing c): `(g*X + R) floordiv c =
/// X floordiv (c/g)` and `(g*X + R) mod c = (X mod (c/g))*g + R`.
fn split_by_gcd(lin: &Linear, c: i64, ctx: &Context<'_>, is_mod: bool) -> Option<Expr> {
    let mut candidates: Vec<i64> = lin
        .terms
        .iter()
        .map(|(_, k)| gcd(*k, c) as i64)
        .filter(|g| *g > 1)
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    for g in candidates {
        let mut x = Linear::constant(0);
        let mut r = Linear::constant(lin.constant);
        for (atom, k) in &lin.terms {
            if k % g == 0 {
                x.terms.push((atom.clone(), k / g));
            } else {
                r.terms.push((atom.clone(), *k));
            }
        }
        if x.terms.is_empty() || (r.terms.is_empty() && r.constant == 0) {
            continue;
        }
        let rr = ctx.range(&r.to_expr());
        if !(rr.lo >= 0 && rr.hi < g) {
            continue;
        }
        let inner_c = c / g;
        return Some(if is_mod {
            let inner = mod_pos(x.to_expr(), inner_c, ctx);
            let mut out = Linear::of(&inner)?.scaled(g)?;
            out.add_linear(&r, 1)?;
            out.to_expr()
        } else {
            floordiv_pos(x.to_expr(), inner_c, ctx)
        });
    }
    None
}

/// Ceiling division with simplified operands.
fn ceildiv(a: Expr, b: Expr, ctx: &Context<'_>) -> Expr {
    let current = Expr::CeilDiv(Box::new(a.clone()), Box::new(b.clone()));
    match b.as_const() {
        Some(1) => a,
        Some(c) if c > 1 => {
            // ceil(a / c) == floor((a + c - 1) / c)
            let candidate = Linear::of(&a).and_then(|mut l| {
                l.constant = l.constant.checked_add(c - 1)?;
                Some(floordiv_pos(l.to_expr(), c, ctx))
            });
            cheaper(current, candidate)
        }
        _ => current,
    }
}

/// Modulo with simplified operands.
pub(crate) fn modulo(a: Expr, b: Expr, ctx: &Context<'_>) -> Expr {
    match b.as_const() {
        Some(0) => Expr::Mod(Box::new(a), Box::new(b)),
        Some(1) | Some(-1) => Expr::Const(0),
        Some(c) if c > 0 => mod_pos(a, c, ctx),
        Some(c) => {
            let current = Expr::Mod(Box::new(a.clone()), Box::new(b));
            // x mod -c == -((-x) mod c)
            let candidate = c.checked_neg().and_then(|pc| {
                let neg = Linear::of(&a)?.scaled(-1)?.to_expr();
                let m = mod_pos(simplify_once(&neg, ctx), pc, ctx);
                let negated = Linear::of(&m)?.scaled(-1)?.to_expr();
                Some(negated)
            });
            cheaper(current, candidate)
        }
        None => divide_by_expr(a, b, ctx, true),
    }
}

/// `a mod c` for a constant `c > 0`.
pub(crate) fn mod_pos(a: Expr, c: i64, ctx: &Context<'_>) -> Expr {
    let Some(mut lin) = Linear::of(&a) else {
        return Expr::Mod(Box::new(a), Box::new(Expr::Const(c)));
    };
    if lin.is_constant() {
        return floor_mod(lin.constant, c).map_or_else(
            || Expr::Mod(Box::new(a), Box::new(Expr::Const(c))),
            Expr::Const,
        );
    }
    // Mod without wraparound: the whole range in one bucket [q*c, q*c + c - 1].
    let r = ctx.range(&a);
    if let Some(e) = one_bucket_mod(&lin, r, c) {
        return e;
    }
    if let Some(next) = tinygrad_rules::remove_nested_mod(&lin, c) {
        return mod_pos(next.to_expr(), c, ctx);
    }
    // Drop multiples of c and reduce the constant.
    let before = lin.clone();
    lin.terms.retain(|(_, k)| k % c != 0);
    lin.constant = floor_mod(lin.constant, c).unwrap_or(lin.constant);
    if lin != before {
        return mod_pos(lin.to_expr(), c, ctx);
    }
    if let Some(e) = tinygrad_rules::congruence_mod(&lin, c, ctx) {
        return e;
    }
    if let Some(e) = split_by_gcd(&lin, c, ctx, true) {
        return e;
    }
    if let Some(e) = tinygrad_rules::binary_numerator(&lin, c, ctx, true) {
        return e;
    }
    let current = Expr::Mod(Box::new(lin.to_expr()), Box::new(Expr::Const(c)));
    cheaper(
        current.clone(),
        tinygrad_rules::gcd_with_remainder_mod(&lin, c, ctx),
    )
}

fn one_bucket_mod(lin: &Linear, r: Interval, c: i64) -> Option<Expr> {
    if !r.is_feasible() || r == Interval::FULL {
        return None;
    }
    let q = floor_div(r.lo, c)?;
    if floor_div(r.hi, c)? != q {
        return None;
    }
    let mut out = lin.clone();
    out.constant = out.constant.checked_sub(q.checked_mul(c)?)?;
    Some(out.to_expr())
}

/// `min`/`max` decided by ranges, or by the sign of the simplified difference.
fn min_max(a: Expr, b: Expr, is_min: bool, ctx: &Context<'_>) -> Expr {
    let (ra, rb) = (ctx.range(&a), ctx.range(&b));
    let a_le_b = ra.hi <= rb.lo
        || Linear::of(&a)
            .zip(Linear::of(&b))
            .and_then(|(la, lb)| {
                let mut d = la;
                d.add_linear(&lb, -1)?;
                Some(ctx.range(&simplify_to_fixpoint(&d.to_expr(), ctx)).hi <= 0)
            })
            .unwrap_or(false);
    if a_le_b {
        return if is_min { a } else { b };
    }
    let b_le_a = rb.hi <= ra.lo
        || Linear::of(&b)
            .zip(Linear::of(&a))
            .and_then(|(lb, la)| {
                let mut d = lb;
                d.add_linear(&la, -1)?;
                Some(ctx.range(&simplify_to_fixpoint(&d.to_expr(), ctx)).hi <= 0)
            })
            .unwrap_or(false);
    if b_le_a {
        return if is_min { b } else { a };
    }
    if is_min {
        Expr::Min(Box::new(a), Box::new(b))
    } else {
        Expr::Max(Box::new(a), Box::new(b))
    }
}
