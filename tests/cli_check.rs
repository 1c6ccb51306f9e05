//! `hlo-lsp check` through the built binary: exit codes, the `FILE:LINE:COL` format,
//! JSON output, and one-line errors for unreadable input.

use crate::cli_support;

use std::path::PathBuf;
use std::process::{Command, Output};

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .arg("check")
        .args(args)
        .output()
        .expect("run hlo-lsp")
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    cli_support::temp_file("cli-check", name, contents)
}

#[test]
fn clean_sample_exits_zero_silently() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/jax/softmax.after.hlo"
    );
    let out = check(&[path]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn errors_are_reported_with_positions_and_exit_one() {
    let text = "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT r = f32[3,2] add(p, %nope)\n}\n";
    let path = temp_file("broken.hlo", text.as_bytes());
    let out = check(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let expected = format!(
        "{}:3:28: error: `nope` is not defined in `e` [undefined-name]\n",
        path.display()
    );
    assert_eq!(stdout, expected);
}

#[test]
fn warnings_only_exit_zero() {
    let path = temp_file(
        "warn.hlo",
        b"ENTRY e {\n  ROOT p = f32[2] frobnicate()\n}\n",
    );
    let out = check(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.ends_with(":2:19: warning: unknown opcode `frobnicate` [unknown-opcode]\n"),
        "{stdout}"
    );
}

#[test]
fn json_output() {
    let path = temp_file(
        "json.hlo",
        "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[3] slice(p), slice={[2:5]}\n}\n"
            .as_bytes(),
    );
    let out = check(&[path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 1);
    assert_eq!(d["line"], 3);
    assert_eq!(d["column"], 35);
    assert_eq!(d["end_line"], 3);
    assert_eq!(d["end_column"], 42);
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "slice-bounds");
    assert!(d["message"].as_str().unwrap().contains("limit 5 exceeds"));
}

#[test]
fn syntax_errors_are_included() {
    let path = temp_file(
        "syntax.hlo",
        b"ENTRY e {\n  p = f32[2] parameter(0)\n  q = = add(p p)\n}\n",
    );
    let out = check(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("[syntax-error]"));
}

#[test]
fn unreadable_input_is_one_line_exit_two() {
    let out = check(&["/nonexistent/file.hlo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let path = temp_file("binary.hlo", &[0xff, 0xfe, 0x00, 0x80]);
    let out = check(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("not UTF-8"));
}

#[test]
fn mlir_files_are_checked_as_mlir_by_extension_or_content() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
    // Valid MLIR: no syntax errors from the HLO parser, nothing at all.
    for name in [
        "samples/mlir/byteir_tile_reduction_axis.mlir",
        "samples/mlir/byteir_input_sharing.mlir",
    ] {
        let out = check(&[&format!("{root}/{name}")]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {stdout}");
        assert!(stdout.is_empty(), "{name}: {stdout}");
    }
    // The MLIR checks run: an indivisible tiling warns, an invalid tile size errs.
    let tiled = format!("{root}/mlir/matmul_tile_using_for.mlir");
    let out = check(&[&tiled]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("[indivisible-tile]") && stdout.contains("[invalid-tile-size]"),
        "{stdout}"
    );
    assert!(!stdout.contains("syntax-error"), "{stdout}");
    // The same text under a name that says nothing: the content decides.
    let text = std::fs::read(&tiled).unwrap();
    let copy = temp_file("excerpt.txt", &text);
    let out2 = check(&[copy.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&out2.stdout).replace(copy.to_str().unwrap(), "F"),
        stdout.replace(&tiled, "F")
    );
    // And an HLO dump named .txt stays HLO.
    let hlo = std::fs::read(format!("{root}/jax/softmax.after.hlo")).unwrap();
    let dump = temp_file("module_0001.after_optimizations.txt", &hlo);
    let out = check(&[dump.to_str().unwrap()]);
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
