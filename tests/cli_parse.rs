//! End-to-end: `hlo-lsp parse FILE [--sexp]` through the built binary.

use crate::cli_support;

use std::path::PathBuf;

use cli_support::{repo_file, run};

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    cli_support::temp_file("cli-parse", name, contents)
}

#[test]
fn clean_file_exits_zero_and_prints_nothing() {
    let path = &repo_file("tests/data/jax/softmax.after.hlo");
    let out = run(&["parse", path]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn errors_are_printed_as_file_line_col_and_exit_one() {
    let path = temp_file(
        "broken.hlo",
        b"e {\n  a = f32[] parameter(0)\n  b = f32[] negate\n  c = f32[] negate(a)\n}\n",
    );
    let shown = path.display().to_string();
    let out = run(&["parse", &shown]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let expected_prefix = format!("{shown}:3:");
    assert!(lines[0].starts_with(&expected_prefix), "{stdout}");
    assert!(
        lines[0].contains(": error: expected operand list after opcode 'negate'"),
        "{stdout}"
    );
}

#[test]
fn sexp_prints_the_tree() {
    let path = temp_file(
        "ok.hlo",
        b"HloModule m\nENTRY e {\n  ROOT a = f32[] constant(1)\n}\n",
    );
    let out = run(&["parse", path.to_str().unwrap(), "--sexp"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("(module_header name: (identifier))"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(instruction root: (root) name: (name) shape: (shape) opcode: (opcode)"),
        "{stdout}"
    );
}

#[test]
fn missing_file_is_one_line_and_exit_two() {
    let out = run(&["parse", "/nonexistent/dir/x.hlo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("/nonexistent/dir/x.hlo") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn directory_is_unreadable_exit_two() {
    let out = run(&["parse", std::env::temp_dir().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}

#[test]
fn non_utf8_file_is_one_line_and_exit_two() {
    let path = temp_file("latin1.hlo", b"HloModule m\n// caf\xe9\n");
    let out = run(&["parse", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");
}

/// An empty file, or one of comments only, has no syntax error yet nothing XLA
/// reads: the same error as `check`'s at 1:1 and exit 1, not silence and 0.
#[test]
fn a_file_with_nothing_in_it_is_an_error() {
    for (name, text) in [
        ("empty.hlo", &b""[..]),
        ("comments.hlo", b"// nothing here yet\n\n"),
    ] {
        let shown = temp_file(name, text).display().to_string();
        let out = run(&["parse", &shown]);
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {stdout}");
        assert_eq!(
            stdout,
            format!("{shown}:1:1: error: the file holds no HLO module, computation or instruction (XLA's parser expects one)\n")
        );
    }
}

/// StableHLO given to `parse` is named in one line (exit 2), not listed as a
/// page of HLO syntax errors.
#[test]
fn mlir_is_refused_in_one_line() {
    let path = &repo_file("examples/softmax.stablehlo.mlir");
    let out = run(&["parse", path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("this is StableHLO, not HLO text"),
        "{stderr}"
    );
}
