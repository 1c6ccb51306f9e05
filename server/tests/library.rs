//! The library's tests, one binary: conformance suites (XLA's and tinygrad's vectors),
//! property and differential tests, golden snapshots of what users read, and the
//! architecture's rules. One module per former test crate (the files keep their
//! names); linking one binary instead of one per file is most of what `cargo test`
//! saves on a two-core machine.

mod algebra_support;
// `fuzz_support` includes it too, for the cargo-fuzz crate that has no `library`.
#[allow(clippy::duplicate_mod)]
mod analysis_support;
mod conformance_support;
mod fuzz_support;
#[path = "../../tests/profile_samples.rs"]
mod profile_samples;

mod algebra_conformance;
mod algebra_hostile;
mod algebra_properties;
mod algebra_reshape;
mod analysis_conformance;
mod analysis_fusion;
mod analysis_ops;
mod analysis_print_roundtrip;
mod analysis_sharing;
mod analysis_utilization;
mod architecture;
mod checks_incremental;
mod coalescing_bruteforce;
mod coalescing_conformance;
mod coalescing_memo;
mod coalescing_robustness;
mod collective_conformance;
mod collective_properties;
mod completion_measure;
mod cost_conformance;
mod device_peak_rates;
mod dot_cost;
mod dump_history;
mod format_conformance;
mod format_properties;
mod fusible_conformance;
mod fusible_priority;
mod fusion_run;
mod fuzz_regressions;
mod graph_dataflow;
mod hlo_cost_conformance;
mod ide_completion;
mod ide_golden;
mod loops_conformance;
mod loops_samples;
mod memory_timeline;
mod memory_xla;
mod memory_xprof;
mod mlir_analysis;
mod mlir_linalg_ext;
mod mlir_seed_examples;
mod mlir_stablehlo;
mod mlir_stablehlo_mutations;
mod mlir_stablehlo_oracle;
mod model_diagnostics;
mod model_proptest;
mod model_samples;
mod navigation_hostile;
mod parser_conformance;
mod profile_xprof;
mod quick_read;
mod refactor_props;
mod refactor_samples;
mod sharding_conformance;
mod sharding_predict;
mod sharding_programs;
mod syntax_corpus;
mod syntax_errors;
mod syntax_fuzz;
mod syntax_incremental;
mod syntax_lines;
mod syntax_samples;
mod tiling_propagation;
mod tiling_report;
