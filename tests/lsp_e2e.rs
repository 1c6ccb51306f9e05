//! End-to-end tests of the language server: each module drives the built binary over
//! stdio as an editor does (protocol, features, resilience, a soak run). One test
//! binary for them all (linking one per file was most of `cargo test`'s time).

mod lsp_support;

mod lsp_coalescing;
mod lsp_completion;
mod lsp_cost;
mod lsp_features;
mod lsp_formatting;
mod lsp_fusion_outputs;
mod lsp_graph;
mod lsp_history;
mod lsp_hover_layout;
mod lsp_memory;
mod lsp_navigation;
mod lsp_profile;
mod lsp_protocol;
mod lsp_resilience;
mod lsp_soak;
mod mlir_lsp;
mod refactor_lsp;
mod tiling_lsp;
