//! Properties of `hlo-lsp fmt` over XLA's parser-test modules as XLA prints them
//! (`hlo_parser_printed.jsonl`): formatting is idempotent in both forms, and text
//! that differs from XLA's only in what XLA's printer normalizes (names without `%`,
//! indentation, spaces at line ends, blank lines between computations, the other
//! form of operands) formats to the same text.

use crate::conformance_support::xla_records;
use hlo_lsp::format::{format, Style};
use proptest::prelude::*;

/// XLA's short printing of every record the formatter reproduces (the others are
/// the conformance test's misses).
fn printed() -> &'static [String] {
    static PRINTED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    PRINTED.get_or_init(|| {
        xla_records("hlo_parser_printed.jsonl")
            .iter()
            .filter_map(|r| r["short"].as_str().map(str::to_string))
            .filter(|text| format(text, Some(Style::Short)).as_deref() == Ok(text.as_str()))
            .collect()
    })
}

/// `text` with what XLA's printer normalizes perturbed by the choices in `seed`.
/// The lines before the first computation are left alone: an
/// `origin_recovery_table` in the header is copied as written (XLA reindents it;
/// that is not ported).
fn perturb(text: &str, seed: &[u8]) -> String {
    let mut out = String::new();
    let mut header = true;
    for (k, line) in text.split_inclusive('\n').enumerate() {
        header = header && !line.starts_with('%') && !line.starts_with("ENTRY");
        if header {
            out.push_str(line);
            continue;
        }
        let choice = seed[k % seed.len()];
        let body = line.strip_suffix('\n').unwrap_or(line);
        let newline = if line.ends_with('\n') { "\n" } else { "" };
        let mut body = body.to_string();
        if let Some(instruction) = body.strip_prefix("  ") {
            let indent = " ".repeat(usize::from(choice % 5));
            let mut instruction = instruction.to_string();
            if choice & 8 != 0 {
                instruction = instruction.replacen("ROOT %", "ROOT ", 1);
                if let Some(rest) = instruction.strip_prefix('%') {
                    instruction = rest.to_string();
                }
            }
            body = format!("{indent}{instruction}");
        }
        if choice & 16 != 0 {
            body.push_str("  ");
        }
        out.push_str(&body);
        out.push_str(newline);
        if body.is_empty() && choice & 32 != 0 {
            out.push('\n');
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn formatting_is_idempotent_and_undoes_what_xla_normalizes(
        pick in any::<prop::sample::Index>(),
        seed in prop::collection::vec(any::<u8>(), 1..16),
        long in any::<bool>(),
    ) {
        let records = printed();
        prop_assume!(!records.is_empty());
        let text = &records[pick.index(records.len())];
        let style = if long { Style::Long } else { Style::Short };
        let want = format(text, Some(style)).expect("XLA's own printing formats");
        let again = format(&want, Some(style)).expect("the formatter's output formats");
        prop_assert_eq!(&again, &want, "not idempotent");
        let perturbed = perturb(text, &seed);
        let got = format(&perturbed, Some(style));
        prop_assert_eq!(got.as_deref(), Ok(want.as_str()), "perturbed:\n{}", perturbed);
    }
}

#[test]
fn most_records_take_part() {
    assert!(printed().len() >= 150, "{}", printed().len());
}
