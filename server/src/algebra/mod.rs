//! The indexing-map algebra: affine expressions over dimension, range and runtime
//! variables, `IndexingMap` with its domain, and the simplifier.
//!
//! Plain library code: no LSP, no async, no tree-sitter types.
