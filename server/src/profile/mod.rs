//! Measured time per instruction, read from the profiles users already have: an XProf
//! logdir (`plugins/profile/<run>/`), its `*.xplane.pb` (an `XSpace` protobuf) or its
//! `*.trace.json.gz` (the Chrome trace XProf and `jax.profiler` write).
//!
//! Every op event of such a profile names its instruction as the dump does (`hlo_op`),
//! its module (`hlo_module`, with a `program_id` where the runtime records it) and the
//! execution it belongs to (`run_id`). One concept per file:
//!
//! * [`locate`]: which file a path means (a logdir's newest run, a run folder, a file);
//! * [`xplane`]: the `XSpace` protobuf, streamed (hand-written prost messages);
//! * [`trace_json`]: the Chrome trace, streamed (gzip or not);
//! * [`collect`]: op events into per-instruction totals per execution, nesting found
//!   per thread (a `while` body's events are its instructions' time, counted once);
//! * [`join`]: the totals against a module of the dump ([`ModuleProfile`]: per
//!   instruction mean, min, max and count per execution, the step, what matched
//!   nothing and what never ran), and which dump of a directory the profile measured;
//! * [`report`]: rows to show (% of the step, cumulative %, the cost model's estimate
//!   and the ratio) and the line a code lens reads.
//!
//! Profiles are large (hundreds of MB for a GPU step): both readers stream, and keep
//! only per-instruction totals and, per thread, the stack of events still open. The
//! `.pb` and the `.json.gz` of one run give the same numbers (the JSON rounds to
//! nanoseconds what the protobuf holds in picoseconds).

pub mod collect;
pub mod join;
pub mod locate;
pub mod report;
pub mod trace_json;
pub mod xplane;

use std::path::{Path, PathBuf};

pub use join::{join, Measured, ModuleProfile, NeverRan, Unmatched};
pub use locate::{Format, Source};

/// Which planes of a profile measured the instructions (the first with op events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Kernels on a device's streams (`/device:GPU:N`, TPU, custom devices).
    Device = 0,
    /// The op lines XProf derives on a device plane (`XLA Ops`).
    DeviceOpLines = 1,
    /// The host's threads (`/host:CPU`): XLA:CPU's thunks.
    Host = 2,
}

impl Tier {
    /// In the order they are preferred.
    pub const ALL: [Tier; 3] = [Tier::Device, Tier::DeviceOpLines, Tier::Host];

    /// `device kernels`, `device op lines`, `host threads`.
    pub fn describe(self) -> &'static str {
        match self {
            Tier::Device => "device kernels",
            Tier::DeviceOpLines => "device op lines",
            Tier::Host => "host threads",
        }
    }
}

/// One instruction's time in one execution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTotal {
    pub ps: u64,
    pub events: u32,
}

/// What the events of one instruction add up to.
#[derive(Clone, Debug)]
pub struct OpTimes {
    /// `hlo_op`: the instruction's name as in the dump.
    pub name: String,
    pub events: u64,
    /// The summed durations of its events.
    pub total_ps: u64,
    /// Of `total_ps`, what lies inside another op event of its thread (a `while`'s),
    /// and so is counted in that one's time too.
    pub nested_ps: u64,
    /// The op time inside its own events (a `while`'s body): `total - inner` is its
    /// own.
    pub inner_ps: u64,
    /// Per execution (indexed as [`ModuleTimes::toplevel_ps`]).
    pub per_run: Vec<RunTotal>,
}

/// What the events of one module add up to.
#[derive(Clone, Debug)]
pub struct ModuleTimes {
    /// `hlo_module`: `jit_f`.
    pub name: String,
    /// The module's unique id, where the runtime records it (XProf names the module
    /// `jit_f(<program_id>)`; the dump's file `module_<id>.jit_f...`).
    pub program_id: Option<i64>,
    /// Every event had a `run_id` (else the executions are one bucket, and
    /// [`join`] infers their number).
    pub run_ids: bool,
    /// Per execution, the time of its op events not inside another op event.
    pub toplevel_ps: Vec<u64>,
    /// Its instructions, the most time first.
    pub ops: Vec<OpTimes>,
}

impl ModuleTimes {
    /// Distinct `run_id`s.
    pub fn executions(&self) -> u32 {
        self.toplevel_ps.len() as u32
    }

    /// `jit_f(6)` as XProf names it, `jit_f` without a program id.
    pub fn display_name(&self) -> String {
        match self.program_id {
            Some(id) => format!("{}({id})", self.name),
            None => self.name.clone(),
        }
    }

    /// Every event's time (top-level ones: nested time is in its parent's).
    pub fn total_ps(&self) -> u64 {
        self.toplevel_ps.iter().sum()
    }
}

/// A profile read: the per-instruction totals of each module it measured.
#[derive(Clone, Debug)]
pub struct Profile {
    pub source: Source,
    /// The planes measured; `None` when no event named an instruction.
    pub tier: Option<Tier>,
    /// The most time first.
    pub modules: Vec<ModuleTimes>,
    /// Op events of planes not measured (the host's, when a device measured).
    pub not_counted: u64,
    /// Events out of time order on their thread, or half inside another: their
    /// nesting is unknown and they count as top-level.
    pub disorder: u64,
}

/// How far reading has come: bytes of the file.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

/// Why a profile could not be read or joined: one line for the user.
#[derive(Debug)]
pub enum ProfileError {
    /// The file system refused (missing, no permission).
    Io(String),
    /// The file is not what it claims or ends early (truncated `.gz`, corrupt `.pb`).
    Corrupt(String),
    /// A directory without a profile in it.
    NoProfile(String),
    /// No event names an instruction of the module.
    NoMatch(String),
    /// The progress callback asked to stop.
    Cancelled,
}

impl ProfileError {
    pub(crate) fn io(e: std::io::Error) -> ProfileError {
        ProfileError::Io(e.to_string())
    }

    /// The same error, said of `path` (`what` names what the file should be).
    fn of(self, path: &Path, what: &str) -> ProfileError {
        match self {
            ProfileError::Io(m) => ProfileError::Io(format!("cannot read {}: {m}", path.display())),
            ProfileError::Corrupt(m) => {
                ProfileError::Corrupt(format!("{}: not a readable {what}: {m}", path.display()))
            }
            other => other,
        }
    }
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileError::Io(m)
            | ProfileError::Corrupt(m)
            | ProfileError::NoProfile(m)
            | ProfileError::NoMatch(m) => f.write_str(m),
            ProfileError::Cancelled => f.write_str("reading the profile was cancelled"),
        }
    }
}

impl std::error::Error for ProfileError {}

impl From<ProfileError> for String {
    fn from(e: ProfileError) -> String {
        e.to_string()
    }
}

/// Reads the profile `path` means (a logdir, a run folder, a `.xplane.pb`, a
/// `.trace.json[.gz]`: [`locate::locate`]).
pub fn read(path: &Path) -> Result<Profile, ProfileError> {
    read_with_progress(path, &mut |_| true)
}

/// [`read`], telling `progress` how far it has come (about every MB); it stops the
/// reading with [`ProfileError::Cancelled`] by returning `false`.
pub fn read_with_progress(
    path: &Path,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Profile, ProfileError> {
    let source = locate::locate(path)?;
    read_source(source, progress)
}

/// Reads a located profile file.
pub fn read_source(
    source: Source,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<Profile, ProfileError> {
    let file = open(&source.file)?;
    let total = file
        .metadata()
        .map_err(|e| ProfileError::io(e).of(&source.file, ""))?
        .len();
    let mut collector = collect::Collector::default();
    let mut tell = |done: u64| progress(Progress { done, total });
    match source.format {
        Format::XPlane => xplane::read(file, total, &mut collector, &mut tell)
            .map_err(|e| e.of(&source.file, "XSpace protobuf (.xplane.pb)"))?,
        Format::TraceJson { gzip } => trace_json::read(file, gzip, &mut collector, &mut tell)
            .map_err(|e| {
                let what = if gzip {
                    "gzipped Chrome trace (.trace.json.gz)"
                } else {
                    "Chrome trace (.trace.json)"
                };
                e.of(&source.file, what)
            })?,
    }
    let collected = collector.finish();
    let mut modules = collected.modules;
    modules.sort_by(|a, b| b.total_ps().cmp(&a.total_ps()).then(a.name.cmp(&b.name)));
    Ok(Profile {
        source,
        tier: collected.tier,
        modules,
        not_counted: collected.not_counted,
        disorder: collected.disorder,
    })
}

fn open(path: &PathBuf) -> Result<std::fs::File, ProfileError> {
    std::fs::File::open(path).map_err(|e| ProfileError::io(e).of(path, ""))
}
