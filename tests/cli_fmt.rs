//! End-to-end tests of `hlo-lsp fmt` through the built binary: a hand-written module
//! printed as XLA prints it in both forms, `--check` naming the first line that
//! differs (exit 1) and passing on XLA's own dump, `--write`, a comment kept beside
//! its instruction, and a file with a syntax error refused with its line.

use crate::cli_support::{run, stderr, stdout, temp_file};

const HAND_WRITTEN: &str = "HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(p), metadata={op_name=\"n\"}, sharding={replicated}\n}\n";

const SHORT: &str = "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n\
ENTRY %e (p: f32[2,3]) -> f32[2,3] {\n  %p = f32[2,3]{1,0} parameter(0)\n  \
ROOT %n = f32[2,3]{1,0} negate(%p), sharding={replicated}, metadata={op_name=\"n\"}\n}\n\n";

fn data(path: &str) -> String {
    format!("{}/../tests/data/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn prints_a_hand_written_module_as_xla_does() {
    let file = temp_file("cli_fmt", "hand.hlo", HAND_WRITTEN);
    let path = file.to_string_lossy().to_string();
    let out = run(&["fmt", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), SHORT);
    let long = run(&["fmt", "--style", "long", &path]);
    assert!(long.status.success(), "{}", stderr(&long));
    assert_eq!(
        stdout(&long),
        SHORT.replace("negate(%p)", "negate(f32[2,3]{1,0} %p)")
    );
}

#[test]
fn check_names_the_first_line_that_differs() {
    let file = temp_file("cli_fmt", "check.hlo", HAND_WRITTEN);
    let out = run(&["fmt", "--check", &file.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("check.hlo:1: not formatted as XLA prints it"),
        "{err}"
    );
    assert!(err.contains("entry_computation_layout"), "{err}");
}

#[test]
fn check_passes_on_xla_dumps_in_their_own_form() {
    for dump in [
        "jax/softmax.after.hlo",
        "dumps/step/module_0004.jit_step.cpu_after_optimizations.txt",
    ] {
        let out = run(&["fmt", "--check", &data(dump)]);
        assert!(out.status.success(), "{dump}: {}", stderr(&out));
        let short = run(&["fmt", "--check", "--style", "short", &data(dump)]);
        assert!(short.status.success(), "{dump}: {}", stderr(&short));
        let long = run(&["fmt", "--check", "--style", "long", &data(dump)]);
        assert_eq!(
            long.status.code(),
            Some(1),
            "{dump}: the long form adds operand shapes"
        );
    }
}

#[test]
fn write_formats_in_place_and_then_check_passes() {
    let file = temp_file("cli_fmt", "write.hlo", HAND_WRITTEN);
    let path = file.to_string_lossy().to_string();
    let out = run(&["fmt", "--write", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).expect("written"), SHORT);
    assert!(run(&["fmt", "--check", &path]).status.success());
}

#[test]
fn a_comment_is_kept_above_its_instruction() {
    let text =
        "HloModule m\n\nENTRY e {\n  // keep me\n  ROOT p = f32[] parameter(0) // and me\n}\n";
    let file = temp_file("cli_fmt", "comment.hlo", text);
    let out = run(&["fmt", "--write", &file.to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).expect("written");
    assert!(
        written.contains("{\n  // keep me\n  ROOT %p = f32[] parameter(0) // and me\n}"),
        "{written}"
    );
}

#[test]
fn a_syntax_error_is_refused_with_its_line() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT = negate(p)\n}\n";
    let file = temp_file("cli_fmt", "broken.hlo", text);
    let out = run(&["fmt", "--write", &file.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.hlo:5:"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), text);
}
