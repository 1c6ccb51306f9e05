//! `hlo-lsp diff A B`: what changed between two dumps of the same module (see
//! [`crate::dump::diff`]); `hlo-lsp diff DIR`: the same for each consecutive pair of
//! dumps of each module of an XLA dump directory, in the order XLA wrote them
//! ([`crate::dump::naming`]): what each dumped pass did.
//!
//! Exit code: 0 when nothing changed, 1 when something did, 2 on bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use crate::dump::diff::{render, ModuleDiff};
use crate::dump::naming::{self, DumpName};
use crate::model::{parse_hlo, HloFile};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Two HLO files (before, after), or one XLA dump directory.
    #[arg(required = true, num_args = 1..=2, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> ExitCode {
    match pairs(&args.paths).and_then(|pairs| compare_all(&pairs)) {
        Ok(results) => {
            let changed = results
                .iter()
                .any(|(_, _, d)| d.iter().any(|m| !m.is_empty()));
            if args.json {
                println!("{}", to_json(&results));
            } else {
                print!("{}", to_text(&results));
            }
            ExitCode::from(u8::from(changed))
        }
        Err(message) => super::fail(message),
    }
}

/// The files to compare, pair by pair.
pub fn pairs(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    match paths {
        [a, b] => Ok(vec![(a.clone(), b.clone())]),
        [dir] if dir.is_dir() => directory_pairs(dir),
        [one] => Err(format!(
            "{}: give two HLO files, or an XLA dump directory",
            one.display()
        )),
        _ => Err("give two HLO files, or an XLA dump directory".into()),
    }
}

/// Consecutive HLO dumps of each module of `dir`, in XLA's order.
fn directory_pairs(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut dumps: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| DumpName::parse(p).is_some_and(|d| d.is_hlo_text(p)))
        .collect();
    if dumps.is_empty() {
        return Err(format!(
            "{}: no XLA HLO dumps (module_*.txt) found",
            dir.display()
        ));
    }
    naming::order(&mut dumps);
    Ok(dumps
        .windows(2)
        .filter(|w| {
            let id = |p: &PathBuf| DumpName::parse(p).map(|d| d.module_id);
            id(&w[0]) == id(&w[1])
        })
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect())
}

type Compared = (PathBuf, PathBuf, Vec<ModuleDiff>);

fn compare_all(pairs: &[(PathBuf, PathBuf)]) -> Result<Vec<Compared>, String> {
    pairs
        .iter()
        .map(|(a, b)| {
            let before = read(a)?;
            let after = read(b)?;
            Ok((
                a.clone(),
                b.clone(),
                crate::dump::diff::compare_files(&before, &after),
            ))
        })
        .collect()
}

fn read(path: &Path) -> Result<HloFile, String> {
    let text = super::read_text(path)?;
    let file = parse_hlo(&text);
    // A truncated dump (or MLIR) compared as HLO would show made-up changes, or none.
    super::input::refuse_syntax_errors(path, &text, &file.diagnostics)?;
    if file.modules.is_empty() {
        return Err(format!("{}: no HLO module found", path.display()));
    }
    Ok(file)
}

fn label(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    match DumpName::parse(path) {
        Some(d) => format!("{name} ({})", d.stage.describe()),
        None => name,
    }
}

fn to_text(results: &[Compared]) -> String {
    let mut out = String::new();
    for (a, b, modules) in results {
        out.push_str(&format!("--- {}\n+++ {}\n", label(a), label(b)));
        if modules.iter().all(ModuleDiff::is_empty) {
            out.push_str("no change\n");
            continue;
        }
        for m in modules {
            out.push_str(&render(m));
        }
    }
    out
}

fn to_json(results: &[Compared]) -> serde_json::Value {
    let diffs: Vec<_> = results
        .iter()
        .map(|(a, b, modules)| {
            json!({
                "before": a.display().to_string(),
                "after": b.display().to_string(),
                "modules": modules,
            })
        })
        .collect();
    json!({ "diffs": diffs })
}
