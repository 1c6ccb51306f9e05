//! End-to-end tests of `hlo-lsp diff` through the real binary, on the JAX dump
//! directory `tests/data/dumps/step` (before optimization, before and after the
//! `fusion` pass, after optimization) and on a small pair whose fusion maps change.

use crate::cli_support;

use std::path::PathBuf;

use cli_support::{run, stdout, temp_file};

use serde_json::Value;

fn dumps() -> String {
    format!("{}/../tests/data/dumps/step", env!("CARGO_MANIFEST_DIR"))
}

fn dump(step: &str) -> String {
    let name = match step {
        "before" => "module_0004.jit_step.before_optimizations.txt",
        "pre-fusion" => "module_0004.jit_step.0000.HLO_passes_after_layout_assignment.after_reshape-decomposer.before_fusion.txt",
        "post-fusion" => "module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt",
        _ => "module_0004.jit_step.cpu_after_optimizations.txt",
    };
    format!("{}/{name}", dumps())
}

fn write(name: &str, text: &str) -> PathBuf {
    temp_file("cli-diff", name, text)
}

#[test]
fn the_fusion_pass_adds_fused_computations_and_fusions() {
    let out = run(&["diff", &dump("pre-fusion"), &dump("post-fusion")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("computations: 6 added, 0 removed, 4 changed, 4 unchanged\n"),
        "{text}"
    );
    assert!(
        text.contains("+ computation %fused_computation.2 (5 instructions)\n"),
        "{text}"
    );
    assert!(text.contains(
        "    + %compare_convert_fusion = s32[] fusion(%get-tuple-element.4), kind=kLoop, calls=%fused_computation.2\n"
    ), "{text}");
    assert!(
        text.contains("    - %gt.1 = pred[] compare(%reduce_sum.7, %constant.7), direction=GT\n"),
        "{text}"
    );
    // Metadata is not compared: the stack frame ids differ between the dumps.
    assert!(!text.contains("metadata"), "{text}");
}

#[test]
fn a_dump_directory_is_diffed_pass_by_pass_in_xla_order() {
    let out = run(&["diff", &dumps()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("--- ")).collect();
    assert_eq!(
        headers,
        [
            "--- module_0004.jit_step.before_optimizations.txt (before optimizations)",
            "--- module_0004.jit_step.0000.HLO_passes_after_layout_assignment.after_reshape-decomposer.before_fusion.txt (step 0: after reshape-decomposer (before fusion))",
            "--- module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt (step 1: after fusion (before fusion-wrapper))",
        ],
        "{text}"
    );
    // The nested jit is inlined before the fusion pass.
    assert!(
        text.contains("- computation %attention.8 (22 instructions)\n"),
        "{text}"
    );
}

#[test]
fn changed_fusion_maps_are_shown_side_by_side() {
    let before = "HloModule m\n\n%fused (p: f32[4,8]) -> f32[8,4] {\n  %p = f32[4,8] parameter(0)\n  ROOT %t = f32[8,4] transpose(%p), dimensions={1,0}\n}\n\nENTRY %main (a: f32[4,8]) -> f32[8,4] {\n  %a = f32[4,8] parameter(0)\n  ROOT %f = f32[8,4] fusion(%a), kind=kLoop, calls=%fused\n}\n";
    let after = before.replace("transpose(%p), dimensions={1,0}", "reshape(%p)");
    let (a, b) = (write("a.hlo", before), write("b.hlo", &after));
    let out = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains(
        "    maps of fusion %f (before │ after)\n      output 0 operand 0: (d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3] │ (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 4 + d1), domain: d0 in [0, 7], d1 in [0, 3]\n"
    ), "{text}");
    let out = run(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()]);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let main = &json["diffs"][0]["modules"][0]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "main")
        .cloned()
        .unwrap();
    assert_eq!(main["fusion_maps"][0]["fusion"], "f");
    assert_eq!(
        main["fusion_maps"][0]["rows"][0]["before"],
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]"
    );
}

#[test]
fn identical_dumps_and_bad_input() {
    let out = run(&["diff", &dump("after"), &dump("after")]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).ends_with("no change\n"));
    let out = run(&["diff", &dump("after"), "/nonexistent/file.hlo"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/file.hlo"));
    let out = run(&["diff", &dump("after")]);
    assert_eq!(out.status.code(), Some(2));
    // A truncated dump, or StableHLO, is refused in one line: never "no change".
    let text = std::fs::read_to_string(dump("after")).unwrap();
    let cut = write("truncated.txt", &text[..text.len() / 2]);
    let stablehlo = format!(
        "{}/../examples/softmax.stablehlo.mlir",
        env!("CARGO_MANIFEST_DIR")
    );
    for (path, says) in [
        (cut.to_str().unwrap(), "syntax error"),
        (stablehlo.as_str(), "this is StableHLO, not HLO text"),
    ] {
        let out = run(&["diff", path, path]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}
