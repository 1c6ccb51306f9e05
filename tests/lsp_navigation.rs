//! End-to-end tests of navigation across computations, back to the source and across a
//! dump directory, through the real `hlo-lsp` binary, on the JAX dumps of
//! `tests/data/dumps/step` (made by `tests/data/dumps/make_dumps.py`).

mod lsp_support;

use lsp_support::{byte_offset, position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const DIR: &str = "tests/data/dumps/step";
const AFTER: &str = "module_0004.jit_step.cpu_after_optimizations.txt";
const BEFORE: &str = "module_0004.jit_step.before_optimizations.txt";

fn dump(name: &str) -> String {
    read_repo_file(&format!("{DIR}/{name}"))
}

fn at(document: &str, text: &str, needle: &str, offset: usize) -> Value {
    json!({"textDocument": {"uri": document}, "position": position_of(text, needle, offset)})
}

/// The text an LSP range covers.
fn covered<'a>(text: &'a str, range: &Value) -> &'a str {
    &text[byte_offset(text, &range["start"])..byte_offset(text, &range["end"])]
}

fn prepare(client: &mut Client, document: &str, text: &str, needle: &str) -> Value {
    let items = client.result(
        "textDocument/prepareCallHierarchy",
        at(document, text, needle, 1),
    );
    assert_eq!(items.as_array().map(Vec::len), Some(1), "{items}");
    items[0].clone()
}

#[test]
fn call_hierarchy_follows_fusions_loops_branches_and_calls() {
    let mut client = Client::start();
    let text = dump(AFTER);
    let document = uri(AFTER);
    client.open(&document, &text);

    // A fused computation: called by one fusion, in a conditional's branch.
    let fused = prepare(&mut client, &document, &text, "%fused_computation (");
    assert_eq!(fused["name"], "fused_computation");
    assert_eq!(fused["detail"], "fusion %broadcast_add_fusion", "{fused}");
    assert_eq!(
        covered(&text, &fused["selectionRange"]),
        "%fused_computation"
    );
    let incoming = client.result("callHierarchy/incomingCalls", json!({"item": fused}));
    let incoming = incoming.as_array().unwrap();
    assert_eq!(incoming.len(), 1, "{incoming:?}");
    assert_eq!(incoming[0]["from"]["name"], "region_2.2");
    assert_eq!(incoming[0]["from"]["detail"], "branch 0 %cond.1.clone");
    assert_eq!(
        covered(&text, &incoming[0]["fromRanges"][0]),
        "%broadcast_add_fusion"
    );

    // The entry: a while (condition and body) and four fusions, in text order.
    let entry = prepare(&mut client, &document, &text, "%main.9 (");
    assert_eq!(entry["detail"], "ENTRY");
    let outgoing = client.result("callHierarchy/outgoingCalls", json!({"item": entry}));
    let callees: Vec<&str> = outgoing
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["to"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        callees,
        [
            "region_4.5",
            "region_0.4",
            "wrapped_reduce_computation",
            "fused_computation.5",
            "fused_computation.4",
            "fused_computation.3"
        ]
    );
    assert_eq!(covered(&text, &outgoing[0]["fromRanges"][0]), "%region_4.5");
    assert_eq!(outgoing[0]["to"]["detail"], "while condition %while.9");
    assert_eq!(outgoing[1]["to"]["detail"], "while body %while.9");

    // The loop body: both branches of the conditional, two fusions.
    let body = prepare(&mut client, &document, &text, "%region_0.4 (");
    let outgoing = client.result("callHierarchy/outgoingCalls", json!({"item": body}));
    let callees: Vec<&str> = outgoing
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["to"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        callees,
        [
            "fused_computation.2",
            "wrapped_add_computation",
            "region_2.2",
            "region_3.3"
        ]
    );

    // Inside a computation (not on a name): the enclosing computation.
    let inner = prepare(
        &mut client,
        &document,
        &text,
        "%reduce_sum.1 = f32[] reduce",
    );
    assert_eq!(inner["name"], "fused_computation.2");
}

#[test]
fn call_hierarchy_sees_calls_before_optimization() {
    let mut client = Client::start();
    let text = dump(BEFORE);
    let document = uri(BEFORE);
    client.open(&document, &text);
    let attention = prepare(&mut client, &document, &text, "%attention.8 (");
    assert_eq!(attention["detail"], "call %jit_attention_.1", "{attention}");
    let outgoing = client.result("callHierarchy/outgoingCalls", json!({"item": attention}));
    let callees: Vec<&str> = outgoing
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["to"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(callees, ["region_5.6", "region_6.7"]);
    let reducer = prepare(&mut client, &document, &text, "%region_5.6 (");
    assert_eq!(reducer["detail"], "reduce to_apply %reduce_max.7");
}

#[test]
fn definition_on_a_computation_header_goes_to_its_fusion() {
    let mut client = Client::start();
    let text = dump(AFTER);
    let document = uri(AFTER);
    client.open(&document, &text);
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "%fused_computation.1 (", 1),
    );
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(
        covered(&text, &found[0]["range"]),
        "%broadcast_multiply_fusion"
    );
    // The entry has no caller: its own name.
    let found = client.result(
        "textDocument/definition",
        at(&document, &text, "%main.9 (", 1),
    );
    assert_eq!(covered(&text, &found[0]["range"]), "%main.9");
}
