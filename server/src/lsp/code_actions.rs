//! Quick fixes: the library attaches [`Fix`]es to its diagnostics (tiling, reshape
//! chains, ...); this module offers those of the diagnostics that overlap the
//! requested range, as `quickfix` code actions with their workspace edit.
//!
//! Keeping fixes on the diagnostics means one analysis serves `hlo-lsp check`, the
//! published diagnostics and the code actions, and a fix can never be offered for a
//! finding the user does not see.

use std::collections::HashMap;
use std::ops::Range;

use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionResponse, TextEdit, WorkspaceEdit,
};

use super::diagnostics::to_lsp;
use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::model::Fix;

/// The quick fixes of every diagnostic overlapping `range` (bytes), in document order.
pub fn quick_fixes(
    snapshot: &Snapshot,
    range: Range<usize>,
    encoding: PositionEncoding,
) -> CodeActionResponse {
    snapshot
        .diagnostics()
        .iter()
        .filter(|d| !d.fixes.is_empty() && overlaps(&d.range, &range))
        .flat_map(|d| {
            let diagnostic = to_lsp(snapshot, d, encoding);
            d.fixes.iter().enumerate().map(move |(k, fix)| {
                let mut action = code_action(snapshot, fix, encoding);
                action.diagnostics = Some(vec![diagnostic.clone()]);
                action.is_preferred = Some(k == 0);
                action.into()
            })
        })
        .collect()
}

/// Touching counts: a cursor (empty range) at either end of a diagnostic selects it.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

fn code_action(snapshot: &Snapshot, fix: &Fix, encoding: PositionEncoding) -> CodeAction {
    let edits = fix
        .edits
        .iter()
        .map(|edit| TextEdit {
            range: snapshot.range(edit.range.clone(), encoding),
            new_text: edit.new_text.clone(),
        })
        .collect();
    CodeAction {
        title: fix.title.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(snapshot.uri.clone(), edits)])),
            ..Default::default()
        }),
        ..Default::default()
    }
}
