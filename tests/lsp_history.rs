//! End-to-end through the language server: in a snapshot of a pass-by-pass dump
//! directory (a copy of `tests/data/pass_dumps/mlp_train_step`), every instruction
//! has a code lens saying which pass made it, built in the background with progress and
//! followed by a `workspace/codeLens/refresh`; the hover has the same line; and a file
//! of the directory written again is read again.

use crate::lsp_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_support::{lens_titles_when, position_of, repo_file, Client};
use serde_json::{json, Value};

const AFTER: &str = "module_0030.jit_mlp_train_step.cpu_after_optimizations.txt";

/// A copy of the dump directory this test may change.
fn copy_of_dumps(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-history-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(repo_file("tests/data/pass_dumps/mlp_train_step")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    dir
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A server whose client takes code lens refreshes and progress.
fn start() -> Client {
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": null,
            "capabilities": {
                "window": {"workDoneProgress": true},
                "workspace": {"codeLens": {"refreshSupport": true}},
            },
        }),
    );
    client.notify("initialized", json!({}));
    client
}

/// Whether the pass history has arrived: other lenses (the memory peak of a compiled
/// module) are there from the start.
fn has_history(lenses: &[(u64, String)]) -> bool {
    lenses.iter().any(|(_, t)| is_history(t))
}

fn is_history(title: &str) -> bool {
    title.starts_with("introduced by") || title.starts_with("in the input")
}

fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64
}

#[test]
fn every_instruction_says_which_pass_made_it() {
    let dir = copy_of_dumps("lens");
    let path = dir.join(AFTER);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start();
    client.open(&document, &text);
    let lenses = lens_titles_when(&mut client, &document, has_history);
    // The build reported progress, then asked for the lenses again (a request: the
    // client answers it and files it with the notifications).
    let ended = client.notification("$/progress", |p| p["value"]["kind"] == "end");
    assert_eq!(
        ended["value"]["message"],
        "29 snapshots, 89 instructions followed"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.queued("workspace/codeLens/refresh").is_empty() {
        assert!(Instant::now() < deadline, "no workspace/codeLens/refresh");
        client.next_response(Duration::from_millis(100));
    }
    let at = |needle: &str| {
        let line = line_of(&text, needle);
        lenses
            .iter()
            .find(|(l, _)| *l == line)
            .map(|(_, t)| t.clone())
    };
    assert_eq!(
        at("%dot.1 = ").as_deref(),
        Some("introduced by algsimp (step 7) · changed by 2 passes")
    );
    assert_eq!(
        at("%w1.1 = ").as_deref(),
        Some("in the input (before optimizations)")
    );
    assert_eq!(
        at("%broadcast_maximum_fusion = ").as_deref(),
        Some("introduced by fusion (step 20)")
    );
    // Every instruction of the module has one (besides the memory peak's lens).
    let instructions = text
        .lines()
        .filter(|l| l.contains(" = ") && l.starts_with("  "))
        .count();
    let history = lenses.iter().filter(|(_, t)| is_history(t)).count();
    assert_eq!(history, instructions);

    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "%dot.1 = ", 1)}),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        markdown.ends_with("**Passes**: introduced by algsimp (step 7) · changed by 2 passes"),
        "{markdown}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_dump_written_again_is_read_again() {
    let dir = copy_of_dumps("again");
    let path = dir.join(AFTER);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start();
    client.open(&document, &text);
    let line = line_of(&text, "%dot.1 = ");
    let title = |lenses: &[(u64, String)]| {
        lenses
            .iter()
            .find(|(l, _)| *l == line)
            .map(|(_, t)| t.clone())
    };
    let before = lens_titles_when(&mut client, &document, has_history);
    assert_eq!(
        title(&before).as_deref(),
        Some("introduced by algsimp (step 7) · changed by 2 passes")
    );
    // After optimizations, %dot.1 reads its operands the other way round.
    let changed = text.replace(
        "dot(%broadcast_maximum_fusion, %broadcast_multiply_fusion)",
        "dot(%broadcast_multiply_fusion, %broadcast_maximum_fusion)",
    );
    assert_ne!(changed, text);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&path, changed).unwrap();
    let after = lens_titles_when(&mut client, &document, |t| {
        title(t).is_some_and(|t| t.ends_with("changed by 3 passes"))
    });
    assert_eq!(
        title(&after).as_deref(),
        Some("introduced by algsimp (step 7) · changed by 3 passes")
    );
    let value: Value = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "%dot.1 = ", 1)}),
    );
    assert!(value["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .ends_with("changed by 3 passes"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The line `range` starts on in the file of `uri`, and the text the range covers.
fn line_at(place: &Value) -> (String, String) {
    let path = place["file"].as_str().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let line = place["range"]["start"]["line"].as_u64().unwrap() as usize;
    let line = text.lines().nth(line).unwrap().to_string();
    let (from, to) = (
        place["range"]["start"]["character"].as_u64().unwrap() as usize,
        place["range"]["end"]["character"].as_u64().unwrap() as usize,
    );
    let word = line[from..to].to_string();
    (line, word)
}

/// Clicking a history lens: its command carries the instruction; `hlo-lsp.history`
/// answers the passes with the snapshots just before and after each, at the
/// instruction's line in each (read here from the files), the same for the cursor's
/// instruction, and `hlo-lsp.diff` with the computation is what that pass did to it.
#[test]
fn the_lens_opens_the_snapshots_around_each_pass() {
    let dir = copy_of_dumps("command");
    let path = dir.join(AFTER);
    let text = std::fs::read_to_string(&path).unwrap();
    let document = file_uri(&path);
    let mut client = start();
    client.open(&document, &text);
    lens_titles_when(&mut client, &document, has_history);
    let lenses = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    let line = line_of(&text, "%dot.1 = ");
    let lens = lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["range"]["start"]["line"] == line
                && is_history(l["command"]["title"].as_str().unwrap())
        })
        .unwrap()
        .clone();
    assert_eq!(lens["command"]["command"], "hlo.showHistory");
    let argument = &lens["command"]["arguments"][0];
    assert_eq!(argument["instruction"], "dot.1");
    assert_eq!(argument["computation"], "main.2");

    let answer = client.result(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.history", "arguments": [argument]}),
    );
    assert_eq!(
        answer["summary"],
        "introduced by algsimp (step 7) · changed by 2 passes"
    );
    let passes = answer["passes"].as_array().unwrap();
    let labels: Vec<&str> = passes
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert_eq!(labels[0], "introduced by algsimp (step 7)");
    assert!(labels[1..].iter().all(|l| l.starts_with("changed by ")));
    for pass in passes {
        // After each pass, the instruction's own line.
        let (after, word) = line_at(&pass["after"]);
        assert_eq!(word, "dot.1", "{pass}");
        assert!(after.trim_start().starts_with("%dot.1 = "), "{after}");
        assert!(pass["after"]["uri"]
            .as_str()
            .unwrap()
            .starts_with("file://"));
        let file = pass["after"]["file"].as_str().unwrap();
        assert!(file.contains(&format!(".after_{}.", pass["pass"].as_str().unwrap())));
        let before = &pass["before"];
        match pass["event"].as_str().unwrap() {
            // Not there before algsimp made it: its computation's header, or what it replaced.
            "introduced" => assert_ne!(before["found"], "instruction", "{pass}"),
            _ => {
                let (before, _) = line_at(&pass["before"]);
                assert!(before.trim_start().starts_with("%dot.1 = "), "{before}");
                assert_ne!(before, after);
            }
        }
    }

    // The cursor in the line's indentation asks for the same instruction.
    let by_position = client.result(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.history", "arguments": [
            {"uri": document, "position": {"line": line, "character": 0}}
        ]}),
    );
    assert_eq!(by_position, answer);

    // What algsimp did to the computation of %dot.1.
    let introduced = &passes[0];
    let diff = client.result(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.diff", "arguments": [{
            "before": introduced["before"]["uri"],
            "after": introduced["after"]["uri"],
            "computation": "main.2",
        }]}),
    );
    let diff = diff["text"].as_str().unwrap();
    assert!(diff.contains("~ computation %main.2"), "{diff}");
    assert!(diff.contains("    + %dot.1 = "), "{diff}");

    // Not a pass dump: the request fails, saying why.
    let response = client.request(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.history", "arguments": [
            {"uri": "file:///nowhere/plain.hlo", "computation": "main", "instruction": "x"}
        ]}),
    );
    assert_eq!(response["error"]["code"], -32803, "{response}");
    std::fs::remove_dir_all(&dir).unwrap();
}
