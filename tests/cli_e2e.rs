//! End-to-end tests of the command line: each module runs the built `hlo-lsp` binary
//! on files and checks what it prints and its exit status. One test binary for them all
//! (linking one per file was most of `cargo test`'s time on two cores).

mod cli_support;
mod profile_samples;

mod cli_check;
mod cli_coalescing;
mod cli_cost;
mod cli_device;
mod cli_diff;
mod cli_fmt;
mod cli_gemm;
mod cli_golden;
mod cli_graph;
mod cli_history;
mod cli_hostile;
mod cli_maps;
mod cli_memory;
mod cli_parse;
mod cli_performance_model;
mod cli_profile;
mod cli_profile_views;
mod cli_sharding;
mod cli_simplify;
mod cli_step;
mod mlir_cli;
mod refactor_check;
mod tiling_cli;
