//! Measured time next to the text, from an XProf profile ([`crate::profile`]): a
//! code lens above each instruction the profile measured (`measured 214.00 µs · 12%
//! of step (est. 180.00 µs)`, the estimate where the GPU cost model applies), one
//! line in the hover, the instructions ranked by measured time, and the graph's
//! boxes coloured by it ([`super::graph`]).
//!
//! The server reads the profile (off the request path) and hands it to these
//! functions; each version of a document joins it once ([`joined`], kept in the
//! snapshot), so a screen of lenses is lookups. Which profile a document gets is
//! the server's choice (found beside the dump, a setting, a command); which run
//! folders are near a dump is [`crate::profile::locate::runs_near`].

use std::ops::Range;
use std::sync::Arc;

use super::config::Config;
use super::cost::{self, judged, KernelAt};
use super::hover::Hover;
use super::snapshot::HloSnapshot;
use crate::dump::naming::DumpName;
use crate::model::{ComputationId, InstrId, ModuleId};
use crate::profile::{report, Measured, ModuleProfile, Profile};

/// A profile joined to each module of one version of a document.
#[derive(Debug)]
pub struct Joined {
    pub profile: Arc<Profile>,
    /// Per module of the document (by [`ModuleId`]): its measurement, or why the
    /// profile has none of it (one line: "no event names an instruction of jit_f;
    /// the profile holds jit_g").
    pub modules: Vec<Result<Arc<ModuleProfile>, String>>,
}

impl Joined {
    /// The measurement of module `module`, when the profile measured it.
    pub fn module(&self, module: ModuleId) -> Option<&Arc<ModuleProfile>> {
        self.modules.get(module.index())?.as_ref().ok()
    }

    /// Whether the profile measured some module of the document.
    pub fn matches(&self) -> bool {
        self.modules.iter().any(Result::is_ok)
    }

    /// Why the profile measured none of the document's modules (the first module's
    /// reason); `None` when it measured one.
    pub fn error(&self) -> Option<&str> {
        if self.matches() {
            return None;
        }
        self.modules
            .iter()
            .find_map(|m| m.as_ref().err().map(String::as_str))
            .or(Some("the document holds no module"))
    }

    /// An instruction's measurement, with its module's.
    pub fn measured(
        &self,
        module: ModuleId,
        computation: ComputationId,
        instruction: InstrId,
    ) -> Option<(&ModuleProfile, &Measured)> {
        let p = self.module(module)?;
        Some((p, p.get(computation, instruction)?))
    }
}

/// `profile` joined to `snapshot`'s modules: computed once per version and
/// profile ([`crate::profile::join`]: every instruction by name, the step, what never
/// ran), then shared by every lens, hover and graph of the version.
pub fn joined(snapshot: &HloSnapshot, profile: &Arc<Profile>) -> Arc<Joined> {
    snapshot
        .measured_memo(profile)
        .get_or_compute(|| join(snapshot, profile))
}

fn join(snapshot: &HloSnapshot, profile: &Arc<Profile>) -> Joined {
    let modules = &snapshot.model().modules;
    // A dump's file names its module's id (`module_0006.jit_f...`), which tells two
    // compilations of one name apart; a file of several modules is no dump.
    let module_id = (modules.len() == 1)
        .then(|| snapshot.path().and_then(DumpName::parse))
        .flatten()
        .map(|n| n.module_id);
    Joined {
        profile: profile.clone(),
        modules: modules
            .iter()
            .map(|m| {
                crate::profile::join(profile, m, module_id)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .collect(),
    }
}

/// Where lenses go: every kernel the cost model judges ([`cost::kernels`]) and
/// every instruction the profile measured (a CPU dump's thunks, a `while`), in text
/// order, each once.
pub fn lens_sites(
    snapshot: &HloSnapshot,
    config: &Config,
    joined: Option<&Joined>,
) -> Vec<KernelAt> {
    let mut sites = cost::kernels(snapshot, config);
    let Some(joined) = joined else {
        return sites;
    };
    for (k, measured) in joined.modules.iter().enumerate() {
        let Ok(p) = measured else { continue };
        sites.extend(p.instructions.iter().map(|m| KernelAt {
            module: ModuleId(k as u32),
            computation: m.computation,
            instruction: m.instruction,
            range: m.name_range.clone(),
        }));
    }
    sites.sort_by_key(|s| (s.range.start, s.module.0, s.computation.0, s.instruction.0));
    sites.dedup_by(|a, b| {
        (a.module, a.computation, a.instruction) == (b.module, b.computation, b.instruction)
    });
    sites
}

/// A lens's title: what the profile measured of the instruction and, where the GPU
/// cost model applies, its estimate per step (`measured 214.00 µs · 12% of step
/// (est. 180.00 µs)`); else the kernel's estimate ([`cost::lens_title`]), saying
/// when the profile has no event of it.
pub fn lens_title(
    snapshot: &HloSnapshot,
    at: &KernelAt,
    config: &Config,
    joined: Option<&Joined>,
) -> String {
    let module = snapshot.model().module(at.module);
    let judged = judged(snapshot, module, config);
    if let Some((p, m)) = joined.and_then(|j| j.measured(at.module, at.computation, at.instruction))
    {
        let estimate = judged
            .then(|| cost::estimate_per_step(snapshot, at, config))
            .flatten();
        return report::lens_title(p, m, estimate);
    }
    let measured_module = joined.is_some_and(|j| j.module(at.module).is_some());
    if !judged {
        return match measured_module {
            true => "not measured: the profile has no event of it".to_string(),
            false => String::new(),
        };
    }
    let title = cost::lens_title(snapshot, at, config);
    match measured_module && !title.is_empty() {
        true => format!("{title} · no event in the profile"),
        false => title,
    }
}

/// The hover's line on a measured instruction: `**Measured** 6.57 µs · 86% of step ·
/// 1.49 µs its own · 6.10-7.30 µs over 5 executions`.
pub fn hover_line(
    joined: &Joined,
    module: ModuleId,
    computation: ComputationId,
    instruction: InstrId,
) -> Option<String> {
    let (p, m) = joined.measured(module, computation, instruction)?;
    let mut line = format!(
        "**Measured** {} · {} of step",
        report::time(m.mean_us),
        report::percent(p.percent(m))
    );
    if (m.count - 1.0).abs() > 1e-9 {
        line.push_str(&format!(" · ×{} a step", report::count(m.count)));
    }
    if m.self_us + 1e-9 < m.mean_us {
        line.push_str(&format!(" · {} its own", report::time(m.self_us)));
    }
    match (m.min_us, m.max_us) {
        (Some(min), Some(max)) if p.executions > 1 => line.push_str(&format!(
            " · {}-{} over {} executions",
            report::time(min),
            report::time(max),
            p.executions
        )),
        _ if p.executions > 1 => line.push_str(&format!(" · {} executions", p.executions)),
        _ => {}
    }
    Some(line)
}

/// `hover` with the measured line of the instruction it describes (its name or
/// opcode), as a paragraph before the cost model's (`**Cost**`), else the last.
pub fn with_measurement(snapshot: &HloSnapshot, mut hover: Hover, joined: &Joined) -> Hover {
    let file = snapshot.model();
    let Some(at) = file.instruction_at(hover.range.start) else {
        return hover;
    };
    let computation = file.computation(at);
    let i = computation.instruction(at.instruction);
    let described = [i.name_range, i.opcode_range].map(|r| computation.abs(r));
    if !described.contains(&hover.range) {
        return hover;
    }
    let Some(line) = hover_line(joined, at.module, at.computation, at.instruction) else {
        return hover;
    };
    match hover.markdown.find("\n\n**Cost**") {
        Some(k) => hover.markdown.insert_str(k, &format!("\n\n{line}")),
        None => hover.markdown.push_str(&format!("\n\n{line}")),
    }
    hover
}

/// One instruction of the ranking by measured time.
#[derive(Clone, Debug, PartialEq)]
pub struct Hot {
    pub name: String,
    pub computation: String,
    /// Per execution, every event summed.
    pub measured_us: f64,
    pub percent: f64,
    /// This row's and those above it, each event counted once.
    pub cumulative_percent: f64,
    /// Events per execution.
    pub count: f64,
    /// Without the op events inside it (a `while`'s own).
    pub self_us: f64,
    /// The cost model's estimate per step, where it applies.
    pub estimate_us: Option<f64>,
    /// Measured over estimated.
    pub ratio: Option<f64>,
    /// The instruction's name, in document bytes.
    pub range: Range<usize>,
}

/// The ranking of one measured module.
#[derive(Clone, Debug, PartialEq)]
pub struct Hottest {
    /// `jit_f`, `jit_f(6)` with its program id.
    pub module: String,
    pub executions: u32,
    pub step_us: f64,
    /// The `limit` instructions of the most time.
    pub rows: Vec<Hot>,
    /// How many instructions were measured in all.
    pub measured: usize,
    /// Kernels with no event, and events that name no instruction of the module.
    pub never_ran: usize,
    pub unmatched: usize,
}

/// The `limit` instructions of each measured module of the document that took the
/// most time, as `hlo-lsp profile` ranks them, each with the cost model's estimate
/// where it applies (the shown rows only: the whole step's estimate takes seconds on
/// a large module).
pub fn hottest(
    snapshot: &HloSnapshot,
    joined: &Joined,
    config: &Config,
    limit: usize,
) -> Vec<Hottest> {
    let mut out = Vec::new();
    for (k, measured) in joined.modules.iter().enumerate() {
        let Ok(p) = measured else { continue };
        let module_id = ModuleId(k as u32);
        let judged = judged(snapshot, snapshot.model().module(module_id), config);
        // Every row's estimate reads the module's view: converted once for the rows.
        let _view = judged.then(|| snapshot.analysis_module(module_id));
        let rows = report::rows(p, None, None)
            .into_iter()
            .take(limit)
            .map(|r| {
                let m = r.measured;
                let at = KernelAt {
                    module: module_id,
                    computation: m.computation,
                    instruction: m.instruction,
                    range: m.name_range.clone(),
                };
                let estimate_us = judged
                    .then(|| cost::estimate_per_step(snapshot, &at, config))
                    .flatten()
                    .map(crate::cost::Duration::as_micros_f64);
                Hot {
                    name: m.name.clone(),
                    computation: m.computation_name.clone(),
                    measured_us: m.mean_us,
                    percent: r.percent,
                    cumulative_percent: r.cumulative_percent,
                    count: m.count,
                    self_us: m.self_us,
                    ratio: estimate_us.filter(|e| *e > 0.0).map(|e| m.mean_us / e),
                    estimate_us,
                    range: m.name_range.clone(),
                }
            })
            .collect();
        out.push(Hottest {
            module: match p.program_id {
                Some(id) => format!("{}({id})", p.module),
                None => p.module.clone(),
            },
            executions: p.executions,
            step_us: p.step_us,
            rows,
            measured: p.instructions.len(),
            never_ran: p.never_ran.len(),
            unmatched: p.unmatched.len(),
        });
    }
    out
}
