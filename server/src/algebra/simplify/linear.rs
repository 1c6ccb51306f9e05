//! Linear forms `c1*a1 + ... + cn*an + c0` over "atoms" (variables, divisions,
//! modulos, min/max, non-constant products): the normal form the sum rules work
//! on, and the canonical term order results are printed in (XLA's: products, then
//! modulos, then divisions, then bare variables, then the constant).

use std::cmp::Ordering;

use smallvec::SmallVec;

use super::arena::{Arena, Id, Node};
use crate::algebra::expr::BinOp;

/// The terms of a linear form; most sums have a handful.
pub type Terms = SmallVec<[(Id, i64); 6]>;

/// `Σ coeff * atom + constant`. Normalized forms (what every constructor here
/// returns) have their terms sorted by [`atom_cmp`], like terms merged and no zero
/// coefficients.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Linear {
    pub terms: Terms,
    pub constant: i64,
}

impl Clone for Linear {
    /// A copy of the terms in one move (`SmallVec`'s own clone pushes them one
    /// by one).
    fn clone(&self) -> Linear {
        Linear {
            terms: Terms::from_slice(&self.terms),
            constant: self.constant,
        }
    }
}

impl Linear {
    pub fn constant(c: i64) -> Linear {
        Linear {
            terms: Terms::new(),
            constant: c,
        }
    }

    /// Flattens sums and products by constants. `None` when a coefficient would
    /// overflow (the caller then leaves the expression alone). Sums are
    /// flattened once per arena and remembered.
    pub fn of(arena: &Arena, e: Id) -> Option<Linear> {
        match arena.node(e) {
            Node::Const(c) => return Some(Linear::constant(c)),
            Node::Bin(BinOp::Add | BinOp::Mul, ..) => {}
            _ => {
                let mut terms = Terms::new();
                terms.push((e, 1));
                return Some(Linear { terms, constant: 0 });
            }
        }
        if let Some(known) = arena.linear.borrow().get(e) {
            return known;
        }
        let lin = Linear::flatten(arena, e);
        arena.linear.borrow_mut().insert(e, &lin);
        lin
    }

    /// [`Linear::of`] computed: a walk over the sum's terms, then sorted.
    fn flatten(arena: &Arena, e: Id) -> Option<Linear> {
        let mut lin = Linear::constant(0);
        let mut stack: SmallVec<[(Id, i64); 8]> = SmallVec::new();
        stack.push((e, 1));
        while let Some((e, k)) = stack.pop() {
            match arena.node(e) {
                Node::Const(c) => lin.constant = lin.constant.checked_add(c.checked_mul(k)?)?,
                Node::Bin(BinOp::Add, a, b) => {
                    stack.push((b, k));
                    stack.push((a, k));
                }
                Node::Bin(BinOp::Mul, a, b) if arena.as_const(b).is_some() => {
                    stack.push((a, k.checked_mul(arena.as_const(b)?)?))
                }
                Node::Bin(BinOp::Mul, a, b) if arena.as_const(a).is_some() => {
                    stack.push((b, k.checked_mul(arena.as_const(a)?)?))
                }
                _ => lin.terms.push((e, k)),
            }
        }
        lin.normalize(arena)?;
        Some(lin)
    }

    /// `true` when the terms are sorted by atom, each atom once, and no
    /// coefficient is zero (what [`Linear::normalize`] makes).
    pub fn is_normalized(&self, arena: &Arena) -> bool {
        self.is_sorted(arena) && self.terms.iter().all(|(_, k)| *k != 0)
    }

    fn is_sorted(&self, arena: &Arena) -> bool {
        self.terms
            .windows(2)
            .all(|w| atom_cmp(arena, w[0].0, w[1].0) == Ordering::Less)
    }

    /// Sorts by atom, merges like terms and drops zero coefficients. `None` when a
    /// merged coefficient overflows.
    pub fn normalize(&mut self, arena: &Arena) -> Option<()> {
        if self.is_sorted(arena) {
            if self.terms.iter().any(|(_, k)| *k == 0) {
                self.terms.retain(|(_, k)| *k != 0);
            }
            return Some(());
        }
        self.terms.sort_by(|a, b| atom_cmp(arena, a.0, b.0));
        let mut merged = Terms::with_capacity(self.terms.len());
        for &(atom, k) in &self.terms {
            match merged.last_mut() {
                Some((last, lk)) if *last == atom => *lk = lk.checked_add(k)?,
                _ => merged.push((atom, k)),
            }
        }
        merged.retain(|(_, k)| *k != 0);
        self.terms = merged;
        Some(())
    }

    /// `self + k * other`.
    pub fn add_linear(&mut self, arena: &Arena, other: &Linear, k: i64) -> Option<()> {
        for &(atom, c) in &other.terms {
            self.terms.push((atom, c.checked_mul(k)?));
        }
        self.constant = self.constant.checked_add(other.constant.checked_mul(k)?)?;
        self.normalize(arena)
    }

    /// `k * self`.
    pub fn scaled(&self, k: i64) -> Option<Linear> {
        if k == 0 {
            return Some(Linear::constant(0));
        }
        let mut out = Linear::constant(self.constant.checked_mul(k)?);
        for &(atom, c) in &self.terms {
            out.terms.push((atom, c.checked_mul(k)?));
        }
        Some(out)
    }

    /// Coefficient of `atom` (0 when absent).
    pub fn coefficient(&self, atom: Id) -> i64 {
        self.terms
            .iter()
            .find(|(a, _)| *a == atom)
            .map_or(0, |(_, k)| *k)
    }

    /// A copy without the term at `i`.
    pub fn without(&self, i: usize) -> Linear {
        let mut out = self.clone();
        out.terms.remove(i);
        out
    }

    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms in XLA's canonical order: products, then modulos, then
    /// divisions, then bare variables.
    pub fn canonical_order(&self, arena: &Arena) -> Terms {
        let mut order = self.terms.clone();
        if order.len() > 1 {
            order.sort_by(|a, b| {
                term_category(arena, *a)
                    .cmp(&term_category(arena, *b))
                    .then_with(|| atom_cmp(arena, a.0, b.0))
            });
        }
        order
    }

    /// Builds the expression in XLA's canonical order: products, then modulos,
    /// then divisions, then bare variables, then the constant. Built once per
    /// form and arena: the division rules ask for the same numerator's node
    /// several times (to try nesting, to negate it, to give up on it).
    pub fn to_id(&self, arena: &mut Arena) -> Id {
        match self.terms[..] {
            [] => return arena.constant(self.constant),
            [(atom, 1)] if self.constant == 0 => return atom,
            _ => {}
        }
        if let Some(&id) = arena.built.get(self) {
            return id;
        }
        let id = self.build(arena);
        arena.built.insert(self.clone(), id);
        if self.is_own_flattening(arena) {
            debug_assert_eq!(Linear::flatten(arena, id).as_ref(), Some(self));
            arena.linear.get_mut().remember(id, self);
        }
        id
    }

    /// `true` when [`Linear::of`] on the node [`Linear::to_id`] builds gives
    /// this form back, so it can be remembered instead of flattened again (the
    /// division rules build numerators and then ask for their forms at once).
    ///
    /// The built node is the sum of `atom * k` terms and the constant. Flattening
    /// it walks that sum and stops at each atom, so it gives back the terms with
    /// their coefficients and the constant, then normalizes them, unless an atom
    /// is itself something flattening walks into (a constant, a sum, a product
    /// by a constant). A normalized form with no such atom is therefore what
    /// flattening gives: its terms are already sorted by [`atom_cmp`], a total
    /// order, with each atom once and no zero coefficient.
    fn is_own_flattening(&self, arena: &Arena) -> bool {
        self.terms.iter().all(|&(atom, _)| is_atom(arena, atom)) && self.is_normalized(arena)
    }

    /// [`Linear::to_id`] computed.
    fn build(&self, arena: &mut Arena) -> Id {
        let order = self.canonical_order(arena);
        let mut out: Option<Id> = None;
        for (atom, k) in order {
            let term = if k == 1 {
                atom
            } else {
                arena.bin_const(BinOp::Mul, atom, k)
            };
            out = Some(match out {
                None => term,
                Some(acc) => arena.bin(BinOp::Add, acc, term),
            });
        }
        match out {
            None => arena.constant(self.constant),
            Some(acc) if self.constant == 0 => acc,
            Some(acc) => arena.bin_const(BinOp::Add, acc, self.constant),
        }
    }
}

/// Linear forms by node, for the nodes [`Linear::of`] had to flatten.
#[derive(Default)]
pub struct LinearMemo {
    /// Per node id: 0 when not yet flattened, 1 when flattening overflowed,
    /// else `2 + ` the form's index in `forms`.
    index: Vec<u32>,
    forms: Vec<Linear>,
}

/// Beyond this many forms a cleared memo gives its memory back (a form is about
/// 120 bytes; the arena keeps up to 2^16 nodes).
const KEEP_FORMS: usize = 1 << 12;

impl LinearMemo {
    pub fn clear(&mut self) {
        if self.forms.capacity() > KEEP_FORMS {
            *self = LinearMemo::default();
        } else {
            self.index.clear();
            self.forms.clear();
        }
    }

    /// Remembers `form` as the flattening of `e` (a node built from it), unless
    /// `e` was flattened already (the node existed before).
    fn remember(&mut self, e: Id, form: &Linear) {
        if self.index.get(e.index()).copied().unwrap_or(0) == 0 {
            self.push(e, form.clone());
        }
    }

    /// `Some(form)` when `e` was flattened (`form` is `None` on overflow).
    fn get(&self, e: Id) -> Option<Option<Linear>> {
        match self.index.get(e.index()).copied().unwrap_or(0) {
            0 => None,
            1 => Some(None),
            i => Some(Some(self.forms[i as usize - 2].clone())),
        }
    }

    fn insert(&mut self, e: Id, form: &Option<Linear>) {
        match form {
            None => self.set(e, 1),
            Some(l) => self.push(e, l.clone()),
        }
    }

    /// Keeps `form` as the flattening of `e`.
    fn push(&mut self, e: Id, form: Linear) {
        self.forms.push(form);
        let index = u32::try_from(self.forms.len() + 1).expect("fewer than 2^32 forms");
        self.set(e, index);
    }

    fn set(&mut self, e: Id, index: u32) {
        if self.index.len() <= e.index() {
            self.index.resize(e.index() + 1, 0);
        }
        self.index[e.index()] = index;
    }
}

/// `true` when [`Linear::flatten`] stops at `e` (keeps it as a term): anything
/// but a constant, a sum or a product with a constant operand.
fn is_atom(arena: &Arena, e: Id) -> bool {
    match arena.node(e) {
        Node::Const(_) | Node::Bin(BinOp::Add, ..) => false,
        Node::Bin(BinOp::Mul, a, b) => arena.as_const(a).is_none() && arena.as_const(b).is_none(),
        _ => true,
    }
}

fn term_category(arena: &Arena, (atom, k): (Id, i64)) -> u8 {
    if k != 1 {
        return 0;
    }
    match arena.node(atom) {
        Node::Bin(BinOp::Mul, ..) => 0,
        Node::Bin(BinOp::Mod, ..) => 1,
        Node::Bin(BinOp::FloorDiv | BinOp::CeilDiv, ..) => 2,
        Node::Bin(BinOp::Min | BinOp::Max, ..) => 3,
        _ => 4,
    }
}

fn kind_rank(node: Node) -> u8 {
    match node {
        Node::Bin(op, ..) => match op {
            BinOp::Mul => 0,
            BinOp::Mod => 1,
            BinOp::FloorDiv => 2,
            BinOp::CeilDiv => 3,
            BinOp::Min => 4,
            BinOp::Max => 5,
            BinOp::Add => 6,
        },
        Node::Var(_) => 7,
        Node::Const(_) => 8,
    }
}

/// A total order on expressions (structural, so it does not depend on the order
/// nodes were created in): the order terms are sorted and printed in.
pub fn atom_cmp(arena: &Arena, a: Id, b: Id) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (na, nb) = (arena.node(a), arena.node(b));
    match (na, nb) {
        (Node::Var(x), Node::Var(y)) => x.cmp(&y),
        (Node::Const(x), Node::Const(y)) => x.cmp(&y),
        (Node::Bin(oa, a1, a2), Node::Bin(ob, b1, b2)) if oa == ob => {
            atom_cmp(arena, a1, b1).then_with(|| atom_cmp(arena, a2, b2))
        }
        _ => kind_rank(na).cmp(&kind_rank(nb)),
    }
}

/// Greatest common divisor of absolute values (`gcd(0, x) = |x|`), in `u64` so
/// that `i64::MIN` is handled.
pub fn gcd(a: i64, b: i64) -> u64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// [`gcd`] as an `i64`, `None` for `2^63` (only `gcd(i64::MIN, 0)` and alike).
pub fn gcd_i64(a: i64, b: i64) -> Option<i64> {
    i64::try_from(gcd(a, b)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::expr::Expr;

    /// A remembered form is the form a fresh arena computes, asked once or
    /// twice, for sums, products by constants, atoms and overflowing sums.
    #[test]
    fn remembered_forms_are_the_computed_ones() {
        let d = |i| Expr::dim(i);
        let exprs = [
            d(0) * 4 + d(1) + 3,
            (d(0) + d(1)) * 3 + d(0) * -3 + 1,
            (d(0) * 8 + d(1)).floor_div(4) + d(1).modulo(3) * 2,
            Expr::raw(BinOp::Mul, d(0), d(1)) + d(0),
            Expr::constant(7),
            d(2),
            Expr::raw(BinOp::Mul, d(0), Expr::constant(i64::MAX)) * 2 + d(1),
            Expr::raw(BinOp::Add, Expr::constant(i64::MAX), Expr::constant(1)),
        ];
        let mut shared = Arena::default();
        for e in &exprs {
            let mut fresh = Arena::default();
            let id = fresh.from_expr(e);
            let expected = Linear::flatten(&fresh, id).map(|l| (l.to_id(&mut fresh), l.constant));
            let id = shared.from_expr(e);
            for _ in 0..2 {
                let got = Linear::of(&shared, id).map(|l| (l.to_id(&mut shared), l.constant));
                let as_tree = |a: &Arena, r: Option<(Id, i64)>| r.map(|(i, c)| (a.to_expr(i), c));
                assert_eq!(as_tree(&shared, got), as_tree(&fresh, expected), "{e:?}");
            }
        }
    }
}
