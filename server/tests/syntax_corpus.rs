//! Runs the grammar's corpus (`tree-sitter-hlo/test/corpus/*.txt`, tree-sitter's
//! test format) through the Rust binding, so CI needs no tree-sitter CLI.

use std::path::Path;

struct Case {
    file: String,
    name: String,
    input: String,
    expected: String,
}

fn is_rule(line: &str, c: char) -> bool {
    line.len() >= 3 && line.chars().all(|x| x == c)
}

/// Reads `===` header / input / `---` / expected S-expression cases.
fn read_cases() -> Vec<Case> {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tree-sitter-hlo/test/corpus"
    ));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus folder")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("UTF-8 corpus file");
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if !is_rule(lines[i], '=') {
                i += 1;
                continue;
            }
            let name = lines[i + 1].to_string();
            assert!(
                is_rule(lines[i + 2], '='),
                "{}: malformed header at line {}",
                path.display(),
                i + 1
            );
            let body_start = i + 3;
            let divider = (body_start..lines.len())
                .find(|&k| is_rule(lines[k], '-'))
                .expect("--- divider");
            let next = (divider + 1..lines.len())
                .find(|&k| is_rule(lines[k], '='))
                .unwrap_or(lines.len());
            cases.push(Case {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                name,
                input: lines[body_start..divider].join("\n").trim().to_string() + "\n",
                expected: lines[divider + 1..next].join("\n"),
            });
            i = next;
        }
    }
    cases
}

/// One space between tokens, none inside parentheses.
fn normalize(sexp: &str) -> String {
    let spaced = sexp.split_whitespace().collect::<Vec<_>>().join(" ");
    spaced.replace("( ", "(").replace(" )", ")")
}

#[test]
fn corpus_cases_match_the_parser() {
    let cases = read_cases();
    assert!(cases.len() >= 10, "corpus has {} cases", cases.len());
    let mut parser = hlo_lsp::syntax::new_parser();
    let mut failures = Vec::new();
    for case in &cases {
        let tree = parser.parse(&case.input, None).expect("a tree");
        let got = normalize(&tree.root_node().to_sexp());
        let want = normalize(&case.expected);
        if got != want {
            failures.push(format!(
                "{} / {}:\n  want {want}\n  got  {got}",
                case.file, case.name
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} corpus case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn error_cases_report_errors_and_others_do_not() {
    let mut parser = hlo_lsp::syntax::new_parser();
    for case in read_cases() {
        let tree = parser.parse(&case.input, None).expect("a tree");
        let expects_error = case.expected.contains("ERROR") || case.expected.contains("MISSING");
        assert_eq!(
            tree.root_node().has_error(),
            expects_error,
            "{} / {}",
            case.file,
            case.name
        );
    }
}
