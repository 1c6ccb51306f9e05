//! Priority fusion's producer selection (XLA's `PriorityFusionQueue`): every fusible
//! producer of a computation is a candidate; a producer is fused into all its
//! (non-bitcast) users at once when [`can_fuse_with_all_non_bitcast_users`] allows it,
//! and the candidates are tried in order of the time the cost model says fusing saves
//! (`time_unfused - time_fused`), largest first. The cost model is passed in as a
//! function, since it is written elsewhere.

use super::producer_consumer::can_fuse_with_all_non_bitcast_users;
use super::target::Target;
use super::{FusionDecision, Hlo, Instr};
use crate::model::{ComputationId, Opcode};

/// The cost hook: `(producer, consumers) -> (time_unfused, time_fused)`.
pub type Cost = dyn Fn(Instr, &[Instr]) -> (f64, f64);

/// One candidate producer with its decision and, when allowed, its priority.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub producer: Instr,
    pub decision: FusionDecision,
    /// `time_unfused - time_fused` (seconds, or any unit the cost hook uses).
    pub priority: Option<f64>,
}

/// The producers of computation `c` in the order priority fusion considers them:
/// allowed ones by descending priority (ties in post order), then the refused ones in
/// post order with their reasons. `cost(producer, consumers)` returns
/// `(time_unfused, time_fused)`.
pub fn producer_queue(
    h: &Hlo,
    c: ComputationId,
    target: &dyn Target,
    cost: &Cost,
) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = h
        .instructions(c)
        .into_iter()
        .filter(|&i| {
            !matches!(
                h.opcode(i),
                Opcode::Parameter | Opcode::Tuple | Opcode::GetTupleElement
            )
        })
        .map(|producer| {
            let decision = can_fuse_with_all_non_bitcast_users(h, producer, target);
            let priority = decision.is_allowed().then(|| {
                let consumers: Vec<Instr> = h
                    .users(producer)
                    .into_iter()
                    .filter(|&u| *h.opcode(u) != Opcode::Bitcast)
                    .collect();
                let (unfused, fused) = cost(producer, &consumers);
                unfused - fused
            });
            Candidate {
                producer,
                decision,
                priority,
            }
        })
        .collect();
    // Stable: equal priorities keep text (post) order.
    candidates.sort_by(|a, b| match (a.priority, b.priority) {
        (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    candidates
}
