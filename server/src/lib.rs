//! hlo-lsp: XLA indexing maps for HLO text, as a library, a CLI and a language server.
//!
//! Data flows one way (see `ARCHITECTURE.md` at the repository root):
//! text → [`syntax`] (tree-sitter trees, one per computation) → [`model`] (typed HLO)
//! → [`analysis`] (indexing maps, built on [`algebra`]) → [`cli`] or [`lsp`].
//!
//! Only [`lsp`] knows LSP types, JSON-RPC and async; everything else is plain,
//! synchronous Rust usable from tests and the CLI.

pub mod algebra;
pub mod analysis;
pub mod blocks;
pub mod budget;
pub mod checks;
pub mod cli;
pub mod coalescing;
pub mod cost;
pub mod device;
pub mod dump;
pub mod format;
pub mod fusible;
pub mod graph;
pub mod hover;
pub mod ide;
pub mod language;
pub mod loops;
pub mod lsp;
pub mod memory;
pub mod mlir;
pub mod model;
pub mod profile;
pub mod refactor;
pub mod sharding;
pub mod syntax;
pub mod tiling;
pub mod units;
pub mod xml;
