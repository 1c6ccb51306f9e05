//! Priority fusion run to the end on a module's text: the fused module XLA's pass
//! would leave, and the fusions it makes in order.
//!
//! Each round reads the module as rewritten so far, asks the queue for the producer it
//! hands out first ([`priority::next_fusion`], with the performance model as the cost
//! hook) and fuses it into its consumers ([`Text::fuse`]); when no producer is left,
//! small constants are fused into the users that allow it, as XLA does after its queue.
//! Re-reading the module each round recomputes every priority: XLA updates only those
//! of the fused instruction's neighbours, so a producer whose priority XLA keeps stale
//! may be chosen in a different order here.

use super::explain::{micros, model_cost, run_times};
use super::priority;
use super::producer_consumer::is_generic_triton_fusion;
use super::rewrite::Text;
use super::{choose_fusion_kind, Hlo, Instr};
use crate::device::Device;
use crate::model;

/// At most this many fusions (each re-reads the module).
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

/// The next fusion of the module `h`: a queued producer and its consumers, else a small
/// constant and the users it may be fused into.
fn next(h: &Hlo, device: &Device) -> Option<(Instr, Vec<Instr>)> {
    let cost = model_cost(h, device);
    let computations = priority::fusible_computations(h);
    for &c in &computations {
        if let Some(step) = priority::next_fusion(h, c, device, &cost) {
            return Some(step);
        }
    }
    computations.into_iter().find_map(|c| {
        h.instructions(c).into_iter().find_map(|i| {
            let users: Vec<Instr> = h
                .users(i)
                .into_iter()
                .filter(|&u| priority::can_fuse_constant(h, i, u, device).is_allowed())
                .collect();
            (priority::is_small_constant(h, i) && !users.is_empty()).then_some((i, users))
        })
    })
}

/// `ChooseKind` as the fused module writes it: a Triton fusion stays one.
fn kind(h: &Hlo, producer: Instr, consumer: Instr, device: &Device) -> &'static str {
    if is_generic_triton_fusion(h, producer) || is_generic_triton_fusion(h, consumer) {
        return "kCustom";
    }
    choose_fusion_kind(h, producer, consumer, device).name()
}

/// Priority fusion on `text` (the first module of it) to the end, on `device`.
pub fn run(text: &str, device: &Device) -> Run {
    let mut current = text.to_string();
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
        let file = model::parse_hlo(&current);
        let Some(module) = file.modules.first() else {
            break;
        };
        let h = Hlo::new(module);
        let Some((producer, consumers)) = next(&h, device) else {
            break;
        };
        let mut t = Text::new(module, &current);
        let computation = h.model.computation(producer.computation).name.clone();
        let times = run_times(&h, producer, &consumers, device);
        let mut failed = None;
        for &consumer in &consumers {
            let k = kind(&h, producer, consumer, device);
            match t.fuse(&computation, h.name(producer), h.name(consumer), k) {
                Ok(_) => fusions.push(Fused {
                    computation: computation.clone(),
                    producer: h.name(producer).to_string(),
                    consumer: h.name(consumer).to_string(),
                    time_unfused_us: micros(times.time_unfused),
                    time_fused_us: micros(times.time_fused),
                }),
                Err(e) => failed = Some(e),
            }
        }
        if let Some(e) = failed {
            stopped = Some(format!("stopped at %{}: {e}", h.name(producer)));
            break;
        }
        current = t.print();
    }
    Run {
        fusions,
        module: current,
        stopped,
    }
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
        let file = model::parse_hlo(&r.module);
        assert!(file.diagnostics.is_empty(), "{}", r.module);
        let entry = file.modules[0].entry_computation().unwrap();
        let kernels: Vec<&str> = entry
            .model()
            .instructions
            .iter()
            .filter(|i| i.opcode != model::Opcode::Parameter)
            .map(|i| i.opcode.name())
            .collect();
        assert_eq!(kernels, ["fusion"], "{}", r.module);
    }
}
