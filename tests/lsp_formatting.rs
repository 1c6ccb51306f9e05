//! Formatting through the real language server: both providers are announced,
//! `textDocument/formatting` returns edits that, applied as an editor applies them,
//! give exactly what `hlo-lsp fmt` prints (and nothing for a formatted dump; after
//! an edit, what the edited computation needs: the server remembers the rest),
//! `rangeFormatting` changes only the instructions the range touches (none past
//! the last line), a comment
//! stays beside its instruction, the `format.style` setting picks the form, and a
//! document the printer refuses gets an error naming the line, not edits.

use crate::lsp_support;

use lsp_support::{apply_edits, position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const HAND_WRITTEN: &str = "HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n  n = f32[2,3] negate(p)\n  ROOT a = f32[2,3] abs(n)\n}\n";

fn formatting(client: &mut Client, document: &str) -> Value {
    client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": document},
               "options": {"tabSize": 2, "insertSpaces": true}}),
    )
}

fn edits(response: &Value) -> Vec<Value> {
    response["result"]
        .as_array()
        .unwrap_or_else(|| panic!("no edits: {response}"))
        .clone()
}

#[test]
fn formatting_is_announced_and_gives_xla_text() {
    let (mut client, init) = Client::start_with(json!({}), false);
    let caps = &init["capabilities"];
    assert_eq!(caps["documentFormattingProvider"], json!(true), "{caps}");
    assert_eq!(
        caps["documentRangeFormattingProvider"],
        json!(true),
        "{caps}"
    );
    let document = uri("hand.hlo");
    client.open(&document, HAND_WRITTEN);
    let formatted = apply_edits(HAND_WRITTEN, &edits(&formatting(&mut client, &document)));
    let want = hlo_lsp::format::format(HAND_WRITTEN, None).expect("formats");
    assert_eq!(formatted, want);
    assert!(
        formatted.contains("  ROOT %a = f32[2,3]{1,0} abs(%n)\n"),
        "{formatted}"
    );

    open_formatted_dump(&mut client);
}

/// Opens JAX's softmax dump, which is in XLA's form already: formatting it edits
/// nothing. Its text and URI.
fn open_formatted_dump(client: &mut Client) -> (String, String) {
    let dump = read_repo_file("tests/data/jax/softmax.after.hlo");
    let document = uri("softmax.after.hlo");
    client.open(&document, &dump);
    assert_eq!(edits(&formatting(client, &document)), Vec::<Value>::new());
    (dump, document)
}

/// After an edit of one fused computation of a dump the server formatted, the
/// edits put back exactly what the edit changed: the other computations, which
/// the server remembers as formatted, are not printed again and need nothing.
#[test]
fn formatting_after_an_edit_fixes_what_the_edit_changed() {
    let mut client = Client::start();
    let (dump, document) = open_formatted_dump(&mut client);
    let line = "  ROOT %exp.0 = f32[8,128]{1,0} exponential(%sub.0)";
    let at = dump.find(line).expect("the line") + "  ROOT %exp.0 =".len();
    let edited = format!("{}  {}", &dump[..at], &dump[at..]);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2},
               "contentChanges": [{"text": edited}]}),
    );
    client.diagnostics(&document, 2);
    let fixed = edits(&formatting(&mut client, &document));
    assert_eq!(fixed.len(), 1, "{fixed:?}");
    assert_eq!(apply_edits(&edited, &fixed), dump);
}

#[test]
fn range_formatting_changes_only_the_touched_instruction() {
    let mut client = Client::start();
    let document = uri("range.hlo");
    client.open(&document, HAND_WRITTEN);
    let at = position_of(HAND_WRITTEN, "negate", 0);
    let response = client.request(
        "textDocument/rangeFormatting",
        json!({"textDocument": {"uri": document}, "range": {"start": at, "end": at},
               "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    let formatted = apply_edits(HAND_WRITTEN, &edits(&response));
    assert_eq!(
        formatted,
        HAND_WRITTEN.replace(
            "  n = f32[2,3] negate(p)",
            "  %n = f32[2,3]{1,0} negate(%p)"
        )
    );
}

/// A range past the last line (clients send one for a selection at the end)
/// touches nothing: it was read as the whole text, which formatted everything.
#[test]
fn a_range_past_the_last_line_formats_nothing() {
    let mut client = Client::start();
    let document = uri("past.hlo");
    client.open(&document, HAND_WRITTEN);
    let past = json!({"line": 100, "character": 0});
    let response = client.request(
        "textDocument/rangeFormatting",
        json!({"textDocument": {"uri": document}, "range": {"start": past, "end": past},
               "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(edits(&response), Vec::<Value>::new(), "{response}");
}

#[test]
fn a_comment_stays_above_its_instruction() {
    let mut client = Client::start();
    let document = uri("comment.hlo");
    let text = "HloModule m\n\nENTRY e {\n  // keep\n  ROOT p = f32[] parameter(0)\n}\n";
    client.open(&document, text);
    let formatted = apply_edits(text, &edits(&formatting(&mut client, &document)));
    assert!(
        formatted.contains("{\n  // keep\n  ROOT %p = f32[] parameter(0)\n}"),
        "{formatted}"
    );
}

#[test]
fn a_syntax_error_gets_an_error_with_its_line() {
    let mut client = Client::start();
    let document = uri("broken.hlo");
    let text = "HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT = negate(p)\n}\n";
    client.open(&document, text);
    let response = formatting(&mut client, &document);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("line 5"), "{response}");
}

#[test]
fn the_format_style_setting_picks_the_form() {
    let (mut client, _) = Client::start_with(json!({"format": {"style": "long"}}), false);
    let document = uri("style.hlo");
    client.open(&document, HAND_WRITTEN);
    let formatted = apply_edits(HAND_WRITTEN, &edits(&formatting(&mut client, &document)));
    assert!(formatted.contains("abs(f32[2,3]{1,0} %n)"), "{formatted}");
}

/// What Neovim sends when a user changes `format.style` and formats at once: the
/// buffer's pending edit (flushed before the request), the settings, the request,
/// back to back. The settings change names no document, so it waits for that edit as
/// the request does; the request must still run with the new style. Rounds alternate
/// the style on a JAX dump (written short: the long form changes it, the short one
/// does not).
#[test]
fn a_style_change_applies_to_the_formatting_request_sent_right_after_it() {
    let mut client = Client::start();
    let dump = read_repo_file("tests/data/jax/layer_norm.after.hlo");
    let document = uri("layer_norm.after.hlo");
    client.open(&document, &dump);
    for round in 0..12 {
        let style = if round % 2 == 0 { "long" } else { "short" };
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": document, "version": round + 2},
                   "contentChanges": [{"text": format!("{dump}\n")}]}),
        );
        client.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"format": {"style": style}}}),
        );
        let changed = edits(&formatting(&mut client, &document))
            .iter()
            .any(|edit| {
                edit["newText"]
                    .as_str()
                    .is_some_and(|t| t.contains("{1,0} %"))
            });
        assert_eq!(changed, style == "long", "round {round}: style {style}");
    }
}
