//! `hlo-lsp fmt` against XLA's own printer: every `parses` record of XLA's parser tests
//! (`hlo_parser.jsonl`) formatted in the short and the long form must equal what
//! jaxlib 0.10.2 prints for it (`hlo_parser_printed.jsonl`, made by `make_printed.py`;
//! see the conformance README). A constant of more than 10 elements is compared with
//! XLA's `print_large_constants` output: by default XLA writes `{...}` for it, and a
//! formatter must not drop the values. Also: formatting XLA's output again changes
//! nothing (idempotence), and XLA's own dumps in tests/data are left byte-identical.
//! XLA's printing has no comments, so the comparison formats with
//! `Comments::Drop`; what an editor gets (`Comments::Keep`) is checked on the
//! records with comments: every comment still there, and XLA's printing once they
//! are dropped. The `PASSING_*` constants are floors; each miss is printed with its
//! first differing line or the printer's refusal.

use crate::conformance_support::{run_with_floor, xla_records};
use hlo_lsp::format::{format, format_with, Comments, Style};
use serde_json::Value;

/// Records whose short form equals jaxlib's `to_string()` (a floor).
const PASSING_SHORT: usize = 190;
/// Records whose long form equals jaxlib's with `print_operand_shape` (a floor).
const PASSING_LONG: usize = 190;

/// The module text of each `parses` record, by name.
fn inputs() -> std::collections::HashMap<String, String> {
    xla_records("hlo_parser.jsonl")
        .into_iter()
        .filter(|r| r["expect"] == "parses")
        .map(|r| {
            (
                r["name"].as_str().unwrap_or("?").to_string(),
                r["hlo"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The first line where `got` and `want` differ, both shown.
fn first_difference(got: &str, want: &str) -> String {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.split('\n').collect(), want.split('\n').collect());
    let line = (0..g.len().max(w.len()))
        .find(|&k| g.get(k) != w.get(k))
        .unwrap_or(0);
    format!(
        "line {}:\n    got:  {:?}\n    XLA:  {:?}",
        line + 1,
        g.get(line).unwrap_or(&"(end)"),
        w.get(line).unwrap_or(&"(end)")
    )
}

fn check(
    record: &Value,
    inputs: &std::collections::HashMap<String, String>,
    style: Style,
) -> Result<(), String> {
    let name = record["name"].as_str().unwrap_or("?");
    let input = inputs
        .get(name)
        .ok_or("no such record in hlo_parser.jsonl")?;
    let (key, all) = match style {
        Style::Short => ("short", "short_all_constants"),
        Style::Long => ("long", "long_all_constants"),
    };
    // A constant written `{...}` holds no values: XLA's parser makes some up, which
    // only its `print_large_constants` output shows. The formatter keeps `{...}`, as
    // XLA's default printing does.
    let elided = input.contains("{...}");
    let want = record[all]
        .as_str()
        .filter(|_| !elided)
        .or(record[key].as_str())
        .ok_or("no expected text")?;
    // XLA's printing has no comments: they are compared dropped.
    let got =
        format_with(input, Some(style), Comments::Drop).map_err(|r| format!("refused: {r}"))?;
    if got != want {
        return Err(first_difference(&got, want));
    }
    let again = format(&got, Some(style)).map_err(|r| format!("its output refused: {r}"))?;
    if again != got {
        return Err(format!(
            "not idempotent, {}",
            first_difference(&again, &got)
        ));
    }
    Ok(())
}

#[test]
fn short_form_is_what_jaxlib_prints() {
    let inputs = inputs();
    let records = xla_records("hlo_parser_printed.jsonl");
    assert_eq!(
        records.len(),
        inputs.len(),
        "one printed record per parses record"
    );
    run_with_floor(&records, PASSING_SHORT, |r| check(r, &inputs, Style::Short));
}

#[test]
fn long_form_is_what_jaxlib_prints_with_operand_shapes() {
    let inputs = inputs();
    let records = xla_records("hlo_parser_printed.jsonl");
    run_with_floor(&records, PASSING_LONG, |r| check(r, &inputs, Style::Long));
}

/// The comments of `text` (`// ...` to the line end, `/* ... */`), outside quotes
/// and other than XLA's own `/*index=5*/` annotations, in written order.
fn comment_texts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut at, mut quoted) = (0, false);
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match (bytes[at], bytes.get(at + 1)) {
            (b'\\', _) if quoted => at += 1,
            (b'"', _) => quoted = !quoted,
            (b'/', Some(b'/')) if !quoted => {
                let end = text[at..].find(['\n', '\r']).map_or(text.len(), |k| at + k);
                out.push(text[at..end].to_string());
                at = end;
            }
            (b'/', Some(b'*')) if !quoted => {
                let end = text[at..].find("*/").map_or(text.len(), |k| at + k + 2);
                let comment = &text[at..end];
                if !comment.starts_with("/*index=") && !comment.starts_with("/*i") {
                    out.push(comment.to_string());
                }
                at = end;
            }
            _ => {}
        }
        at += 1;
    }
    out.sort();
    out
}

/// The records with comments, formatted for an editor: every comment is still
/// there, and without them the text is XLA's printing.
#[test]
fn comments_are_kept_beside_xla_printing() {
    let inputs = inputs();
    let mut commented = 0;
    for record in xla_records("hlo_parser_printed.jsonl") {
        let name = record["name"].as_str().unwrap_or("?");
        let input = &inputs[name];
        let comments = comment_texts(input);
        if comments.is_empty() {
            continue;
        }
        commented += 1;
        let kept =
            format(input, Some(Style::Short)).unwrap_or_else(|r| panic!("{name}: refused: {r}"));
        assert_eq!(
            comment_texts(&kept),
            comments,
            "{name}: comments lost:\n{kept}"
        );
        let dropped = format_with(&kept, Some(Style::Short), Comments::Drop)
            .unwrap_or_else(|r| panic!("{name}: output refused: {r}"));
        assert_eq!(dropped, record["short"].as_str().unwrap_or(""), "{name}");
        assert_eq!(
            format(&kept, Some(Style::Short)).as_deref(),
            Ok(kept.as_str()),
            "{name}: not idempotent"
        );
    }
    assert!(commented >= 5, "{commented} records with comments");
}

/// The HLO text files XLA wrote under `dir` (recursively): its dumps, not the
/// reports beside them (buffer assignment, live ranges, memory usage).
fn xla_dumps(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("test data") {
        let path = entry.expect("an entry").path();
        let name = path.to_string_lossy().to_string();
        if path.is_dir() {
            xla_dumps(&path, out);
        } else if (name.ends_with(".hlo") || name.ends_with(".txt"))
            && !["buffer-assignment", "live-range", "memory-usage-report"]
                .iter()
                .any(|report| name.contains(report))
            // Written by JAX's `.lower().as_text(dialect="hlo")`, not by an XLA dump.
            && !name.ends_with("sharded_mlp.before.hlo")
        {
            out.push(path);
        }
    }
}

/// XLA's dumps (JAX 0.10.2) are written in the short form: formatting them, in that
/// form or in the file's own, changes no byte.
#[test]
fn xla_dumps_are_left_byte_identical() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = Vec::new();
    for dir in ["jax", "dumps/step", "pass_dumps", "memory", "bench"] {
        xla_dumps(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() >= 250, "{} dumps", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable");
        for style in [None, Some(Style::Short)] {
            match format(&text, style) {
                Ok(out) if out == text => {}
                Ok(out) => failures.push(format!(
                    "{} ({style:?}): {}",
                    path.display(),
                    first_difference(&out, &text)
                )),
                Err(r) => failures.push(format!("{} ({style:?}): refused: {r}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
