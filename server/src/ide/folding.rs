//! Folding: each computation body, each module (when a file holds several), and the
//! `FileNames` / `StackFrames` tables of XLA dumps (long and rarely read).

use std::ops::Range;

use super::snapshot::HloSnapshot;
use crate::syntax::ChunkKind;

/// The byte ranges that fold, in text order of their starts; the caller keeps those
/// that span more than one line. Read from the chunks and their outlines, without
/// building a computation: an editor asks as it opens a document, and building every
/// computation of a 60 MB dump for it took 4.6 s.
pub fn folding_ranges(snapshot: &HloSnapshot) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let file = snapshot.model();
    let chunks = snapshot.syntax().chunks();
    for module in &file.modules {
        if file.modules.len() > 1 {
            ranges.push(module.range.clone());
        }
        for k in 0..module.computation_count() {
            let id = crate::model::ComputationId(k as u32);
            let chunk = chunks.at(module.chunk_of(id));
            // From the line of its name (`ENTRY %main ...`; comments before it stay).
            let start = module
                .outline(id)
                .name
                .as_ref()
                .map_or(chunk.start, |name| chunk.start + name.start as usize);
            ranges.push(start..content_end(&chunk));
        }
    }
    for chunk in chunks {
        if chunk.kind() == ChunkKind::Table {
            ranges.push(chunk.start..content_end(&chunk));
        }
    }
    ranges
}

/// Chunks include their trailing newline: a fold ends on the last content line.
fn content_end(chunk: &crate::syntax::Placed) -> usize {
    chunk.start + chunk.text().trim_end().len()
}
