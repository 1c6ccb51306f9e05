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
