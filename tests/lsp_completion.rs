//! Completion, signature help and quick fixes through the real binary (issue 48):
//! the capabilities a client reads, answers on text as it is typed (didChange after
//! didChange, broken in between), positions in UTF-16, plain text for a client
//! without snippets, and a quick fix whose edit makes its diagnostic go away.

use crate::lsp_support;

use lsp_support::{apply_edits, byte_offset, position_of, uri, Client};
use serde_json::{json, Value};

const TEXT: &str = "HloModule m

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0)
  ROOT %exp = f32[8,128]{1,0} exponential(%x)
}
";

fn at(document: &str, position: Value) -> Value {
    json!({"textDocument": {"uri": document}, "position": position})
}

fn labels(answer: &Value) -> Vec<String> {
    answer["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["label"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces the whole document (version `version`).
fn change(client: &mut Client, document: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": document, "version": version},
            "contentChanges": [{"text": text}],
        }),
    );
}

#[test]
fn capabilities_announce_completion_and_signature_help() {
    let (client, result) = Client::start_with(json!({}), false);
    let capabilities = &result["capabilities"];
    let triggers = &capabilities["completionProvider"]["triggerCharacters"];
    for c in ["%", "=", "(", " "] {
        assert!(
            triggers.as_array().unwrap().iter().any(|t| t == c),
            "{triggers}"
        );
    }
    assert!(capabilities["signatureHelpProvider"]["triggerCharacters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "("));
    assert!(capabilities["codeActionProvider"]["codeActionKinds"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k == "quickfix"));
    client.shutdown_and_exit();
}

#[test]
fn completion_while_typing_a_line() {
    let mut client = Client::start();
    let document = uri("typing.hlo");
    client.open(&document, TEXT);
    let line = "  %reduce.1 = f32[8]{0} reduce(%x, %zero), dimensions={1}, to_apply=%";
    let typed = TEXT.replace(
        "  ROOT %exp",
        &format!("  %zero = f32[] constant(0)\n{line}\n  ROOT %exp"),
    );
    // Typed in steps: each version broken until the line is done.
    let mut version = 2;
    for cut in [8, 20, 30, line.len()] {
        let partial = TEXT.replace(
            "  ROOT %exp",
            &format!("  %zero = f32[] constant(0)\n{}\n  ROOT %exp", &line[..cut]),
        );
        change(&mut client, &document, version, &partial);
        version += 1;
    }
    let cursor = position_of(&typed, "to_apply=%", "to_apply=%".len());
    let answer = client.result("textDocument/completion", at(&document, cursor.clone()));
    assert_eq!(
        labels(&answer).first().map(String::as_str),
        Some("add_f32"),
        "{answer}"
    );
    let first = &answer["items"][0];
    assert_eq!(
        first["insertTextFormat"], 1,
        "no snippets offered: plain text"
    );
    // The edit replaces the `%` typed, ends at the cursor.
    assert_eq!(first["textEdit"]["range"]["end"], cursor);
    let applied = apply_edits(&typed, &[first["textEdit"].clone()]);
    assert!(applied.contains("to_apply=%add_f32\n"), "{applied}");

    // An opcode is ranked by the instruction's name.
    let opcode = TEXT.replace(
        "  ROOT %exp",
        "  %broadcast.2 = f32[8,128]{1,0} \n  ROOT %exp",
    );
    change(&mut client, &document, version, &opcode);
    let cursor = position_of(&opcode, "{1,0} \n", "{1,0} ".len());
    let answer = client.result("textDocument/completion", at(&document, cursor));
    assert_eq!(
        labels(&answer).first().map(String::as_str),
        Some("broadcast")
    );
    client.shutdown_and_exit();
}

#[test]
fn completion_positions_are_utf16() {
    let mut client = Client::start();
    let document = uri("utf16.hlo");
    let text = TEXT.replace(
        "exponential(%x)",
        "exponential(%x), metadata={op_name=\"é😀\"}, ",
    );
    client.open(&document, &text);
    let cursor = position_of(&text, "\"}, ", 4);
    let answer = client.result("textDocument/completion", at(&document, cursor.clone()));
    assert!(
        labels(&answer).contains(&"sharding".to_string()),
        "{answer}"
    );
    assert_eq!(answer["items"][0]["textEdit"]["range"]["start"], cursor);
    assert_eq!(
        byte_offset(&text, &answer["items"][0]["textEdit"]["range"]["start"]),
        text.find("\"}, ").unwrap() + 4
    );
    client.shutdown_and_exit();
}

#[test]
fn signature_help_names_the_operand_typed() {
    let mut client = Client::start();
    let document = uri("signature.hlo");
    let text = TEXT.replace(
        "  ROOT %exp",
        "  %s = f32[8,128]{1,0} select(%p, %x, \n  ROOT %exp",
    );
    client.open(&document, &text);
    let cursor = position_of(&text, "%x, \n", 4);
    let help = client.result("textDocument/signatureHelp", at(&document, cursor));
    assert_eq!(
        help["signatures"][0]["label"],
        "select(pred, on_true, on_false)"
    );
    assert_eq!(help["activeParameter"], 2, "{help}");
    client.shutdown_and_exit();
}

#[test]
fn a_quick_fix_sets_the_inferred_shape() {
    let mut client = Client::start();
    let document = uri("fix.hlo");
    let text = TEXT.replace(
        "ROOT %exp = f32[8,128]{1,0} exponential(%x)",
        "%t = f32[8,128]{1,0} transpose(%x), dimensions={1,0}\n  ROOT %exp = f32[8,128]{1,0} exponential(%x)",
    );
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let mismatch: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "shape-mismatch")
        .collect();
    assert_eq!(mismatch.len(), 1, "{diagnostics:?}");
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": document},
            "range": mismatch[0]["range"],
            "context": {"diagnostics": [mismatch[0]]},
        }),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "quickfix")
        .expect("a quick fix");
    assert_eq!(fix["title"], "set the result shape to f32[128,8]{1,0}");
    let edits = fix["edit"]["changes"][&document]
        .as_array()
        .unwrap()
        .clone();
    let fixed = apply_edits(&text, &edits);
    change(&mut client, &document, 2, &fixed);
    let after = client.diagnostics(&document, 2);
    assert!(
        after.iter().all(|d| d["code"] != "shape-mismatch"),
        "{after:?}"
    );
    client.shutdown_and_exit();
}
