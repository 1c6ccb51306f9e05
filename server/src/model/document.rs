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
use super::diagnostics::Diagnostic;
use super::module::{HloFile, Unit};
use crate::syntax::{Splice, SyntaxDocument};

/// See the module docs.
#[derive(Debug, Default)]
pub struct Document {
    syntax: SyntaxDocument,
    /// `units[i]` belongs to chunk `i` of `syntax`.
    units: Vec<Arc<Unit>>,
    file: OnceLock<HloFile>,
}

impl Document {
    /// Splits `text` into chunks; nothing is parsed or built yet.
    pub fn parse(text: &str) -> Document {
        Document::from_syntax(SyntaxDocument::parse(text))
    }

    pub fn from_syntax(syntax: SyntaxDocument) -> Document {
        let units = syntax
            .chunks()
            .iter()
            .map(|c| Arc::new(Unit::new(c.chunk.clone())))
            .collect();
        Document {
            syntax,
            units,
            file: OnceLock::new(),
        }
    }

    pub fn syntax(&self) -> &SyntaxDocument {
        &self.syntax
    }

    /// The modules and their cross-references (from the outlines; cheap).
    pub fn file(&self) -> &HloFile {
        self.file
            .get_or_init(|| crossref::index(&self.syntax, &self.units))
    }

    /// The next version: this one with `start..old_end` replaced by `new_text`.
    /// Units of untouched chunks are shared with this version.
    pub fn edited(&self, start: usize, old_end: usize, new_text: &str) -> Document {
        let mut syntax = self.syntax.clone();
        let Splice { old, new_len } = syntax.edit(start, old_end, new_text);
        let mut units = self.units.clone();
        let fresh = syntax.chunks()[old.start..old.start + new_len]
            .iter()
            .map(|c| Arc::new(Unit::new(c.chunk.clone())));
        units.splice(old, fresh);
        Document {
            syntax,
            units,
            file: OnceLock::new(),
        }
    }

    /// Builds every unit not built yet, in parallel.
    pub fn build_all(&self) {
        self.units.par_iter().for_each(|u| {
            u.built();
        });
    }

    /// Every diagnostic of the model: each chunk's own (syntax errors and what its
    /// computation alone shows) and each computation's cross-references, in document
    /// bytes, unsorted. Builds everything.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.build_all();
        let own = self
            .syntax
            .chunks()
            .par_iter()
            .zip(&self.units)
            .flat_map_iter(|(placed, unit)| {
                unit.built()
                    .diagnostics
                    .iter()
                    .map(|d| d.shifted(placed.start))
                    .collect::<Vec<_>>()
            });
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
