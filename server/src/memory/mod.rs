//! Memory: which buffers make the peak of a compiled module, and what its four totals
//! are (argument, output, alias and temp bytes, as `memory_analysis()` reports them).
//!
//! Two sources, and every answer says which ([`Source`]):
//! * read from XLA: the files XLA writes beside an after-optimizations dump
//!   (`*-buffer-assignment.txt` [`buffer_assignment`], `*-live-range.txt`
//!   [`live_range`], `*-memory-usage-report.txt` [`usage_report`]), found by XLA's
//!   naming ([`siblings`]);
//! * estimated from the module text alone ([`estimate`]): liveness over the schedule
//!   of a scheduled module, aliasing as XLA's alias analysis does it, and temps packed
//!   by XLA's default heap algorithm ([`heap`]).
//!
//! Reading never fails: what cannot be read becomes a [`Note`] with its line.

pub mod buffer_assignment;
pub mod diagnostics;
pub mod estimate;
pub mod heap;
pub mod live_range;
pub mod proto;
pub mod report;
pub mod siblings;
pub mod source;
pub mod strip;
pub mod timeline;
pub mod usage_report;
pub mod viewer;

pub use buffer_assignment::{Allocation, AllocationKind, AssignedValue, BufferAssignment};
pub use live_range::LiveRanges;
pub use report::{Buffer, Peak, Report};

/// Where the numbers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// XLA's `*-buffer-assignment.txt` (and its live ranges) beside the dump.
    BufferAssignment,
    /// Computed from the module text alone.
    Estimate,
}

impl Source {
    /// The spelling of the JSON output: `buffer-assignment` or `estimate`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::BufferAssignment => "buffer-assignment",
            Source::Estimate => "estimate",
        }
    }

    /// The tag an editor puts after a number: "from XLA's buffer assignment" or
    /// "estimated".
    pub fn tag(self) -> &'static str {
        match self {
            Source::BufferAssignment => "from XLA's buffer assignment",
            Source::Estimate => "estimated",
        }
    }

    /// How a sentence says it: "read from XLA's buffer assignment" or "estimated".
    pub fn describe(self) -> &'static str {
        match self {
            Source::BufferAssignment => "read from XLA's buffer assignment",
            Source::Estimate => "estimated from the module text",
        }
    }
}

/// Something a reader could not take in, or a limit of an estimate: the file (or
/// `None` for the module), its 1-based line when known, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub file: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            _ => write!(f, "{}", self.message),
        }
    }
}

/// The four totals of `memory_analysis()` (XLA's `CompiledMemoryStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Entry parameters' allocations.
    pub argument: u64,
    /// Allocations that may live out of the module (the outputs and their tuple).
    pub output: u64,
    /// Parameters' allocations the outputs reuse (donated arguments).
    pub alias: u64,
    /// The preallocated temp allocations: neither parameter, output, constant nor
    /// thread-local.
    pub temp: u64,
}

impl Totals {
    /// XLA's `CompiledMemoryStats::PopulateBufferStatsFromAllocations`: each allocation
    /// counts by what it is; an aliased parameter counts as argument, output and alias.
    pub fn of(allocations: &[Allocation]) -> Totals {
        let mut t = Totals::default();
        for a in allocations {
            let kind = &a.kind;
            if kind.parameter.is_some() {
                t.argument += a.size;
                if kind.maybe_live_out {
                    t.alias += a.size;
                }
            }
            if kind.maybe_live_out {
                t.output += a.size;
            }
            if a.is_preallocated_temp() {
                t.temp += a.size;
            }
        }
        t
    }
}

/// `XLA's live-range peak: 72.0 KiB at %fusion (step 8)` when XLA's own "peak" line
/// says another number or step than the heap's peak users see; `None` when they agree.
pub fn xla_line_if_different(report: &Report) -> Option<String> {
    let xla = report.xla_live_range_peak.as_ref()?;
    let peak = report.peak.as_ref()?;
    if (xla.bytes, xla.time) == (peak.bytes, peak.time) {
        return None;
    }
    let whose = match report.source {
        Source::BufferAssignment => "XLA's live-range peak",
        Source::Estimate => "XLA's live-range count",
    };
    Some(format!(
        "{whose}: {} at %{} (step {})",
        human_bytes(xla.bytes),
        report.xla_live_range_peak_at().unwrap_or("?"),
        xla.time
    ))
}

/// `1.5 MiB`, `12.0 KiB`, `512 B`: sizes as people read them (binary units).
pub fn human_bytes(bytes: u64) -> String {
    crate::units::bytes(bytes)
}

/// The memory answer for `module`: XLA's, read from the files beside `dump` when
/// they are there (and `estimate` is not forced), else the estimate from the text.
/// Files that name instructions the module does not have (the dump was edited, or
/// they belong to another compilation) are set aside for the estimate, with a note.
pub fn analyze(
    dump: Option<&std::path::Path>,
    module: &crate::model::Module,
    estimate: bool,
) -> Option<Report> {
    let read = dump.filter(|_| !estimate).and_then(siblings::read);
    match read {
        Some(mut report) => match stranger(&report, module) {
            None => {
                report.attach_spans(module);
                Some(report)
            }
            Some(name) => {
                let mut estimated = estimate::estimate(module)?;
                estimated.notes.push(Note {
                    file: None,
                    line: None,
                    message: format!(
                        "XLA's buffer assignment names %{name}, which this module does not \
                         have: estimated from the text instead"
                    ),
                });
                Some(estimated)
            }
        },
        None => estimate::estimate(module),
    }
}

/// The memory answer offered unasked (the editor's lenses and hover, `check`'s
/// findings) for module `module` of `file`, a document at `dump` on disk: XLA's files
/// beside it speak for the document's module only when it has one (a dump file holds
/// one module). `None` for a module XLA has not compiled: a test module, JAX's program
/// before optimization or StableHLO has only its text order, no schedule to be live
/// over, and numbers nobody asked for would mislead (`hlo-lsp memory` still estimates
/// it when asked, with a note).
pub fn analyze_in(
    file: &crate::model::HloFile,
    module: crate::model::ModuleId,
    dump: Option<&std::path::Path>,
) -> Option<Report> {
    let m = file.module(module);
    if !m.compiled {
        return None;
    }
    let dump = dump.filter(|_| file.modules.len() == 1);
    analyze(dump, m, false)
}

/// The first instruction XLA's files name that `module` does not have.
fn stranger<'a>(report: &'a Report, module: &crate::model::Module) -> Option<&'a str> {
    let names: std::collections::HashSet<&str> = module
        .computations()
        .flat_map(|c| c.model().named_instructions().map(|i| &*i.name))
        .collect();
    let values = report
        .allocations
        .iter()
        .flat_map(|a| a.values.iter().map(|v| &*v.instruction));
    report
        .schedule
        .iter()
        .map(|n| &**n)
        .chain(values)
        .find(|n| !names.contains(n))
}
