//! Reshape-chain quick fixes through the real language server: the hints are
//! published, `textDocument/codeAction` at a chain returns its quickfix, and the
//! returned workspace edit, applied as an editor would, gives the expected text.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

/// `text` with the edits of `action` for `document` applied (from the end, as they
/// do not overlap).
fn apply(text: &str, action: &Value, document: &str) -> String {
    let edits = action["edit"]["changes"][document]
        .as_array()
        .unwrap_or_else(|| panic!("no edits for {document}: {action}"));
    lsp_support::apply_edits(text, edits)
}

fn code_actions(client: &mut Client, document: &str, text: &str, needle: &str) -> Vec<Value> {
    let at = position_of(text, needle, 0);
    let found = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": document}, "range": {"start": at, "end": at},
               "context": {"diagnostics": []}}),
    );
    found.as_array().cloned().unwrap_or_default()
}

#[test]
fn the_seed_chain_is_fixed_through_code_actions() {
    let text = read_repo_file("tests/data/refactor/chains.hlo");
    let mut client = Client::start();
    let document = uri("chains.hlo");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let hints: Vec<(&str, i64)> = diagnostics
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["severity"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        hints,
        vec![
            ("reshape-chain", 4),
            ("reshape-chain", 4),
            ("noop-reshape", 4)
        ],
        "{diagnostics:?}"
    );

    // Identity chain: one quickfix, removing it.
    let actions = code_actions(&mut client, &document, &text, "%r1 = ");
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["isPreferred"], true);
    assert_eq!(actions[0]["diagnostics"][0]["code"], "reshape-chain");
    assert_eq!(
        apply(&text, &actions[0], &document),
        read_repo_file("tests/data/refactor/chains.identity-fixed.hlo")
    );

    // The fused chain: one reshape replaces two; the first action is that reshape.
    let actions = code_actions(&mut client, &document, &text, "ROOT %reshape.2");
    assert!(
        actions[0]["title"]
            .as_str()
            .unwrap()
            .contains("one reshape"),
        "{actions:?}"
    );
    assert_eq!(
        apply(&text, &actions[0], &document),
        read_repo_file("tests/data/refactor/chains.reshape-fixed.hlo")
    );

    // The no-op transpose.
    let actions = code_actions(&mut client, &document, &text, "%t = ");
    assert_eq!(actions.len(), 1, "{actions:?}");
    let expected = text
        .replace(
            "  %t = f32[10,10,10]{2,1,0} transpose(%r2), dimensions={0,1,2}\n",
            "",
        )
        .replace("negate(%t)", "negate(%r2)");
    assert_eq!(apply(&text, &actions[0], &document), expected);

    // Nowhere near a chain: nothing.
    assert!(code_actions(&mut client, &document, &text, "ROOT %out").is_empty());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn edits_land_right_after_non_ascii_text() {
    // UTF-16 columns differ from bytes after these characters.
    let text = "HloModule m\n\nENTRY e {\n  // größe → 😀\n  p = f32[4,6] parameter(0) // ü\n  \
                a = f32[24] reshape(p) // 😀\n  b = f32[4,6] reshape(a)\n  \
                ROOT n = f32[4,6] negate(b) // é\n}\n";
    let mut client = Client::start();
    let document = uri("unicode.hlo");
    client.open(&document, text);
    let diagnostics = client.diagnostics(&document, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let actions = code_actions(&mut client, &document, text, "b = ");
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(
        apply(text, &actions[0], &document),
        "HloModule m\n\nENTRY e {\n  // größe → 😀\n  p = f32[4,6] parameter(0) // ü\n  \
         ROOT n = f32[4,6] negate(p) // é\n}\n"
    );
    assert!(client.shutdown_and_exit().success());
}
