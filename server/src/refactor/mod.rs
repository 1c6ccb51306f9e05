//! Refactorings the indexing maps justify: reshape-chain quick fixes.
//!
//! A chain of reshapes, bitcasts and transposes whose intermediates feed only the
//! next member ([`chain`]) composes to one output-to-input map ([`maps`]). When that
//! map is the identity on an unchanged shape the chain can go; when it is the map of
//! a single transpose, reshape or bitcast the chain can become that op. Each fix is
//! verified (the replacement's map equals the chain's) before it is offered, and its
//! edits ([`rewrite`]) ride on a `Hint` diagnostic, so `hlo-lsp check`, the published
//! diagnostics and `textDocument/codeAction` all see the same findings.
//!
//! Library code only: byte ranges and [`model::Diagnostic`]s, no LSP types. A
//! computation is analyzed on its own chunk: `text` is the chunk's text and every
//! range is relative to it until [`computation_diagnostics`] places the findings.

pub mod chain;
pub mod maps;
pub mod rewrite;

use crate::model::{self, codes, Computation, ComputationRef, Diagnostic, Fix, HloFile, Severity};

use crate::algebra::IndexingMap;
use chain::{maximal_chains, Chain};
use maps::Replacement;

/// Longest window of a maximal chain that is tried as one fix: windows cost one
/// composition each and real chains are short.
pub const MAX_WINDOW: usize = 8;

/// One finding: a window of a chain and its verified replacements (best first).
#[derive(Debug, Clone)]
pub struct Finding {
    pub chain: Chain,
    pub replacements: Vec<Replacement>,
}

/// Whether `replacements` make the window worth a diagnostic: a single op only when
/// it can go, a longer window when it can go or shrink to one op.
fn useful(window_len: usize, replacements: &[Replacement]) -> bool {
    match window_len {
        0 => false,
        1 => replacements.contains(&Replacement::Remove),
        _ => !replacements.is_empty(),
    }
}

/// The findings of one computation: in each maximal chain, the longest windows with
/// a fix, left to right, not overlapping each other.
pub fn findings(text: &str, c: &Computation) -> Vec<Finding> {
    let mut found = Vec::new();
    for chain in maximal_chains(text, c) {
        let n = chain.members.len();
        let windows = window_maps(c, &chain);
        let mut taken = vec![false; n];
        for len in (1..=n.min(MAX_WINDOW)).rev() {
            for start in 0..=n - len {
                if taken[start..start + len].iter().any(|&t| t) {
                    continue;
                }
                let Some(composed) = &windows[start + len - 1][len - 1] else {
                    continue;
                };
                let window = chain.window(start, start + len);
                let replacements = maps::replacements_for(c, &window, composed);
                if useful(len, &replacements) {
                    taken[start..start + len].iter_mut().for_each(|t| *t = true);
                    found.push(Finding {
                        chain: window,
                        replacements,
                    });
                }
            }
        }
    }
    found.sort_by_key(|f| c.instruction(f.chain.members[0]).range.start);
    found
}

/// `maps[end][len - 1]`: the composed map of the window of `len` members ending at
/// member `end`, built right to left so each window costs one composition.
fn window_maps(c: &Computation, chain: &Chain) -> Vec<Vec<Option<IndexingMap>>> {
    let members: Vec<Option<IndexingMap>> = chain
        .members
        .iter()
        .map(|&id| maps::member_map(c, id))
        .collect();
    (0..members.len())
        .map(|end| {
            let mut windows = Vec::with_capacity(MAX_WINDOW);
            let mut acc = members[end].clone().map(|mut m| {
                m.simplify();
                m
            });
            windows.push(acc.clone());
            for start in (end.saturating_sub(MAX_WINDOW - 1)..end).rev() {
                acc = match (&acc, &members[start]) {
                    (Some(w), Some(m)) => maps::extend(w, m),
                    _ => None,
                };
                windows.push(acc.clone());
            }
            windows
        })
        .collect()
}

/// A one-line description of the chain's shapes: `f32[10,10,10] -> f32[50,20] -> ...`.
fn describe(text: &str, c: &Computation, chain: &Chain) -> String {
    std::iter::once(chain.source)
        .chain(chain.members.iter().copied())
        .map(|id| {
            let i = c.instruction(id);
            text.get(i.shape_range.range())
                .unwrap_or("?")
                .trim()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// The diagnostic (with its fixes) of one finding; `None` when no fix's edits can
/// be built from the text's ranges.
fn diagnostic(text: &str, c: &Computation, f: &Finding) -> Option<Diagnostic> {
    let fixes: Vec<(&Replacement, Fix)> = f
        .replacements
        .iter()
        .filter_map(|r| Some((r, rewrite::fix(text, c, &f.chain, r)?)))
        .collect();
    let (best, _) = fixes.first()?;
    let first = c.instruction(f.chain.members[0]);
    let last = c.instruction(f.chain.last());
    let shapes = describe(text, c, &f.chain);
    let n = f.chain.members.len();
    let (code, message) = match (n, best) {
        (1, _) => (
            codes::NOOP_RESHAPE,
            format!(
                "`{}` is a no-op {} ({shapes}, identity map): it can be removed",
                last.name,
                last.opcode.name()
            ),
        ),
        (_, Replacement::Remove) => (
            codes::RESHAPE_CHAIN,
            format!(
                "these {n} instructions compose to the identity ({shapes}): they can be removed"
            ),
        ),
        (_, other) => (
            codes::RESHAPE_CHAIN,
            format!(
                "these {n} instructions compose to a single {} ({shapes})",
                other.opcode().unwrap_or("op")
            ),
        ),
    };
    // Members are usually in text order; the span covers them even when not.
    let members = f.chain.members.iter().map(|&id| c.instruction(id).range);
    let start = members
        .clone()
        .map(|r| r.start)
        .min()
        .unwrap_or(first.range.start);
    let end = members.map(|r| r.end).max().unwrap_or(last.range.end);
    let mut d = Diagnostic::new(start as usize..end as usize, Severity::Hint, code, message);
    for (_, fix) in fixes {
        d = d.with_fix(fix);
    }
    Some(d)
}

/// Every reshape-chain and no-op diagnostic of the file, fixes attached (a
/// whole-file form of [`computation_diagnostics`], a [`crate::checks::SOURCES`] entry).
pub fn diagnostics(file: &HloFile) -> Vec<Diagnostic> {
    file.all_computations()
        .flat_map(|(_, c)| computation_diagnostics(c))
        .collect()
}

/// The reshape-chain and no-op diagnostics of one computation, in document bytes.
pub fn computation_diagnostics(c: ComputationRef) -> Vec<Diagnostic> {
    findings(c.text, c.model())
        .iter()
        .filter_map(|f| diagnostic(c.text, c.model(), f))
        .map(|d| d.shifted(c.offset))
        .collect()
}

/// Convenience for tests and tools: parse `text` and list its diagnostics.
pub fn diagnostics_of(text: &str) -> Vec<Diagnostic> {
    diagnostics(&model::parse_hlo(text))
}

#[cfg(test)]
mod tests;
