//! End-to-end through the language server: the coalescing lines of the hover on
//! a fusion and on a fused parameter (verdict, warp map, picture), and the
//! `uncoalesced-read` diagnostic with its setting.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

fn hover(client: &mut Client, document: &str, at: Value) -> String {
    let h = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": at}),
    );
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn hover_on_fusion_and_fused_parameter() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/coalescing/rhs_transposed.hlo");
    let document = uri("rhs_transposed.hlo");
    client.open(&document, &text);
    let on_fusion = hover(&mut client, &document, position_of(&text, "ROOT fusion", 6));
    assert!(
        on_fusion
            .contains("**Coalescing** (loop emitter, 128 threads per block, unroll 1 · a6000)"),
        "{on_fusion}"
    );
    assert!(on_fusion.contains(
        "- `p1 f32[100,200]{0,1}`: not coalesced — a warp reads stride 100 (400 B); 1/16 of each transaction used"
    ));
    assert!(on_fusion
        .contains("- `p0 f32[100,200]{1,0}`: coalesced — a warp reads 32 consecutive elements"));

    // The fused parameter p1 (line 5 of the file): its operand, map and picture.
    let p1 = text
        .find("  p1 = f32[100, 200]{0, 1} parameter(1)")
        .unwrap();
    let at = position_of(&text[p1..], "p1", 1);
    let line = text[..p1].matches('\n').count();
    let at = json!({"line": line, "character": at["character"]});
    let on_param = hover(&mut client, &document, at);
    assert!(
        on_param.contains("of operand 1 of `%fusion`: `p1 f32[100,200]{0,1}`: not coalesced"),
        "{on_param}"
    );
    assert!(on_param.contains("First warp reads (linear offsets): `(thread_x) -> (thread_x * 100), domain: thread_x in [0, 31]`"));
    // The maps from the fusion come first, the coalescing paragraph and picture after.
    let maps_at = on_param.find("**From the output of fusion `%fusion`**");
    let coalescing_at = on_param.find("**Coalescing**");
    assert!(
        maps_at.is_some() && maps_at < coalescing_at,
        "the maps from the fusion should precede the coalescing paragraph:\n{on_param}"
    );
    assert!(on_param.contains("200 x 100 elements"));
    let picture: Vec<&str> = on_param
        .lines()
        .skip_while(|l| *l != "```text")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    assert_eq!(picture.len(), 16, "{on_param}");
    assert!(picture[0].starts_with('▒') && picture[3].chars().all(|c| c == '·'));

    // p0 reads coalesced: no picture in the summary hover.
    let p0 = text
        .find("  p0 = f32[100, 200]{1, 0} parameter(0)")
        .unwrap();
    let line = text[..p0].matches('\n').count();
    let on_p0 = hover(
        &mut client,
        &document,
        json!({"line": line, "character": 3}),
    );
    assert!(
        on_p0.contains("of operand 0 of `%fusion`: `p0 f32[100,200]{1,0}`: coalesced"),
        "{on_p0}"
    );
    assert!(!on_p0.contains("```text"));
}

#[test]
fn device_setting_changes_the_launch() {
    let (mut client, _) = Client::start_with(json!({"coalescing": {"device": "h100"}}), false);
    let text = read_repo_file("tests/data/coalescing/rhs_transposed.hlo");
    let document = uri("rhs_transposed.hlo");
    client.open(&document, &text);
    let on_fusion = hover(&mut client, &document, position_of(&text, "ROOT fusion", 6));
    assert!(on_fusion.contains("unroll 1 · h100)"), "{on_fusion}");
}

#[test]
fn uncoalesced_read_is_information_with_the_warp_map() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/coalescing/rhs_transposed.hlo");
    let document = uri("rhs_transposed.hlo");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let found: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "uncoalesced-read")
        .collect();
    assert_eq!(found.len(), 1, "{diagnostics:?}");
    let d = found[0];
    assert_eq!(d["severity"], 3, "information by default");
    assert_eq!(d["range"]["start"], json!({"line": 4, "character": 2}));
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("stride 100 (400 B)"));
    let related = &d["relatedInformation"][0];
    assert!(related["message"]
        .as_str()
        .unwrap()
        .contains("(thread_x) -> (thread_x * 100)"));
    assert_eq!(related["location"]["range"]["start"]["line"], 10);
}

#[test]
fn the_severity_setting_raises_it_to_a_warning() {
    let (mut client, _) = Client::start_with(json!({"coalescing": {"severity": "warning"}}), false);
    let text = read_repo_file("tests/data/coalescing/rhs_transposed.hlo");
    let document = uri("rhs_transposed.hlo");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let d = diagnostics
        .iter()
        .find(|d| d["code"] == "uncoalesced-read")
        .expect("uncoalesced-read");
    assert_eq!(d["severity"], 2);
}

#[test]
fn tiled_fusion_fix_prefers_coalesced_tiles() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/coalescing/tiled_triton.hlo");
    let document = uri("tiled_triton.hlo");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    let d = diagnostics
        .iter()
        .find(|d| d["code"] == "uncoalesced-read")
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    let at = d["range"]["start"].clone();
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": document},
            "range": {"start": at, "end": at},
            "context": {"diagnostics": []},
        }),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["title"]
                .as_str()
                .unwrap_or("")
                .contains("coalesced reads")
        })
        .unwrap_or_else(|| panic!("{actions:?}"));
    let edits = fix["edit"]["changes"][&document].as_array().unwrap();
    let fixed = lsp_support::apply_edits(&text, edits);
    assert!(fixed.contains(r#""sizes":["16","16"]"#), "{fixed}");
    // The fixed document has no uncoalesced read.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2},
               "contentChanges": [{"text": fixed}]}),
    );
    let after = client.diagnostics(&document, 2);
    assert!(
        after.iter().all(|d| d["code"] != "uncoalesced-read"),
        "{after:?}"
    );
}

/// The fusion-maps panel's full text draws the read as SVG with the
/// transaction boundaries (a `data:` image the markdown preview shows).
#[test]
fn panel_text_has_the_svg_picture() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/coalescing/rhs_transposed.hlo");
    let document = uri("rhs_transposed.hlo");
    client.open(&document, &text);
    let p1 = text
        .find("  p1 = f32[100, 200]{0, 1} parameter(1)")
        .unwrap();
    let line = text[..p1].matches('\n').count();
    let full = client.result(
        "hlo-lsp/fusionMaps",
        json!({"textDocument": {"uri": document}, "position": {"line": line, "character": 3}}),
    );
    let value = full["contents"]["value"].as_str().unwrap();
    let image = value
        .lines()
        .find(|l| l.starts_with("![what one warp reads of p1](data:image/svg+xml;base64,"))
        .unwrap_or_else(|| panic!("{value}"));
    assert!(image.ends_with("(red: 64-byte transaction boundaries)"));
    // The summary hover keeps to block characters.
    let summary = hover(
        &mut client,
        &document,
        json!({"line": line, "character": 3}),
    );
    assert!(!summary.contains("data:image/svg+xml"));
    assert!(summary.contains("```text"));
    // On the fusion, the panel pictures the uncoalesced operand only.
    let on_fusion = client.result(
        "hlo-lsp/fusionMaps",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "ROOT fusion", 6)}),
    );
    let value = on_fusion["contents"]["value"].as_str().unwrap();
    assert_eq!(value.matches("data:image/svg+xml").count(), 1, "{value}");
}
