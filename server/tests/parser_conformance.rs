//! XLA's own HLO parser tests (`xla/hlo/parser/hlo_parser_test.cc`, 258 records in
//! `tests/data/conformance/xla/hlo_parser.jsonl`) against what `hlo-lsp check`
//! reports ([`hlo_lsp::cli::check::diagnostics`], the product path). A `parses` record passes when
//! the check reports no error and no warning that an attribute or opcode is unknown;
//! an `error` record passes when it reports an error. Separately, an error record
//! "gives XLA's reason" when one of the errors says what XLA's `error_contains` says
//! (its wording or ours, see [`REASONS`]). The numbers that pass may only go up:
//! the `PASSING_*` constants are floors, and every record that misses is printed
//! with its cause.

use hlo_lsp::model::{codes, Diagnostic, Severity};
use serde_json::Value;

/// `parses` records with no error and no unknown attribute or opcode (a floor).
const PASSING_PARSES: usize = 190;
/// `error` records that give an error (a floor).
const PASSING_ERRORS: usize = 68;
/// `error` records with `error_contains` whose error says XLA's reason (a floor).
const PASSING_REASONS: usize = 61;

/// For an `error_contains` holding the first phrase (lower case, a piece of XLA's
/// wording), other phrases our message may use to say the same thing, where XLA's
/// message holds a position or a printed layout ours does not. XLA's own wording
/// always counts; our backquotes count as XLA's single quotes.
const REASONS: &[(&str, &[&str])] = &[
    // XLA: "was parsing 8:39: error: instruction does not exist: aparam".
    ("instruction does not exist", &["is not defined in"]),
    // XLA prints the default layout (`f32[2,5]{1,0}`) where the text has none.
    (
        "is not compatible with the shape of the operand instruction",
        &["is not compatible with the shape of the operand instruction"],
    ),
    (
        "is not compatible with that of its root instruction",
        &["is not compatible with that of its root instruction"],
    ),
    // XLA: "/* unterminated\n^": the line and a caret under the comment.
    (
        "/* unterminated",
        &["unterminated comment '/* unterminated"],
    ),
    // XLA: "error: unexpected attribute ...": its position prefix.
    (
        "unexpected attribute \"result_accuracy\"",
        &["unexpected attribute \"result_accuracy\""],
    ),
    ("unexpected '}' token", &["unexpected '}'"]),
];

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("hlo_parser.jsonl")
}

fn diagnostics(text: &str) -> Vec<Diagnostic> {
    hlo_lsp::cli::check::diagnostics(text)
}

fn line(d: &Diagnostic) -> String {
    format!("{:?} {}: {}", d.severity, d.code, d.message)
}

/// Why a `parses` record fails, if it does.
fn parses_miss(found: &[Diagnostic]) -> Option<String> {
    let bad: Vec<String> = found
        .iter()
        .filter(|d| {
            d.severity == Severity::Error
                || d.code == codes::UNKNOWN_ATTRIBUTE
                || d.code == codes::UNKNOWN_OPCODE
        })
        .map(line)
        .collect();
    (!bad.is_empty()).then(|| bad.join(" | "))
}

/// Whether one of the errors says what XLA's `error_contains` says.
fn gives_reason(found: &[Diagnostic], expected: &str) -> bool {
    let expected = expected.to_lowercase();
    let mut phrases = vec![expected.clone()];
    for (xla, ours) in REASONS {
        if expected.contains(xla) {
            phrases.extend(ours.iter().map(|s| s.to_string()));
        }
    }
    found.iter().filter(|d| d.is_error()).any(|d| {
        let said = d.message.to_lowercase().replace('`', "'");
        phrases.iter().any(|p| said.contains(p))
    })
}

#[test]
fn xla_parser_tests() {
    let (mut parses, mut parses_ok) = (0, 0);
    let (mut errors, mut errors_ok, mut reasons, mut reasons_ok) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    for r in records() {
        let name = r["name"].as_str().unwrap_or("?");
        let hlo = r["hlo"].as_str().unwrap_or_default();
        let found = diagnostics(hlo);
        if r["expect"] == "parses" {
            parses += 1;
            match parses_miss(&found) {
                None => parses_ok += 1,
                Some(why) => misses.push(format!("parses {name}: {why}")),
            }
            continue;
        }
        errors += 1;
        let expected = r["error_contains"].as_str();
        if found.iter().any(Diagnostic::is_error) {
            errors_ok += 1;
        } else {
            let said: Vec<String> = found.iter().map(line).collect();
            misses.push(format!(
                "error {name}: no error (XLA: {:?}; we said: {})",
                expected.unwrap_or("-"),
                if said.is_empty() {
                    "nothing".into()
                } else {
                    said.join(" | ")
                }
            ));
            if expected.is_some() {
                reasons += 1;
            }
            continue;
        }
        if let Some(expected) = expected {
            reasons += 1;
            if gives_reason(&found, expected) {
                reasons_ok += 1;
            } else {
                let said: Vec<String> = found.iter().filter(|d| d.is_error()).map(line).collect();
                misses.push(format!(
                    "reason {name}: XLA says {expected:?}, we said: {}",
                    said.join(" | ")
                ));
            }
        }
    }
    for m in &misses {
        eprintln!("{m}");
    }
    eprintln!(
        "parses: {parses_ok}/{parses}, errors: {errors_ok}/{errors}, reasons: {reasons_ok}/{reasons}"
    );
    assert!(
        parses_ok >= PASSING_PARSES,
        "parses {parses_ok} < floor {PASSING_PARSES}"
    );
    assert!(
        errors_ok >= PASSING_ERRORS,
        "errors {errors_ok} < floor {PASSING_ERRORS}"
    );
    assert!(
        reasons_ok >= PASSING_REASONS,
        "reasons {reasons_ok} < floor {PASSING_REASONS}"
    );
}
