//! The language server on `.mlir` documents, through the built binary: hover on
//! linalg ops and maps, loop-bound inlay hints, alias / SSA navigation, symbols and
//! the tiling diagnostics.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const RESNET: &str = "tests/data/samples/mlir/byteir_resnet_block_fuse_ext.mlir";

fn at(document: &str, text: &str, needle: &str, offset: usize) -> Value {
    json!({"textDocument": {"uri": document}, "position": position_of(text, needle, offset)})
}

/// LSP position of a byte offset (ASCII text).
fn byte_position(text: &str, byte: usize) -> Value {
    let line = text[..byte].matches('\n').count() as u32;
    let column = (byte - text[..byte].rfind('\n').map_or(0, |n| n + 1)) as u32;
    lsp_support::pos(line, column)
}

fn hover_text(
    client: &mut Client,
    document: &str,
    text: &str,
    needle: &str,
    offset: usize,
) -> String {
    let h = client.result("textDocument/hover", at(document, text, needle, offset));
    h["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("no hover at {needle}: {h}"))
        .to_string()
}

#[test]
fn resnet_block_hover_hints_and_navigation() {
    let mut client = Client::start();
    let text = read_repo_file(RESNET);
    let document = uri("resnet.mlir");
    client.open(&document, &text);
    assert_eq!(client.diagnostics(&document, 1), Vec::<Value>::new());

    // The root generic of the input: domain from the tensor types, every operand's map.
    let h = hover_text(&mut client, &document, &text, "linalg.generic {__root__", 3);
    assert!(
        h.contains("domain: d0 ∈ [0, 1), d1 ∈ [0, 56), d2 ∈ [0, 56), d3 ∈ [0, 256)"),
        "{h}"
    );
    assert_eq!(h.matches("(d0, d1, d2, d3) -> (0, d1, d2, d3), domain: d0 in [0, 0], d1 in [0, 55], d2 in [0, 55], d3 in [0, 255]").count(), 3, "{h}");
    assert!(h.contains("utilization 100.0% of elements"), "{h}");

    // An alias use inside the tiled generic: the map and the operand's view over 1x8x56x32.
    let h = hover_text(&mut client, &document, &text, "[#map6, #map6", 2);
    assert!(
        h.contains("#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"),
        "{h}"
    );
    assert!(
        h.contains("d1 in [0, 7], d2 in [0, 55], d3 in [0, 31]"),
        "{h}"
    );

    // A convolution: reduction loops are range variables.
    let h = hover_text(
        &mut client,
        &document,
        &text,
        "linalg.conv_2d_nhwc_fhwc {__conv_1__",
        3,
    );
    assert!(
        h.contains("(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, s2)"),
        "{h}"
    );

    // The tiling op: targets and splits.
    let h = hover_text(
        &mut client,
        &document,
        &text,
        "transform.structured.fuse_ext",
        3,
    );
    assert!(
        h.contains("d1: 56 by 8 → 7 tiles, divisible")
            && h.contains("d3: 256 by 32 → 8 tiles, divisible"),
        "{h}"
    );

    // Inlay hints: loop bounds after each linalg op with a known domain.
    let hints = client.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": document}, "range": {"start": lsp_support::pos(0, 0), "end": lsp_support::pos(200, 0)}}),
    );
    let labels: Vec<&str> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["label"].as_str())
        .collect();
    assert!(
        labels.contains(&"d0 ∈ [0, 1), d1 ∈ [0, 8), d2 ∈ [0, 56), d3 ∈ [0, 32)"),
        "{labels:?}"
    );
    assert!(labels.contains(&"d0 ∈ [0, 1), d1 ∈ [0, 56), d2 ∈ [0, 56), d3 ∈ [0, 64), d4 ∈ [0, 3), d5 ∈ [0, 3), d6 ∈ [0, 64)"), "{labels:?}");

    // Go to definition: alias use → its (second-section) definition; SSA use → its def.
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "affine.apply #map4", 14),
    );
    assert_eq!(
        found[0]["range"]["start"],
        position_of(&text, "#map4 = affine_map", 0),
        "{found}"
    );
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "return %13", 8),
    );
    assert_eq!(
        found[0]["range"]["start"],
        position_of(&text, "%13 = linalg.generic", 0),
        "{found}"
    );
    // `%in` in the second function's body resolves within that body.
    let second_in = text.rfind("arith.addf %in,").unwrap() + "arith.addf ".len();
    let found = client.result(
        "textDocument/definition",
        json!({"textDocument": {"uri": document}, "position": byte_position(&text, second_in)}),
    );
    let def_line = found[0]["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert_eq!(
        text.lines().nth(def_line).unwrap().trim(),
        "^bb0(%in: f16, %in_15: f16, %out: f16):"
    );

    // References of #map6: the definition and its three uses.
    let refs = client.result(
        "textDocument/references",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "#map6 =", 1), "context": {"includeDeclaration": true}}),
    );
    assert_eq!(refs.as_array().unwrap().len(), 4, "{refs}");

    // Document symbols: aliases and the two functions with their ops.
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": document}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "@resnet_block").count(),
        2,
        "{names:?}"
    );
    assert!(names.contains(&"#map6"), "{names:?}");
    let first = symbols
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "@resnet_block")
        .unwrap();
    let children: Vec<&str> = first["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(children.contains(&"%13 = linalg.generic"), "{children:?}");
    client.shutdown_and_exit();
}

#[test]
fn indivisible_tiling_is_published_as_a_warning() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/mlir/resnet_tile_indivisible.mlir");
    let document = uri("tiled.mlir");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "indivisible-tile");
    assert_eq!(diagnostics[0]["severity"], 2);
    assert_eq!(
        diagnostics[0]["range"]["start"],
        position_of(&text, "tile_sizes = [0, 6, 0, 48]", 13)
    );
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("predicate d1 < 56") && message.contains("predicate d3 < 256"),
        "{message}"
    );
    client.shutdown_and_exit();
}

/// An unsaved buffer is MLIR when the client says so (`languageId` `mlir`), and an
/// `.hlo` file with the same text is not analyzed as MLIR.
#[test]
fn language_id_selects_mlir() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/mlir/resnet_tile_indivisible.mlir");
    let untitled = "untitled:Untitled-1";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": untitled, "languageId": "mlir", "version": 1, "text": text}}),
    );
    let diagnostics = client.diagnostics(untitled, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "indivisible-tile");
    let h = hover_text(&mut client, untitled, &text, "linalg.generic {__root__", 3);
    assert!(h.contains("d1 ∈ [0, 56)"), "{h}");
    let hlo = uri("same_text.hlo");
    client.open(&hlo, &text);
    let diagnostics = client.diagnostics(&hlo, 1);
    assert!(
        diagnostics.iter().all(|d| d["code"] != "indivisible-tile"),
        "{diagnostics:?}"
    );
    // A buffer whose client names no language and whose name says nothing: the
    // content decides (as `hlo-lsp check` does).
    for (name, language) in [
        ("untitled:Untitled-2", "plaintext"),
        ("file:///tmp/excerpt.txt", "plaintext"),
    ] {
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": name, "languageId": language, "version": 1, "text": text}}),
        );
        let diagnostics = client.diagnostics(name, 1);
        assert_eq!(diagnostics.len(), 1, "{name}: {diagnostics:?}");
        assert_eq!(diagnostics[0]["code"], "indivisible-tile", "{name}");
    }
    client.shutdown_and_exit();
}

const SIMPLIFIABLE: &str = "#map = affine_map<(d0, d1) -> (d0, d1)>\n#inner = affine_map<(d0, d1) -> ((d0 * 4) floordiv 2, (d1 * 8 + 4) mod 4)>\nfunc.func @f(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x16xf32> {\n  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #map], iterator_types = [\"parallel\", \"parallel\"]} ins(%b : tensor<16x8xf32>) outs(%a : tensor<8x16xf32>) {\n  ^bb0(%x: f32, %y: f32):\n    linalg.yield %x : f32\n  } -> tensor<8x16xf32>\n  return %0 : tensor<8x16xf32>\n}\n";

fn code_actions(client: &mut Client, document: &str, needle: &str, offset: usize) -> Vec<Value> {
    let position = position_of(SIMPLIFIABLE, needle, offset);
    let actions = client.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": document},
               "range": {"start": position, "end": position},
               "context": {"diagnostics": []}}),
    );
    actions.as_array().cloned().unwrap_or_default()
}

/// The text after applying the single-file edit of `action`.
fn applied(text: &str, document: &str, action: &Value) -> String {
    lsp_support::apply_edits(
        text,
        action["edit"]["changes"][document].as_array().unwrap(),
    )
}

#[test]
fn map_code_actions_simplify_inline_and_extract() {
    let mut client = Client::start();
    let document = uri("simplify.mlir");
    client.open(&document, SIMPLIFIABLE);
    // The map that simplifies is a hint with its quick fix.
    let diagnostics = client.diagnostics(&document, 1);
    let hint = diagnostics
        .iter()
        .find(|d| d["code"] == "simplifiable-map")
        .expect("simplifiable-map hint");
    assert_eq!(hint["severity"], 4);
    let actions = code_actions(&mut client, &document, "#inner = affine", 12);
    let fix = actions
        .iter()
        .find(|a| a["kind"] == "quickfix")
        .expect("quick fix");
    let fixed = applied(SIMPLIFIABLE, &document, fix);
    assert!(
        fixed.contains("#inner = affine_map<(d0, d1) -> (d0 * 2, 0)>\n"),
        "{fixed}"
    );
    // Inline the alias use.
    let actions = code_actions(&mut client, &document, "#map]", 1);
    let inline = actions
        .iter()
        .find(|a| a["kind"] == "refactor.inline")
        .expect("inline");
    let inlined = applied(SIMPLIFIABLE, &document, inline);
    assert!(
        inlined.contains("(d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]"),
        "{inlined}"
    );
    // Extract the inline map into a fresh alias defined before the function.
    let actions = code_actions(&mut client, &document, "[affine_map", 3);
    let extract = actions
        .iter()
        .find(|a| a["kind"] == "refactor.extract")
        .expect("extract");
    let extracted = applied(SIMPLIFIABLE, &document, extract);
    assert!(
        extracted.contains("#map0 = affine_map<(d0, d1) -> (d1, d0)>\nfunc.func"),
        "{extracted}"
    );
    assert!(extracted.contains("[#map0, #map]"), "{extracted}");
    assert!(client.shutdown_and_exit().success());
}

/// ByteIR's `linalg_ext` ops: hover (what the loops mean, runtime positions said so),
/// loop-bound inlay hints, document symbols and the `tile_ext` diagnostic.
#[test]
fn linalg_ext_hover_hints_symbols_and_tile_ext() {
    let mut client = Client::start();
    let text = read_repo_file("tests/data/mlir/linalg_ext.mlir");
    let document = uri("linalg_ext.mlir");
    client.open(&document, &text);
    let diagnostics = client.diagnostics(&document, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "indivisible-tile");
    assert_eq!(
        diagnostics[0]["range"]["start"],
        position_of(&text, "[32, 24]", 0)
    );
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .contains("fill holes with -inf, which the comparator never prefers"),
        "{diagnostics:?}"
    );

    let h = hover_text(&mut client, &document, &text, "linalg_ext.softmax\n", 3);
    assert!(
        h.contains("domain: d0 ∈ [0, 1024), d1 ∈ [0, 64) (parallel, reduction)"),
        "{h}"
    );
    assert!(h.contains("softmax along dimension 1"), "{h}");
    assert!(
        h.contains(
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 1023], d1 in [0, 63], s0 in [0, 63]"
        ),
        "{h}"
    );
    let h = hover_text(&mut client, &document, &text, "linalg_ext.scatter", 3);
    assert!(h.contains("not an affine map"), "{h}");
    assert!(
        h.contains("(d0, d1, d2){rt0, rt1} -> (rt0, rt1, d1, d2)"),
        "{h}"
    );
    let h = hover_text(&mut client, &document, &text, "linalg_ext.topk", 3);
    assert!(
        h.contains("the 3 best of each row of 64 by `arith.cmpf ogt`"),
        "{h}"
    );
    let h = hover_text(&mut client, &document, &text, "linalg_ext.diag", 3);
    assert!(h.contains("-d1 + d0 in [0, 0]"), "{h}");
    let h = hover_text(&mut client, &document, &text, "tile_ext %2", 3);
    assert!(
        h.contains("d1: 64 by 24 → 3 tiles, 8 holes, predicate `d1 < 64`"),
        "{h}"
    );

    let hints = client.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": document}, "range": {"start": lsp_support::pos(0, 0), "end": lsp_support::pos(200, 0)}}),
    );
    let labels: Vec<&str> = hints
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["label"].as_str())
        .collect();
    for domain in [
        "d0 ∈ [0, 1024), d1 ∈ [0, 64)",
        "d0 ∈ [0, 100), d1 ∈ [0, 32), d2 ∈ [0, 64)",
        "d0 ∈ [0, 8), d1 ∈ [0, 32), d2 ∈ [0, 64), d3 ∈ [0, 128)",
        "d0 ∈ [0, 2), d1 ∈ [0, 16), d2 ∈ [0, 32)",
    ] {
        assert!(labels.contains(&domain), "{domain}: {labels:?}");
    }

    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": document}}),
    );
    let children: Vec<String> = symbols
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["children"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    for op in [
        "%4 = linalg_ext.softmax",
        "%0 = linalg_ext.topk",
        "%2 = linalg_ext.scan",
        "%res = linalg_ext.scatter",
        "%1 = linalg_ext.diag",
        "%1 = linalg_ext.layer_norm",
        "%2 = linalg_ext.alias",
        "%1 = linalg.softmax",
    ] {
        assert!(children.iter().any(|c| c == op), "{op}: {children:?}");
    }
    assert!(!children.iter().any(|c| c.contains("linalg_ext.yield")));
    client.shutdown_and_exit();
}

/// A JAX-lowered StableHLO program (with its locations) through the protocol:
/// the hover on an op is the HLO hover of the instruction it is, with the Python
/// stack it came from and the maps from `@main`'s result; inlay hints stand after
/// the ops the result reads; the locations link to the Python file, found by its
/// trailing path in the workspace.
#[test]
fn stablehlo_hover_hints_and_source_links() {
    let root = std::fs::canonicalize(lsp_support::repo_file("tests/data/stablehlo")).unwrap();
    let root_uri = format!("file://{}", root.display());
    let mut client = Client::spawn(&[]);
    client.result(
        "initialize",
        json!({"processId": null, "rootUri": root_uri, "capabilities": {}}),
    );
    client.notify("initialized", json!({}));
    let text = read_repo_file("tests/data/stablehlo/softmax_debug.mlir");
    let document = format!("{root_uri}/softmax_debug.mlir");
    client.open(&document, &text);
    let errors: Vec<Value> = client
        .diagnostics(&document, 1)
        .into_iter()
        .filter(|d| d["severity"] == 1)
        .collect();
    assert_eq!(errors, Vec::<Value>::new());

    let h = hover_text(&mut client, &document, &text, "%3 = stablehlo.subtract", 1);
    assert!(h.contains("subtract(f32[4,8] %arg0, f32[4,8] %2)"), "{h}");
    assert!(
        h.contains("Source: softmax_debug.py:15 in norm ← softmax_debug.py:19 in softmax"),
        "{h}"
    );
    assert!(h.contains("**From the output of function `@main`**"), "{h}");
    assert!(
        h.contains("`(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 7]`"),
        "{h}"
    );

    let hints = client.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": document}, "range": {"start": lsp_support::pos(0, 0), "end": lsp_support::pos(60, 0)}}),
    );
    let hints = hints.as_array().unwrap();
    // One per op of @main (all are read by its result), and one on %arg0.
    assert_eq!(hints.len(), 12, "{hints:?}");
    let line_of = |needle: &str| position_of(&text, needle, 0)["line"].clone();
    let on = |needle: &str| {
        hints
            .iter()
            .find(|h| h["position"]["line"] == line_of(needle))
            .and_then(|h| h["label"].as_str())
            .unwrap_or_else(|| panic!("no hint on {needle}: {hints:?}"))
            .to_string()
    };
    assert_eq!(on("%1 = stablehlo.broadcast_in_dim"), "(d0, d1) -> (d0, 0)");
    assert_eq!(
        on("%4 = stablehlo.exponential"),
        "(d0, d1) -> (d0, d1) (+1)"
    );

    let links = client.result(
        "textDocument/documentLink",
        json!({"textDocument": {"uri": document}}),
    );
    let links = links.as_array().unwrap();
    assert_eq!(links.len(), 7, "{links:?}");
    let script = format!("{root_uri}/softmax_debug.py");
    assert!(
        links.iter().any(|l| l["target"] == format!("{script}#L15")),
        "{links:?}"
    );
}
