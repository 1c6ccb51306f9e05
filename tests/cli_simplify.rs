//! End-to-end tests of `hlo-lsp simplify` through the built binary: one map on the
//! command line, the division spelling, parse errors with a position, and the
//! JSON-lines batch mode continuing after bad lines.

use std::io::Write;
use std::process::{Command, Stdio};

fn hlo_lsp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
}

/// `hlo-lsp simplify --batch`, reading and writing through pipes.
fn batch() -> std::process::Child {
    hlo_lsp()
        .args(["simplify", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn simplifies_a_map_given_on_the_command_line() {
    let out = hlo_lsp()
        .args([
            "simplify",
            "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        squash(&text),
        squash("(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]")
    );
}

#[test]
fn prints_floor_division_as_requested() {
    let map = "(d0, d1, d2) -> ((d0 * 16 + d1 * 4 + d2) floordiv 8), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]";
    let default = hlo_lsp().args(["simplify", map]).output().unwrap();
    let slash = hlo_lsp()
        .args(["simplify", "--div", "slash", map])
        .output()
        .unwrap();
    assert_eq!(
        squash(&String::from_utf8_lossy(&default.stdout)),
        squash("(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) floordiv 8), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
    );
    assert_eq!(
        squash(&String::from_utf8_lossy(&slash.stdout)),
        squash("(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) / 8), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
    );
}

#[test]
fn parse_errors_report_the_position_and_fail() {
    let out = hlo_lsp()
        .args(["simplify", "(d0) -> (d0 + q), domain: d0 in [0, 3]"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1, column 15"), "{err}");
    assert!(err.contains("unknown variable `q`"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn batch_mode_answers_every_line_and_continues_after_errors() {
    let mut child = batch();
    let input = concat!(
        r#"{"map": "(d0) -> (d0 mod 42), domain: d0 in [53, 71]"}"#,
        "\n",
        "this is not json\n",
        r#"{"map": "(d0) -> (d0 +"}"#,
        "\n",
        r#"{"other": 1}"#,
        "\n",
        r#"{"map": "()[s0] -> ((s0 * 6 + 9) floordiv 18), domain: s0 in [0, 1233]"}"#,
        "\n",
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 5);
    assert_eq!(
        answers[0]["output"],
        "(d0) -> (d0 - 42), domain: d0 in [53, 71]"
    );
    assert!(answers[0]["error"].is_null());
    assert!(answers[0]["micros"].as_f64().unwrap() >= 0.0);
    // The simplification alone, after parsing: part of the whole.
    let simplify = answers[0]["simplify_micros"].as_f64().unwrap();
    assert!(simplify >= 0.0 && simplify <= answers[0]["micros"].as_f64().unwrap());
    assert!(answers[1]["error"]
        .as_str()
        .unwrap()
        .contains("invalid JSON"));
    assert!(answers[1]["output"].is_null());
    assert!(
        answers[2]["error"]
            .as_str()
            .unwrap()
            .contains("offset 13: expected an expression"),
        "{}",
        answers[2]
    );
    assert_eq!(answers[2]["input"], "(d0) -> (d0 +");
    assert!(answers[3]["error"].as_str().unwrap().contains("\"map\""));
    assert_eq!(
        answers[4]["output"],
        "()[s0] -> ((s0 + 1) floordiv 3), domain: s0 in [0, 1233]"
    );
}

/// Answers are written in blocks, but never held while the batch waits for
/// input: a caller that sends one map and waits gets its answer, even with
/// the start of the next line sent. A line ending in `\r\n` is read without
/// the `\r`.
#[test]
fn batch_mode_answers_a_line_before_the_next_arrives() {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc;
    use std::time::Duration;

    let mut child = batch();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (answers, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            let answer: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if answers.send(answer).is_err() {
                break;
            }
        }
    });
    let maps = [
        "(d0) -> (d0 mod 42), domain: d0 in [53, 71]",
        "(d0) -> ((d0 * 4) floordiv 8), domain: d0 in [0, 15]",
    ];
    let expected = [
        "(d0) -> (d0 - 42), domain: d0 in [53, 71]",
        "(d0) -> (d0 floordiv 2), domain: d0 in [0, 15]",
    ];
    let lines: Vec<String> = maps
        .iter()
        .map(|map| serde_json::json!({ "map": map }).to_string())
        .collect();
    // The first line with the start of the second, then the rest of it.
    let (half, rest) = lines[1].split_at(lines[1].len() / 2);
    let sends = [format!("{}\r\n{half}", lines[0]), format!("{rest}\r\n")];
    for ((map, want), send) in maps.iter().zip(expected).zip(sends) {
        stdin.write_all(send.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let answer = received
            .recv_timeout(Duration::from_secs(60))
            .expect("the answer arrives while the batch waits for the next line");
        assert_eq!(answer["input"], *map);
        assert_eq!(answer["output"], want);
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

#[test]
fn mlir_affine_maps_are_accepted() {
    let out = hlo_lsp()
        .args([
            "simplify",
            "--one-line",
            "affine_map<(d0)[s0] -> ((d0 * 4) floordiv 2, s0 mod 1)>",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "(d0)[s0] -> (d0 * 2, 0)"
    );
}

fn repro(name: &str) -> String {
    let path = format!("{}/../tests/data/repro/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A map whose simplification runs out of its work limit is printed as given (it
/// still means the same) with a note on stderr, and the command succeeds.
#[test]
fn a_map_past_the_work_limit_is_printed_as_given_with_a_note() {
    let map = repro("simplify_mod_add_chain_n24.txt");
    let limited = hlo_lsp()
        .args(["simplify", "--max-steps", "50", map.trim()])
        .output()
        .unwrap();
    assert!(limited.status.success());
    let stderr = String::from_utf8_lossy(&limited.stderr);
    assert!(stderr.contains("note:"), "{stderr}");
    let given = hlo_lsp()
        .args(["simplify", "--max-steps", "0", map.trim()])
        .output()
        .unwrap();
    assert_eq!(
        squash(&String::from_utf8_lossy(&limited.stdout)),
        squash(&String::from_utf8_lossy(&given.stdout))
    );
    // The default budget ends too (it once ran for more than 30 s).
    let default = hlo_lsp().args(["simplify", map.trim()]).output().unwrap();
    assert!(default.status.success());
    assert!(String::from_utf8_lossy(&default.stdout).contains("->"));
}

/// 20,000 nested parentheses: an answer (the map or an error with a position),
/// never a stack overflow.
#[test]
fn a_map_twenty_thousand_parentheses_deep_is_answered() {
    let map = repro("simplify_parens_20000.txt");
    let out = hlo_lsp().args(["simplify", map.trim()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("overflow"), "{stderr}");
    assert!(out.status.code().is_some(), "killed by a signal");
    assert!(
        out.status.success() || stderr.contains("nested more than"),
        "{stderr}"
    );
}
