//! `hlo-lsp simplify`: simplify one indexing map given as text, or a batch of JSON
//! lines `{"map": "..."}` from stdin (one JSON answer per line; a bad line gets an
//! error answer and the batch goes on).

use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::time::Instant;

use crate::algebra::{DivSpelling, IndexingMap, ParseError, PrintOptions};

/// Exit code when the map text does not parse.
pub const EXIT_PARSE_ERROR: u8 = 1;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Div {
    /// `floordiv` (the indexing documentation's spelling).
    #[default]
    Floordiv,
    /// `/` (XLA's spelling since mid-2026).
    Slash,
}

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// The map, e.g. `(d0) -> (d0 floordiv 4), domain: d0 in [0, 15]`.
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    pub map: Option<String>,
    /// Read JSON lines `{"map": "..."}` from stdin, write one JSON line per input.
    #[arg(long)]
    pub batch: bool,
    /// How to print floor division.
    #[arg(long, value_enum, default_value_t = Div::Floordiv)]
    pub div: Div,
    /// Print the map on one line instead of one domain entry per line.
    #[arg(long)]
    pub one_line: bool,
}

pub fn run(args: Args) -> ExitCode {
    let div = match args.div {
        Div::Floordiv => DivSpelling::FloorDiv,
        Div::Slash => DivSpelling::Slash,
    };
    if args.batch {
        return run_batch(PrintOptions {
            div,
            multiline: false,
        });
    }
    let text = args.map.unwrap_or_default();
    match IndexingMap::parse(&text) {
        Ok(mut map) => {
            map.simplify();
            println!(
                "{}",
                map.print(&PrintOptions {
                    div,
                    multiline: !args.one_line
                })
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hlo-lsp: error: {}", describe_error(&text, &e));
            ExitCode::from(EXIT_PARSE_ERROR)
        }
    }
}

/// `line L, column C: message` plus the offending line and a caret.
pub fn describe_error(text: &str, e: &ParseError) -> String {
    let offset = e.offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    format!(
        "line {line}, column {column}: {}\n  {line_text}\n  {}^",
        e.message,
        " ".repeat(column - 1)
    )
}

#[derive(serde::Serialize)]
struct Answer {
    input: String,
    output: Option<String>,
    error: Option<String>,
    micros: f64,
}

fn run_batch(options: PrintOptions) -> ExitCode {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("hlo-lsp: error: reading stdin: {e}");
                return ExitCode::from(super::EXIT_USAGE);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer_line(&line, &options);
        let json = serde_json::to_string(&answer).expect("answers serialize");
        if writeln!(out, "{json}").is_err() {
            return ExitCode::SUCCESS; // stdout closed: nobody is listening
        }
    }
    ExitCode::SUCCESS
}

fn answer_line(line: &str, options: &PrintOptions) -> Answer {
    let request: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Answer {
                input: line.to_string(),
                output: None,
                error: Some(format!("invalid JSON at column {}: {e}", e.column())),
                micros: 0.0,
            }
        }
    };
    let Some(text) = request.get("map").and_then(|m| m.as_str()) else {
        return Answer {
            input: line.to_string(),
            output: None,
            error: Some("expected an object with a string field \"map\"".to_string()),
            micros: 0.0,
        };
    };
    let start = Instant::now();
    match IndexingMap::parse(text) {
        Ok(mut map) => {
            map.simplify();
            let micros = start.elapsed().as_secs_f64() * 1e6;
            Answer {
                input: text.to_string(),
                output: Some(map.print(options)),
                error: None,
                micros,
            }
        }
        Err(e) => Answer {
            input: text.to_string(),
            output: None,
            error: Some(format!("offset {}: {}", e.offset, e.message)),
            micros: start.elapsed().as_secs_f64() * 1e6,
        },
    }
}
