//! XLA's cheap coalescing heuristic (`IsReadCoalescedHeuristic`), used by its
//! cost model for a producer it considers fusing into a consumer, and as the
//! fallback when no launch model applies:
//!
//! * outside transpose emitters, an op that transposes the physically most minor
//!   dimension (`TransposesMinorDimension`) breaks coalescing, unless it
//!   transposes a broadcast or an iota (through bitcasts and unary elementwise
//!   ops);
//! * under a reduction emitter, fusing two reductions breaks coalescing.

use super::emitter::{self, EmitterKind};
use super::subject::Subject;
use super::{Device, Evidence, Family, OperandVerdict, Report};
use crate::analysis::{self, ArrayShape, Node};
use crate::model::Opcode;

/// An instruction of the analysis view: computation and node index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub computation: usize,
    pub node: usize,
}

/// The heuristic's answer and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heuristic {
    pub coalesced: bool,
    pub reason: String,
}

fn node<'m>(view: &'m analysis::Module<'_>, at: At) -> Option<&'m Node> {
    view.get(at.computation)?.nodes.get(at.node)
}

/// The most minor logical dimension of `shape` whose extent is not 1.
fn most_minor_non_unit(shape: &ArrayShape) -> Option<usize> {
    shape.layout().into_iter().find(|&d| shape.dims[d] != 1)
}

/// Whether `n` (not a fusion) moves the most minor non-unit dimension.
fn transposes_minor(n: &Node) -> bool {
    let (Some(out), Some(inp)) = (
        n.op.shape.as_array(),
        n.op.operands.first().and_then(|s| s.as_array()),
    ) else {
        return false;
    };
    match n.op.opcode.as_str() {
        "copy" => most_minor_non_unit(inp) != most_minor_non_unit(out),
        "transpose" => {
            let Some(perm) = n.op.attrs.dimensions.as_ref() else {
                return false;
            };
            let Some(out_minor) = most_minor_non_unit(out) else {
                return false;
            };
            let from = perm.get(out_minor).and_then(|&d| usize::try_from(d).ok());
            from != most_minor_non_unit(inp)
        }
        _ => false,
    }
}

/// A broadcast or iota, through bitcasts and single-operand elementwise ops.
fn is_broadcast(view: &analysis::Module<'_>, mut at: At) -> bool {
    for _ in 0..10_000 {
        let Some(n) = node(view, at) else {
            return false;
        };
        match n.op.opcode.as_str() {
            "broadcast" | "iota" => return true,
            _ if n.operands.len() != 1 => return false,
            "bitcast" => {}
            op if Opcode::from_name(op).is_elementwise() => {}
            _ => return false,
        }
        at.node = n.operands[0];
    }
    false
}

/// The first instruction of `at` (or, for a fusion, of its fused computation)
/// that transposes the minor dimension of something other than a broadcast.
pub fn bad_transpose(view: &analysis::Module<'_>, at: At) -> Option<String> {
    let n = node(view, at)?;
    if n.op.opcode == "fusion" && n.called.len() == 1 {
        let comp = n.called[0];
        let c = view.get(comp)?;
        return (0..c.nodes.len()).find_map(|i| {
            let x = &c.nodes[i];
            let operand = *x.operands.first()?;
            (transposes_minor(x)
                && !is_broadcast(
                    view,
                    At {
                        computation: comp,
                        node: operand,
                    },
                ))
            .then(|| x.name.clone())
        });
    }
    let operand = *n.operands.first()?;
    (transposes_minor(n)
        && !is_broadcast(
            view,
            At {
                computation: at.computation,
                node: operand,
            },
        ))
    .then(|| n.name.clone())
}

/// A reduce a reduction emitter handles, or a fusion rooted at one (XLA's
/// `IsInputFusibleReduction`).
fn input_fusible_reduction(view: &analysis::Module<'_>, at: At, warp: i64) -> bool {
    let Some(n) = node(view, at) else {
        return false;
    };
    if n.op.opcode == "fusion" && n.called.len() == 1 {
        let Some(c) = view.get(n.called[0]) else {
            return false;
        };
        return emitter::roots(&c.nodes, c.root).into_iter().any(|r| {
            emitter::reduction_hero(&c.nodes[emitter::hero(&c.nodes, r)], warp).is_some()
        });
    }
    emitter::reduction_hero(n, warp).is_some()
}

/// XLA's `IsReadCoalescedHeuristic(kind, producer, consumer)`.
pub fn read_coalesced(
    view: &analysis::Module<'_>,
    kind: &EmitterKind,
    producer: At,
    consumer: Option<At>,
    warp: i64,
) -> Heuristic {
    if !matches!(kind, EmitterKind::Transpose { .. }) {
        for at in std::iter::once(producer).chain(consumer) {
            if let Some(name) = bad_transpose(view, at) {
                return Heuristic {
                    coalesced: false,
                    reason: format!(
                        "`{name}` transposes the most minor dimension (XLA's heuristic)"
                    ),
                };
            }
        }
    }
    if matches!(kind, EmitterKind::Reduction { .. })
        && consumer.is_some_and(|c| input_fusible_reduction(view, c, warp))
        && input_fusible_reduction(view, producer, warp)
    {
        return Heuristic {
            coalesced: false,
            reason: "fusing two reductions breaks coalescing (XLA's heuristic)".into(),
        };
    }
    Heuristic {
        coalesced: true,
        reason: "no transpose of the most minor dimension (XLA's heuristic)".into(),
    }
}

/// The emitter kind of a fusion (or one op) for the heuristic.
pub fn kind_of(subject: &Subject<'_>, device: &Device) -> EmitterKind {
    emitter::choose(subject, device).0
}

/// The report when the launch model does not cover the subject's emitter: every
/// operand gets the heuristic's answer for the fused computation.
pub fn fallback(subject: &Subject<'_>, why: &str) -> Report {
    let graph = subject.graph();
    let bad = (0..graph.nodes.len()).find_map(|i| {
        bad_transpose(
            subject.view(),
            At {
                computation: subject.computation,
                node: i,
            },
        )
    });
    let (coalesced, reason) = match bad {
        Some(name) => (
            false,
            format!("`{name}` transposes the most minor dimension (XLA's heuristic)"),
        ),
        None => (
            true,
            "no transpose of the most minor dimension (XLA's heuristic)".to_string(),
        ),
    };
    Report {
        name: subject.name.clone(),
        family: Family::Heuristic(why.to_string()),
        operands: subject
            .operands
            .iter()
            .map(|op| OperandVerdict {
                index: op.index,
                name: op.name.clone(),
                parameter: op.parameter.as_ref().map(|(_, n)| n.clone()),
                shape: op.shape_text(),
                tensor: op.analysis_shape(),
                element_bits: op.element_bits(),
                coalesced,
                bandwidth_utilization: None,
                reason: reason.clone(),
                evidence: Evidence::None,
            })
            .collect(),
    }
}
