//! `hlo-lsp check FILE [--json]`: every syntax and semantic diagnostic of a file, as
//! `FILE:LINE:COL: severity: message [code]` lines or JSON; exit 1 on any error.
//! The language (HLO or MLIR) comes from the extension, else the content, as the
//! server decides it ([`crate::language::detect`]).
//!
//! Diagnostics come from [`crate::checks`]: another layer joins by adding a source
//! there.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::model::Diagnostic;
use crate::syntax::LineIndex;

#[derive(Debug, Default, clap::Args)]
pub struct CheckArgs {
    /// The HLO (or MLIR: `.mlir`, or MLIR content) file to check.
    pub file: PathBuf,
    /// Print `{"diagnostics": [...]}` instead of one line per diagnostic.
    #[arg(long)]
    pub json: bool,
}

/// All diagnostics of `text`, sorted by position.
pub fn diagnostics(text: &str) -> Vec<Diagnostic> {
    let document = crate::model::Document::parse(text);
    let mut found = crate::checks::all(&document);
    found.extend(crate::checks::no_module(&document));
    crate::checks::sort(&mut found);
    found
}

pub fn run_check(args: CheckArgs) -> ExitCode {
    let text = match super::read_text(&args.file) {
        Ok(t) => t,
        Err(e) => return super::fail(e),
    };
    let found = match crate::language::detect(&args.file.to_string_lossy(), None, &text) {
        crate::language::Language::Hlo => {
            let document = crate::model::Document::parse(&text);
            let mut found = crate::checks::all_beside(&document, Some(&args.file));
            found.extend(crate::checks::no_module(&document));
            crate::checks::sort(&mut found);
            // The process ends right after: freeing the model would only cost time.
            std::mem::forget(document);
            found
        }
        crate::language::Language::Mlir => crate::checks::mlir(&text),
    };
    let lines = LineIndex::new(&text);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let items: Vec<serde_json::Value> = found
            .iter()
            .map(|d| {
                let (line, column) = lines.line_col(&text, d.range.start);
                let (end_line, end_column) = lines.line_col(&text, d.range.end);
                serde_json::json!({
                    "line": line, "column": column, "end_line": end_line, "end_column": end_column,
                    "severity": d.severity.as_str(), "code": d.code, "message": d.message,
                })
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::json!({ "diagnostics": items }));
    } else {
        let name = args.file.display();
        for d in &found {
            let (line, column) = lines.line_col(&text, d.range.start);
            let _ = writeln!(
                out,
                "{name}:{line}:{column}: {}: {} [{}]",
                d.severity.as_str(),
                d.message,
                d.code
            );
        }
    }
    if found.iter().any(Diagnostic::is_error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
