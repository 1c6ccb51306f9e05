//! What the command line prints, checked whole: `maps`, `check`, `coalescing` and
//! `tiles` on shipped files, each compared with its snapshot under `tests/snapshots/`
//! (insta), so a change anywhere in the text shows up as a diff. Paths are given
//! relative to the repository, as a user in a checkout types them.

use crate::cli_support;

use cli_support::{run, stdout};

/// The output of `hlo-lsp ARGS` run at the repository's root, with its exit status.
fn printed(args: &[&str]) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.contains('/') && std::path::Path::new(root).join(a).exists() {
                format!("{root}/{a}")
            } else {
                a.to_string()
            }
        })
        .collect();
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&refs);
    let text = stdout(&output).replace(&format!("{root}/"), "");
    format!("{text}[exit {}]\n", output.status.code().unwrap_or(-1))
}

#[test]
fn maps_of_the_softmax_fusion() {
    insta::assert_snapshot!(printed(&["maps", "examples/softmax.hlo"]));
}

#[test]
fn maps_of_every_output_of_a_multi_output_fusion() {
    insta::assert_snapshot!(printed(&["maps", "examples/multi_output_fusion.hlo"]));
}

#[test]
fn maps_from_the_fusion_to_a_fused_instruction() {
    insta::assert_snapshot!(printed(&[
        "maps",
        "--from-fusion",
        "--instruction",
        "row_sum",
        "examples/softmax.hlo"
    ]));
}

#[test]
fn check_of_a_gpu_sample() {
    insta::assert_snapshot!(printed(&[
        "check",
        "tests/data/samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo"
    ]));
}

#[test]
fn check_of_a_cpu_dump_has_no_gpu_findings() {
    let text = printed(&["check", "tests/data/bench/transformer.after.hlo"]);
    assert!(!text.contains("uncoalesced-read"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn coalescing_of_a_transposed_operand() {
    insta::assert_snapshot!(printed(&[
        "coalescing",
        "tests/data/coalescing/rhs_transposed.hlo"
    ]));
}

#[test]
fn tiles_of_an_indivisible_split() {
    insta::assert_snapshot!(printed(&["tiles", "tests/data/tiling/split_6_by_4.hlo"]));
}

#[test]
fn diff_across_a_fusion_pass() {
    insta::assert_snapshot!(printed(&[
        "diff",
        "tests/data/dumps/step/module_0004.jit_step.0000.HLO_passes_after_layout_assignment.after_reshape-decomposer.before_fusion.txt",
        "tests/data/dumps/step/module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt"
    ]));
}

#[test]
fn mlir_of_bytedance_linalg_ext_ops() {
    insta::assert_snapshot!(printed(&["mlir", "tests/data/mlir/linalg_ext.mlir"]));
}

#[test]
fn mlir_check_of_errors() {
    insta::assert_snapshot!(printed(&["check", "tests/data/mlir/errors.mlir"]));
}

#[test]
fn simplify_of_a_reshape_map() {
    insta::assert_snapshot!(printed(&[
        "simplify",
        "(d0, d1) -> ((d0 * 8 + d1) floordiv 8, (d0 * 8 + d1) mod 8), domain: d0 in [0, 15], d1 in [0, 7]"
    ]));
}

#[test]
fn maps_json_of_the_softmax_fusion() {
    insta::assert_snapshot!(printed(&["maps", "--json", "examples/softmax.hlo"]));
}

/// JAX's CPU dumps of small programs carry no backend mark in their text; XLA printed
/// them after its pipeline (scheduled, with the entry layout), and no GPU mark means
/// the CPU's output: no GPU findings.
#[test]
fn check_of_unmarked_cpu_dumps_has_no_gpu_findings() {
    for dump in [
        "tests/data/jax/pooling.after.hlo",
        "tests/data/jax/reshape_transpose.after.hlo",
    ] {
        let text = printed(&["check", dump]);
        assert!(!text.contains("uncoalesced-read"), "{dump}: {text}");
    }
    // A GPU test module scheduled by hand keeps its finding.
    let gpu = printed(&[
        "check",
        "tests/data/samples/xla/xla__backends__gpu__tests__pdl.hlo",
    ]);
    assert!(gpu.contains("uncoalesced-read"), "{gpu}");
}
