//! Priority fusion's producer selection (XLA's `PriorityFusionQueue`, in
//! `xla/backends/gpu/transforms/priority_fusion.cc`). Every fusible instruction of a
//! computation that has users is a candidate producer. A producer is fused into all of
//! its users at once, so it is eligible only when [`can_fuse`] allows every user that is
//! not a no-op bitcast; its priority is the time the cost model says fusing saves,
//! `time_unfused - time_fused`. Bitcasts go first (they are free), constants last (the
//! pass fuses small ones after the queue), and producers whose priority is negative
//! never enter the queue. The queue hands out the highest priority first, the later
//! instruction on ties.
//!
//! The cost model is written elsewhere, so it is passed in: `cost(producer, consumers)`
//! returns `(time_unfused, time_fused)`.

use super::producer_consumer::{
    backend_can_fuse, can_fuse, is_fusible_bitcast, is_fusible_for_priority_fusion,
};
use super::target::Target;
use super::{FusionDecision, Hlo, Instr};
use crate::model::{ComputationId, Opcode};

/// The cost hook: `(producer, consumers) -> (time_unfused, time_fused)`.
pub type Cost<'a> = dyn Fn(Instr, &[Instr]) -> (f64, f64) + 'a;

/// A producer's priority (XLA's `CalculateProducerPriority`).
#[derive(Clone, Debug, PartialEq)]
pub enum Priority {
    /// A bitcast that keeps the element width: fused first.
    Bitcast,
    /// The time fusing into `consumers` saves.
    Saves { time: f64, consumers: Vec<Instr> },
    /// A constant: fused after the queue, when small (`IsSmallConstant`).
    Constant,
    /// Some user refuses the fusion, or every user is a bitcast (`producer_ineligible`
    /// in XLA's fusion process dump, with this reason).
    Ineligible(FusionDecision),
}

impl Priority {
    /// Whether the producer enters the queue (XLA drops negative priorities).
    pub fn is_queued(&self) -> bool {
        match self {
            Priority::Bitcast => true,
            Priority::Saves { time, .. } => *time >= 0.0,
            Priority::Constant | Priority::Ineligible(_) => false,
        }
    }
}

/// The users of `producer` the cost model weighs: all but no-op bitcasts.
pub fn non_bitcast_users(h: &Hlo, producer: Instr) -> Vec<Instr> {
    h.users(producer)
        .into_iter()
        .filter(|&u| !is_fusible_bitcast(h, u))
        .collect()
}

/// XLA's `CalculateProducerPriority`: a producer that cannot go into all its users
/// may still form a Triton multi-output fusion with one of them (its preferred
/// consumer), which is then its only consumer.
pub fn producer_priority(
    h: &Hlo,
    producer: Instr,
    target: &dyn Target,
    cost: &Cost<'_>,
) -> Priority {
    if is_fusible_bitcast(h, producer) {
        return Priority::Bitcast;
    }
    if *h.opcode(producer) == Opcode::Constant {
        return Priority::Constant;
    }
    let consumers = non_bitcast_users(h, producer);
    if consumers.is_empty() {
        return Priority::Ineligible(FusionDecision::OnlyBitcastUsers);
    }
    let refused = consumers
        .iter()
        .map(|&consumer| can_fuse(h, producer, consumer, target))
        .find(|d| !d.is_allowed());
    let consumers = match refused {
        None => consumers,
        // Not into all users: maybe a Triton multi-output fusion with one of them.
        Some(decision) => match super::triton::multi_output_consumer(h, producer, target) {
            Ok(consumer) => vec![consumer],
            Err(_) => return Priority::Ineligible(decision),
        },
    };
    let (unfused, fused) = cost(producer, &consumers);
    Priority::Saves {
        time: unfused - fused,
        consumers,
    }
}

/// The candidate producers of computation `c`, in post (text) order: fusible, with
/// users, not parameters, tuples or get-tuple-elements.
pub fn candidates(h: &Hlo, c: ComputationId) -> Vec<Instr> {
    h.instructions(c)
        .into_iter()
        .filter(|&i| {
            !matches!(
                h.opcode(i),
                Opcode::Parameter | Opcode::Tuple | Opcode::GetTupleElement
            ) && !h.users(i).is_empty()
                && is_fusible_for_priority_fusion(h, i)
        })
        .collect()
}

/// One producer with its priority.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub producer: Instr,
    pub priority: Priority,
}

/// Every candidate of `c` with its priority, in the order the queue hands them out:
/// queued ones first (bitcasts, then by descending saved time, the later instruction on
/// ties), then the ones never queued, in post order.
pub fn producer_queue(
    h: &Hlo,
    c: ComputationId,
    target: &dyn Target,
    cost: &Cost<'_>,
) -> Vec<Candidate> {
    in_queue_order(
        candidates(h, c)
            .into_iter()
            .map(|producer| Candidate {
                producer,
                priority: producer_priority(h, producer, target, cost),
            })
            .collect(),
    )
}

/// `all` (candidates with their priorities, however they were computed) in the order
/// the queue hands them out (see [`producer_queue`]).
pub fn in_queue_order(mut all: Vec<Candidate>) -> Vec<Candidate> {
    let key = |c: &Candidate| match &c.priority {
        Priority::Bitcast => f64::INFINITY,
        Priority::Saves { time, .. } if *time >= 0.0 => *time,
        _ => f64::NEG_INFINITY,
    };
    let (mut queued, rest): (Vec<Candidate>, Vec<Candidate>) =
        all.drain(..).partition(|c| c.priority.is_queued());
    queued.sort_by(|a, b| {
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.producer.cmp(&a.producer))
    });
    queued.extend(rest);
    queued
}

/// XLA's `DequeueNextProducer` on a fresh queue: the first producer the pass fuses and
/// the consumers it fuses it into (a bitcast only into the users that allow it).
pub fn next_fusion(
    h: &Hlo,
    c: ComputationId,
    target: &dyn Target,
    cost: &Cost<'_>,
) -> Option<(Instr, Vec<Instr>)> {
    dequeue(h, producer_queue(h, c, target, cost), target)
}

/// XLA's `DequeueNextProducer` on `queue` (in queue order): the first queued producer
/// with a consumer left, and those consumers.
pub fn dequeue(h: &Hlo, queue: Vec<Candidate>, target: &dyn Target) -> Option<(Instr, Vec<Instr>)> {
    queue
        .into_iter()
        .take_while(|candidate| candidate.priority.is_queued())
        .find_map(|candidate| {
            let producer = candidate.producer;
            let mut consumers = h.users(producer);
            // A preferred consumer (Triton multi-output fusion) is the only one.
            if let Priority::Saves {
                consumers: chosen, ..
            } = &candidate.priority
            {
                if chosen.len() == 1 && !consumers.iter().all(|u| chosen.contains(u)) {
                    consumers = chosen.clone();
                }
            }
            if is_fusible_bitcast(h, producer) {
                consumers.retain(|&u| can_fuse(h, producer, u, target).is_allowed());
            }
            (!consumers.is_empty()).then_some((producer, consumers))
        })
}

/// XLA's `IsSmallConstant`: an array constant of at most one element.
pub fn is_small_constant(h: &Hlo, i: Instr) -> bool {
    *h.opcode(i) == Opcode::Constant
        && h.shape(i)
            .as_array()
            .is_some_and(|a| a.element_count().is_some_and(|n| n <= 1))
}

/// XLA's `CanFuseConstant`: a small constant is fused into a fusible user the GPU rules
/// allow.
pub fn can_fuse_constant(
    h: &Hlo,
    constant: Instr,
    user: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let decision = backend_can_fuse(h, constant, user, target);
    if !decision.is_allowed() {
        return decision;
    }
    if !is_fusible_for_priority_fusion(h, user) {
        return FusionDecision::ConsumerNotFusible;
    }
    FusionDecision::Allow
}

/// XLA's `GetFusibleComputations`: computations that are not fused computations and are
/// called, if at all, only for control flow (`while`, `conditional`, or a `call` the
/// frontend annotated with a stream, `_xla_stream_annotation`), never as a reducer or
/// comparator.
pub fn fusible_computations(h: &Hlo) -> Vec<ComputationId> {
    h.model
        .computations()
        .filter(|c| {
            h.model.callers_of(c.id).iter().all(|site| {
                h.model
                    .caller(site)
                    .is_some_and(|(caller, instr)| match instr.opcode {
                        Opcode::While | Opcode::Conditional => true,
                        Opcode::Call => instr
                            .attribute("frontend_attributes")
                            .is_some_and(|a| caller.src(a.value_range).contains(STREAM_ANNOTATION)),
                        _ => false,
                    })
            })
        })
        .map(|c| c.id)
        .collect()
}

/// `kXlaStreamAnnotationAttr`.
pub const STREAM_ANNOTATION: &str = "_xla_stream_annotation";

/// Whether the first round of priority fusion changes the module (the pass' return
/// value when it fuses at all): some computation has a producer to fuse, or a small
/// constant with a user it may be fused into.
pub fn changes_module(h: &Hlo, target: &dyn Target, cost: &Cost<'_>) -> bool {
    fusible_computations(h).into_iter().any(|c| {
        next_fusion(h, c, target, cost).is_some()
            || h.instructions(c).into_iter().any(|i| {
                is_small_constant(h, i)
                    && h.users(i)
                        .into_iter()
                        .any(|u| can_fuse_constant(h, i, u, target).is_allowed())
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::fusible::test_support::module;

    #[test]
    fn queue_order_and_eligibility() {
        let m = module(
            "HloModule m\nENTRY e {\n  p = f32[64,128] parameter(0)\n  b = f32[8192] bitcast(p)\n  x = f32[8192] exponential(b)\n  y = f32[8192] negate(x)\n  c = f32[] constant(2)\n  k = f32[8192] broadcast(c), dimensions={}\n  ROOT z = f32[8192] multiply(y, k)\n}\n",
        );
        let h = Hlo::new(&m);
        let device = Device::a6000();
        let find = |n: &str| h.find(n).unwrap();
        // `x` saves more than `y`; `k` saves nothing and is not queued.
        let cost = |p: Instr, _: &[Instr]| {
            if p == find("x") {
                (3.0, 1.0)
            } else if p == find("k") {
                (1.0, 2.0)
            } else {
                (2.0, 1.0)
            }
        };
        let c = find("z").computation;
        let queue = producer_queue(&h, c, &device, &cost);
        let order: Vec<&str> = queue.iter().map(|q| h.name(q.producer)).collect();
        assert_eq!(order, ["b", "x", "y", "c", "k"]);
        assert_eq!(queue[0].priority, Priority::Bitcast);
        assert_eq!(queue[3].priority, Priority::Constant);
        assert!(!queue[4].priority.is_queued());
        assert_eq!(
            next_fusion(&h, c, &device, &cost),
            Some((find("b"), vec![find("x")]))
        );
        assert!(changes_module(&h, &device, &cost));
        assert!(is_small_constant(&h, find("c")));
        assert!(can_fuse_constant(&h, find("c"), find("k"), &device).is_allowed());
    }
}
