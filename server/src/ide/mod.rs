//! The editor features on plain types: what a hover, an inlay hint, a definition, a
//! rename or a document symbol says at a byte offset of a document's version, with no
//! LSP type, no JSON and no async (rust-analyzer's `ide` crate is the model).
//!
//! The server (`lsp`) converts positions and protocol types, routes each request by
//! the snapshot's language ([`Snapshot::Hlo`] or [`Snapshot::Mlir`]) to the feature
//! here, and converts the answer back. Tests call these functions directly
//! (`tests/ide/`), so what a user reads is checked without a server.
//!
//! * [`snapshot`]: a document's version and what is derived from it once (diagnostics,
//!   the analysis view, fused maps, stack frames, the MLIR analysis), under [`memo`];
//! * [`hover`] (laid out by [`crate::hover`]) with the map sections from [`maps`];
//! * [`inlay_hints`], [`navigation`] (definition, references, rename, symbols),
//!   [`source`] (the `Source:` line and document links), [`mlir`] (the same for
//!   `.mlir` documents);
//! * [`code_actions`]: the quick fixes of the findings at a range, and MLIR refactorings;
//! * [`completion`] (HLO; [`completion_mlir`] for StableHLO) and [`signature_help`],
//!   both reading the instruction being typed with [`typing`] (the text as typed does
//!   not parse);
//! * [`cost`], [`profile`]: what a kernel is estimated to cost and what a profile
//!   measured it to take (lenses, hover lines, rankings);
//! * [`config`]: the user's choices the features need.

pub mod call_hierarchy;
pub mod code_actions;
pub mod completion;
pub mod completion_mlir;
pub mod config;
pub mod cost;
pub mod folding;
pub mod graph;
pub mod history;
pub mod hover;
pub mod inlay_hints;
pub mod maps;
pub mod memo;
pub mod memory;
pub mod mlir;
pub mod module_wide;
pub mod navigation;
pub mod pool;
pub mod profile;
pub mod reaper;
pub mod semantic_tokens;
pub mod sharding;
pub mod signature_help;
pub mod snapshot;
pub mod source;
pub mod typing;

pub use config::{Config, InlayHintMode};
pub use snapshot::{HloSnapshot, MlirSnapshot, ModuleAnswers, Snapshot};

/// Whether `offset` is in `range` or at either end of it (a cursor right after a
/// name is on it).
pub fn touches(range: &std::ops::Range<usize>, offset: usize) -> bool {
    range.start <= offset && offset <= range.end
}
