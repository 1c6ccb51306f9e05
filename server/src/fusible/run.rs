//! Priority fusion run to the end on a module's text: the fused module XLA's pass
//! would leave, and the fusions it makes in order.
//!
//! Each round reads the module as rewritten so far, asks the queue for the producer it
//! hands out first ([`priority::dequeue`], with the performance model as the cost
//! hook) and fuses it into its consumers ([`super::rewrite::Text::fuse`]); when no
//! producer is left, small constants are fused into the users that allow it, as XLA
//! does after its queue. The module is kept as a document that re-reads only the
//! lines a fusion changed ([`FusedDocument`]), and priorities are kept from round to
//! round except around each fusion ([`PriorityCache`]), as XLA's queue keeps them.
//! XLA does not recompute a priority that the fusion changed further away than its
//! neighbours (it keeps it stale), so a producer may be chosen in a different order
//! here.

use super::explain::{micros, model_cost, run_times};
use super::fused_document::FusedDocument;
use super::priority::{self, Candidate};
use super::priority_cache::PriorityCache;
use super::producer_consumer::is_generic_triton_fusion;
use super::target::Flags;
use super::{choose_fusion_kind, Hlo, Instr};
use crate::device::Device;

/// At most this many fusions.
pub const MAX_FUSIONS: usize = 10_000;

/// One fusion the run made, by the names the module had when it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    pub computation: String,
    pub producer: String,
    pub consumer: String,
    pub time_unfused_us: Option<f64>,
    pub time_fused_us: Option<f64>,
}

/// The fusions in order, the fused module, and why the run stopped early (if it did).
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub fusions: Vec<Fused>,
    pub module: String,
    pub stopped: Option<String>,
}

/// How a run is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Keep priorities from round to round ([`PriorityCache`]); off, every priority is
    /// computed again each round (the reference the cache is tested against).
    pub reuse_priorities: bool,
    /// XLA's `xla_gpu_experimental_enable_triton_heroless_priority_fusion`.
    pub triton_heroless_fusion: bool,
    /// XLA's `xla_gpu_unsupported_enable_triton_multi_output_fusion`.
    pub triton_multi_output_fusion: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            reuse_priorities: true,
            triton_heroless_fusion: false,
            triton_multi_output_fusion: false,
        }
    }
}

/// The next fusion of the module `h`: a queued producer and its consumers, else a small
/// constant and the users it may be fused into.
fn next(
    h: &Hlo,
    device: &Device,
    flags: &Flags,
    mut cache: Option<&mut PriorityCache>,
) -> Option<(Instr, Vec<Instr>)> {
    let cost = model_cost(h, device);
    let computations = priority::fusible_computations(h);
    for &c in &computations {
        let queue: Vec<Candidate> = priority::candidates(h, c)
            .into_iter()
            .map(|producer| {
                let compute = || priority::producer_priority(h, producer, flags, &cost);
                let priority = match cache.as_deref_mut() {
                    Some(cache) => cache.priority(h, producer, compute),
                    None => compute(),
                };
                Candidate { producer, priority }
            })
            .collect();
        if let Some(step) = priority::dequeue(h, priority::in_queue_order(queue), flags) {
            return Some(step);
        }
    }
    computations.into_iter().find_map(|c| {
        h.instructions(c).into_iter().find_map(|i| {
            if !priority::is_small_constant(h, i) {
                return None;
            }
            let users: Vec<Instr> = h
                .users(i)
                .into_iter()
                .filter(|&u| priority::can_fuse_constant(h, i, u, flags).is_allowed())
                .collect();
            (!users.is_empty()).then_some((i, users))
        })
    })
}

/// `ChooseKind` as the fused module writes it: a Triton fusion stays one.
fn kind(h: &Hlo, producer: Instr, consumer: Instr, flags: &Flags) -> &'static str {
    if is_generic_triton_fusion(h, producer) || is_generic_triton_fusion(h, consumer) {
        return "kCustom";
    }
    choose_fusion_kind(h, producer, consumer, flags).name()
}

/// One round's fusion, by name: what the rewrite is asked to do.
struct Planned {
    computation: String,
    producer: String,
    /// Each consumer with the kind of the fusion it becomes.
    consumers: Vec<(String, &'static str)>,
    time_unfused_us: Option<f64>,
    time_fused_us: Option<f64>,
}

/// The fusion the queue hands out next on the module of `document`.
fn plan(
    document: &FusedDocument,
    device: &Device,
    flags: &Flags,
    cache: Option<&mut PriorityCache>,
) -> Option<Planned> {
    let h = Hlo::new(document.module()?);
    let (producer, consumers) = next(&h, device, flags, cache)?;
    let times = run_times(&h, producer, &consumers, device);
    Some(Planned {
        computation: h.model.computation(producer.computation).name.clone(),
        producer: h.name(producer).to_string(),
        consumers: consumers
            .iter()
            .map(|&c| (h.name(c).to_string(), kind(&h, producer, c, flags)))
            .collect(),
        time_unfused_us: micros(times.time_unfused),
        time_fused_us: micros(times.time_fused),
    })
}

/// Priority fusion on `text` (the first module of it) to the end, on `device`.
pub fn run(text: &str, device: &Device) -> Run {
    run_with(text, device, &Options::default())
}

/// [`run`] made as `options` say.
pub fn run_with(text: &str, device: &Device, options: &Options) -> Run {
    let flags = Flags {
        target: device,
        triton_heroless_fusion: options.triton_heroless_fusion,
        triton_multi_output_fusion: options.triton_multi_output_fusion,
    };
    let mut document = FusedDocument::new(text);
    let mut cache = PriorityCache::default();
    let mut fusions = vec![];
    let mut stopped = None;
    loop {
        if fusions.len() >= MAX_FUSIONS {
            stopped = Some(format!("stopped after {MAX_FUSIONS} fusions"));
            break;
        }
        if crate::budget::exhausted() {
            stopped = Some("stopped: out of time".into());
            break;
        }
        let reuse = options.reuse_priorities.then_some(&mut cache);
        let Some(step) = plan(&document, device, &flags, reuse) else {
            break;
        };
        let mut failed = None;
        let mut made = vec![];
        for (consumer, kind) in &step.consumers {
            let text = document.text_mut();
            match text.fuse(&step.computation, &step.producer, consumer, kind) {
                Ok(fusion) => {
                    made.push(fusion);
                    fusions.push(Fused {
                        computation: step.computation.clone(),
                        producer: step.producer.clone(),
                        consumer: consumer.clone(),
                        time_unfused_us: step.time_unfused_us,
                        time_fused_us: step.time_fused_us,
                    });
                }
                Err(e) => failed = Some(e),
            }
        }
        if let Some(e) = failed {
            stopped = Some(format!("stopped at %{}: {e}", step.producer));
            break;
        }
        document.sync();
        if let Some(module) = document.module() {
            let h = Hlo::new(module);
            if let Some(c) = module.computation_by_name(&step.computation) {
                let names: Vec<&str> = made
                    .iter()
                    .map(String::as_str)
                    .chain([step.producer.as_str()])
                    .chain(step.consumers.iter().map(|(c, _)| c.as_str()))
                    .collect();
                cache.forget_around(&h, c, &names);
            }
        }
    }
    Run {
        fusions,
        module: document.text(),
        stopped,
    }
}

/// A module's kernels and estimated step time: what `fusion --simulate` shows before
/// and after the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepSummary {
    /// Instructions launched as kernels (a loop body's once).
    pub kernels: usize,
    /// Kernel launches per step that pay the launch overhead (a loop body's times
    /// its trip count; a collective's model counts its own).
    pub launches: u64,
    /// The step total of [`crate::cost::step::step`], launches included.
    pub total: crate::cost::Duration,
    /// Some loop's trip count is unknown: `total` is a lower bound.
    pub lower_bound: bool,
}

/// [`StepSummary`] of the first module of `text` on `device` (the step's default
/// options: collectives by the default SoL options, XLA's GPU model); `None`
/// without a module or an ENTRY computation.
pub fn summary(text: &str, device: &Device) -> Option<StepSummary> {
    let file = crate::model::parse_hlo(text);
    let module = file.modules.first()?;
    let options = crate::cost::step::StepOptions::default();
    let step = crate::cost::step::step(module, device, &options)?;
    Some(StepSummary {
        kernels: step.kernels.len(),
        launches: step.launches,
        total: step.total,
        lower_bound: step.lower_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elementwise_chain_becomes_one_fusion() {
        let text = "HloModule m\n\nENTRY e {\n  p0 = f32[1024] parameter(0)\n  p1 = f32[1024] parameter(1)\n  a = f32[1024] add(p0, p1)\n  n = f32[1024] negate(a)\n  ROOT x = f32[1024] exponential(n)\n}\n";
        let r = run(text, &Device::a6000());
        assert_eq!(r.stopped, None);
        assert_eq!(r.fusions.len(), 2, "{:?}", r.fusions);
        let file = crate::model::parse_hlo(&r.module);
        assert!(file.diagnostics.is_empty(), "{}", r.module);
        let entry = file.modules[0].entry_computation().unwrap();
        let kernels: Vec<&str> = entry
            .model()
            .instructions
            .iter()
            .filter(|i| i.opcode != crate::model::Opcode::Parameter)
            .map(|i| i.opcode.name())
            .collect();
        assert_eq!(kernels, ["fusion"], "{}", r.module);
    }
}
