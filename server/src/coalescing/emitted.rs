//! The emitter family: what the first warp of XLA's emitter reads of each
//! operand, judged by XLA's warp rule ([`super::warp`]).
//!
//! For every root, the launch model ([`super::launch`]) maps the warp into an
//! instruction's index space; the fusion's output-to-input maps go from there to
//! the fused parameters; the operand's layout linearizes the index. An operand
//! is coalesced when every such read is (XLA's `ComputeCoalescingForAllOperands`);
//! a scalar or an operand the fusion does not read is coalesced; an operand some
//! path reads through an unknown map is not.

use super::launch::{self, SpaceRead};
use super::subject::{Operand, Subject};
use super::warp::{self, Judge, WarpRead};
use super::{heuristic, Device, Evidence, Family, OperandVerdict, Options, Report};
use crate::algebra::{Expr, IndexingMap, Variable};
use crate::analysis::fusion::{self, Reached};
use crate::analysis::ArrayShape;

/// The report of the emitter family on `subject` (XLA's heuristic when its
/// emitter is outside the launch model).
pub fn analyze(
    subject: &Subject<'_>,
    options: &Options,
    outputs: Option<&[Vec<Reached>]>,
) -> Report {
    let device = &options.device;
    let launch = launch::launch(subject, device);
    if launch.reads.is_empty() && matches!(launch.kind, super::emitter::EmitterKind::Other(_)) {
        return heuristic::fallback(subject, &launch.description);
    }
    let reached = ReachedCache::new(subject, outputs, &launch.reads);
    let operands = subject
        .operands
        .iter()
        .filter(|op| options.operand.is_none_or(|k| k == op.index))
        .map(|op| verdict(device, op, &launch.reads, &reached))
        .collect();
    Report {
        name: subject.name.clone(),
        family: Family::Emitter(launch.description),
        operands,
    }
}

/// Maps from each launch read's index space to every fused instruction,
/// computed once per space (from the server's cache when it is an output).
struct ReachedCache {
    by_node: Vec<(usize, Vec<Reached>)>,
}

impl ReachedCache {
    fn new(
        subject: &Subject<'_>,
        outputs: Option<&[Vec<Reached>]>,
        reads: &[SpaceRead],
    ) -> ReachedCache {
        let view = subject.view();
        let comp = subject.computation;
        let mut by_node: Vec<(usize, Vec<Reached>)> = vec![];
        for r in reads {
            if crate::budget::exhausted() {
                // The request ran out of time or was cancelled: what is left is
                // unknown (a composition per read would still cost each its walk).
                break;
            }
            if by_node.iter().any(|(n, _)| *n == r.node) {
                continue;
            }
            let count = fusion::output_count(view, comp);
            let cached: Vec<&Vec<Reached>> = match outputs {
                Some(outs) => (0..count)
                    .filter(|&k| {
                        fusion::output_start(view, comp, k).is_some_and(|(s, _)| s == r.node)
                    })
                    .filter_map(|k| outs.get(k))
                    .collect(),
                None => vec![],
            };
            let reached = if cached.is_empty() {
                fusion::grouped_from_instruction(view, comp, r.node)
            } else {
                merge(&cached)
            };
            by_node.push((r.node, reached));
        }
        ReachedCache { by_node }
    }

    fn get(&self, node: usize) -> Option<&[Reached]> {
        self.by_node
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, r)| r.as_slice())
    }
}

/// The union of several outputs' reached sets (a variadic root's outputs).
fn merge(sets: &[&Vec<Reached>]) -> Vec<Reached> {
    let mut out = sets[0].clone();
    for set in &sets[1..] {
        for (i, r) in set.iter().enumerate() {
            if let Some(o) = out.get_mut(i) {
                for m in &r.maps {
                    if !o.maps.contains(m) {
                        o.maps.push(m.clone());
                    }
                }
                if o.unknown.is_none() {
                    o.unknown.clone_from(&r.unknown);
                }
            }
        }
    }
    out
}

/// `(logical index of shape) -> (linear physical offset)`.
pub fn linear_map(shape: &ArrayShape) -> IndexingMap {
    let dims: Vec<Variable> = shape
        .dims
        .iter()
        .map(|&n| Variable::new(0, n - 1))
        .collect();
    let index: Vec<Expr> = (0..shape.rank()).map(Expr::dim).collect();
    IndexingMap::new(
        dims,
        vec![],
        vec![],
        vec![launch::linearize(shape, &index)],
        vec![],
    )
}

fn base(op: &Operand) -> OperandVerdict {
    OperandVerdict {
        index: op.index,
        name: op.name.clone(),
        parameter: op.parameter.as_ref().map(|(_, n)| n.clone()),
        shape: op.shape_text(),
        tensor: op.analysis_shape(),
        element_bits: op.element_bits(),
        coalesced: true,
        bandwidth_utilization: None,
        reason: String::new(),
        evidence: Evidence::None,
    }
}

fn verdict(
    device: &Device,
    op: &Operand,
    reads: &[SpaceRead],
    reached: &ReachedCache,
) -> OperandVerdict {
    let mut v = base(op);
    let Some(shape) = op.analysis_shape().filter(|s| s.rank() > 0) else {
        v.reason = "a scalar: the whole warp reads one value".into();
        return v;
    };
    let Some((param, _)) = op.parameter else {
        v.reason = "not read by the fusion".into();
        return v;
    };
    let linear = linear_map(&shape);
    let judge = Judge {
        element_bits: op.element_bits().unwrap_or(32),
        transaction_bytes: device.dram_to_l2_transaction_bytes,
    };
    let mut warps: Vec<WarpRead> = vec![];
    let mut unknown: Option<String> = None;
    for r in reads {
        let Some(p) = reached.get(r.node).and_then(|all| all.get(param)) else {
            continue;
        };
        if let Some(reason) = &p.unknown {
            unknown.get_or_insert_with(|| reason.to_string());
        }
        for (_, m) in &p.maps {
            if m.map.is_known_empty() {
                continue;
            }
            if m.map.is_undefined() {
                unknown.get_or_insert_with(|| "undefined indexing map".into());
                continue;
            }
            let mut composed = r.map.compose(&m.map).compose(&linear);
            composed.simplify();
            let threads = r.map.dims().first().map_or(1, |d| d.bounds.hi + 1);
            let w = warp::judge(&composed, threads, &judge);
            if !warps.iter().any(|x| x.map == w.map) {
                warps.push(w);
            }
        }
    }
    if let Some(reason) = unknown {
        v.coalesced = false;
        v.reason = format!("its read map is unknown ({reason})");
        v.evidence = Evidence::Warp(warps);
        return v;
    }
    if warps.is_empty() {
        v.reason = "not read by the fusion".into();
        return v;
    }
    v.coalesced = warps.iter().all(|w| w.coalesced);
    v.bandwidth_utilization = warps.iter().map(|w| w.utilization).reduce(f64::min);
    let shown = warps
        .iter()
        .find(|w| !w.coalesced)
        .or_else(|| {
            warps
                .iter()
                .min_by(|a, b| a.utilization.total_cmp(&b.utilization))
        })
        .expect("not empty");
    v.reason = shown.reason();
    if warps.len() > 1 {
        v.reason.push_str(&format!(" ({} reads)", warps.len()));
    }
    v.evidence = Evidence::Warp(warps);
    v
}
