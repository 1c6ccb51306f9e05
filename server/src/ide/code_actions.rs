//! Code actions at a range: the quick fixes of the findings there, then (in MLIR) the
//! alias refactorings.
//!
//! The library attaches [`Fix`]es to its diagnostics (tiling, reshape chains, ...), so
//! one analysis serves `hlo-lsp check`, the published diagnostics and the code
//! actions, and a fix can never be offered for a finding the user does not see.

use std::ops::Range;

use super::Snapshot;
use crate::mlir::refactor::{self, RefactorKind};
use crate::model::{Diagnostic, Fix};
use crate::syntax::ranges_touch;

/// What an action does, as the protocol's kinds say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    QuickFix,
    Inline,
    Extract,
}

/// One action: a fix, the findings it answers (none for a refactoring), and whether
/// it is the first fix its finding offers (the one an editor applies on request).
#[derive(Clone, Debug)]
pub struct Action {
    pub kind: ActionKind,
    pub fix: Fix,
    pub answers: Vec<Diagnostic>,
    pub preferred: bool,
}

/// The actions at `range` (bytes): the quick fixes of every diagnostic overlapping it,
/// in document order, then (in MLIR) the refactorings there.
pub fn actions(snapshot: &Snapshot, range: &Range<usize>) -> Vec<Action> {
    let mut actions = quick_fixes(&snapshot.diagnostics(), range);
    if let Snapshot::Mlir(mlir) = snapshot {
        let analysis = mlir.mlir();
        for refactor in refactor::refactors(&analysis.file, mlir.text(), range) {
            actions.push(Action {
                kind: match refactor.kind {
                    RefactorKind::Inline => ActionKind::Inline,
                    RefactorKind::Extract => ActionKind::Extract,
                },
                fix: refactor.fix,
                answers: vec![],
                preferred: false,
            });
        }
    }
    actions
}

/// The quick fixes of every diagnostic overlapping `range`. A fix that several
/// diagnostics carry (one tiling fix answers each indivisible dimension) is one
/// action that lists them all: one fix, one action.
fn quick_fixes(diagnostics: &[Diagnostic], range: &Range<usize>) -> Vec<Action> {
    let mut actions: Vec<Action> = Vec::new();
    for d in diagnostics
        .iter()
        .filter(|d| !d.fixes.is_empty() && ranges_touch(&d.range, range))
    {
        for (k, fix) in d.fixes.iter().enumerate() {
            if let Some(action) = actions.iter_mut().find(|a| a.fix == *fix) {
                action.answers.push(d.clone());
                continue;
            }
            actions.push(Action {
                kind: ActionKind::QuickFix,
                fix: fix.clone(),
                answers: vec![d.clone()],
                preferred: k == 0,
            });
        }
    }
    actions
}
