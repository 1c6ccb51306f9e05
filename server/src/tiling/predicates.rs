//! The minimal set of predicates for a graph of index transformations, by the
//! nvFuser seed's theorems ("Divisibility of Split").
//!
//! A [`DomainGraph`] holds iteration domains (an extent each) and the
//! transformations between them: `split` (an input into outer and inner, the
//! inner extent is the factor), `merge` (outer and inner into one) and `resize`
//! (padding by `left`/`right`). Domains no transformation consumes are the loop
//! domains; their indices are always in bounds. Every other index is computed
//! from them (`i0 = i1 * N2 + i2` for a split, `i0 = i2 / N1`, `i1 = i2 mod N1`
//! for a merge, `i0 = i1 - left` for a resize) and may leave its bounds: those
//! are the candidate predicates. Guarding all candidates is always correct; the
//! minimal set drops every predicate the others imply:
//!
//! * Theorem 1: split `I1, I2 = split(I0)`: `I0` and `I2` in bounds imply `I1`.
//! * Theorem 2: merge `I2 = merge(I0, I1)`: `I0` in bounds iff `I2` is.
//! * Theorem 3: resize with `left, right >= 0`: `I0` in bounds implies `I1`.
//! * A divisible split: `I1` and `I2` in bounds imply `I0`.
//! * A split with one outer tile (`N1 == 1`): `I0` and `I1` in bounds imply
//!   `I2` (then `i0 = i2`).
//!
//! Predicates on domains closest to the roots (the tensor's own dimensions) are
//! kept in preference, as they are the ones the hardware bounds checks name.

use std::collections::BTreeSet;

/// Index of a domain in its graph.
pub type DomainId = usize;

/// One iteration domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    pub name: String,
    pub extent: i64,
}

/// A transformation between domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// `input` split into `outer` (extent `ceil(N / factor)`) and `inner`
    /// (extent `factor`): `i_input = i_outer * factor + i_inner`.
    Split {
        input: DomainId,
        outer: DomainId,
        inner: DomainId,
    },
    /// `outer` and `inner` merged into `output` (extent the product).
    Merge {
        outer: DomainId,
        inner: DomainId,
        output: DomainId,
    },
    /// `input` padded by `left` before and `right` after into `output`.
    Resize {
        input: DomainId,
        output: DomainId,
        left: i64,
        right: i64,
    },
}

/// The guard `name < extent` of one domain's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainPredicate {
    pub domain: DomainId,
    /// `i0 < 15` (the lower bound is a theorem of Euclidean division, or a
    /// resize's `left`, printed when it matters).
    pub text: String,
}

/// Domains and the transformations between them (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct DomainGraph {
    pub domains: Vec<Domain>,
    pub transforms: Vec<Transform>,
}

impl DomainGraph {
    pub fn new() -> DomainGraph {
        DomainGraph::default()
    }

    /// A root domain: a dimension of the tensor (extent >= 0).
    pub fn root(&mut self, name: &str, extent: i64) -> DomainId {
        self.domains.push(Domain {
            name: name.to_string(),
            extent: extent.max(0),
        });
        self.domains.len() - 1
    }

    /// Splits `input` by `factor` (>= 1, clamped) into `(outer, inner)`, named
    /// `outer_name` / `inner_name`.
    pub fn split(
        &mut self,
        input: DomainId,
        factor: i64,
        outer_name: &str,
        inner_name: &str,
    ) -> (DomainId, DomainId) {
        let factor = factor.max(1);
        let n = self.domains[input].extent;
        let outer = self.root(outer_name, n / factor + i64::from(n % factor != 0));
        let inner = self.root(inner_name, factor);
        self.transforms.push(Transform::Split {
            input,
            outer,
            inner,
        });
        (outer, inner)
    }

    /// Merges `outer` and `inner` into one domain named `name`. The extent
    /// saturates instead of overflowing (such graphs are not enumerable anyway).
    pub fn merge(&mut self, outer: DomainId, inner: DomainId, name: &str) -> DomainId {
        let extent = self.domains[outer]
            .extent
            .saturating_mul(self.domains[inner].extent);
        let output = self.root(name, extent);
        self.transforms.push(Transform::Merge {
            outer,
            inner,
            output,
        });
        output
    }

    /// Pads `input` by `left` / `right` into a domain named `name`.
    pub fn resize(&mut self, input: DomainId, left: i64, right: i64, name: &str) -> DomainId {
        let extent = self.domains[input]
            .extent
            .saturating_add(left)
            .saturating_add(right)
            .max(0);
        let output = self.root(name, extent);
        self.transforms.push(Transform::Resize {
            input,
            output,
            left,
            right,
        });
        output
    }

    /// The transformation that consumes `d`, if any.
    fn consumer(&self, d: DomainId) -> Option<&Transform> {
        self.transforms.iter().find(|t| match **t {
            Transform::Split { input, .. } => input == d,
            Transform::Merge { outer, inner, .. } => outer == d || inner == d,
            Transform::Resize { input, .. } => input == d,
        })
    }

    /// Loop domains: consumed by no transformation, iterated directly.
    pub fn loop_domains(&self) -> Vec<DomainId> {
        (0..self.domains.len())
            .filter(|&d| self.consumer(d).is_none())
            .collect()
    }

    /// Whether the index of `d` can leave `[0, extent)` for some loop point.
    pub fn may_leave_bounds(&self, d: DomainId) -> bool {
        match self.consumer(d) {
            None => false,
            Some(&Transform::Split { outer, inner, .. }) => {
                let divisible = self.domains[outer].extent * self.domains[inner].extent
                    == self.domains[d].extent;
                !divisible || self.may_leave_bounds(outer) || self.may_leave_bounds(inner)
            }
            // i_outer = i_out / N_inner leaves its bounds iff i_out does (Theorem 2);
            // i_inner = i_out mod N_inner never does.
            Some(&Transform::Merge { outer, output, .. }) => {
                d == outer && self.may_leave_bounds(output)
            }
            Some(&Transform::Resize {
                output,
                left,
                right,
                ..
            }) => left > 0 || right > 0 || self.may_leave_bounds(output),
        }
    }

    /// Every domain that may leave its bounds: guarding all of them is the
    /// safe (not minimal) strategy.
    pub fn candidate_predicates(&self) -> Vec<DomainId> {
        (0..self.domains.len())
            .filter(|&d| self.may_leave_bounds(d))
            .collect()
    }

    /// Domains known in bounds when the domains in `guarded` are: the loop
    /// domains, the domains that never leave bounds, and the theorems' closure.
    pub fn implied_in_bounds(&self, guarded: &BTreeSet<DomainId>) -> BTreeSet<DomainId> {
        let mut known: BTreeSet<DomainId> = guarded.clone();
        known.extend((0..self.domains.len()).filter(|&d| !self.may_leave_bounds(d)));
        loop {
            let before = known.len();
            for t in &self.transforms {
                match *t {
                    Transform::Split {
                        input,
                        outer,
                        inner,
                    } => {
                        if known.contains(&input) && known.contains(&inner) {
                            known.insert(outer);
                        }
                        // One outer tile: i_outer = 0 once in bounds, so
                        // i_input = i_inner and the input's guard is the inner's.
                        if self.domains[outer].extent == 1
                            && known.contains(&input)
                            && known.contains(&outer)
                        {
                            known.insert(inner);
                        }
                        let divisible = self.domains[outer].extent * self.domains[inner].extent
                            == self.domains[input].extent;
                        if divisible && known.contains(&outer) && known.contains(&inner) {
                            known.insert(input);
                        }
                    }
                    Transform::Merge { outer, output, .. } => {
                        if known.contains(&outer) || known.contains(&output) {
                            known.insert(outer);
                            known.insert(output);
                        }
                    }
                    Transform::Resize {
                        input,
                        output,
                        left,
                        right,
                    } => {
                        if left >= 0 && right >= 0 && known.contains(&input) {
                            known.insert(output);
                        }
                    }
                }
            }
            if known.len() == before {
                return known;
            }
        }
    }

    /// The minimal predicates: start from every candidate and drop, deepest
    /// domain first (so roots are kept), each one the remaining ones imply.
    pub fn minimal_predicates(&self) -> Vec<DomainPredicate> {
        let candidates = self.candidate_predicates();
        let mut kept: BTreeSet<DomainId> = candidates.iter().copied().collect();
        let mut order = candidates.clone();
        order.sort_by_key(|&d| std::cmp::Reverse((self.depth(d), d)));
        for d in order {
            kept.remove(&d);
            let implied = self.implied_in_bounds(&kept);
            if !candidates.iter().all(|c| implied.contains(c)) {
                kept.insert(d);
            }
        }
        kept.into_iter().map(|d| self.predicate(d)).collect()
    }

    /// The guard of domain `d` as text.
    pub fn predicate(&self, d: DomainId) -> DomainPredicate {
        let dom = &self.domains[d];
        let lower = self
            .transforms
            .iter()
            .any(|t| matches!(*t, Transform::Resize { input, left, .. } if input == d && left > 0));
        let text = if lower {
            format!("0 <= {} < {}", dom.name, dom.extent)
        } else {
            format!("{} < {}", dom.name, dom.extent)
        };
        DomainPredicate { domain: d, text }
    }

    /// Transformations between the roots and `d` (roots are 0).
    fn depth(&self, d: DomainId) -> usize {
        self.transforms
            .iter()
            .find_map(|t| match *t {
                Transform::Split {
                    input,
                    outer,
                    inner,
                } if outer == d || inner == d => Some(self.depth(input) + 1),
                Transform::Merge {
                    outer,
                    inner,
                    output,
                } if output == d => Some(self.depth(outer).max(self.depth(inner)) + 1),
                Transform::Resize { input, output, .. } if output == d => {
                    Some(self.depth(input) + 1)
                }
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The index of every domain at one loop point (`loop_values[k]` for the
    /// k-th of [`Self::loop_domains`]): the semantics the theorems are about,
    /// used by the brute-force tests.
    pub fn indices_at(&self, loop_values: &[i64]) -> Vec<i64> {
        let mut value: Vec<Option<i64>> = vec![None; self.domains.len()];
        for (d, v) in self.loop_domains().into_iter().zip(loop_values) {
            value[d] = Some(*v);
        }
        loop {
            let mut progress = false;
            for t in &self.transforms {
                match *t {
                    Transform::Split {
                        input,
                        outer,
                        inner,
                    } => {
                        if let (None, Some(o), Some(i)) = (value[input], value[outer], value[inner])
                        {
                            value[input] = Some(o * self.domains[inner].extent + i);
                            progress = true;
                        }
                    }
                    Transform::Merge {
                        outer,
                        inner,
                        output,
                    } => {
                        if let (None, Some(x)) = (value[outer], value[output]) {
                            let n = self.domains[inner].extent.max(1);
                            value[outer] = Some(x.div_euclid(n));
                            value[inner] = Some(x.rem_euclid(n));
                            progress = true;
                        }
                    }
                    Transform::Resize {
                        input,
                        output,
                        left,
                        ..
                    } => {
                        if let (None, Some(x)) = (value[input], value[output]) {
                            value[input] = Some(x - left);
                            progress = true;
                        }
                    }
                }
            }
            if !progress {
                return value.into_iter().map(|v| v.unwrap_or(0)).collect();
            }
        }
    }

    /// Whether domain `d`'s index is in bounds in `indices`.
    pub fn in_bounds(&self, indices: &[i64], d: DomainId) -> bool {
        (0..self.domains[d].extent).contains(&indices[d])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's Figure 2: `I0{15}` split by 6 into `I1{3}, I2{6}`; `I1` split
    /// by 2, `I2` split by 4. All three splits are indivisible; the minimal set
    /// is `i0 < 15` and `i2 < 6` (Theorem 1 drops `i1 < 3`).
    fn three_splits() -> DomainGraph {
        let mut g = DomainGraph::new();
        let i0 = g.root("i0", 15);
        let (i1, i2) = g.split(i0, 6, "i1", "i2");
        g.split(i1, 2, "i3", "i4");
        g.split(i2, 4, "i5", "i6");
        g
    }

    #[test]
    fn three_indivisible_splits_reduce_to_two_predicates() {
        let g = three_splits();
        assert_eq!(g.candidate_predicates(), vec![0, 1, 2]);
        let texts: Vec<String> = g.minimal_predicates().into_iter().map(|p| p.text).collect();
        assert_eq!(texts, vec!["i0 < 15", "i2 < 6"]);
        brute_force(&g);
    }

    #[test]
    fn single_indivisible_split() {
        let mut g = DomainGraph::new();
        let d = g.root("d", 6);
        g.split(d, 4, "t", "o");
        let texts: Vec<String> = g.minimal_predicates().into_iter().map(|p| p.text).collect();
        assert_eq!(texts, vec!["d < 6"]);
        brute_force(&g);
    }

    #[test]
    fn merge_then_split_guards_the_merged_outer_only() {
        // T[I1{2}, I2{5}], merged to {10}, split by 4: the merged index needs a
        // guard, and by Theorem 2 guarding it guards I1; I2 is a mod, never out.
        let mut g = DomainGraph::new();
        let a = g.root("a", 2);
        let b = g.root("b", 5);
        let m = g.merge(a, b, "m");
        g.split(m, 4, "t", "o");
        let texts: Vec<String> = g.minimal_predicates().into_iter().map(|p| p.text).collect();
        assert_eq!(texts, vec!["a < 2"]);
        brute_force(&g);
    }

    #[test]
    fn resize_with_padding_needs_only_the_input_guard() {
        let mut g = DomainGraph::new();
        let x = g.root("x", 5);
        let p = g.resize(x, 1, 2, "p");
        g.split(p, 4, "t", "o");
        let texts: Vec<String> = g.minimal_predicates().into_iter().map(|p| p.text).collect();
        assert_eq!(texts, vec!["0 <= x < 5"]);
        brute_force(&g);
    }

    /// Brute force over every loop point: the minimal predicates hold exactly
    /// where all domains are in bounds, and dropping any one of them admits a
    /// point where some domain is out of bounds.
    fn brute_force(g: &DomainGraph) {
        let loops = g.loop_domains();
        let extents: Vec<i64> = loops.iter().map(|&d| g.domains[d].extent).collect();
        let preds = g.minimal_predicates();
        let mut needed = vec![false; preds.len()];
        let mut point = vec![0i64; loops.len()];
        loop {
            let idx = g.indices_at(&point);
            let all = (0..g.domains.len()).all(|d| g.in_bounds(&idx, d));
            let pass: Vec<bool> = preds.iter().map(|p| g.in_bounds(&idx, p.domain)).collect();
            assert_eq!(pass.iter().all(|&b| b), all, "at {point:?}: {idx:?}");
            if !all && pass.iter().filter(|&&b| !b).count() == 1 {
                needed[pass.iter().position(|&b| !b).unwrap()] = true;
            }
            if !advance(&mut point, &extents) {
                break;
            }
        }
        assert!(
            needed.iter().all(|&b| b),
            "redundant predicate in {preds:?}"
        );
    }

    fn advance(point: &mut [i64], extents: &[i64]) -> bool {
        for k in (0..point.len()).rev() {
            point[k] += 1;
            if point[k] < extents[k] {
                return true;
            }
            point[k] = 0;
        }
        false
    }

    #[test]
    fn random_split_merge_graphs_brute_force() {
        // Deterministic small graphs: a root split twice in every way.
        for n in 1..=12 {
            for f1 in 1..=5 {
                for f2 in 1..=4 {
                    let mut g = DomainGraph::new();
                    let r = g.root("r", n);
                    let (o, i) = g.split(r, f1, "o", "i");
                    g.split(o, f2, "oo", "oi");
                    let _ = i;
                    brute_force(&g);
                    let mut g = DomainGraph::new();
                    let r = g.root("r", n);
                    let (_, i) = g.split(r, f1, "o", "i");
                    g.split(i, f2, "io", "ii");
                    brute_force(&g);
                }
            }
        }
        // Merges of two roots, split, the inner split again; and padded roots.
        for a in 1..=3 {
            for b in 1..=5 {
                for f in 1..=6 {
                    let mut g = DomainGraph::new();
                    let (x, y) = (g.root("x", a), g.root("y", b));
                    let m = g.merge(x, y, "m");
                    let (_, i) = g.split(m, f, "t", "o");
                    g.split(i, 2, "io", "ii");
                    brute_force(&g);
                    let mut g = DomainGraph::new();
                    let x = g.root("x", b);
                    let p = g.resize(x, a - 1, f % 3, "p");
                    g.split(p, f, "t", "o");
                    brute_force(&g);
                }
            }
        }
    }
}
