//! Op events into per-instruction totals, as the readers stream them: nothing of an
//! event is kept past its turn but its place on its thread's stack of open events.
//!
//! An op event is one run of one instruction (`hlo_op`) of one module (`hlo_module`,
//! `program_id`) in one execution (`run_id`). Per instruction this keeps the total
//! time and count per execution; per module the time of its top-level events per
//! execution (the step). An event that lies inside another op event of its thread (the
//! body of a `while`, `call` or `conditional` run by XLA:CPU's thunk executor inside the
//! control-flow op's own event) is the body instruction's time, and is already part of
//! the enclosing event's: it counts for its instruction, and is marked nested so that
//! the step and the cumulative share count it once.
//!
//! Events on one thread (an `XLine`) do not partially overlap and come sorted by start
//! (TSL's `SortXSpace` sorts each line, outer events first; the trace writer keeps that
//! order), so a stack per thread finds the enclosing event. An event that breaks this
//! (out of order, or half inside another) is counted in [`Collected::disorder`] and
//! taken as top-level.

use rustc_hash::FxHashMap;

use super::{ModuleTimes, OpTimes, RunTotal, Tier};

/// One op event, as a reader found it.
pub(crate) struct OpEvent<'a> {
    pub tier: Tier,
    /// (plane or process, line or thread): the timeline whose events nest.
    pub track: (u64, u64),
    /// Picoseconds on the track's clock.
    pub start_ps: i64,
    pub duration_ps: i64,
    pub module: &'a str,
    pub program_id: Option<i64>,
    pub op: &'a str,
    pub run: Option<&'a str>,
}

/// The derived lines XProf adds to a device plane (TSL's `xplane_schema.cc`:
/// `kXlaOpLineName` and its siblings): op-level copies of what the stream lines hold.
const DERIVED_DEVICE_LINES: &[&str] = &[
    "XLA Ops",
    "XLA Modules",
    "Steps",
    "Framework Ops",
    "Framework Name Scope",
    "Source code",
    "Sparse Core Ops",
    "Sparse Core Modules",
    "Sparse Core Steps",
];

/// The line XLA's own profile reader skips (`kXlaAsyncOpLineName`): spans of async
/// ops, whose time is the wait, not the work.
const ASYNC_OPS_LINE: &str = "Async XLA Ops";

/// Where the events of a line named `line` on a plane of `plane` tier count, or
/// `None` when they never do.
pub(crate) fn line_tier(plane: Tier, line: &str) -> Option<Tier> {
    if line == ASYNC_OPS_LINE {
        return None;
    }
    match plane {
        Tier::Device if DERIVED_DEVICE_LINES.contains(&line) => Some(Tier::DeviceOpLines),
        other => Some(other),
    }
}

/// One event still open on a track: where it ends and whose it is.
struct Open {
    end_ps: i64,
    module: u32,
    op: u32,
}

#[derive(Default)]
struct Track {
    stack: Vec<Open>,
    last_start: Option<i64>,
}

/// The totals of one instruction while reading.
struct OpTotals {
    name: Box<str>,
    events: u64,
    total_ps: u64,
    nested_ps: u64,
    inner_ps: u64,
    per_run: Vec<RunTotal>,
}

/// The totals of one module while reading.
struct ModuleTotals {
    name: Box<str>,
    program_id: Option<i64>,
    ops: Vec<OpTotals>,
    op_index: FxHashMap<Box<str>, u32>,
    runs: FxHashMap<Box<str>, u32>,
    /// Top-level op time per execution (index: the run's).
    toplevel_ps: Vec<u64>,
    events_without_run: u64,
    /// The last run looked up: consecutive events mostly share it.
    last_run: Option<(Box<str>, usize)>,
}

impl ModuleTotals {
    fn op(&mut self, name: &str) -> u32 {
        if let Some(&at) = self.op_index.get(name) {
            return at;
        }
        let at = self.ops.len() as u32;
        self.ops.push(OpTotals {
            name: name.into(),
            events: 0,
            total_ps: 0,
            nested_ps: 0,
            inner_ps: 0,
            per_run: Vec::new(),
        });
        self.op_index.insert(name.into(), at);
        at
    }

    fn run(&mut self, id: Option<&str>) -> usize {
        if id.is_none() {
            self.events_without_run += 1;
        }
        let id = id.unwrap_or("");
        if let Some((last, at)) = &self.last_run {
            if **last == *id {
                return *at;
            }
        }
        let at = match self.runs.get(id) {
            Some(&at) => at as usize,
            None => {
                let at = self.runs.len();
                self.runs.insert(id.into(), at as u32);
                at
            }
        };
        self.last_run = Some((id.into(), at));
        at
    }
}

/// What one tier of planes measured.
#[derive(Default)]
struct Measure {
    modules: Vec<ModuleTotals>,
    module_index: FxHashMap<Box<str>, Vec<(Option<i64>, u32)>>,
    tracks: FxHashMap<(u64, u64), Track>,
    events: u64,
    disorder: u64,
    /// The last module looked up: consecutive events mostly share it.
    last_module: Option<u32>,
}

impl Measure {
    fn module(&mut self, name: &str, program_id: Option<i64>) -> u32 {
        if let Some(at) = self.last_module {
            let last = &self.modules[at as usize];
            if *last.name == *name && last.program_id == program_id {
                return at;
            }
        }
        let at = self.find_module(name, program_id);
        self.last_module = Some(at);
        at
    }

    fn find_module(&mut self, name: &str, program_id: Option<i64>) -> u32 {
        if let Some(ids) = self.module_index.get(name) {
            if let Some(&(_, at)) = ids.iter().find(|(p, _)| *p == program_id) {
                return at;
            }
        }
        let at = self.modules.len() as u32;
        self.modules.push(ModuleTotals {
            name: name.into(),
            program_id,
            ops: Vec::new(),
            op_index: FxHashMap::default(),
            runs: FxHashMap::default(),
            toplevel_ps: Vec::new(),
            events_without_run: 0,
            last_run: None,
        });
        self.module_index
            .entry(name.into())
            .or_default()
            .push((program_id, at));
        at
    }

    fn add(&mut self, e: &OpEvent) {
        self.events += 1;
        let module_at = self.module(e.module, e.program_id);
        let module = &mut self.modules[module_at as usize];
        let op_at = module.op(e.op);
        let run = module.run(e.run);
        let duration = e.duration_ps as u64;
        let end_ps = e.start_ps.saturating_add(e.duration_ps);

        let track = self.tracks.entry(e.track).or_default();
        if track.last_start.is_some_and(|last| e.start_ps < last) {
            self.disorder += 1;
            track.stack.clear();
        }
        track.last_start = Some(e.start_ps);
        while track.stack.last().is_some_and(|o| o.end_ps <= e.start_ps) {
            track.stack.pop();
        }
        let parent = match track.stack.last() {
            Some(open) if end_ps <= open.end_ps => Some((open.module, open.op)),
            Some(_) => {
                self.disorder += 1; // half inside: not a nesting
                None
            }
            None => None,
        };
        track.stack.push(Open {
            end_ps,
            module: module_at,
            op: op_at,
        });

        let op = &mut module.ops[op_at as usize];
        op.events += 1;
        op.total_ps += duration;
        if op.per_run.len() <= run {
            op.per_run.resize(run + 1, RunTotal::default());
        }
        op.per_run[run].ps += duration;
        op.per_run[run].events += 1;
        match parent {
            Some(_) => op.nested_ps += duration,
            None => {
                if module.toplevel_ps.len() <= run {
                    module.toplevel_ps.resize(run + 1, 0);
                }
                module.toplevel_ps[run] += duration;
            }
        }
        if let Some((m, o)) = parent {
            self.modules[m as usize].ops[o as usize].inner_ps += duration;
        }
    }

    fn finish(self) -> Vec<ModuleTimes> {
        self.modules
            .into_iter()
            .map(|m| {
                let executions = m.runs.len();
                let mut toplevel_ps = m.toplevel_ps;
                toplevel_ps.resize(executions, 0);
                let mut ops: Vec<OpTimes> = m
                    .ops
                    .into_iter()
                    .map(|o| {
                        let mut per_run = o.per_run;
                        per_run.resize(executions, RunTotal::default());
                        OpTimes {
                            name: o.name.into(),
                            events: o.events,
                            total_ps: o.total_ps,
                            nested_ps: o.nested_ps,
                            inner_ps: o.inner_ps,
                            per_run,
                        }
                    })
                    .collect();
                ops.sort_by(|a, b| b.total_ps.cmp(&a.total_ps).then(a.name.cmp(&b.name)));
                ModuleTimes {
                    name: m.name.into(),
                    program_id: m.program_id,
                    run_ids: m.events_without_run == 0,
                    toplevel_ps,
                    ops,
                }
            })
            .collect()
    }
}

/// Every op event of a profile, by tier, until [`Collector::finish`].
#[derive(Default)]
pub(crate) struct Collector {
    tiers: [Measure; 3],
}

/// What the events of a profile add up to.
#[derive(Debug)]
pub(crate) struct Collected {
    pub tier: Option<Tier>,
    pub modules: Vec<ModuleTimes>,
    /// Op events of the tiers not measured (host threads when the device is).
    pub not_counted: u64,
    /// Events out of time order on their thread, or half inside another.
    pub disorder: u64,
}

impl Collector {
    pub fn add(&mut self, e: OpEvent) {
        self.tiers[e.tier as usize].add(&e);
    }

    /// The totals of the first tier that measured anything: the device's kernels,
    /// else its derived op lines, else the host's threads.
    pub fn finish(self) -> Collected {
        let chosen = Tier::ALL
            .into_iter()
            .find(|t| self.tiers[*t as usize].events > 0);
        let mut out = Collected {
            tier: chosen,
            modules: Vec::new(),
            not_counted: 0,
            disorder: 0,
        };
        for (tier, measure) in Tier::ALL.into_iter().zip(self.tiers) {
            if Some(tier) == chosen {
                out.disorder = measure.disorder;
                out.modules = measure.finish();
            } else {
                out.not_counted += measure.events;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(
        track: u64,
        start: i64,
        duration: i64,
        op: &'static str,
        run: &'static str,
    ) -> OpEvent<'static> {
        OpEvent {
            tier: Tier::Host,
            track: (0, track),
            start_ps: start,
            duration_ps: duration,
            module: "jit_f",
            program_id: None,
            op,
            run: Some(run),
        }
    }

    fn op<'a>(m: &'a ModuleTimes, name: &str) -> &'a OpTimes {
        m.ops.iter().find(|o| o.name == name).unwrap()
    }

    #[test]
    fn a_body_inside_a_while_counts_for_the_body_and_once_in_the_step() {
        let mut c = Collector::default();
        for (run, base) in [("1", 0), ("2", 1000)] {
            c.add(event(1, base, 10, "copy", run));
            c.add(event(1, base + 20, 100, "while", run));
            c.add(event(1, base + 30, 20, "body_op", run));
            c.add(event(1, base + 60, 30, "body_op", run));
            c.add(event(1, base + 200, 5, "after", run));
        }
        let out = c.finish();
        assert_eq!(out.disorder, 0);
        let m = &out.modules[0];
        assert_eq!(m.executions(), 2);
        assert_eq!(m.toplevel_ps, vec![115, 115]);
        let w = op(m, "while");
        assert_eq!((w.total_ps, w.inner_ps, w.nested_ps), (200, 100, 0));
        let b = op(m, "body_op");
        assert_eq!((b.total_ps, b.nested_ps, b.events), (100, 100, 4));
        assert_eq!(b.per_run[0], RunTotal { ps: 50, events: 2 });
    }

    #[test]
    fn threads_nest_apart_and_disorder_is_counted() {
        let mut c = Collector::default();
        c.add(event(1, 0, 100, "a", "1"));
        c.add(event(2, 10, 10, "b", "1")); // another thread: not inside `a`
        c.add(event(1, 50, 100, "c", "1")); // half inside `a`
        c.add(event(1, 5, 1, "d", "1")); // out of order
        let out = c.finish();
        let m = &out.modules[0];
        assert_eq!(out.disorder, 2);
        assert_eq!(m.toplevel_ps, vec![211]);
    }

    #[test]
    fn the_device_is_measured_before_the_host() {
        let mut c = Collector::default();
        c.add(event(1, 0, 100, "launch", "1"));
        c.add(OpEvent {
            tier: Tier::Device,
            ..event(7, 0, 40, "kernel", "1")
        });
        let out = c.finish();
        assert_eq!(out.tier, Some(Tier::Device));
        assert_eq!(out.not_counted, 1);
        assert_eq!(out.modules[0].ops[0].name, "kernel");
    }
}
