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

/// A file of the repository, by its path from the repository's root.
pub fn repo_file(relative: &str) -> String {
    format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"))
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
    // Written under a name of its own, then renamed into place: tests run in parallel,
    // and while one rewrites a file another may be reading it (a truncated module
    // made `cost` fail with "no HLO module" once the model was built fast enough).
    let own = dir.join(format!(".{name}.{:?}.tmp", std::thread::current().id()));
    std::fs::write(&own, contents).unwrap();
    std::fs::rename(&own, &path).unwrap();
    path
}

/// The README's examples of `hlo-lsp SUBCOMMAND`: each `$ hlo-lsp SUBCOMMAND ...`
/// line in a code block, split into its arguments, with what it shows the command
/// printing (the lines up to the next `$ ` line or the end of the block, a blank
/// line before the next command left out).
pub fn readme_examples(subcommand: &str) -> Vec<(Vec<String>, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let prompt = format!("$ hlo-lsp {subcommand} ");
    let lines: Vec<&str> = readme.lines().collect();
    let mut examples = vec![];
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("$ hlo-lsp ") else {
            continue;
        };
        if !line.starts_with(&prompt) {
            continue;
        }
        let shown: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
            .copied()
            .collect();
        let shown = shown
            .iter()
            .rev()
            .skip_while(|l| l.is_empty())
            .collect::<Vec<_>>();
        let shown: String = shown.iter().rev().map(|l| format!("{l}\n")).collect();
        examples.push((rest.split_whitespace().map(str::to_string).collect(), shown));
    }
    examples
}

/// Runs each README example of `subcommand` from the repository's root and checks
/// it prints what the README shows.
pub fn check_readme_examples(subcommand: &str) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let examples = readme_examples(subcommand);
    assert!(
        !examples.is_empty(),
        "the README shows `hlo-lsp {subcommand}`"
    );
    for (args, shown) in examples {
        let o = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), shown, "README example {args:?}");
    }
}
