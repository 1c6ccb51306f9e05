//! `hlo-lsp simplify`: simplify one indexing map given as text, or a batch of JSON
//! lines `{"map": "..."}` from stdin (one JSON answer per line; a bad line gets an
//! error answer and the batch goes on). A map whose simplification runs out of
//! its work limit is printed as given, with a note (on stderr, or the answer's
//! `note`).

use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::time::Instant;

use crate::algebra::simplify::STEP_BUDGET;
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
    /// Work limit of one simplification, in rewriter steps; a map that needs more
    /// is printed as given, with a note.
    #[arg(long, default_value_t = STEP_BUDGET)]
    pub max_steps: u64,
}

pub fn run(args: Args) -> ExitCode {
    let div = match args.div {
        Div::Floordiv => DivSpelling::FloorDiv,
        Div::Slash => DivSpelling::Slash,
    };
    if args.batch {
        return run_batch(
            PrintOptions {
                div,
                multiline: false,
            },
            args.max_steps,
        );
    }
    let text = args.map.unwrap_or_default();
    match IndexingMap::parse(&text) {
        Ok(mut map) => {
            if let Err(limit) = map.try_simplify_within(args.max_steps) {
                eprintln!("hlo-lsp: note: {limit}");
            }
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
    /// Set when the map is printed unsimplified (the work limit ran out).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// Parse and simplification, in microseconds.
    micros: f64,
    /// The simplification alone (after parsing), in microseconds: what MLIR's
    /// `simplifyAffineExpr` is timed on.
    #[serde(skip_serializing_if = "Option::is_none")]
    simplify_micros: Option<f64>,
}

fn run_batch(options: PrintOptions, max_steps: u64) -> ExitCode {
    let mut input = io::BufReader::with_capacity(1 << 16, io::stdin());
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut line = String::new();
    loop {
        // Answers go out in blocks, not one write per line, but always before
        // a read that may wait (no whole line received yet): a caller that
        // sends one map and waits for its answer gets it.
        if !input.buffer().contains(&b'\n') && out.flush().is_err() {
            return ExitCode::SUCCESS; // stdout closed: nobody is listening
        }
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("hlo-lsp: error: reading stdin: {e}");
                return ExitCode::from(super::EXIT_USAGE);
            }
        }
        let text = line.strip_suffix('\n').unwrap_or(&line);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            continue;
        }
        let answer = answer_line(text, &options, max_steps);
        let json = serde_json::to_string(&answer).expect("answers serialize");
        if writeln!(out, "{json}").is_err() {
            return ExitCode::SUCCESS; // stdout closed: nobody is listening
        }
    }
    // A stdout closed at the end: nobody is listening.
    let _ = out.flush();
    ExitCode::SUCCESS
}

fn answer_line(line: &str, options: &PrintOptions, max_steps: u64) -> Answer {
    let request: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Answer {
                input: line.to_string(),
                output: None,
                error: Some(format!("invalid JSON at column {}: {e}", e.column())),
                note: None,
                micros: 0.0,
                simplify_micros: None,
            }
        }
    };
    let Some(text) = request.get("map").and_then(|m| m.as_str()) else {
        return Answer {
            input: line.to_string(),
            output: None,
            error: Some("expected an object with a string field \"map\"".to_string()),
            note: None,
            micros: 0.0,
            simplify_micros: None,
        };
    };
    let start = Instant::now();
    match IndexingMap::parse(text) {
        Ok(mut map) => {
            let parsed = Instant::now();
            let note = map
                .try_simplify_within(max_steps)
                .err()
                .map(|limit| limit.to_string());
            let end = Instant::now();
            let micros = (end - start).as_secs_f64() * 1e6;
            let simplify_micros = (end - parsed).as_secs_f64() * 1e6;
            Answer {
                input: text.to_string(),
                output: Some(map.print(options)),
                error: None,
                note,
                micros,
                simplify_micros: Some(simplify_micros),
            }
        }
        Err(e) => Answer {
            input: text.to_string(),
            output: None,
            error: Some(format!("offset {}: {}", e.offset, e.message)),
            note: None,
            micros: start.elapsed().as_secs_f64() * 1e6,
            simplify_micros: None,
        },
    }
}
