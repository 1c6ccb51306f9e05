//! One version of a document in model terms: its chunks, the [`Unit`] of each (the
//! computation built from it, on first use) and the module index.
//!
//! An edit makes a new version that shares every unit whose chunk it did not touch,
//! so a computation is built once however much the rest of the file changes, and a
//! request builds only what it reads. Whole-file work ([`Document::build_all`],
//! [`Document::diagnostics`]) runs in parallel over the units.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::crossref;
use super::diagnostics::{codes, Diagnostic};
use super::module::{HloFile, Unit, Units};
use crate::blocks::Blocks;
use crate::syntax::{Chunk, ChunkKind, Splice, SyntaxDocument};

/// What an edit changed between two versions: the chunks replaced (`splice`) and the
/// replaced chunks themselves (their outlines say which names they defined and called).
#[derive(Debug, Clone)]
pub struct Change {
    pub splice: Splice,
    pub removed: Vec<Arc<Chunk>>,
}

impl Change {
    /// Whether the replacement chunks (in `units`, the new version's) name, call and
    /// delimit exactly what the replaced ones did: then no cross-reference changed.
    pub fn keeps_references(&self, units: &Blocks<Arc<Unit>>) -> bool {
        let added = units.range(self.splice.old.start..self.splice.old.start + self.splice.new_len);
        self.splice.new_len == self.removed.len()
            && added.zip(&self.removed).all(|(new, old)| {
                new.chunk.kind == old.kind && new.chunk.outline().same_references(old.outline())
            })
    }
}

impl Change {
    /// Whether the replacement chunks also keep the replaced ones' kinds and lengths
    /// (an edit that changes a digit): every chunk stays where it was, and the index
    /// of the last version holds for this one as it is (its module header too: a
    /// header edit never keeps it).
    pub fn keeps_places(&self, units: &Blocks<Arc<Unit>>) -> bool {
        let added = units.range(self.splice.old.start..self.splice.old.start + self.splice.new_len);
        self.keeps_references(units)
            && added.zip(&self.removed).all(|(new, old)| {
                new.chunk.len() == old.len() && new.chunk.kind == ChunkKind::Computation
            })
    }
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct Document {
    syntax: SyntaxDocument,
    /// `units[i]` belongs to chunk `i` of `syntax`.
    units: Units,
    file: OnceLock<HloFile>,
    /// [`Document::fingerprint_sum`], once made; each edit carries it over.
    fingerprint_sum: OnceLock<u64>,
}

impl Document {
    /// Splits `text` into chunks; nothing is parsed or built yet.
    pub fn parse(text: &str) -> Document {
        Document::from_syntax(SyntaxDocument::parse(text))
    }

    pub fn from_syntax(syntax: SyntaxDocument) -> Document {
        let units = Arc::new(
            syntax
                .chunks()
                .iter()
                .map(|c| Arc::new(Unit::new(c.chunk.clone())))
                .collect::<Blocks<_>>(),
        );
        Document {
            syntax,
            units,
            file: OnceLock::new(),
            fingerprint_sum: OnceLock::new(),
        }
    }

    /// The sum of every unit's [`Unit::fingerprint`] (each mixed, wrapping): equal
    /// for two versions whose units have the same fingerprints in any order. Made
    /// once, in parallel, by the first version that asks; an edit carries it over by
    /// the units it replaced and added (reading every unit's fingerprint again made
    /// each edit of a 60 MB dump walk 26,000 units scattered in memory).
    pub fn fingerprint_sum(&self) -> u64 {
        *self.fingerprint_sum.get_or_init(|| {
            self.units
                .par_iter()
                .map(|u| mixed(u.fingerprint()))
                .reduce(|| 0, u64::wrapping_add)
        })
    }

    pub fn syntax(&self) -> &SyntaxDocument {
        &self.syntax
    }

    /// The modules and their cross-references (from the outlines; cheap).
    pub fn file(&self) -> &HloFile {
        self.file
            .get_or_init(|| crossref::index(&self.syntax, &self.units, None))
    }

    /// The next version: this one with `start..old_end` replaced by `new_text`, and
    /// what changed. Units of untouched chunks are shared with this version.
    pub fn edited(&self, start: usize, old_end: usize, new_text: &str) -> (Document, Change) {
        let mut syntax = self.syntax.clone();
        let splice = syntax.edit(start, old_end, new_text);
        self.spliced(syntax, splice)
    }

    /// The next version with several edits inside one chunk made at once
    /// ([`SyntaxDocument::edit_within_chunk`]: one reparse for all of them); `None`
    /// when they are not all inside one chunk's body.
    pub fn edited_within_chunk(
        &self,
        edits: &[(std::ops::Range<usize>, String)],
    ) -> Option<(Document, Change)> {
        let mut syntax = self.syntax.clone();
        let splice = syntax.edit_within_chunk(edits)?;
        Some(self.spliced(syntax, splice))
    }

    /// This version's units and index carried over to `syntax`, which is this version's
    /// syntax with the chunks of `splice` replaced.
    fn spliced(&self, syntax: SyntaxDocument, splice: Splice) -> (Document, Change) {
        let mut units = Blocks::clone(&self.units);

        let fresh = syntax
            .chunks()
            .range(splice.old.start..splice.old.start + splice.new_len)
            .map(|c| Arc::new(Unit::new(c.chunk.clone())));
        let removed = units
            .splice(splice.old.clone(), fresh)
            .into_iter()
            .map(|u| u.chunk.clone())
            .collect();
        let fingerprint_sum = OnceLock::new();
        if let Some(&sum) = self.fingerprint_sum.get() {
            let added = units.range(splice.old.start..splice.old.start + splice.new_len);
            let sum = added.fold(sum, |s, u| s.wrapping_add(mixed(u.fingerprint())));
            let removed = self.units.range(splice.old.clone());
            let sum = removed.fold(sum, |s, u| s.wrapping_sub(mixed(u.fingerprint())));
            let _ = fingerprint_sum.set(sum);
        }
        let change = Change { splice, removed };
        let units = Arc::new(units);
        // An edit that leaves every name, call and module boundary alone keeps the
        // cross-references: the index is made now, sharing them.
        let file = match self.file.get() {
            Some(previous) if change.keeps_places(&units) => OnceLock::from(HloFile {
                modules: previous
                    .modules
                    .iter()
                    .map(|m| m.with_units(&units))
                    .collect(),
                diagnostics: Vec::new(),
            }),
            Some(previous) if change.keeps_references(&units) => {
                OnceLock::from(crossref::index(&syntax, &units, Some(previous)))
            }
            _ => OnceLock::new(),
        };
        let document = Document {
            syntax,
            units,
            file,
            fingerprint_sum,
        };
        (document, change)
    }

    /// Builds every unit not built yet, in parallel.
    pub fn build_all(&self) {
        self.units.par_iter().for_each(|u| {
            u.built();
        });
    }

    /// The units, one per chunk.
    pub fn units(&self) -> &Blocks<Arc<Unit>> {
        &self.units
    }

    /// What chunk `i` alone shows to be wrong (syntax errors, and what its computation
    /// alone shows), in document bytes. Builds the chunk.
    pub fn own_diagnostics(&self, i: usize) -> impl Iterator<Item = Diagnostic> + '_ {
        let start = self.syntax.chunks().at(i).start;
        self.units[i]
            .built()
            .diagnostics
            .iter()
            .map(move |d| d.shifted(start))
    }

    /// The syntax errors of every chunk, in document bytes and order. Cheap once the
    /// chunks are built (each keeps its own); builds the others.
    pub fn syntax_errors(&self) -> Vec<Diagnostic> {
        // Building is what finds them: every unit in parallel first.
        self.build_all();
        (0..self.units.len())
            .flat_map(|i| {
                self.own_diagnostics(i)
                    .filter(|d| d.code == codes::SYNTAX_ERROR)
            })
            .collect()
    }

    /// Every diagnostic of the model: each chunk's own and each computation's
    /// cross-references ([`crossref::diagnostics`]), in document bytes, unsorted.
    /// Builds everything.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.build_all();
        let own = (0..self.units.len())
            .into_par_iter()
            .flat_map_iter(|i| self.own_diagnostics(i).collect::<Vec<_>>());
        let file = self.file();
        let across = file.modules.par_iter().flat_map(|m| {
            m.computations()
                .collect::<Vec<_>>()
                .into_par_iter()
                .flat_map_iter(|c| crossref::diagnostics(m, c))
        });
        own.chain(across).collect()
    }

    /// The index, built whole and owned (the document's units stay shared with it).
    pub fn into_file(self) -> HloFile {
        self.file();
        self.file.into_inner().unwrap_or_default()
    }
}

/// Parses `text` and builds the whole model: the convenience entry point for tests,
/// the CLI and the analysis. [`HloFile::diagnostics`] holds every model diagnostic
/// (syntax errors, each computation's own, cross-references), sorted by position.
pub fn parse_hlo(text: &str) -> HloFile {
    let document = Document::parse(text);
    let mut diagnostics = document.diagnostics();
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end, d.severity));
    let mut file = document.into_file();
    file.diagnostics = diagnostics;
    file
}

/// A fingerprint spread over all 64 bits (splitmix64's finalizer), so that sums of
/// them ([`Document::fingerprint_sum`]) do not cancel by accident.
fn mixed(fingerprint: u64) -> u64 {
    let mut z = fingerprint.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an index says about each module: compared between an edited version and
    /// a fresh open of its text.
    fn summary(file: &HloFile) -> Vec<String> {
        file.modules
            .iter()
            .map(|m| {
                let names: Vec<_> = m.computations().map(|c| c.name.to_string()).collect();
                format!(
                    "{:?} {:?} {:?} {} {:?} {:?} {names:?} {:?}",
                    m.name,
                    m.range,
                    m.header_range,
                    m.compiled,
                    m.places,
                    m.entry_computation().map(|c| c.name.to_string()),
                    m.callers_of_name("fused_computation"),
                )
            })
            .collect()
    }

    /// An edit that leaves every chunk where it was (a digit changed) keeps the last
    /// version's index, shared; that index is the one a fresh open of the text makes.
    /// An edit that moves chunks does not share it.
    #[test]
    fn an_edit_that_moves_no_chunk_keeps_the_index_of_a_fresh_open() {
        let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/jax");
        let text = std::fs::read_to_string(format!("{data}/attention.after.hlo")).unwrap();
        let mut document = Document::parse(&text);
        let mut text = text;
        // Shapes of instructions, inside computations' bodies.
        let in_body =
            |at: usize| text[text[..at].rfind('\n').map_or(0, |p| p + 1)..].starts_with("  ");
        let digits: Vec<usize> = text
            .match_indices("f32[")
            .map(|(at, _)| at + 4)
            .filter(|&at| in_body(at))
            .collect();
        assert!(digits.len() > 20);
        for &at in digits.iter().step_by(digits.len() / 10) {
            document.file();
            let new = if &text[at..at + 1] == "7" { "6" } else { "7" };
            let (next, _) = document.edited(at, at + 1, new);
            text.replace_range(at..at + 1, new);
            let shared = Arc::ptr_eq(
                &document.file().modules[0].places,
                &next.file().modules[0].places,
            );
            assert!(shared, "the edit at {at} moved no chunk");
            assert_eq!(summary(next.file()), summary(Document::parse(&text).file()));
            document = next;
        }
        document.file();
        let (moved, _) = document.edited(digits[3], digits[3] + 1, "12");
        let shared = Arc::ptr_eq(
            &document.file().modules[0].places,
            &moved.file().modules[0].places,
        );
        assert!(!shared, "a longer shape moves the chunks after it");
        text.replace_range(digits[3]..digits[3] + 1, "12");
        assert_eq!(
            summary(moved.file()),
            summary(Document::parse(&text).file())
        );
    }
}
