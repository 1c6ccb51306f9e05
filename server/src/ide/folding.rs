//! Folding: each computation body, each module (when a file holds several), and the
//! `FileNames` / `StackFrames` tables of XLA dumps (long and rarely read).

use std::ops::Range;

use super::snapshot::HloSnapshot;
use crate::syntax::ChunkKind;

/// The byte ranges that fold, in text order of their starts; the caller keeps those
/// that span more than one line.
pub fn folding_ranges(snapshot: &HloSnapshot) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let file = snapshot.model();
    for module in &file.modules {
        if file.modules.len() > 1 {
            ranges.push(module.range.clone());
        }
        for computation in module.computations() {
            ranges.push(computation.range());
        }
    }
    for chunk in snapshot.syntax().chunks() {
        if chunk.kind() == ChunkKind::Table {
            // Chunks include their trailing newline: fold up to the last content line.
            let end = chunk.start + chunk.text().trim_end().len();
            ranges.push(chunk.start..end);
        }
    }
    ranges
}
