//! Folding ranges: each computation body, each module, and the `FileNames` /
//! `StackFrames` tables of XLA dumps (long and rarely read).

use tower_lsp_server::ls_types::{FoldingRange, FoldingRangeKind};

use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::syntax::ChunkKind;

pub fn folding_ranges(snapshot: &Snapshot, encoding: PositionEncoding) -> Vec<FoldingRange> {
    if snapshot.is_mlir() {
        return Vec::new(); // HLO chunks mean nothing in MLIR text
    }
    let mut ranges = Vec::new();
    let mut push = |bytes: std::ops::Range<usize>, kind: Option<FoldingRangeKind>| {
        let range = snapshot.range(bytes, encoding);
        if range.end.line > range.start.line {
            ranges.push(FoldingRange {
                start_line: range.start.line,
                start_character: None,
                end_line: range.end.line,
                end_character: None,
                kind,
                collapsed_text: None,
            });
        }
    };
    let file = snapshot.model();
    for module in &file.modules {
        if file.modules.len() > 1 {
            push(module.range.clone(), Some(FoldingRangeKind::Region));
        }
        for computation in module.computations() {
            push(computation.range(), Some(FoldingRangeKind::Region));
        }
    }
    for chunk in snapshot.syntax().chunks() {
        if chunk.kind() == ChunkKind::Table {
            // Chunks include their trailing newline: fold up to the last content line.
            let end = chunk.start + chunk.text().trim_end().len();
            push(chunk.start..end, Some(FoldingRangeKind::Region));
        }
    }
    ranges.sort_by_key(|r| (r.start_line, std::cmp::Reverse(r.end_line)));
    ranges
}
