//! Properties of `hlo-lsp fmt` over XLA's parser-test modules as XLA prints them
//! (`hlo_parser_printed.jsonl`): formatting is idempotent in both forms, and text
//! that differs from XLA's only in what XLA's printer normalizes (names without `%`,
//! indentation, spaces at line ends, blank lines between computations, the other
//! form of operands) formats to the same text. A document's versions, formatted
//! one after another, get the edits a fresh formatting of each gives
//! ([`hlo_lsp::format::Known`] remembers what printed as written).

use crate::conformance_support::xla_records;
use hlo_lsp::format::{edits, format, Known, Style};
use hlo_lsp::model::Document;
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

/// One edit of `text` chosen by `choice` at line `at` (of the lines after the
/// header): each changes how one computation prints, or what decides how the
/// others do (a name another computation has, the schedule, a shape a caller
/// infers).
fn version_edit(text: &str, choice: u8, at: usize) -> Option<(std::ops::Range<usize>, String)> {
    // Each instruction line with its start and the number of its computation.
    let mut computation = 0;
    let lines: Vec<(usize, &str, usize)> = text
        .split_inclusive('\n')
        .scan(0, |start, line| {
            let here = *start;
            *start += line.len();
            computation += usize::from(line.starts_with('}'));
            Some((here, line, computation))
        })
        .filter(|(_, line, _)| line.starts_with("  "))
        .collect();
    let (start, line, computation) = *lines.get(at % lines.len().max(1))?;
    let name_at = start + line.find('%')?;
    let name_len = line[name_at - start..].find(' ')?;
    Some(match choice % 6 {
        // Spaces XLA removes.
        0 => (start..start, "  ".to_string()),
        // The name of an instruction in a later computation (else an earlier
        // one): XLA renames the later of the two.
        1 => {
            let others = || lines.iter().filter(|l| l.2 != computation);
            let later = others().find(|l| l.2 > computation);
            let other = later.or_else(|| others().next())?.1;
            let o = other.find('%')?;
            let other_name = &other[o..o + other[o..].find(' ')?];
            (name_at..name_at + name_len, other_name.to_string())
        }
        // The module scheduled (or a header attribute changed).
        2 => {
            let end = text.find('\n')?;
            (end..end, ", is_scheduled=true".to_string())
        }
        // A result shape left out: a call's is read from its callee.
        3 => {
            let eq = line.find(" = ")? + 3;
            let open = eq + line[eq..].find(' ')?;
            (start + eq..start + open + 1, String::new())
        }
        // A digit of a shape changed.
        4 => {
            let digit = line.find(|c: char| c.is_ascii_digit())?;
            (start + digit..start + digit + 1, "7".to_string())
        }
        // The line written again as it is: a new chunk with the same text.
        _ => (start..start + line.len(), line.to_string()),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn formatting_a_version_again_gives_what_a_fresh_formatting_gives(
        pick in any::<prop::sample::Index>(),
        steps in prop::collection::vec((any::<u8>(), any::<usize>()), 1..5),
        long in any::<bool>(),
    ) {
        let records = printed();
        prop_assume!(!records.is_empty());
        let mut text = records[pick.index(records.len())].clone();
        let style = Some(if long { Style::Long } else { Style::Short });
        let known = Known::default();
        let mut doc = Document::parse(&text);
        for (choice, at) in steps {
            let again = edits(&doc, style, None, &known);
            let fresh = edits(&doc, style, None, &Known::default());
            prop_assert_eq!(&again, &fresh, "{}", text);
            let Some((range, new_text)) = version_edit(&text, choice, at) else {
                break;
            };
            doc = doc.edited(range.start, range.end, &new_text).0;
            text.replace_range(range, &new_text);
        }
        let again = edits(&doc, style, None, &known);
        let fresh = edits(&doc, style, None, &Known::default());
        prop_assert_eq!(&again, &fresh, "{}", text);
    }
}

#[test]
fn most_records_take_part() {
    assert!(printed().len() >= 150, "{}", printed().len());
}
