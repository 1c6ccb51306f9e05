//! `textDocument/codeAction`: the actions of [`crate::ide::code_actions`] as LSP code
//! actions, each a workspace edit of this document with the diagnostics it answers.

use std::collections::HashMap;
use std::ops::Range;

use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionResponse, TextEdit, WorkspaceEdit,
};

use super::diagnostics::to_lsp;
use super::position::PositionEncoding;
use super::snapshot::Snapshot;
use crate::ide::code_actions::{self, Action, ActionKind};

/// The code actions at `range` (bytes).
pub fn code_actions(
    snapshot: &Snapshot,
    range: Range<usize>,
    encoding: PositionEncoding,
) -> CodeActionResponse {
    code_actions::actions(&snapshot.ide, &range)
        .into_iter()
        .map(|action| to_proto(snapshot, action, encoding).into())
        .collect()
}

fn to_proto(snapshot: &Snapshot, action: Action, encoding: PositionEncoding) -> CodeAction {
    let edits = action
        .fix
        .edits
        .into_iter()
        .map(|edit| TextEdit {
            range: snapshot.range(edit.range, encoding),
            new_text: edit.new_text,
        })
        .collect();
    let diagnostics: Vec<_> = action
        .answers
        .iter()
        .map(|d| to_lsp(snapshot, d, encoding))
        .collect();
    CodeAction {
        title: action.fix.title,
        kind: Some(match action.kind {
            ActionKind::QuickFix => CodeActionKind::QUICKFIX,
            ActionKind::Inline => CodeActionKind::REFACTOR_INLINE,
            ActionKind::Extract => CodeActionKind::REFACTOR_EXTRACT,
        }),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(snapshot.uri.clone(), edits)])),
            ..Default::default()
        }),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        is_preferred: (action.kind == ActionKind::QuickFix).then_some(action.preferred),
        ..Default::default()
    }
}
