//! End-to-end feature tests through the real `hlo-lsp` binary: diagnostics (syntax
//! and shape errors, with versions), hover, definition, references, highlights,
//! rename, document symbols, semantic tokens (full + delta), folding, and edits
//! that end in the same answers as a fresh open of the final text.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const EXAMPLE: &str = "examples/multi_output_fusion.hlo";

fn at(document: &str, text: &str, needle: &str, offset: usize) -> Value {
    json!({"textDocument": {"uri": document}, "position": position_of(text, needle, offset)})
}

#[test]
fn shipped_example_opens_clean_and_navigates() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let document = uri("multi_output_fusion.hlo");
    client.open(&document, &text);
    // The example (from XLA's tests) feeds s32[1024] into the s32[] parameter %b:
    // exactly that one warning, no errors.
    let diagnostics = client.diagnostics(&document, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "call-shape-mismatch");
    assert_eq!(diagnostics[0]["severity"], 2);

    // Definition of an operand inside the fused computation.
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "multiply(%a", 10),
    );
    let expected = position_of(&text, "%a = s32[1024] parameter(0)", 0);
    assert_eq!(found[0]["range"]["start"], expected, "{found}");
    // Definition on a fused parameter's own name: the fusion operand feeding it.
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "%b = s32[] parameter(1)", 1),
    );
    assert_eq!(
        found[0]["range"]["start"],
        position_of(&text, "%b, %c), kind", 0),
        "{found}"
    );
    // Computation references: definition + calls=.
    let found = client.result(
        "textDocument/references",
        json!({"textDocument": {"uri": document}, "position": position_of(&text, "%fused_computation {", 2), "context": {"includeDeclaration": true}}),
    );
    assert_eq!(found.as_array().unwrap().len(), 2, "{found}");
    // Highlights of %mul: definition (write) + two uses (read).
    let found = client.result(
        "textDocument/documentHighlight",
        at(&document, &text, "%mul = ", 2),
    );
    let kinds: Vec<_> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_i64().unwrap())
        .collect();
    assert_eq!(kinds, [3, 2, 2], "{found}");

    // Document symbols: module → computations → instructions with shapes.
    let symbols = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": document}}),
    );
    let computations = symbols[0]["children"].as_array().unwrap();
    assert_eq!(computations.len(), 2, "{symbols}");
    assert_eq!(computations[0]["name"], "fused_computation");
    let instructions = computations[0]["children"].as_array().unwrap();
    assert_eq!(instructions.len(), 7);
    assert_eq!(instructions[4]["name"], "mul");
    assert!(instructions[4]["detail"]
        .as_str()
        .unwrap()
        .starts_with("s32[1024]"));

    // Workspace symbols find instructions by substring.
    let found = client.result("workspace/symbol", json!({"query": "fusion"}));
    assert!(
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "fusion"),
        "{found}"
    );

    // Folding: both computations.
    let folds = client.result(
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": document}}),
    );
    // From each computation's name line to its closing brace (0-based lines).
    assert_eq!(
        lsp_support::fold_lines(&folds),
        [(13, 22), (24, 30)],
        "{folds}"
    );
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn hover_describes_instructions_operands_and_fused_parameters() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let document = uri("example.hlo");
    client.open(&document, &text);
    let hover = client.result("textDocument/hover", at(&document, &text, "multiply(", 2));
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(
        value.contains("%mul = s32[1024] multiply(s32[1024] %a, s32[1024] %d)"),
        "{value}"
    );
    // On an operand: the defining instruction with its shape.
    let hover = client.result(
        "textDocument/hover",
        at(&document, &text, "broadcast(%b", 11),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.contains("%b = s32[] parameter(1)"), "{value}");
    // On a fused parameter: the fusion operand that feeds it.
    let hover = client.result(
        "textDocument/hover",
        at(&document, &text, "%c = s32[1024] parameter(2)", 1),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.contains("fed by operand 2 of `%fusion`"), "{value}");
    assert!(value.contains("`%c` `s32[1024]`"), "{value}");
    // Whitespace: no hover; a line past the end: no hover, no error.
    assert!(client
        .result(
            "textDocument/hover",
            json!({"textDocument": {"uri": document}, "position": {"line": 0, "character": 0}})
        )
        .is_null());
    assert!(client
        .result(
            "textDocument/hover",
            json!({"textDocument": {"uri": document}, "position": {"line": 9999, "character": 3}})
        )
        .is_null());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn rename_validates_and_edits_every_occurrence() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let document = uri("rename.hlo");
    client.open(&document, &text);
    let prepared = client.result(
        "textDocument/prepareRename",
        at(&document, &text, "%mul = ", 2),
    );
    assert_eq!(
        prepared["start"],
        position_of(&text, "mul = ", 0),
        "{prepared}"
    );
    let mut params = at(&document, &text, "%mul = ", 2);
    params["newName"] = json!("product");
    let edit = client.result("textDocument/rename", params.clone());
    let edits = edit["changes"][&document].as_array().unwrap();
    assert_eq!(edits.len(), 3, "{edit}");
    assert!(edits.iter().all(|e| e["newText"] == "product"));
    for bad in ["9lives", "has space", "add"] {
        params["newName"] = json!(bad);
        let response = client.request("textDocument/rename", params.clone());
        assert_eq!(response["error"]["code"], -32602, "{bad}: {response}");
    }
    assert!(client.shutdown_and_exit().success());
}

const SIGNED: &str = "HloModule s\n\n%fused (param_0: f32[8], param_1.11: f32[8]) -> f32[8] {\n  %param_0 = f32[8]{0} parameter(0)\n  %param_1.11 = f32[8]{0} parameter(1)\n  ROOT %a = f32[8]{0} add(%param_0, %param_1.11)\n}\n\nENTRY %main (x: f32[8], y: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n  %y = f32[8]{0} parameter(1)\n  ROOT %f = f32[8]{0} fusion(%x, %y), kind=kLoop, calls=%fused\n}\n";

#[test]
fn rename_of_a_fused_parameter_edits_the_signature_and_names_clashes() {
    let mut client = Client::start();
    let document = uri("signed.hlo");
    client.open(&document, SIGNED);
    let renamed = SIGNED
        .replace("param_1.11: f32[8]", "scale: f32[8]")
        .replace("%param_1.11 = ", "%scale = ")
        .replace("%param_1.11)", "%scale)");
    // From the instruction's name, and from its name in the signature: the same edits.
    for needle in ["%param_1.11 = ", "param_1.11: f32"] {
        let mut params = at(&document, SIGNED, needle, 2);
        params["newName"] = json!("scale");
        let edit = client.result("textDocument/rename", params);
        let edits = edit["changes"][&document].as_array().unwrap();
        assert_eq!(edits.len(), 3, "{needle}: {edit}");
        assert_eq!(lsp_support::apply_edits(SIGNED, edits), renamed, "{needle}");
    }
    // Hover on the signature's name: the parameter it declares.
    let hover = client.result(
        "textDocument/hover",
        at(&document, SIGNED, "param_1.11: f32", 2),
    );
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(
        value.contains("%param_1.11 = f32[8]{0} parameter(1)"),
        "{value}"
    );
    // prepareRename works on the signature too.
    let prepared = client.result(
        "textDocument/prepareRename",
        at(&document, SIGNED, "param_1.11: f32", 2),
    );
    assert_eq!(
        prepared["start"],
        position_of(SIGNED, "param_1.11: f32", 0),
        "{prepared}"
    );
    // A name that exists: an error that says what has it.
    let mut params = at(&document, SIGNED, "%param_1.11 = ", 2);
    params["newName"] = json!("param_0");
    let response = client.request("textDocument/rename", params.clone());
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message
            .contains("`param_0` is already defined in `fused`: `%param_0 = f32[8]{0} parameter"),
        "{message}"
    );
    // Its own name is not a clash.
    params["newName"] = json!("param_1.11");
    assert!(client.request("textDocument/rename", params)["error"].is_null());
    // A computation: the clash names the computation.
    let mut params = at(&document, SIGNED, "%fused (", 2);
    params["newName"] = json!("main");
    let message = client.request("textDocument/rename", params)["error"]["message"].clone();
    assert!(
        message
            .as_str()
            .unwrap()
            .contains("`main` is already the name of a computation"),
        "{message}"
    );
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn syntax_and_shape_errors_are_published_with_their_version() {
    let mut client = Client::start();
    let broken =
        "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p\n}\n";
    let document = uri("syntax.hlo");
    client.open(&document, broken);
    let diagnostics = client.diagnostics(&document, 1);
    assert!(!diagnostics.is_empty());
    assert!(
        diagnostics.iter().all(|d| d["severity"] == 1),
        "{diagnostics:?}"
    );
    assert!(
        diagnostics.iter().any(|d| d["code"] == "syntax-error"),
        "{diagnostics:?}"
    );

    let shape = "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[8] parameter(1)\n  ROOT a = f32[4] add(p, q)\n}\n";
    let document = uri("shape.hlo");
    client.open(&document, shape);
    let diagnostics = client.diagnostics(&document, 1);
    assert!(!diagnostics.is_empty(), "shape error not reported");
    assert!(
        diagnostics.iter().all(|d| d["code"] != "syntax-error"),
        "{diagnostics:?}"
    );
    assert_eq!(
        diagnostics[0]["range"]["start"]["line"], 5,
        "{diagnostics:?}"
    );

    // Fixing the shape in an edit clears the diagnostics for version 2.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 4, "character": 10}, "end": {"line": 4, "character": 11}}, "text": "4"}]}),
    );
    assert_eq!(client.diagnostics(&document, 2), Vec::<Value>::new());
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn semantic_tokens_full_and_delta() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let document = uri("tokens.hlo");
    client.open(&document, &text);
    let full = client.result(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": document}}),
    );
    let data: Vec<u64> = full["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(data.len() % 5, 0);
    // Decode absolute positions and find the opcode `multiply` (type 2 = function).
    let found: Vec<(String, u64)> = decoded(&full)
        .into_iter()
        .map(|(line, column, length, kind)| {
            let text_line = text.lines().nth(line as usize).unwrap();
            let token = &text_line[column as usize..(column + length) as usize];
            (token.to_string(), kind)
        })
        .collect();
    assert!(found.contains(&("multiply".to_string(), 2)), "{found:?}");
    assert!(found.contains(&("s32[1024]".to_string(), 4)), "{found:?}");
    assert!(found.contains(&("ENTRY".to_string(), 0)), "{found:?}");
    // An edit, then a delta against the previous result.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// note\n"}]}),
    );
    let delta = client.result(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": document}, "previousResultId": full["resultId"]}),
    );
    assert!(delta["edits"].is_array(), "{delta}");
    assert!(client.shutdown_and_exit().success());
}

/// `(line, column, length, type)` of each token of an LSP-encoded answer.
fn decoded(answer: &Value) -> Vec<(u64, u64, u64, u64)> {
    let data: Vec<u64> = answer["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let (mut line, mut column) = (0, 0);
    let mut out = Vec::new();
    for token in data.chunks(5) {
        if token[0] > 0 {
            line += token[0];
            column = token[1];
        } else {
            column += token[1];
        }
        out.push((line, column, token[2], token[3]));
    }
    out
}

/// A range request (what an editor shows; a large dump gets no whole-document answer)
/// answers the whole answer's tokens on those lines, encoded from the document's start.
#[test]
fn semantic_tokens_of_a_range_are_those_of_the_full_answer_there() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let document = uri("tokens.hlo");
    client.open(&document, &text);
    let full = decoded(&client.result(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": document}}),
    ));
    let lines = text.lines().count() as u64;
    let (from, to) = (lines / 3, 2 * lines / 3);
    let range = decoded(&client.result(
        "textDocument/semanticTokens/range",
        json!({"textDocument": {"uri": document},
               "range": {"start": {"line": from, "character": 0}, "end": {"line": to, "character": 0}}}),
    ));
    let expected: Vec<_> = full
        .into_iter()
        .filter(|t| from <= t.0 && t.0 < to)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(range, expected);
    assert!(client.shutdown_and_exit().success());
}

/// After a sequence of incremental edits, every answer equals a fresh open of the
/// final text.
#[test]
fn incremental_edits_match_a_fresh_open() {
    let mut client = Client::start();
    let text = read_repo_file(EXAMPLE);
    let edited = uri("edited.hlo");
    client.open(&edited, &text);
    // Rename %d to %bcast by hand in three edits, insert a line, break then fix it.
    let edits = [
        json!({"range": {"start": position_of(&text, "%d = ", 1), "end": position_of(&text, "%d = ", 2)}, "text": "bcast"}),
        json!({"range": {"start": position_of(&text, "%a, %d)", 5), "end": position_of(&text, "%a, %d)", 6)}, "text": "bcast"}),
        json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "HloModule edited\n"}),
        json!({"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "ENTRY {{{\n"}),
        json!({"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "text": ""}),
    ];
    for (i, change) in edits.iter().enumerate() {
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": edited, "version": i + 2}, "contentChanges": [change]}),
        );
    }
    let final_text = client.result(
        "hlo-lsp/documentText",
        json!({"textDocument": {"uri": edited}}),
    )["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(final_text.starts_with("HloModule edited\n"));
    assert!(
        final_text.contains("%bcast = s32[1024] broadcast(%b)")
            && final_text.contains("multiply(%a, %bcast)")
    );
    let fresh = uri("fresh.hlo");
    client.open(&fresh, &final_text);
    // Related locations name their own document: compare with URIs blanked.
    let blank = |diagnostics: Vec<Value>, name: &str| {
        Value::Array(diagnostics).to_string().replace(name, "URI")
    };
    let edited_diagnostics = blank(client.diagnostics(&edited, 6), &edited);
    let fresh_diagnostics = blank(client.diagnostics(&fresh, 1), &fresh);
    assert_eq!(edited_diagnostics, fresh_diagnostics);
    for needle in [
        "multiply(",
        "%bcast = ",
        "%bcast)",
        "fusion(",
        "=%fused_computation",
    ] {
        let h1 = client.result("textDocument/hover", at(&edited, &final_text, needle, 2));
        let h2 = client.result("textDocument/hover", at(&fresh, &final_text, needle, 2));
        assert!(!h1.is_null(), "{needle}");
        assert_eq!(h1, h2, "{needle}");
        let t1 = client.result(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": edited}}),
        );
        let t2 = client.result(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": fresh}}),
        );
        assert_eq!(t1["data"], t2["data"]);
    }
    let s1 = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": edited}}),
    );
    let s2 = client.result(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": fresh}}),
    );
    assert_eq!(s1, s2);
    // Still answering after everything.
    assert!(client
        .request(
            "textDocument/hover",
            at(&edited, &final_text, "multiply(", 2)
        )
        .get("error")
        .is_none());
    assert!(client.shutdown_and_exit().success());
}

const TRANSPOSE: &str = "HloModule t\n\n%fused {\n  %p = f32[8,16] parameter(0)\n  %n = f32[8,16] negate(%p)\n  ROOT %t = f32[16,8] transpose(%n), dimensions={1,0}\n}\n\nENTRY %main {\n  %a = f32[8,16] parameter(0)\n  ROOT %f = f32[16,8] fusion(%a), kind=kLoop, calls=%fused\n}\n";

#[test]
fn hover_inside_a_fusion_shows_the_maps() {
    let mut client = Client::start();
    let document = uri("transpose.hlo");
    client.open(&document, TRANSPOSE);
    let hover = client.result(
        "textDocument/hover",
        at(&document, TRANSPOSE, "transpose(", 3),
    );
    let value = hover["contents"]["value"].as_str().unwrap().to_string();
    // The root: the fusion output reads it as is; its operand is read transposed,
    // every element once (nothing to say about utilization).
    assert!(
        value.contains("**From the output of fusion `%f`**: identity"),
        "{value}"
    );
    assert!(
        value.contains("- `%n`: `(d0, d1) -> (d1, d0), domain: d0 in [0, 15], d1 in [0, 7]`"),
        "{value}"
    );
    assert!(!value.contains("utilization"), "{value}");
    // The negate inside the fusion: composed map from the fusion output to it first,
    // then the parameter it reads, then its own operand.
    let hover = client.result("textDocument/hover", at(&document, TRANSPOSE, "negate(", 2));
    let value = hover["contents"]["value"].as_str().unwrap().to_string();
    let composed = value
        .find("**From the output of fusion `%f`**: `(d0, d1) -> (d1, d0), domain: d0 in [0, 15], d1 in [0, 7]`")
        .unwrap_or_else(|| panic!("{value}"));
    let parameters = value
        .find("**Fusion parameters it reads** (maps from its index)\n- `%p` (parameter 0, `f32[8,16]`): identity")
        .unwrap_or_else(|| panic!("{value}"));
    let operands = value
        .find("**Operands**\n- `%p`: identity")
        .unwrap_or_else(|| panic!("{value}"));
    assert!(composed < parameters && parameters < operands, "{value}");
    // The fusion itself: composed maps to its operands.
    let hover = client.result("textDocument/hover", at(&document, TRANSPOSE, "fusion(", 2));
    let value = hover["contents"]["value"].as_str().unwrap().to_string();
    assert!(value.contains("(d0, d1) -> (d1, d0)"), "{value}");
    assert!(client.shutdown_and_exit().success());
}

const RESHAPES: &str = "HloModule r\n\n%fused {\n  %p = f32[4,6,10] parameter(0)\n  %n = f32[4,6,10] negate(%p)\n  %flat = f32[240] reshape(%n)\n  ROOT %r = f32[6,40] reshape(%flat)\n}\n\nENTRY %main {\n  %a = f32[4,6,10] parameter(0)\n  ROOT %f = f32[6,40] fusion(%a), kind=kLoop, calls=%fused\n}\n";

fn inlay_hints(client: &mut Client, document: &str, lines: (u32, u32)) -> Vec<Value> {
    let hints = client.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": document},
               "range": {"start": lsp_support::pos(lines.0, 0), "end": lsp_support::pos(lines.1, 0)}}),
    );
    hints.as_array().cloned().unwrap_or_default()
}

#[test]
fn inlay_hints_show_the_map_from_the_fusion_output_per_mode() {
    let mut client = Client::start();
    let document = uri("transpose.hlo");
    client.open(&document, TRANSPOSE);
    // Whole document: one hint per fused instruction, none in the entry computation.
    let hints = inlay_hints(&mut client, &document, (0, 100));
    let labels: Vec<&str> = hints.iter().map(|h| h["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "(d0, d1) -> (d1, d0)",
            "(d0, d1) -> (d1, d0)",
            "(d0, d1) -> (d0, d1)"
        ],
        "{hints:?}"
    );
    // Placed at the end of the instruction.
    let negate_end = position_of(TRANSPOSE, "negate(%p)", "negate(%p)".len());
    assert_eq!(hints[1]["position"], negate_end);
    assert!(hints[1]["tooltip"]["value"]
        .as_str()
        .unwrap()
        .contains("d1 in [0, 7]"));
    // Only the requested range (the negate's line).
    let line = negate_end["line"].as_u64().unwrap() as u32;
    let hints = inlay_hints(&mut client, &document, (line, line + 1));
    assert_eq!(hints.len(), 1, "{hints:?}");
    assert_eq!(hints[0]["position"], negate_end);

    // A long map is cut in short mode, whole in the tooltip and in full mode.
    let long = uri("reshapes.hlo");
    client.open(&long, RESHAPES);
    let hints = inlay_hints(&mut client, &long, (0, 100));
    let parameter = hints[0]["label"].as_str().unwrap();
    assert!(parameter.ends_with('…'), "{parameter}");
    assert!(parameter.chars().count() <= 40, "{parameter}");
    let tooltip = hints[0]["tooltip"]["value"].as_str().unwrap();
    assert!(
        tooltip.contains("(d0, d1) -> ((d0 * 40 + d1) floordiv 60"),
        "{tooltip}"
    );
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"inlayHints": {"mode": "full"}}}),
    );
    let hints = inlay_hints(&mut client, &long, (0, 100));
    let full = hints[0]["label"].as_str().unwrap();
    assert!(
        full.starts_with("(d0, d1) -> ((d0 * 40 + d1) floordiv 60"),
        "{full}"
    );
    assert!(
        full.contains("domain: d0 in [0, 5], d1 in [0, 39]"),
        "{full}"
    );
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"inlayHints": {"mode": "off"}}}),
    );
    assert!(inlay_hints(&mut client, &long, (0, 100)).is_empty());
    assert!(client.shutdown_and_exit().success());
}

const TILED: &str = "HloModule t\n\n%fused {\n  %p = f32[6,128] parameter(0)\n  ROOT %e = f32[6,128] exponential(%p)\n}\n\nENTRY %main {\n  %a = f32[6,128] parameter(0)\n  ROOT %f = f32[6,128] fusion(%a), kind=kCustom, calls=%fused, backend_config={\"fusion_backend_config\":{\"kind\":\"__triton\",\"block_level_fusion_config\":{\"output_tiles\":[{\"sizes\":[\"4\",\"128\"]}]}}}\n}\n";

#[test]
fn hover_on_a_tiled_fusion_summarizes_its_tiling() {
    let mut client = Client::start();
    let document = uri("tiled.hlo");
    client.open(&document, TILED);
    let hover = client.result("textDocument/hover", at(&document, TILED, "%f = ", 1));
    let value = hover["contents"]["value"].as_str().unwrap().to_string();
    // 6 rows by tiles of 4: one predicate (`d0 < 6`), no reduction.
    assert!(
        value.contains("tiles 4x128 · 1 predicate · 0 holes in reductions"),
        "{value}"
    );
    // A fusion without output_tiles gets no tiling line.
    client.open(&uri("plain.hlo"), TRANSPOSE);
    let hover = client.result(
        "textDocument/hover",
        at(&uri("plain.hlo"), TRANSPOSE, "%f = ", 1),
    );
    assert!(!hover.to_string().contains("tiles "), "{hover}");
    assert!(client.shutdown_and_exit().success());
}

/// Issue 31: `hlo-lsp check` broke lines at `\n` only while the server also breaks
/// them at a lone `\r` (as LSP does), so the two put findings on different lines.
/// On a file mixing lone `\r`, `\r\n` and `\n`, every finding of `check` is at the
/// position the server publishes (lines and columns from 1 against from 0).
#[test]
fn check_and_the_server_agree_on_lines_with_lone_cr() {
    let text = "HloModule mixed\r\rENTRY main {\r  a = f32[8] parameter(0)\r\n  \
                b = f32[8] negate(x)\r  c = f32[8] negate(y)\n  d = f32[8] add(b, c)\r\r\n  \
                ROOT e = f32[8] add(d, zz)\r\n}\r";
    let dir = std::env::temp_dir().join(format!("hlo-lsp-lsp-features-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mixed-line-ends.hlo");
    std::fs::write(&path, text).unwrap();
    let o = std::process::Command::new(lsp_support::server_binary())
        .args(["check", "--json", path.to_str().unwrap()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).expect("check --json");
    let mut from_check: Vec<(u64, u64, u64, u64, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().unwrap() - 1;
            let code = d["code"].as_str().unwrap().to_string();
            (n("line"), n("column"), n("end_line"), n("end_column"), code)
        })
        .collect();
    // x, y and zz are undefined: three findings on lines 4, 5 and 8 (from 0) by LSP's rule.
    let lines: Vec<u64> = from_check.iter().map(|d| d.0).collect();
    assert!(
        [4, 5, 8].iter().all(|l| lines.contains(l)),
        "{from_check:?}"
    );

    let mut client = Client::start();
    let document = uri("mixed-line-ends.hlo");
    client.open(&document, text);
    let mut from_server: Vec<(u64, u64, u64, u64, String)> = client
        .diagnostics(&document, 1)
        .iter()
        .map(|d| {
            let r = &d["range"];
            let n = |p: &str, k: &str| r[p][k].as_u64().unwrap();
            let code = d["code"].as_str().unwrap().to_string();
            let (s, e) = ("start", "end");
            (
                n(s, "line"),
                n(s, "character"),
                n(e, "line"),
                n(e, "character"),
                code,
            )
        })
        .collect();
    from_check.sort();
    from_server.sort();
    assert_eq!(from_check, from_server);
}
