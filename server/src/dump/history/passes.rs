//! One instruction's passes, to be looked at: for each pass of its story (the one that
//! introduced it, each that changed its line, the one that removed it), the snapshot
//! just before and just after that pass, and where to look in each: the instruction's
//! line when it is there, else what took its place (the fusion it went into, the
//! instruction its users read instead, or the one it replaced when it is new), else
//! its computation's header. Someone bisecting a bad transpose opens the two files
//! side by side at those lines, or reads the pass's diff of the computation
//! ([`crate::dump::diff::restrict`]).
//!
//! The history ([`super::ModuleHistory`]) keeps no positions (300 snapshots of a 2 MB
//! module would be too many to hold): the two files of each pass are scanned again
//! ([`super::scan`]), each file once per call.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use super::scan::{scan, ScannedSnapshot};
use super::{InstructionHistory, ModuleHistory};

/// What a pass did to the instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Introduced,
    Changed,
    Removed,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Introduced => "introduced",
            Event::Changed => "changed",
            Event::Removed => "removed",
        }
    }
}

/// What a [`Place`] points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The instruction itself.
    Instruction,
    /// Not there; the named instruction stands in its place: the fusion it went into
    /// or what replaced it (after a removal), the one it replaced (before it came).
    Instead(String),
    /// Neither: the header of its computation.
    Computation,
    /// Not even its computation (or the file could not be read): the file's start.
    File,
}

/// Where to look in one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The snapshot's index in its module.
    pub snapshot: usize,
    pub file: PathBuf,
    /// 0-based line of the file.
    pub line: usize,
    /// The name looked at, in bytes of that line. What comes before it on its line is
    /// ASCII (indentation, `ROOT `, `ENTRY `, `%`), so these are UTF-16 columns too.
    pub columns: Range<usize>,
    pub found: Found,
}

/// One pass of an instruction's story and the snapshots around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassStep {
    pub event: Event,
    /// The snapshot after the pass (its file name names the pass).
    pub snapshot: usize,
    /// `introduced by layout-assignment (step 47)`, `changed by algsimp (step 52)`,
    /// `fused into %fusion.3 by fusion (step 60)`.
    pub label: String,
    /// The snapshot before the pass; none when it is the first (the input).
    pub before: Option<Place>,
    pub after: Place,
}

/// The passes of `i` (an instruction of `module`), in order.
pub fn passes(module: &ModuleHistory, i: &InstructionHistory) -> Vec<PassStep> {
    let mut files = Files::default();
    let mut steps = vec![introduced(module, i, &mut files)];
    for &k in &i.changed {
        steps.push(PassStep {
            event: Event::Changed,
            snapshot: k,
            label: format!("changed by {}", module.snapshots[k].label()),
            before: Some(files.place(module, k - 1, i, &i.name, None)),
            after: files.place(module, k, i, &i.name, None),
        });
    }
    if let Some(removal) = &i.removed {
        let k = removal.snapshot;
        let instead = removal.fused_into.as_ref().or(removal.replaced_by.as_ref());
        steps.push(PassStep {
            event: Event::Removed,
            snapshot: k,
            label: super::story::end(module, i).unwrap_or_default(),
            before: Some(files.place(module, k - 1, i, &i.name, None)),
            after: files.place(module, k, i, "", instead.map(String::as_str)),
        });
    }
    steps
}

/// The pass that made `i`: in the snapshot before it, the instruction whose place it
/// took (one that the same pass removed in favour of it), if any.
fn introduced(module: &ModuleHistory, i: &InstructionHistory, files: &mut Files) -> PassStep {
    let k = i.introduced;
    let replaced = module.instructions.iter().find(|o| {
        *o.computation == *i.computation
            && o.removed.as_ref().is_some_and(|r| {
                r.snapshot == k
                    && [&r.fused_into, &r.replaced_by]
                        .iter()
                        .any(|n| n.as_deref() == Some(i.name.as_str()))
            })
    });
    PassStep {
        event: Event::Introduced,
        snapshot: k,
        label: super::story::origin(module, i),
        before: (k > 0).then(|| files.place(module, k - 1, i, "", replaced.map(|o| &*o.name))),
        after: files.place(module, k, i, &i.name, None),
    }
}

/// The snapshots read so far in one call, scanned.
#[derive(Default)]
struct Files {
    read: HashMap<usize, Option<(String, ScannedSnapshot)>>,
}

impl Files {
    /// In snapshot `k`: instruction `name` of `i`'s computation (none: look for
    /// `instead` only), else `instead`, else the computation's header.
    fn place(
        &mut self,
        module: &ModuleHistory,
        k: usize,
        i: &InstructionHistory,
        name: &str,
        instead: Option<&str>,
    ) -> Place {
        let file = module.snapshots[k].file.clone();
        let read = self.read.entry(k).or_insert_with(|| {
            let text = crate::dump::read_text(&file).ok()?;
            let scanned = scan(&text);
            Some((text, scanned))
        });
        let (at, found) = read
            .as_ref()
            .and_then(|(text, scanned)| find(text, scanned, &i.computation, name, instead))
            .unwrap_or((0..0, Found::File));
        let text = read.as_ref().map_or("", |(t, _)| t.as_str());
        let line_start = text[..at.start].rfind('\n').map_or(0, |n| n + 1);
        Place {
            snapshot: k,
            file,
            line: memchr::memchr_iter(b'\n', &text.as_bytes()[..at.start]).count(),
            columns: at.start - line_start..at.end - line_start,
            found,
        }
    }
}

/// The bytes of `name` (else `instead`, else the computation's name) in `text`.
fn find(
    text: &str,
    scanned: &ScannedSnapshot,
    computation: &str,
    name: &str,
    instead: Option<&str>,
) -> Option<(Range<usize>, Found)> {
    let c = scanned
        .computations
        .iter()
        .find(|c| &text[c.name.clone()] == computation)?;
    let named = |n: &str| {
        c.instructions
            .iter()
            .find(|j| &text[j.name.clone()] == n)
            .map(|j| j.name.clone())
    };
    let own = (!name.is_empty()).then(|| named(name)).flatten();
    if let Some(at) = own {
        return Some((at, Found::Instruction));
    }
    if let Some((at, other)) = instead.and_then(|n| Some((named(n)?, n))) {
        return Some((at, Found::Instead(other.to_string())));
    }
    Some((c.name.clone(), Found::Computation))
}
