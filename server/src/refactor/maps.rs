//! The indexing maps of a chain and of its candidate replacements.
//!
//! A chain's map is the composition of its members' output-to-input maps (from the
//! analysis' per-op constructors), from the last member's output to the source. A
//! replacement is offered only when its own map equals that composition: by the
//! simplifier ([`IndexingMap::equivalent`]) or, when the simplifier cannot decide,
//! by evaluating both maps at every point of a small enough domain.

use crate::algebra::IndexingMap;
use crate::analysis::ops::reshape::{bitcast_map, reshape_map};
use crate::analysis::ops::transpose::permutation_map;
use crate::analysis::{view, ArrayShape};
use crate::model::shape::check_permutation;
use crate::model::{self, Computation, InstrId, Opcode};

use super::chain::{plain_layout, static_array, Chain};

/// Largest domain (in points) the enumeration fallback of [`maps_equal`] visits.
pub const MAX_ENUMERATED_POINTS: i64 = 1 << 16;

/// What a chain can become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replacement {
    /// Nothing: the chain is the identity (same shape and layout at both ends).
    Remove,
    /// `transpose(source), dimensions={perm}`.
    Transpose(Vec<usize>),
    /// `reshape(source)`.
    Reshape,
    /// `bitcast(source)`.
    Bitcast,
}

impl Replacement {
    pub fn opcode(&self) -> Option<&'static str> {
        match self {
            Replacement::Remove => None,
            Replacement::Transpose(_) => Some("transpose"),
            Replacement::Reshape => Some("reshape"),
            Replacement::Bitcast => Some("bitcast"),
        }
    }
}

/// The analysis' view of an instruction's (static array) shape.
fn array(c: &Computation, id: InstrId) -> Option<ArrayShape> {
    let shape = &c.instruction(id).shape;
    static_array(shape)?;
    view::shape(shape).as_array().cloned()
}

/// The transpose's permutation as indices, if valid.
fn permutation(dimensions: &Option<thin_vec::ThinVec<i64>>, rank: usize) -> Option<Vec<usize>> {
    let perm: Vec<usize> = dimensions
        .as_ref()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    check_permutation(&perm, rank).ok()?;
    Some(perm)
}

/// Output-to-input map of one member (its output to its operand), or `None` when
/// the instruction is malformed (the model reports why).
pub fn member_map(c: &Computation, id: InstrId) -> Option<IndexingMap> {
    let instr = c.instruction(id);
    let out = array(c, id)?;
    let input = array(c, instr.operands.first()?.target?)?;
    let m = match instr.opcode {
        Opcode::Reshape => reshape_map(&input.dims, &out.dims).ok()?,
        Opcode::Bitcast => bitcast_map(&input, &out).ok()?,
        Opcode::Transpose => {
            let perm = permutation(&instr.attrs().dimensions, out.rank())?;
            if perm
                .iter()
                .enumerate()
                .any(|(i, &p)| input.dims.get(p) != Some(&out.dims[i]))
            {
                return None;
            }
            permutation_map(&out.dims, &perm)
        }
        _ => return None,
    };
    (!m.is_undefined()).then_some(m)
}

/// The composed map of a chain: last member's output to the source.
pub fn chain_map(c: &Computation, chain: &Chain) -> Option<IndexingMap> {
    let mut members = chain.members.iter().rev();
    let mut composed = member_map(c, *members.next()?)?;
    for &id in members {
        composed = extend(&composed, &member_map(c, id)?)?;
    }
    composed.simplify();
    (!composed.is_undefined()).then_some(composed)
}

/// `window` (last output to some member's output) extended by that member's map
/// (its output to its operand), simplified.
pub fn extend(window: &IndexingMap, member: &IndexingMap) -> Option<IndexingMap> {
    let mut m = window.compose(member);
    m.simplify();
    (!m.is_undefined()).then_some(m)
}

/// Whether two maps over the same domain agree at every point. A few probe points
/// refute most unequal pairs cheaply; the simplifier decides most of the rest;
/// otherwise maps without symbols and constraints over at most
/// [`MAX_ENUMERATED_POINTS`] points are compared point by point. `false` means
/// "not shown equal": no fix is offered then.
pub fn maps_equal(a: &IndexingMap, b: &IndexingMap) -> bool {
    if a.is_undefined() || b.is_undefined() || a.results().len() != b.results().len() {
        return false;
    }
    let box_domain = plain_box(a).filter(|bounds| Some(bounds) == plain_box(b).as_ref());
    if let Some(bounds) = &box_domain {
        if bounds.iter().any(|&(lo, hi)| lo > hi) {
            return true; // an empty domain: nothing to disagree on
        }
        if probe_points(bounds).any(|p| disagree(a, b, &p)) {
            return false;
        }
    }
    if a.equivalent(b) {
        return true;
    }
    box_domain.is_some_and(|bounds| enumerate_equal(a, b, &bounds))
}

/// The dimension bounds of a map whose domain is a plain box: no symbols, no
/// constraints (the maps of reshape, bitcast and transpose).
fn plain_box(m: &IndexingMap) -> Option<Vec<(i64, i64)>> {
    let plain =
        m.range_vars().is_empty() && m.runtime_vars().is_empty() && m.constraints().is_empty();
    plain.then(|| {
        m.dims()
            .iter()
            .map(|v| (v.bounds.lo, v.bounds.hi))
            .collect()
    })
}

/// Both maps evaluate at `point` and differ (an evaluation failure proves nothing).
fn disagree(a: &IndexingMap, b: &IndexingMap, point: &[i64]) -> bool {
    matches!((a.evaluate(point, &[]), b.evaluate(point, &[])), (Some(x), Some(y)) if x != y)
}

/// The corners `lo` and `hi`, and per dimension `lo` with that one coordinate at
/// `lo + 1` or at `hi`: where strides and wrap-arounds of reshapes show first.
fn probe_points(bounds: &[(i64, i64)]) -> impl Iterator<Item = Vec<i64>> + '_ {
    let lo: Vec<i64> = bounds.iter().map(|&(lo, _)| lo).collect();
    let hi: Vec<i64> = bounds.iter().map(|&(_, hi)| hi).collect();
    let singles = (0..bounds.len()).flat_map(move |k| {
        let (l, h) = bounds[k];
        [l + 1, h]
            .into_iter()
            .filter(move |&v| v <= h)
            .map(move |v| {
                let mut p: Vec<i64> = bounds.iter().map(|&(lo, _)| lo).collect();
                p[k] = v;
                p
            })
    });
    [lo, hi].into_iter().chain(singles)
}

/// Point-by-point comparison over a box of at most [`MAX_ENUMERATED_POINTS`].
fn enumerate_equal(a: &IndexingMap, b: &IndexingMap, bounds: &[(i64, i64)]) -> bool {
    let points = bounds.iter().try_fold(1i64, |acc, &(lo, hi)| {
        acc.checked_mul(hi.checked_sub(lo)?.checked_add(1)?.max(0))
    });
    if points.is_none_or(|n| n > MAX_ENUMERATED_POINTS) {
        return false;
    }
    let mut point: Vec<i64> = bounds.iter().map(|&(lo, _)| lo).collect();
    loop {
        match (a.evaluate(&point, &[]), b.evaluate(&point, &[])) {
            (Some(x), Some(y)) if x == y => {}
            _ => return false,
        }
        // Next point, last dimension fastest.
        let mut k = point.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            if point[k] < bounds[k].1 {
                point[k] += 1;
                break;
            }
            point[k] = bounds[k].0;
        }
    }
}

/// Same element type, extents and layout (the default written or not): the two
/// values are interchangeable for every user.
pub fn same_physical_shape(a: &model::ArrayShape, b: &model::ArrayShape) -> bool {
    // Everything of the layout beyond the dimension order; absent means none.
    let rest = |s: &model::ArrayShape| {
        s.layout
            .as_ref()
            .map_or((vec![], None, None, String::new()), |l| {
                (
                    l.tiles.clone(),
                    l.element_size_in_bits,
                    l.memory_space,
                    l.extra.clone(),
                )
            })
    };
    a.element == b.element
        && a.dims == b.dims
        && a.dynamic == b.dynamic
        && a.minor_to_major() == b.minor_to_major()
        && rest(a) == rest(b)
}

/// A permutation `perm` with `map == permutation_map(out, perm)` if the map looks
/// like one: read off the unit vectors (dimensions of extent 1 are paired in order).
fn guess_permutation(m: &IndexingMap, out: &[i64], input: &[i64]) -> Option<Vec<usize>> {
    if out.len() != input.len() || !m.range_vars().is_empty() {
        return None;
    }
    let rank = out.len();
    let mut perm = vec![usize::MAX; rank];
    let mut used = vec![false; rank];
    for i in (0..rank).filter(|&i| out[i] > 1) {
        let mut unit = vec![0; rank];
        unit[i] = 1;
        let image = m.evaluate(&unit, &[])?;
        let j = image.iter().position(|&v| v == 1)?;
        if image.iter().filter(|&&v| v != 0).count() != 1 || used[j] {
            return None;
        }
        perm[i] = j;
        used[j] = true;
    }
    let mut free = (0..rank).filter(|&j| !used[j] && input[j] == 1);
    for slot in perm.iter_mut().filter(|p| **p == usize::MAX) {
        *slot = free.next()?;
    }
    Some(perm)
}

/// The replacements of `chain` whose map equals the chain's, best first: removal
/// when the chain is the identity on an unchanged shape; otherwise one transpose,
/// reshape or bitcast (a bitcast first when the chain is made of bitcasts). Chains
/// of one member only ever get [`Replacement::Remove`].
pub fn replacements(c: &Computation, chain: &Chain) -> Vec<Replacement> {
    chain_map(c, chain).map_or_else(Vec::new, |m| replacements_for(c, chain, &m))
}

/// [`replacements`] given the chain's composed map (callers that compose many
/// overlapping windows build it incrementally).
pub fn replacements_for(
    c: &Computation,
    chain: &Chain,
    composed: &IndexingMap,
) -> Vec<Replacement> {
    let (Some(source), Some(last)) = (array(c, chain.source), array(c, chain.last())) else {
        return vec![];
    };
    let (Some(src_model), Some(last_model)) = (
        static_array(&c.instruction(chain.source).shape),
        static_array(&c.instruction(chain.last()).shape),
    ) else {
        return vec![];
    };
    if same_physical_shape(src_model, last_model)
        && maps_equal(composed, &IndexingMap::identity(&last.dims))
    {
        return vec![Replacement::Remove];
    }
    if chain.members.len() < 2 || src_model.element != last_model.element {
        return vec![];
    }
    let mut found = Vec::new();
    if let Some(perm) = guess_permutation(composed, &last.dims, &source.dims) {
        let is_identity = perm.iter().enumerate().all(|(i, &p)| i == p);
        if !is_identity && maps_equal(&permutation_map(&last.dims, &perm), composed) {
            found.push(Replacement::Transpose(perm));
        }
    }
    if reshape_map(&source.dims, &last.dims).is_ok_and(|m| maps_equal(&m, composed)) {
        found.push(Replacement::Reshape);
    }
    let plain = plain_layout(src_model) && plain_layout(last_model);
    if plain && bitcast_map(&source, &last).is_ok_and(|m| maps_equal(&m, composed)) {
        let all_bitcasts = chain
            .members
            .iter()
            .all(|&id| c.instruction(id).opcode == Opcode::Bitcast);
        if all_bitcasts {
            found.insert(0, Replacement::Bitcast);
        } else {
            found.push(Replacement::Bitcast);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::IndexingMap;

    #[test]
    fn enumeration_decides_what_the_simplifier_leaves_open() {
        let a =
            IndexingMap::parse("(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [0, 11]")
                .unwrap();
        let b = IndexingMap::identity(&[12]);
        assert!(maps_equal(&a, &b));
        let c = IndexingMap::parse("(d0) -> ((d0 floordiv 4) * 4), domain: d0 in [0, 11]").unwrap();
        assert!(!maps_equal(&c, &b));
    }

    #[test]
    fn permutations_are_read_off_unit_vectors() {
        let m = permutation_map(&[3, 1, 2], &[2, 1, 0]);
        assert_eq!(
            guess_permutation(&m, &[3, 1, 2], &[2, 1, 3]),
            Some(vec![2, 1, 0])
        );
        let r = reshape_map(&[2, 3], &[3, 2]).unwrap();
        let guessed = guess_permutation(&r, &[3, 2], &[2, 3]);
        assert!(guessed.is_none_or(|p| !maps_equal(&permutation_map(&[3, 2], &p), &r)));
    }
}
