//! The tree-sitter grammar of XLA's HLO text format.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser.set_language(&tree_sitter_hlo::LANGUAGE.into()).expect("ABI 14 loads");
//! let tree = parser.parse("HloModule m\n", None).unwrap();
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! Node kinds and fields are documented in `docs/contracts.md` at the repository root
//! and listed in [`NODE_TYPES`].

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_hlo() -> *const ();
}

/// The tree-sitter [`LanguageFn`] of this grammar.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_hlo) };

/// The content of the [`node-types.json`] file of this grammar.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// Syntax highlighting query.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");
/// Definitions and references of instruction and computation names.
pub const LOCALS_QUERY: &str = include_str!("../../queries/locals.scm");
/// Code navigation tags (computations and instructions).
pub const TAGS_QUERY: &str = include_str!("../../queries/tags.scm");
/// Language injections (JSON in `backend_config`).
pub const INJECTIONS_QUERY: &str = include_str!("../../queries/injections.scm");
/// Folding ranges.
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");

#[cfg(test)]
mod tests {
    #[test]
    fn loads_the_grammar() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&super::LANGUAGE.into())
            .expect("Error loading HLO parser");
    }
}
