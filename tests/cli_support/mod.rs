//! Shared helpers of the end-to-end CLI tests: run the built binary, read what it
//! printed, and write input files into a folder of this test run.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// `hlo-lsp ARGS...`, run to completion.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .args(args)
        .output()
        .expect("running hlo-lsp")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `contents` to `name` in a folder of this run of test binary `suite`
/// (suites run in parallel, so each has its own) and returns its path.
pub fn temp_file(suite: &str, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-{suite}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}
