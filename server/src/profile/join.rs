//! A profile's totals against one module of the dump: which instruction each op event
//! names, its time per execution, the step, what matched nothing and what never ran.
//!
//! The module is the profile's module of the same name (`hlo_module` is the
//! `HloModule` line's name) and, where both are known, the same id (`program_id`,
//! the dump's `module_<id>`): a program compiled twice under one name is two
//! modules. An instruction is the one of that name (XLA's names are unique in a
//! module). Times per execution follow XProf: the mean is the summed durations over
//! the module's executions (an instruction that did not run in one counts 0 there),
//! and so are the count, the min and the max.

use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{ModuleTimes, OpTimes, Profile, ProfileError};
use crate::cost;
use crate::dump::naming::{DumpName, Stage};
use crate::model::{ComputationId, InstrId, Module};

/// One instruction's measured time.
#[derive(Clone, Debug)]
pub struct Measured {
    pub computation: ComputationId,
    pub instruction: InstrId,
    pub name: String,
    pub computation_name: String,
    /// The instruction's name, in document bytes (where a lens goes).
    pub name_range: std::ops::Range<usize>,
    /// Mean per execution of the summed durations of its events.
    pub mean_us: f64,
    /// The least and most of one execution (`None` when the profile has no `run_id`).
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Events per execution (a `while` body's instruction: the trip count).
    pub count: f64,
    pub events: u64,
    /// Per execution, its time less the op events inside it (a `while`'s own time,
    /// without its body's).
    pub self_us: f64,
    /// Per execution, the part of its time not inside another op event: what it adds
    /// to the step.
    pub toplevel_us: f64,
}

/// An instruction of a computation that launches kernels, with no event.
#[derive(Clone, Debug)]
pub struct NeverRan {
    pub computation: ComputationId,
    pub instruction: InstrId,
    pub name: String,
    pub computation_name: String,
}

/// Op events that name no instruction of the module (or are another module's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmatched {
    /// `hlo_op`.
    pub name: String,
    /// `jit_g`, `jit_g(7)`.
    pub module: String,
    pub events: u64,
}

/// The profile of one module, joined to its instructions.
#[derive(Clone, Debug)]
pub struct ModuleProfile {
    /// `hlo_module`: `jit_f`.
    pub module: String,
    /// The module's id in the profile, where the runtime recorded it (XProf names
    /// the module `jit_f(6)`); the Chrome trace does not carry it.
    pub program_id: Option<i64>,
    pub executions: u32,
    /// The profile had no `run_id`: `executions` is the least event count of an
    /// instruction of the entry (each runs once an execution).
    pub executions_inferred: bool,
    /// Mean per execution of the op time, each event counted once (nested events are
    /// in their parent's).
    pub step_us: f64,
    /// The most time first.
    pub instructions: Vec<Measured>,
    pub unmatched: Vec<Unmatched>,
    pub never_ran: Vec<NeverRan>,
    index: FxHashMap<(ComputationId, InstrId), usize>,
}

impl ModuleProfile {
    /// The measurement of an instruction.
    pub fn get(&self, computation: ComputationId, instruction: InstrId) -> Option<&Measured> {
        self.index
            .get(&(computation, instruction))
            .map(|&at| &self.instructions[at])
    }

    /// `m`'s share of the step, in percent.
    pub fn percent(&self, m: &Measured) -> f64 {
        if self.step_us > 0.0 {
            100.0 * m.mean_us / self.step_us
        } else {
            0.0
        }
    }
}

/// Joins `profile` to `module` (the dump's `module_<module_id>` when known).
pub fn join(
    profile: &Profile,
    module: &Module,
    module_id: Option<u64>,
) -> Result<ModuleProfile, ProfileError> {
    // Every computation is built to list its names: not for a profile that holds no
    // module of this name and id (a run of another program near the dump).
    let names = if profile
        .modules
        .iter()
        .any(|m| is_candidate(m, module, module_id))
    {
        instruction_names(module)
    } else {
        FxHashMap::default()
    };
    let chosen = choose(profile, module, module_id, &names)?;
    let times = &profile.modules[chosen];
    let (executions, inferred) = executions(times, module, &names);
    let per = |ps: u64| ps as f64 / 1e6 / f64::from(executions.max(1));
    let mut instructions = Vec::new();
    let mut unmatched = Vec::new();
    for op in &times.ops {
        let Some(&(computation, instruction)) = names.get(op.name.as_str()) else {
            unmatched.push(Unmatched {
                name: op.name.clone(),
                module: times.display_name(),
                events: op.events,
            });
            continue;
        };
        let c = module.computation(computation);
        let i = &c.model().instructions[instruction.index()];
        let (min_us, max_us) = spread(op, times, executions);
        instructions.push(Measured {
            computation,
            instruction,
            name: op.name.clone(),
            computation_name: c.name.clone(),
            name_range: c.abs(i.name_range),
            mean_us: per(op.total_ps),
            min_us,
            max_us,
            count: op.events as f64 / f64::from(executions.max(1)),
            events: op.events,
            self_us: per(op.total_ps.saturating_sub(op.inner_ps)),
            toplevel_us: per(op.total_ps.saturating_sub(op.nested_ps)),
        });
    }
    instructions.sort_by(|a, b| {
        b.mean_us
            .total_cmp(&a.mean_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    for (at, other) in profile.modules.iter().enumerate() {
        if at == chosen {
            continue;
        }
        unmatched.extend(other.ops.iter().map(|op| Unmatched {
            name: op.name.clone(),
            module: other.display_name(),
            events: op.events,
        }));
    }
    let index = instructions
        .iter()
        .enumerate()
        .map(|(at, m)| ((m.computation, m.instruction), at))
        .collect();
    Ok(ModuleProfile {
        module: times.name.clone(),
        program_id: times.program_id,
        executions,
        executions_inferred: inferred,
        step_us: per(times.total_ps()),
        never_ran: never_ran(module, times),
        instructions,
        unmatched,
        index,
    })
}

/// Every instruction by name (XLA's names are unique in a module).
fn instruction_names(module: &Module) -> FxHashMap<&str, (ComputationId, InstrId)> {
    let mut names = FxHashMap::default();
    for c in module.computations() {
        for i in &c.model().instructions {
            if !i.synthetic {
                names
                    .entry(i.name.strip_prefix('%').unwrap_or(&i.name))
                    .or_insert((c.id, i.id));
            }
        }
    }
    names
}

/// The profile's module that is `module`: same name, same id where both are known,
/// and the most of its ops named in the module.
fn choose(
    profile: &Profile,
    module: &Module,
    module_id: Option<u64>,
    names: &FxHashMap<&str, (ComputationId, InstrId)>,
) -> Result<usize, ProfileError> {
    let wanted = module.name.as_deref();
    let joined = |m: &ModuleTimes| {
        m.ops
            .iter()
            .filter(|o| names.contains_key(o.name.as_str()))
            .count()
    };
    let candidate = |m: &ModuleTimes| is_candidate(m, module, module_id);
    let best = profile
        .modules
        .iter()
        .enumerate()
        .filter(|(_, m)| candidate(m))
        .map(|(at, m)| (joined(m), m.total_ps(), at))
        .filter(|(n, _, _)| *n > 0)
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
    if let Some((_, _, at)) = best {
        return Ok(at);
    }
    let name = wanted.unwrap_or("the module");
    let mut message = format!(
        "no event names an instruction of {name}; {}",
        holdings(profile)
    );
    let recompiled: Vec<String> = profile
        .modules
        .iter()
        .filter(|m| Some(m.name.as_str()) == wanted && !candidate(m))
        .map(ModuleTimes::display_name)
        .collect();
    if let (false, Some(id)) = (recompiled.is_empty(), module_id) {
        message.push_str(&format!(
            " ({} another compilation: the dump is module {id})",
            if recompiled.len() == 1 {
                format!("{} is", recompiled[0])
            } else {
                format!("{} are", recompiled.join(", "))
            }
        ));
    }
    Err(ProfileError::NoMatch(message))
}

/// Whether the profile's module `m` may be `module`: the same name, and the same
/// compilation where both ids are known.
fn is_candidate(m: &ModuleTimes, module: &Module, module_id: Option<u64>) -> bool {
    module.name.as_deref().is_none_or(|w| m.name == w)
        && match (m.program_id, module_id) {
            (Some(p), Some(id)) => u64::try_from(p).is_ok_and(|p| p == id),
            _ => true,
        }
}

/// `the profile holds jit_g, jit_h` (the most time first, at most 8 named).
pub(crate) fn holdings(profile: &Profile) -> String {
    if profile.modules.is_empty() {
        return "the profile holds no op event (no event has hlo_op and hlo_module)".to_string();
    }
    const SHOWN: usize = 8;
    let mut names: Vec<String> = profile
        .modules
        .iter()
        .take(SHOWN)
        .map(ModuleTimes::display_name)
        .collect();
    if profile.modules.len() > SHOWN {
        names.push(format!("and {} more", profile.modules.len() - SHOWN));
    }
    format!("the profile holds {}", names.join(", "))
}

/// The executions: distinct `run_id`s, else the least event count of an entry
/// instruction that ran.
fn executions(
    times: &ModuleTimes,
    module: &Module,
    names: &FxHashMap<&str, (ComputationId, InstrId)>,
) -> (u32, bool) {
    if times.run_ids {
        return (times.executions(), false);
    }
    let least = times
        .ops
        .iter()
        .filter(|o| {
            names
                .get(o.name.as_str())
                .is_some_and(|(c, _)| Some(*c) == module.entry)
        })
        .map(|o| o.events)
        .min()
        .unwrap_or(1);
    (u32::try_from(least).unwrap_or(u32::MAX).max(1), true)
}

/// The least and most time of one execution (0 where it did not run).
fn spread(op: &OpTimes, times: &ModuleTimes, executions: u32) -> (Option<f64>, Option<f64>) {
    if !times.run_ids || executions == 0 {
        return (None, None);
    }
    let us = |r: &super::RunTotal| r.ps as f64 / 1e6;
    let min = op.per_run.iter().map(us).fold(f64::INFINITY, f64::min);
    let max = op.per_run.iter().map(us).fold(0.0, f64::max);
    (Some(min), Some(max))
}

/// The kernels (as `cost` counts them) of computations that launch kernels with no
/// event: skipped, folded away at run time, or run where the profiler did not look.
fn never_ran(module: &Module, times: &ModuleTimes) -> Vec<NeverRan> {
    let ran: FxHashSet<&str> = times.ops.iter().map(|o| o.name.as_str()).collect();
    let mut out = Vec::new();
    for c in module.computations() {
        if !cost::report::launches_kernels(module, c.id) {
            continue;
        }
        for i in &c.model().instructions {
            let name = i.name.strip_prefix('%').unwrap_or(&i.name);
            if !i.synthetic && cost::is_kernel(i) && !ran.contains(name) {
                out.push(NeverRan {
                    computation: c.id,
                    instruction: i.id,
                    name: name.to_string(),
                    computation_name: c.name.clone(),
                });
            }
        }
    }
    out
}

/// The after-optimizations dump in `dir` of the module the profile measured: the
/// module of the most time that has one (same name, same id where known); among
/// several dumps of one name, the one whose instructions the most ops name.
pub fn dump_for(dir: &Path, profile: &Profile) -> Result<PathBuf, ProfileError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ProfileError::Io(format!("cannot read {}: {e}", dir.display())))?;
    let mut dumps: Vec<(PathBuf, DumpName)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let name = DumpName::parse(&p)?;
            (name.stage == Stage::AfterOptimizations && name.is_hlo_text(&p)).then_some((p, name))
        })
        .collect();
    dumps.sort_by(|a, b| a.0.cmp(&b.0));
    for times in &profile.modules {
        let same: Vec<&(PathBuf, DumpName)> = dumps
            .iter()
            .filter(|(_, n)| {
                n.module_name == times.name
                    && times
                        .program_id
                        .is_none_or(|p| u64::try_from(p).is_ok_and(|p| p == n.module_id))
            })
            .collect();
        match same.as_slice() {
            [] => continue,
            [(path, _)] => return Ok(path.clone()),
            several => return Ok(best_named(several, times)),
        }
    }
    let mut held: Vec<String> = dumps.iter().map(|(_, n)| n.module_name.clone()).collect();
    held.dedup();
    Err(ProfileError::NoMatch(format!(
        "{}: no after-optimizations dump of a module the profile measured ({}; the folder has {})",
        dir.display(),
        holdings(profile),
        if held.is_empty() {
            "none".to_string()
        } else {
            held.join(", ")
        }
    )))
}

/// Of several dumps of one module name, the one whose instructions the most of the
/// module's ops name (the last when they tie: the latest compilation).
fn best_named(dumps: &[&(PathBuf, DumpName)], times: &ModuleTimes) -> PathBuf {
    let score = |path: &Path| {
        let Ok(text) = crate::dump::read_text(path) else {
            return 0;
        };
        let file = crate::model::parse_hlo(&text);
        file.modules.first().map_or(0, |m| {
            let names = instruction_names(m);
            times
                .ops
                .iter()
                .filter(|o| names.contains_key(o.name.as_str()))
                .count()
        })
    };
    dumps
        .iter()
        .map(|(p, _)| (score(p), p))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, p)| p.clone())
        .unwrap_or_default()
}
