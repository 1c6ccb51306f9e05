//! What a user reads of a joined profile: rows ranked by measured time with their
//! share of the step, the cumulative share, and beside them the cost model's estimate
//! and the ratio measured/estimated; the line a code lens shows above a kernel.
//!
//! The cumulative share counts each event once: a row adds its top-level time (a
//! `while` its whole time, its body's instructions nothing more), so it reaches 100%
//! at the last row whatever the nesting. Rows are ranked by measured time, and an
//! enclosing event lasts at least as long as the events inside it, so a `while` comes
//! before its body.

use rustc_hash::FxHashMap;

use super::{Measured, ModuleProfile};
use crate::cost::{self, Duration};
use crate::device::Device;
use crate::model::{ComputationId, InstrId, Module};

/// The cost model's estimate of each kernel of a module.
#[derive(Clone, Debug, Default)]
pub struct Estimates {
    by_instruction: FxHashMap<(ComputationId, InstrId), Duration>,
}

impl Estimates {
    /// XLA's GPU models on `device` for every kernel of one step of `module`
    /// ([`cost::step`]): each run's time times its runs per step (a while body's
    /// kernel runs once per iteration, and a profile sums every run), as the
    /// measured time per execution counts it. Control flow has none: its time is its
    /// bodies' kernels'.
    pub fn of(module: &Module, device: &Device) -> Estimates {
        let options = cost::step::StepOptions::default();
        let by_instruction = cost::report::ranked_kernels(module, device, &options)
            .into_iter()
            .filter_map(|k| {
                let runs = i64::try_from(k.count.n).unwrap_or(i64::MAX);
                Some(((k.computation, k.instruction), k.time()?.mul_i64(runs)))
            })
            .collect();
        Estimates { by_instruction }
    }

    /// The estimate of an instruction, when the model has a finite one.
    pub fn get(&self, computation: ComputationId, instruction: InstrId) -> Option<Duration> {
        self.by_instruction
            .get(&(computation, instruction))
            .copied()
            .filter(|d| !d.is_infinite())
    }
}

/// One row of the ranking.
#[derive(Clone, Debug)]
pub struct Row<'a> {
    pub measured: &'a Measured,
    /// Share of the step, in percent.
    pub percent: f64,
    /// Share of the step of this row and the ones above it, each event counted once.
    pub cumulative_percent: f64,
    pub estimate_us: Option<f64>,
    /// Measured over estimated.
    pub ratio: Option<f64>,
}

/// The rows of `profile`, the most time first; only computation `computation`'s
/// when given; with `estimates`, the estimate and the ratio.
pub fn rows<'a>(
    profile: &'a ModuleProfile,
    computation: Option<&str>,
    estimates: Option<&Estimates>,
) -> Vec<Row<'a>> {
    let mut covered = 0.0;
    profile
        .instructions
        .iter()
        .filter(|m| computation.is_none_or(|c| m.computation_name == c.trim_start_matches('%')))
        .map(|m| {
            covered += m.toplevel_us;
            let estimate_us = estimates
                .and_then(|e| e.get(m.computation, m.instruction))
                .map(Duration::as_micros_f64);
            Row {
                measured: m,
                percent: profile.percent(m),
                cumulative_percent: share(covered, profile.step_us),
                estimate_us,
                ratio: estimate_us.filter(|e| *e > 0.0).map(|e| m.mean_us / e),
            }
        })
        .collect()
}

fn share(us: f64, step_us: f64) -> f64 {
    if step_us > 0.0 {
        (100.0 * us / step_us).min(100.0)
    } else {
        0.0
    }
}

/// A time given in microseconds: `0.25 ns`, `402 ns`, `214.00 µs`, `29.30 ms`,
/// `1.20 s` (a profile resolves nanoseconds; `cost`'s `Duration` would round to
/// quarter nanoseconds).
pub fn time(us: f64) -> String {
    if us < 0.01 {
        format!("{:.2} ns", us * 1e3)
    } else if us < 1.0 {
        format!("{:.0} ns", us * 1e3)
    } else if us < 1e3 {
        format!("{us:.2} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A share: `12%`, `0.4%`, `<0.1%`.
pub fn percent(p: f64) -> String {
    if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 0.1 {
        format!("{p:.1}%")
    } else if p > 0.0 {
        "<0.1%".to_string()
    } else {
        "0%".to_string()
    }
}

/// `measured 214.00 µs · 12% of step (est. 180.00 µs)`: what a code lens above a
/// kernel reads; `×5 a step` when it ran more than once an execution.
pub fn lens_title(profile: &ModuleProfile, m: &Measured, estimate: Option<Duration>) -> String {
    let mut title = format!(
        "measured {} · {} of step",
        time(m.mean_us),
        percent(profile.percent(m))
    );
    if (m.count - 1.0).abs() > 1e-9 {
        title.push_str(&format!(" · ×{} a step", count(m.count)));
    }
    if let Some(e) = estimate {
        title.push_str(&format!(" (est. {e})"));
    }
    title
}

/// A ratio measured/estimated: `1.32`, `91.2`, `790`.
pub fn ratio(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.2}")
    } else if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// A count per execution: `5`, `2.5`.
pub fn count(c: f64) -> String {
    if (c - c.round()).abs() < 1e-9 {
        format!("{}", c.round() as i64)
    } else {
        format!("{c:.2}")
    }
}
