//! How a consumer reads a producer, from its output-to-operand maps: one word for
//! an edge's colour, and the map's short text for its label.

use crate::algebra::{IndexingMap, MapState, PrintOptions, VarKind};
use crate::analysis::{OperandIndexing, OperandMap};
use crate::hover as text;

/// An edge's class, from the maps (and, for a kernel's reads, XLA's coalescing
/// verdict). Ordered from the cheapest read to the one most worth a look: an
/// edge with several maps takes the last class any of them has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeClass {
    /// Each output element reads the element at its own index.
    Identity,
    /// An affine re-indexing that is none of the others: slice, pad, reshape,
    /// concatenate, strided reads.
    Reindex,
    /// Each operand element is read by many outputs; some output dimensions
    /// are not used (broadcast, scalar reads).
    Broadcast,
    /// The dimensions in another order: a permutation of the output's.
    TransposeLike,
    /// Each output element reads many operand elements (range variables):
    /// reduce, dot, convolution, reduce-window.
    Reduction,
    /// Where it reads depends on values read at run time: gather,
    /// dynamic-slice, scatter.
    Gather,
    /// No known maps (the analysis does not model the op, or ran out of time).
    Unknown,
    /// A kernel's read XLA's coalescing analysis calls not coalesced.
    Uncoalesced,
}

impl EdgeClass {
    pub const ALL: [EdgeClass; 8] = [
        EdgeClass::Identity,
        EdgeClass::Reindex,
        EdgeClass::Broadcast,
        EdgeClass::TransposeLike,
        EdgeClass::Reduction,
        EdgeClass::Gather,
        EdgeClass::Unknown,
        EdgeClass::Uncoalesced,
    ];

    /// The name in JSON and legends.
    pub fn name(self) -> &'static str {
        match self {
            EdgeClass::Identity => "identity",
            EdgeClass::Reindex => "reindex",
            EdgeClass::Broadcast => "broadcast",
            EdgeClass::TransposeLike => "transpose",
            EdgeClass::Reduction => "reduction",
            EdgeClass::Gather => "gather",
            EdgeClass::Unknown => "unknown",
            EdgeClass::Uncoalesced => "uncoalesced",
        }
    }

    /// What the legend says the colour means.
    pub fn meaning(self) -> &'static str {
        match self {
            EdgeClass::Identity => "element for element",
            EdgeClass::Reindex => "slice, pad, reshape: elements moved",
            EdgeClass::Broadcast => "each element read by many outputs",
            EdgeClass::TransposeLike => "dimensions permuted",
            EdgeClass::Reduction => "many elements read per output",
            EdgeClass::Gather => "indices read at run time",
            EdgeClass::Unknown => "maps unknown",
            EdgeClass::Uncoalesced => "kernel read not coalesced",
        }
    }

    /// The colour every renderer uses (dark enough on white and on dark themes).
    pub fn colour(self) -> &'static str {
        match self {
            EdgeClass::Identity => "#7f8c8d",
            EdgeClass::Reindex => "#2e86c1",
            EdgeClass::Broadcast => "#27ae60",
            EdgeClass::TransposeLike => "#8e44ad",
            EdgeClass::Reduction => "#d68910",
            EdgeClass::Gather => "#c0392b",
            EdgeClass::Unknown => "#b3b6b7",
            EdgeClass::Uncoalesced => "#e91e63",
        }
    }
}

/// The class of one map read from an output of extents `domain` into an operand
/// of extents `target`.
pub fn of_map(m: &OperandMap, domain: &[i64], target: &[i64]) -> EdgeClass {
    let map = &m.map;
    if map.state() != MapState::Defined {
        return EdgeClass::Unknown;
    }
    if !m.runtime_vars.is_empty() || !map.runtime_vars().is_empty() {
        return EdgeClass::Gather;
    }
    if map.range_vars().iter().any(|v| v.bounds.hi > v.bounds.lo) {
        return EdgeClass::Reduction;
    }
    if text::is_identity(map, target) {
        return EdgeClass::Identity;
    }
    match dimension_results(map, target) {
        Some(dims) if dims.len() == map.dims().len() && is_sorted(&dims) => {
            // Every dimension in order but not the identity: a slice or a pad.
            EdgeClass::Reindex
        }
        Some(dims) if dims.len() == map.dims().len() => EdgeClass::TransposeLike,
        Some(_) => EdgeClass::Broadcast,
        None if text::is_scalar_read(m, domain) => EdgeClass::Broadcast,
        None => EdgeClass::Reindex,
    }
}

/// The dimensions the results are, in result order, when every result is a
/// distinct bare dimension (or the constant 0 of an extent-1 operand dimension);
/// the constants are left out.
pub fn dimension_results(map: &IndexingMap, target: &[i64]) -> Option<Vec<usize>> {
    let mut dims = Vec::new();
    for (k, e) in map.results().iter().enumerate() {
        match (e.as_var(), e.as_const()) {
            (Some(v), _) if v.kind == VarKind::Dim && !dims.contains(&v.index) => {
                dims.push(v.index)
            }
            (None, Some(0)) if target.get(k) == Some(&1) => {}
            _ => return None,
        }
    }
    (!map.results().is_empty()).then_some(dims)
}

fn is_sorted(dims: &[usize]) -> bool {
    dims.windows(2).all(|w| w[0] < w[1])
}

/// The class of an operand's maps: the last class of any map, unknown when a
/// path has no known maps or nothing is read.
pub fn of_indexing(indexing: &OperandIndexing, domain: &[i64], target: &[i64]) -> EdgeClass {
    if indexing.unknown.is_some() || indexing.maps.is_empty() {
        return EdgeClass::Unknown;
    }
    indexing
        .maps
        .iter()
        .map(|m| of_map(m, domain, target))
        .max()
        .unwrap_or(EdgeClass::Unknown)
}

/// Longest short map text on an edge (characters): a label, not a hover.
pub const SHORT_WIDTH: usize = 60;

/// The short form of an operand's maps: `identity`, `scalar`, the map's head
/// (`(d0, d1) -> (d1, d0)`, no domain), several joined by ` ∪ `, cut to
/// [`SHORT_WIDTH`] characters; `unknown: reason` or `not read`.
pub fn short_text(indexing: &OperandIndexing, domain: &[i64], target: &[i64]) -> String {
    if let Some(reason) = &indexing.unknown {
        return cut(&format!("unknown: {reason}"));
    }
    if indexing.maps.is_empty() {
        return "not read".to_string();
    }
    let options = PrintOptions {
        multiline: false,
        ..PrintOptions::default()
    };
    let parts: Vec<String> = text::families(&indexing.maps)
        .iter()
        .map(|f| {
            if f.varying.is_none() && text::is_identity(&f.first.map, target) {
                return "identity".to_string();
            }
            if f.varying.is_none() && text::is_scalar_read(f.first, domain) {
                return "scalar".to_string();
            }
            let line = f.lines(&options).into_iter().next().unwrap_or_default();
            line.split(", domain:")
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    cut(&parts.join(" ∪ "))
}

/// `text` cut to [`SHORT_WIDTH`] characters with an ellipsis.
fn cut(text: &str) -> String {
    if text.chars().count() <= SHORT_WIDTH {
        return text.to_string();
    }
    let mut out: String = text.chars().take(SHORT_WIDTH - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> OperandMap {
        OperandMap::plain(IndexingMap::parse(text).expect("a map"))
    }

    #[test]
    fn classes_of_the_plain_maps() {
        let id = map("(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 127]");
        assert_eq!(of_map(&id, &[8, 128], &[8, 128]), EdgeClass::Identity);
        let t = map("(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 7]");
        assert_eq!(of_map(&t, &[8, 8], &[8, 8]), EdgeClass::TransposeLike);
        let b = map("(d0, d1) -> (d1), domain: d0 in [0, 7], d1 in [0, 127]");
        assert_eq!(of_map(&b, &[8, 128], &[128]), EdgeClass::Broadcast);
        let r = map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 7], s0 in [0, 127]");
        assert_eq!(of_map(&r, &[8], &[8, 128]), EdgeClass::Reduction);
        let s = map("(d0) -> (d0 + 2), domain: d0 in [0, 7]");
        assert_eq!(of_map(&s, &[8], &[16]), EdgeClass::Reindex);
        let scalar = map("(d0) -> (), domain: d0 in [0, 7]");
        assert_eq!(of_map(&scalar, &[8], &[]), EdgeClass::Broadcast);
    }

    #[test]
    fn short_text_drops_the_domain() {
        let t = map("(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 7]");
        let indexing = OperandIndexing::single(t);
        assert_eq!(
            short_text(&indexing, &[8, 8], &[8, 8]),
            "(d0, d1) -> (d1, d0)"
        );
        let unknown =
            OperandIndexing::unknown(crate::analysis::Unknown::no_indexing("custom-call"));
        assert_eq!(short_text(&unknown, &[], &[]), "unknown: custom-call");
    }
}
