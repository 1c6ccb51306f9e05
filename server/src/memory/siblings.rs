//! The files XLA writes beside an after-optimizations dump, by its naming:
//! `module_0008.jit_f.cpu_after_optimizations.txt` has
//! `module_0008.jit_f.cpu_after_optimizations-buffer-assignment.txt`,
//! `...-live-range.txt` and `...-memory-usage-report.txt` next to it, and with
//! `--xla_dump_hlo_as_proto` the module with its buffer assignment and heap
//! simulator trace as `module_0008.jit_f.cpu_after_optimizations.hlo.pb`.

use std::path::{Path, PathBuf};

use super::live_range::LiveRanges;
use super::usage_report::UsageReport;
use super::{BufferAssignment, Report};
use crate::dump::naming::{DumpName, Stage};

/// The sibling files that exist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Siblings {
    pub buffer_assignment: Option<PathBuf>,
    pub live_range: Option<PathBuf>,
    pub usage_report: Option<PathBuf>,
    /// The `HloProto` (`.hlo.pb`): the heap simulator's trace XProf reads.
    pub proto: Option<PathBuf>,
}

/// The siblings of `dump` present on disk; none when `dump` is not an
/// after-optimizations dump by XLA's naming.
pub fn find(dump: &Path) -> Siblings {
    let after = DumpName::parse(dump).is_some_and(|n| n.stage == Stage::AfterOptimizations);
    let Some(stem) = dump
        .to_str()
        .and_then(|s| s.strip_suffix(".txt"))
        .filter(|_| after)
    else {
        return Siblings::default();
    };
    let existing = |suffix: &str| {
        let path = PathBuf::from(format!("{stem}{suffix}"));
        path.is_file().then_some(path)
    };
    Siblings {
        buffer_assignment: existing("-buffer-assignment.txt"),
        live_range: existing("-live-range.txt"),
        usage_report: existing("-memory-usage-report.txt"),
        proto: existing(".hlo.pb"),
    }
}

/// XLA's answer for `dump`, when its buffer assignment is beside it; unreadable
/// siblings become notes of the report, never errors.
pub fn read(dump: &Path) -> Option<Report> {
    let siblings = find(dump);
    let path = siblings.buffer_assignment.as_ref()?;
    let name = |p: &Path| p.display().to_string();
    let text = crate::dump::read_text(path).ok()?;
    let assignment = BufferAssignment::parse(&text, &name(path));
    let ranges = siblings
        .live_range
        .as_ref()
        .map(|p| match crate::dump::read_text(p) {
            Ok(text) => LiveRanges::parse(&text, &name(p)),
            Err(e) => LiveRanges {
                notes: vec![super::Note {
                    file: Some(name(p)),
                    line: None,
                    message: e.to_string(),
                }],
                ..LiveRanges::default()
            },
        });
    let mut report = Report::from_xla(assignment, ranges);
    if let Some(p) = &siblings.proto {
        match read_trace(p) {
            Ok(Some(trace)) => report.measure_heap(Some(&trace)),
            Ok(None) => {}
            Err(message) => report.notes.push(super::Note {
                file: Some(name(p)),
                line: None,
                message,
            }),
        }
    }
    if let Some(p) = &siblings.usage_report {
        if let Ok(text) = crate::dump::read_text(p) {
            let usage = UsageReport::parse(&text, &name(p));
            report.notes.extend(usage.notes.iter().cloned());
            let allocated: u64 = report.allocations.iter().map(|a| a.size).sum();
            if !usage.spaces.is_empty() && usage.total_bytes() != allocated {
                report.notes.push(super::Note {
                    file: Some(name(p)),
                    line: None,
                    message: format!(
                        "the memory report says {} bytes, the allocations add up to {allocated}",
                        usage.total_bytes()
                    ),
                });
            }
        }
    }
    Some(report)
}

/// The peak XProf's memory viewer shows, replayed from the `.hlo.pb` at `path`;
/// `None` when it holds no buffer assignment.
fn read_trace(path: &Path) -> Result<Option<super::viewer::TracePeak>, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let proto = super::proto::decode(&bytes)?;
    Ok(super::viewer::from_trace(&proto))
}
