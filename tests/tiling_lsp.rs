//! End-to-end: the language server publishes the tiling diagnostics and a
//! `textDocument/codeAction` on the invalid `output_tiles` offers the fix that
//! rewrites only the sizes list; applying it gives a document without the error.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

/// Applies one LSP text edit (single-line range, ASCII) to `text`.
fn apply(text: &str, edit: &Value) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let character = p["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + character
    };
    let (a, b) = (
        offset(&edit["range"]["start"]),
        offset(&edit["range"]["end"]),
    );
    format!(
        "{}{}{}",
        &text[..a],
        edit["newText"].as_str().unwrap(),
        &text[b..]
    )
}

#[test]
fn code_action_replaces_the_invalid_sizes() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/tiling/merge_2x5_split_4.hlo");
    let document = uri("merge_2x5_split_4.hlo");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let invalid: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "invalid-tiling")
        .collect();
    assert_eq!(invalid.len(), 2, "{diagnostics:?}");
    assert!(invalid.iter().all(|d| d["severity"] == 1));
    assert!(diagnostics
        .iter()
        .any(|d| d["code"] == "non-contiguous-tile"));

    let at = position_of(&text, "[\"4\"]", 1);
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": document},
            "range": {"start": at, "end": at},
            "context": {"diagnostics": []},
        }),
    );
    let actions = actions.as_array().expect("code actions");
    let fix = actions
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap_or("")
                .contains("nearest valid tiling")
        })
        .unwrap_or_else(|| panic!("no tiling fix in {actions:?}"));
    assert_eq!(fix["kind"], "quickfix");
    assert!(fix["title"].as_str().unwrap().contains("10"), "{fix}");
    let edits = fix["edit"]["changes"][&document]
        .as_array()
        .unwrap_or_else(|| panic!("edits in {fix}"));
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["newText"], "\"10\"");
    let fixed = apply(&text, &edits[0]);
    // Only the sizes list changed: the rest of the line is intact.
    assert_eq!(
        fixed,
        text.replace("[{\"sizes\":[\"4\"]}]", "[{\"sizes\":[\"10\"]}]")
    );

    // The fixed document has no tiling error left.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    let diagnostics = client.diagnostics(&document, 2);
    assert!(
        !diagnostics.iter().any(|d| d["code"] == "invalid-tiling"),
        "{diagnostics:?}"
    );
    client.shutdown_and_exit();
}

/// Two indivisible dimensions of one sizes list: the partial tiles are masked
/// (information, not warnings), and the one fix both carry is one code action.
const TWO_DIMS: &str = "HloModule t\n\n%fused (p: f32[6,1000]) -> f32[6,1000] {\n  %p = f32[6,1000]{1,0} parameter(0)\n  ROOT %e = f32[6,1000]{1,0} exponential(%p)\n}\n\nENTRY %main (a: f32[6,1000]) -> f32[6,1000] {\n  %a = f32[6,1000]{1,0} parameter(0)\n  ROOT %f = f32[6,1000]{1,0} fusion(%a), kind=kCustom, calls=%fused, backend_config={\"fusion_backend_config\":{\"kind\":\"__triton\",\"block_level_fusion_config\":{\"output_tiles\":[{\"sizes\":[\"4\",\"384\"]}]}}}\n}\n";

#[test]
fn one_fix_is_one_action_and_masked_tiles_are_information() {
    let mut client = Client::start();
    let document = uri("two_dims.hlo");
    client.open(&document, TWO_DIMS);
    let diagnostics = client.diagnostics(&document, 1);
    let on_sizes: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| {
            d["code"] == "indivisible-tile"
                && d["message"].as_str().unwrap().contains("does not divide")
        })
        .collect();
    assert_eq!(on_sizes.len(), 2, "{diagnostics:?}");
    // Information (3): the emitter masks partial tiles; nothing here is a warning.
    assert!(
        diagnostics.iter().all(|d| d["severity"] == 3),
        "{diagnostics:?}"
    );
    let at = position_of(TWO_DIMS, "[\"4\",\"384\"]", 2);
    let actions = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": document}, "range": {"start": at, "end": at}, "context": {"diagnostics": []}}),
    );
    let actions = actions.as_array().expect("code actions");
    assert!(!actions.is_empty(), "no fix offered");
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    let mut unique = titles.clone();
    unique.dedup();
    assert_eq!(titles, unique, "the same fix offered twice: {titles:?}");
    let fix = &actions[0];
    assert!(
        fix["title"]
            .as_str()
            .unwrap()
            .starts_with("Use tile sizes "),
        "{fix}"
    );
    assert_eq!(fix["diagnostics"].as_array().unwrap().len(), 2, "{fix}");
    client.shutdown_and_exit();
}
