//! Quick fixes: the library attaches [`Fix`]es to its diagnostics (tiling, reshape
//! chains, ...); this module offers those of the diagnostics that overlap the
//! requested range, as `quickfix` code actions with their workspace edit.
//!
//! In MLIR documents, the alias refactorings (inline a use, extract an inline map) are
//! offered too: they are edits at a position, not answers to a finding.
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
use crate::ide;
use crate::mlir::refactor::{self, RefactorKind};
use crate::model::Fix;
use crate::syntax::ranges_touch;

/// The code actions at `range` (bytes): the quick fixes of every diagnostic overlapping
/// it, in document order, then (in MLIR) the alias refactorings there.
pub fn code_actions(
    snapshot: &Snapshot,
    range: Range<usize>,
    encoding: PositionEncoding,
) -> CodeActionResponse {
    let mut actions = quick_fixes(snapshot, &range, encoding);
    if let ide::Snapshot::Mlir(mlir) = &snapshot.ide {
        let analysis = mlir.mlir();
        for refactor in refactor::refactors(&analysis.file, mlir.text(), &range) {
            let mut action = code_action(snapshot, &refactor.fix, encoding);
            action.kind = Some(match refactor.kind {
                RefactorKind::Inline => CodeActionKind::REFACTOR_INLINE,
                RefactorKind::Extract => CodeActionKind::REFACTOR_EXTRACT,
            });
            actions.push(action.into());
        }
    }
    actions
}

/// The quick fixes of every diagnostic overlapping `range` (bytes), in document order.
/// A fix that several diagnostics carry (one tiling fix answers each indivisible
/// dimension) is one action that lists them all: one fix, one action.
fn quick_fixes(
    snapshot: &Snapshot,
    range: &Range<usize>,
    encoding: PositionEncoding,
) -> CodeActionResponse {
    let diagnostics = snapshot.ide.diagnostics();
    let mut actions: Vec<(&Fix, CodeAction)> = Vec::new();
    for d in diagnostics
        .iter()
        .filter(|d| !d.fixes.is_empty() && ranges_touch(&d.range, range))
    {
        let diagnostic = to_lsp(snapshot, d, encoding);
        for (k, fix) in d.fixes.iter().enumerate() {
            if let Some((_, action)) = actions.iter_mut().find(|(f, _)| *f == fix) {
                action
                    .diagnostics
                    .get_or_insert_with(Vec::new)
                    .push(diagnostic.clone());
                continue;
            }
            let mut action = code_action(snapshot, fix, encoding);
            action.diagnostics = Some(vec![diagnostic.clone()]);
            action.is_preferred = Some(k == 0);
            actions.push((fix, action));
        }
    }
    actions.into_iter().map(|(_, a)| a.into()).collect()
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
