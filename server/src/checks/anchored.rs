//! Diagnostics kept relative to the computations their ranges fall in, so that a
//! finding computed for one version stays right in a later one where those
//! computations moved (an edit above them) without changing.

use std::ops::Range;
use std::sync::Arc;

use crate::model::{ComputationId, ComputationRef, Diagnostic, Module};

/// Where one range of an anchored diagnostic is measured from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anchor {
    /// The computation the diagnostic belongs to.
    Own,
    /// Another computation of the module: the `n`-th of its name (0 is the one calls
    /// find; later ones are duplicates).
    Named(Arc<str>, usize),
    /// The document's start (outside every computation).
    Document,
}

/// A diagnostic with each range (in [`Diagnostic::ranges_mut`] order) relative to its
/// anchor.
#[derive(Debug, Clone)]
pub struct Anchored {
    diagnostic: Diagnostic,
    anchors: Vec<Anchor>,
}

impl Anchored {
    /// Anchors `diagnostic` (document bytes, computed on computation `own` of `m`).
    pub fn new(mut diagnostic: Diagnostic, m: &Module, own: ComputationRef) -> Anchored {
        let anchors = diagnostic.ranges_mut().map(|r| anchor(r, m, own)).collect();
        Anchored {
            diagnostic,
            anchors,
        }
    }

    /// Whether the range and the related ranges (what a client is shown; fixes aside)
    /// are inside the computation the diagnostic belongs to: then they move with it,
    /// and nothing another computation does can change where they are shown.
    pub fn shown_within_own(&self) -> bool {
        self.shown_anchors().iter().all(|a| *a == Anchor::Own)
    }

    /// Whether a range is measured from another computation whose name `named` picks.
    pub fn names_another(&self, named: impl Fn(&str) -> bool) -> bool {
        self.anchors
            .iter()
            .any(|a| matches!(a, Anchor::Named(name, _) if named(name)))
    }

    /// Whether a range is measured from the document's start: it falls outside every
    /// named computation (recovered garbage, a computation whose name did not parse), so
    /// any edit before it moves it.
    pub fn measured_from_document(&self) -> bool {
        self.anchors.contains(&Anchor::Document)
    }

    /// Where the range and each related range are measured from: what a client is
    /// shown moves with these.
    pub fn shown_anchors(&self) -> &[Anchor] {
        &self.anchors[..1 + self.diagnostic.related.len()]
    }

    /// The diagnostic in document bytes, for computation `own` of `m` (a later version
    /// where the anchors may have moved).
    pub fn place(&self, m: &Module, own: ComputationRef) -> Diagnostic {
        let mut d = self.diagnostic.clone();
        for (r, anchor) in d.ranges_mut().zip(&self.anchors) {
            let base = anchor.offset(m, own.offset);
            *r = r.start + base..r.end + base;
        }
        d
    }
}

impl Anchor {
    /// The document offset this anchor stands for in `m`, for a diagnostic of the
    /// computation whose chunk starts at `own`.
    pub fn offset(&self, m: &Module, own: usize) -> usize {
        match self {
            Anchor::Own => own,
            Anchor::Named(name, n) => nth_named(m, name, *n).map_or(own, |id| m.chunk_offset(id)),
            Anchor::Document => 0,
        }
    }
}

/// The anchor of `r` and `r` made relative to it.
fn anchor(r: &mut Range<usize>, m: &Module, own: ComputationRef) -> Anchor {
    let inside = |c: &ComputationRef| c.offset <= r.start && r.end <= c.offset + c.text.len();
    let (anchor, base) = if inside(&own) {
        (Anchor::Own, own.offset)
    } else {
        // `computation_at(start)` prefers the computation that ends there: when two
        // computations touch (items on one line), the range is in the next one.
        let other = m
            .computation_at(r.start)
            .into_iter()
            .flat_map(|id| [id, ComputationId(id.0 + 1)])
            .filter(|id| (id.0 as usize) < m.computation_count())
            .map(|id| m.computation(id))
            .find(|c| inside(c))
            .and_then(|c| {
                let name = m.outline(c.id).name.as_ref()?.name.clone();
                let n = (0..).find(|&n| nth_named(m, &name, n).is_none_or(|id| id == c.id))?;
                Some((c.offset, Anchor::Named(name, n)))
            });
        match other {
            Some((offset, anchor)) => (anchor, offset),
            None => (Anchor::Document, 0),
        }
    };
    *r = r.start - base..r.end - base;
    anchor
}

/// The `n`-th computation of `m` named `name` (0: the first, which calls find).
fn nth_named(m: &Module, name: &str, n: usize) -> Option<ComputationId> {
    match n {
        0 => m.computation_by_name(name),
        _ => m
            .duplicates
            .iter()
            .copied()
            .filter(|&id| {
                m.outline(id)
                    .name
                    .as_ref()
                    .is_some_and(|x| &*x.name == name)
            })
            .nth(n - 1),
    }
}
