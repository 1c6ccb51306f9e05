//! HLO text as chunks (module header, table, computation, separator), split by a
//! fast byte scan ([`split`]); each chunk owns its text ([`chunk`]), has an outline
//! from a byte scan ([`outline`]) and parses to its own tree-sitter tree on demand,
//! incrementally after an edit ([`SyntaxDocument::edit`]).
//!
//! Node kinds and fields are the contract in `docs/contracts.md`; positions in a
//! chunk's tree are relative to the chunk, [`Placed::abs`] makes them absolute.

pub mod chunk;
mod document;
mod errors;
mod line_index;
pub mod outline;
pub mod quick;
pub mod split;

pub use chunk::{Chunk, ChunkKind};
pub use document::{Layout, Placed, Splice, SyntaxDocument};
pub use errors::SyntaxError;
pub use line_index::{line_col, LineIndex};
pub use outline::Outline;

/// The HLO tree-sitter language.
/// Whether byte ranges `a` and `b` overlap or touch: a cursor (an empty range) at
/// either end of a name, a diagnostic or a computation selects it.
pub fn ranges_touch(a: &std::ops::Range<usize>, b: &std::ops::Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

pub fn language() -> tree_sitter::Language {
    tree_sitter_hlo::LANGUAGE.into()
}

/// A parser set to the HLO language.
pub fn new_parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&language())
        .expect("the bundled grammar's ABI is supported by the tree-sitter crate");
    parser
}
