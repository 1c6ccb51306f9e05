//! `hlo-lsp fmt FILE [--check] [--style long|short] [--write]`: the module printed as
//! XLA prints it ([`crate::format`]). Without `--check` the formatted text goes to
//! stdout (or back into the file with `--write`); with `--check` nothing is printed
//! when the file is formatted, and the first line that differs is named otherwise.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::format::{self, Style};

/// Exit code of `--check` on a file that formatting would change.
pub const EXIT_NOT_FORMATTED: u8 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StyleArg {
    /// Operand shapes before operand names (XLA's long form, its parser's round-trip tests).
    Long,
    /// Operand names only (`HloModule::ToString()` in jaxlib 0.10.2, XLA's dumps).
    Short,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The HLO file.
    pub file: PathBuf,
    /// Print nothing; exit 1 naming the first line formatting would change.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    /// Which of XLA's print forms; without it the file keeps the form it is written in.
    #[arg(long, value_enum)]
    pub style: Option<StyleArg>,
    /// Write the formatted text back into FILE instead of printing it.
    #[arg(long)]
    pub write: bool,
}

pub fn run(args: Args) -> ExitCode {
    let text = match super::read_text(&args.file) {
        Ok(text) => text,
        Err(e) => return super::fail(e),
    };
    if let Err(message) = super::input::refuse_mlir(&args.file, &text) {
        return super::fail(message);
    }
    let style = args.style.map(|s| match s {
        StyleArg::Long => Style::Long,
        StyleArg::Short => Style::Short,
    });
    let formatted = match format::format(&text, style) {
        Ok(formatted) => formatted,
        Err(refusal) => {
            let (line, col) = crate::syntax::line_col(&text, refusal.offset);
            return super::fail(format!(
                "{}:{line}:{col}: not formatted: {}",
                args.file.display(),
                refusal.message
            ));
        }
    };
    if args.check {
        return check(&args.file, &text, &formatted);
    }
    if args.write {
        if formatted != text {
            if let Err(e) = std::fs::write(&args.file, &formatted) {
                return super::fail(format!("{}: {e}", args.file.display()));
            }
        }
        return ExitCode::SUCCESS;
    }
    print!("{formatted}");
    ExitCode::SUCCESS
}

/// Exit 0 when `text` is formatted; else name the first differing line and what XLA
/// prints there.
fn check(path: &std::path::Path, text: &str, formatted: &str) -> ExitCode {
    if text == formatted {
        return ExitCode::SUCCESS;
    }
    let mut old = text.split('\n');
    let mut new = formatted.split('\n');
    let mut line = 1;
    loop {
        match (old.next(), new.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                eprintln!(
                    "{}:{line}: not formatted as XLA prints it\n  written: {}\n  XLA:     {}",
                    path.display(),
                    a.map_or("(end of file)".into(), |a| format!("{a:?}")),
                    b.map_or("(end of file)".into(), |b| format!("{b:?}")),
                );
                return ExitCode::from(EXIT_NOT_FORMATTED);
            }
        }
    }
}
