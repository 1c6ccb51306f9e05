//! StableHLO (and `mhlo`/`chlo`) read onto the HLO model: every function and
//! region becomes a computation, every op the HLO instruction XLA's
//! `stablehlo-to-hlo` conversion makes of it, named by its SSA value (`%3`), so
//! the maps, hover, inlay hints and checks of the HLO side apply unchanged; no
//! second indexing analysis. The instructions are written as HLO text
//! ([`Translation::hlo`]), which the HLO model reads as any other module, and
//! [`Translation::lines`] maps each instruction back to its op in the `.mlir` text,
//! so every position shown lands on the op it is about.
//!
//! Never fails: an op it cannot convert becomes a `custom-call` (the graph stays
//! whole; its own maps are unknown) with a positioned diagnostic.

pub mod conv;
pub mod emit;
pub mod sharding;
pub mod signature;
pub mod summary;
pub mod types;
pub mod view;

use std::ops::Range;

use super::reader::MlirFile;
use crate::model::Diagnostic;

/// A StableHLO document as HLO text, with the way back.
#[derive(Clone, Debug, Default)]
pub struct Translation {
    /// An HLO module: one computation per function and region.
    pub hlo: String,
    /// One per instruction, in the order of [`Self::hlo`].
    pub lines: Vec<Line>,
    /// What could not be converted, positioned in the MLIR text.
    pub diagnostics: Vec<Diagnostic>,
}

/// An HLO instruction of the translation and the op it comes from.
#[derive(Clone, Debug)]
pub struct Line {
    /// The instruction's line in [`Translation::hlo`].
    pub hlo: Range<usize>,
    /// Its name there.
    pub hlo_name: Range<usize>,
    /// The value it stands for in the MLIR text (a result, a block argument), or the
    /// op's name when the op has no result (a return's tuple).
    pub mlir_name: Range<usize>,
    /// The op's header in the MLIR text (the argument for a parameter).
    pub mlir_op: Range<usize>,
    /// Whether it is the instruction named by the MLIR value: an op written as
    /// several instructions (a reshape before a broadcast, `get-tuple-element`s
    /// after a multi-result op) has one, and the others are its helpers.
    pub primary: bool,
}

impl Translation {
    /// The HLO offset of what is at `offset` of the MLIR text: the instruction of the
    /// value or op there.
    pub fn to_hlo(&self, offset: usize) -> Option<usize> {
        let named = self
            .lines
            .iter()
            .find(|l| l.mlir_name.start <= offset && offset <= l.mlir_name.end);
        let line = named.or_else(|| {
            self.lines
                .iter()
                .filter(|l| l.mlir_op.start <= offset && offset <= l.mlir_op.end)
                .min_by_key(|l| l.mlir_op.len())
        })?;
        Some(line.hlo_name.start + 1)
    }

    /// The MLIR range of an HLO range: the value when it is the instruction's name,
    /// else the op.
    pub fn to_mlir(&self, hlo: Range<usize>) -> Option<Range<usize>> {
        let line = self.line_at(hlo.start)?;
        if line.hlo_name.start <= hlo.start && hlo.end <= line.hlo_name.end {
            Some(line.mlir_name.clone())
        } else {
            Some(line.mlir_op.clone())
        }
    }

    /// The line of the instruction at HLO offset `hlo`.
    pub fn line_at(&self, hlo: usize) -> Option<&Line> {
        self.lines
            .iter()
            .find(|l| l.hlo.start <= hlo && hlo <= l.hlo.end)
    }

    /// The line of the instruction named `name` (`%3`) in computation order.
    pub fn line_named(&self, name: &str) -> Option<&Line> {
        self.lines
            .iter()
            .find(|l| &self.hlo[l.hlo_name.clone()] == name)
    }
}

/// Whether the file holds StableHLO, `mhlo` or `chlo` ops.
pub fn is_stablehlo(file: &MlirFile) -> bool {
    file.ops.iter().any(|o| view::is_hlo_dialect(&o.name))
}

/// Converts the functions of `file` (read from `src`).
pub fn translate(src: &str, file: &MlirFile) -> Translation {
    emit::Emitter::new(src, file).run()
}
