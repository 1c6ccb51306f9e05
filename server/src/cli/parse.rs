//! `hlo-lsp parse FILE [--sexp]`: report syntax errors as `FILE:LINE:COL: error:
//! MESSAGE` (exit 1 if any, 0 if none); `--sexp` also prints each chunk's tree. A file
//! with nothing in it is an error too (XLA's parser refuses it); MLIR gets one line.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::syntax::{ChunkKind, LineIndex, SyntaxDocument};

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// The HLO text file.
    pub file: PathBuf,
    /// Print the syntax tree (one S-expression per chunk, with byte offsets).
    #[arg(long)]
    pub sexp: bool,
}

pub fn run(args: Args) -> ExitCode {
    let text = match super::read_text(&args.file) {
        Ok(t) => t,
        Err(e) => return super::fail(e),
    };
    if let Err(message) = super::input::refuse_mlir(&args.file, &text) {
        return super::fail(message);
    }
    let shown = args.file.display();
    let doc = SyntaxDocument::parse(&text);
    if args.sexp {
        for chunk in doc.chunks() {
            let range = chunk.range();
            println!("; {:?} {}..{}", chunk.kind(), range.start, range.end);
            println!("{}", chunk.tree().root_node().to_sexp());
        }
    }
    let errors = doc.syntax_errors();
    let lines = LineIndex::new(&text);
    for error in &errors {
        let (line, col) = lines.line_col(&text, error.range.start);
        println!("{shown}:{line}:{col}: error: {}", error.message);
    }
    if !errors.is_empty() {
        return ExitCode::from(1);
    }
    // Empty, or comments only: no syntax error, yet nothing XLA would read.
    let holds_nothing = !doc
        .chunks()
        .iter()
        .any(|c| matches!(c.kind(), ChunkKind::Header | ChunkKind::Computation));
    if holds_nothing {
        println!("{shown}:1:1: error: {}", crate::checks::NO_MODULE);
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
