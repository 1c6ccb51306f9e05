//! The fusion questions an engineer asks of a module, answered with XLA's rules and the
//! GPU performance model together: may this producer be fused into these consumers, and
//! what would it save ([`query`]); every rule fact of one instruction, keyed by XLA's
//! function names ([`facts`]); and the first round of priority fusion's producer
//! selection, with the real cost model as its cost hook ([`simulate`]). What
//! `hlo-lsp fusion` prints.

use super::priority::{self, Priority};
use super::target::Target;
use super::{FusionDecision, Hlo, Instr};
use crate::cost::{self, Duration, RunTimes};
use crate::device::Device;

/// `EstimateRunTimes(producer, consumers)` on the module of `h`: the priority-fusion
/// cost hook. The producer and its consumers live in one computation.
pub fn run_times(h: &Hlo, producer: Instr, consumers: &[Instr], device: &Device) -> RunTimes {
    let computation = h.model.computation(producer.computation);
    let consumers: Vec<_> = consumers.iter().map(|&c| h.instruction(c)).collect();
    cost::estimate_run_times(
        &h.view,
        h.model,
        computation,
        h.instruction(producer),
        &consumers,
        device,
    )
}

/// The cost hook of [`priority`] backed by the performance model: times in
/// microseconds.
pub fn model_cost<'h>(
    h: &'h Hlo<'h>,
    device: &'h Device,
) -> impl Fn(Instr, &[Instr]) -> (f64, f64) + 'h {
    move |producer, consumers| {
        let t = run_times(h, producer, consumers, device);
        (
            micros(t.time_unfused).unwrap_or(f64::INFINITY),
            micros(t.time_fused).unwrap_or(f64::INFINITY),
        )
    }
}

/// A duration in microseconds, `None` when infinite.
pub fn micros(d: Duration) -> Option<f64> {
    (!d.is_infinite()).then(|| d.as_micros_f64())
}

/// `EstimateRunTimesForMultiOutputFusion(producer, consumer)` on the module of `h`: the
/// producer kept as a second output of the consumer's kernel.
pub fn run_times_multi_output(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    device: &Device,
) -> RunTimes {
    let computation = h.model.computation(producer.computation);
    cost::estimate_run_times_multi_output(
        &h.view,
        h.model,
        computation,
        h.instruction(producer),
        h.instruction(consumer),
        device,
    )
}

/// Whether `consumer` reads `producer`: as an operand, or through a
/// `get-tuple-element` of the producer's tuple (a multi-output fusion's outputs), as
/// XLA's performance model reads a consumer of a multi-output producer.
pub fn reads(h: &Hlo, consumer: Instr, producer: Instr) -> bool {
    h.operands(consumer).into_iter().any(|o| {
        o == producer
            || (*h.opcode(o) == crate::model::Opcode::GetTupleElement
                && h.operand(o, 0) == Some(producer))
    })
}

/// Whether `producer` may be fused into `consumers`, and the times with and without.
#[derive(Clone, Debug, PartialEq)]
pub struct FusionQuery {
    pub producer: Instr,
    pub consumers: Vec<Instr>,
    /// The first refusal (`Allow` when every consumer accepts).
    pub decision: FusionDecision,
    /// The consumer that refuses, when the decision is about one.
    pub refused_by: Option<Instr>,
    pub times: RunTimes,
    /// Each consumer alone: its decision and the times of fusing the producer into it
    /// only (a producer fused into several consumers is duplicated into each).
    pub per_consumer: Vec<ConsumerQuery>,
    /// Whether this is a multi-output fusion ([`query_multi_output`]).
    pub multi_output: bool,
}

/// One consumer of a [`FusionQuery`].
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerQuery {
    pub consumer: Instr,
    pub decision: FusionDecision,
    pub times: RunTimes,
}

impl FusionQuery {
    /// Time saved by fusing (negative: fusing costs time), in microseconds; `None`
    /// when either estimate is infinite or the fusion cannot happen (a saving of a
    /// fusion the rules refuse would be a number for something that never runs).
    pub fn saved_micros(&self) -> Option<f64> {
        if !self.decision.is_allowed() {
            return None;
        }
        Some(micros(self.times.time_unfused)? - micros(self.times.time_fused)?)
    }
}

impl ConsumerQuery {
    /// As [`FusionQuery::saved_micros`], for this consumer alone.
    pub fn saved_micros(&self) -> Option<f64> {
        if !self.decision.is_allowed() {
            return None;
        }
        Some(micros(self.times.time_unfused)? - micros(self.times.time_fused)?)
    }
}

/// XLA's `ProducerCandidateIsFusible` (the multi-output fusion pass) without the cost
/// model's part: may `producer` join `consumer`'s kernel as an extra output. The
/// reachability check (another path from the producer to the consumer would make a
/// cycle) and the IR-size limit are not ported.
pub fn multi_output_decision(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    target: &dyn Target,
) -> FusionDecision {
    let producer_ok = super::is_producer_multi_output_fusible(h, producer, target);
    if !producer_ok.is_allowed() {
        return producer_ok;
    }
    if !super::is_fusible_as_multi_output_fusion_root(h, consumer, target) {
        return FusionDecision::ConsumerNotMultiOutputRoot;
    }
    let shapes = super::shapes_compatible_for_multi_output_fusion(h, consumer, producer, target);
    if !shapes.is_allowed() {
        return shapes;
    }
    super::fusion_fits_in_budget(h, producer, consumer, target, false)
}

/// Multi-output fusion of `producer` and `consumer` (the producer stays an output of
/// the fused kernel): [`multi_output_decision`] and `EstimateRunTimesForMultiOutputFusion`.
pub fn query_multi_output(
    h: &Hlo,
    producer: Instr,
    consumer: Instr,
    device: &Device,
) -> FusionQuery {
    let decision = multi_output_decision(h, producer, consumer, device);
    let times = run_times_multi_output(h, producer, consumer, device);
    let refused_by = (!decision.is_allowed()).then_some(consumer);
    FusionQuery {
        producer,
        consumers: vec![consumer],
        decision: decision.clone(),
        refused_by,
        times,
        per_consumer: vec![ConsumerQuery {
            consumer,
            decision,
            times,
        }],
        multi_output: true,
    }
}

/// Priority fusion's question: `consumers` given, each is asked with [`super::can_fuse`];
/// `None`, the producer's users with [`super::can_fuse_with_all_non_bitcast_users`]
/// (the times are then those of the non-bitcast users, as the cost model weighs them).
pub fn query(
    h: &Hlo,
    producer: Instr,
    consumers: Option<&[Instr]>,
    device: &Device,
) -> FusionQuery {
    let (consumers, decision, refused_by) = match consumers {
        Some(named) => {
            let refusal = named.iter().find_map(|&c| {
                let d = super::can_fuse(h, producer, c, device);
                (!d.is_allowed()).then_some((d, c))
            });
            match refusal {
                Some((d, c)) => (named.to_vec(), d, Some(c)),
                None => (named.to_vec(), FusionDecision::Allow, None),
            }
        }
        None => {
            let decision = super::can_fuse_with_all_non_bitcast_users(h, producer, device);
            let users = priority::non_bitcast_users(h, producer);
            let refused_by = if decision.is_allowed() {
                None
            } else {
                users
                    .iter()
                    .copied()
                    .find(|&u| !super::can_fuse(h, producer, u, device).is_allowed())
            };
            (users, decision, refused_by)
        }
    };
    let times = run_times(h, producer, &consumers, device);
    let per_consumer = consumers
        .iter()
        .map(|&consumer| ConsumerQuery {
            consumer,
            decision: super::can_fuse(h, producer, consumer, device),
            times: run_times(h, producer, &[consumer], device),
        })
        .collect();
    FusionQuery {
        producer,
        consumers,
        decision,
        refused_by,
        times,
        per_consumer,
        multi_output: false,
    }
}

/// One rule fact of an instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    Bool(bool),
    Int(i64),
    /// A fusion kind (`kLoop`, `kInput`).
    Kind(&'static str),
    Decision(FusionDecision),
}

/// Every rule fact of `i`, keyed by XLA's function name in snake case, in the order
/// `gpu_fusible.cc` defines them; with `with`, the facts of the pair (`i` the producer
/// or first sibling, `with` the consumer or second).
pub fn facts(
    h: &Hlo,
    i: Instr,
    with: Option<Instr>,
    target: &dyn Target,
) -> Vec<(&'static str, Fact)> {
    use super::*;
    let mut out = vec![
        (
            "is_physically_transposing",
            Fact::Bool(is_physically_transposing(h, i)),
        ),
        (
            "transposes_minor_dimension",
            Fact::Bool(transposes_minor_dimension(h, i)),
        ),
        (
            "is_reduce_input_fusion",
            Fact::Bool(is_reduce_input_fusion(h, i, target)),
        ),
        (
            "is_input_fusible_reduction",
            Fact::Bool(is_input_fusible_reduction(h, i, target)),
        ),
        (
            "is_fusible_as_multi_output_fusion_root",
            Fact::Bool(is_fusible_as_multi_output_fusion_root(h, i, target)),
        ),
        (
            "is_producer_multi_output_fusible",
            Fact::Decision(is_producer_multi_output_fusible(h, i, target)),
        ),
        (
            "shared_memory_usage",
            Fact::Int(shared_memory_usage(h, i, target)),
        ),
        ("unroll_factor", Fact::Int(unroll_factor(h, i, target))),
        (
            "may_cause_performance_drop_if_unrolled",
            Fact::Bool(may_cause_performance_drop_if_unrolled(h, i)),
        ),
    ];
    if let Some(j) = with {
        out.extend([
            (
                "choose_fusion_kind",
                Fact::Kind(choose_fusion_kind(h, i, j, target).name()),
            ),
            (
                "shapes_compatible_for_multi_output_fusion",
                Fact::Decision(shapes_compatible_for_multi_output_fusion(h, i, j, target)),
            ),
            (
                "fusion_heroes_are_compatible",
                Fact::Decision(fusion_heroes_are_compatible(h, i, j, target)),
            ),
            (
                "is_consumer_the_only_non_root_user",
                Fact::Bool(is_consumer_the_only_non_root_user(h, i, j)),
            ),
        ]);
    }
    out
}

/// What a step of priority fusion did (XLA's `FusionStep` of the fusion process dump).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The producer was fused into the consumer.
    Fusion,
    /// Some user refuses the producer: it never enters the queue.
    ProducerIneligible,
    /// The producer's priority was computed.
    UpdatePriority,
}

impl StepKind {
    /// The name in XLA's fusion process dump.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Fusion => "fusion",
            StepKind::ProducerIneligible => "producer_ineligible",
            StepKind::UpdatePriority => "update_priority",
        }
    }
}

/// One step of [`simulate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    pub producer: Instr,
    /// The consumer of a fusion step; the consumers weighed for a priority.
    pub consumers: Vec<Instr>,
    /// Why a producer is ineligible (XLA's words), or how a bitcast is ranked.
    pub reason: Option<String>,
    pub time_unfused: Option<Duration>,
    pub time_fused: Option<Duration>,
}

/// Priority fusion's producer selection on each fusible computation of `h`, with the
/// performance model as its cost hook: every candidate's priority in post order
/// (`update_priority`, or `producer_ineligible` with XLA's reason), then the fusion of
/// the first producer the queue hands out, one `fusion` step per consumer.
///
/// It stops there: the module is not rewritten, so later priorities (which depend on
/// the fusions made) are not computed.
pub fn simulate(h: &Hlo, device: &Device) -> Vec<Step> {
    let cost = model_cost(h, device);
    let mut steps = vec![];
    for c in priority::fusible_computations(h) {
        if crate::budget::exhausted() {
            break;
        }
        let mut times = std::collections::HashMap::new();
        for candidate in priority::candidates(h, c) {
            let producer = candidate;
            let step = match priority::producer_priority(h, producer, device, &cost) {
                Priority::Bitcast => Step {
                    kind: StepKind::UpdatePriority,
                    producer,
                    consumers: h.users(producer),
                    reason: Some("a bitcast: fused first".into()),
                    time_unfused: None,
                    time_fused: None,
                },
                Priority::Constant => continue,
                Priority::Ineligible(decision) => Step {
                    kind: StepKind::ProducerIneligible,
                    producer,
                    consumers: vec![],
                    reason: Some(decision.message()),
                    time_unfused: None,
                    time_fused: None,
                },
                Priority::Saves { consumers, .. } => {
                    let t = run_times(h, producer, &consumers, device);
                    times.insert(producer, t);
                    Step {
                        kind: StepKind::UpdatePriority,
                        producer,
                        consumers,
                        reason: None,
                        time_unfused: Some(t.time_unfused),
                        time_fused: Some(t.time_fused),
                    }
                }
            };
            steps.push(step);
        }
        if let Some((producer, consumers)) = priority::next_fusion(h, c, device, &cost) {
            let t = times.get(&producer).copied();
            for consumer in consumers {
                steps.push(Step {
                    kind: StepKind::Fusion,
                    producer,
                    consumers: vec![consumer],
                    reason: None,
                    time_unfused: t.map(|t| t.time_unfused),
                    time_fused: t.map(|t| t.time_fused),
                });
            }
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fusible::test_support::module;

    const TEXT: &str = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[1024,1024] parameter(0)\n  x = f32[1024,1024] exponential(p)\n  z = f32[] constant(0)\n  r0 = f32[1024] reduce(x, z), dimensions={1}, to_apply=add\n  r1 = f32[] reduce(r0, z), dimensions={0}, to_apply=add\n  ROOT n = f32[] negate(r1)\n}\n";

    #[test]
    fn a_reduce_is_not_fused_into_a_reduce_and_an_exponential_is() {
        let m = module(TEXT);
        let h = Hlo::new(&m);
        let device = Device::a6000();
        let f = |n: &str| h.find(n).unwrap();
        let q = query(&h, f("r0"), None, &device);
        assert_eq!(q.decision, FusionDecision::BothContainReduce);
        assert_eq!(q.refused_by, Some(f("r1")));
        let q = query(&h, f("x"), Some(&[f("r0")]), &device);
        assert!(q.decision.is_allowed(), "{}", q.decision);
        assert!(q.saved_micros().unwrap() > 0.0);
    }

    #[test]
    fn simulation_weighs_every_candidate_then_fuses_the_best() {
        let m = module(TEXT);
        let h = Hlo::new(&m);
        let steps = simulate(&h, &Device::a6000());
        let kinds: Vec<(&str, &str)> = steps
            .iter()
            .map(|s| (s.kind.name(), h.name(s.producer)))
            .collect();
        assert!(kinds.contains(&("producer_ineligible", "r0")), "{kinds:?}");
        assert!(kinds.contains(&("update_priority", "x")), "{kinds:?}");
        let last = steps.last().unwrap();
        assert_eq!(last.kind, StepKind::Fusion);
        let facts = facts(
            &h,
            h.find("x").unwrap(),
            Some(h.find("r0").unwrap()),
            &Device::a6000(),
        );
        assert!(facts
            .iter()
            .any(|(k, v)| *k == "choose_fusion_kind" && *v == Fact::Kind("kInput")));
    }
}
