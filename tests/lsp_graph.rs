//! End-to-end through the language server: `hlo-lsp/graph` answers the dataflow
//! graph at a position (around the instruction there, or the whole computation off
//! any instruction) with LSP ranges that point at each node's instruction, edges
//! that say how they read, XLA's coalescing verdicts on a GPU module's kernels, and
//! the DOT an editor draws with Graphviz, and the server's SVG when asked.

use crate::lsp_support;

use lsp_support::{pos, position_of, read_repo_file, uri, Client};
use serde_json::{json, Value};

const GPU_SAMPLE: &str = "tests/data/samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo";

fn graph(client: &mut Client, document: &str, position: Value, radius: u32) -> Value {
    client.result(
        "hlo-lsp/graph",
        json!({"textDocument": {"uri": document}, "position": position, "radius": radius}),
    )
}

/// Every instruction node's range is its name in the text.
fn check_ranges(text: &str, g: &Value) {
    let lines: Vec<&str> = text.lines().collect();
    for n in g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] != "more")
    {
        let start = &n["range"]["start"];
        let line = lines[start["line"].as_u64().unwrap() as usize];
        let column = start["character"].as_u64().unwrap() as usize;
        let name = n["name"].as_str().unwrap();
        assert!(
            line[column..].trim_start_matches('%').starts_with(name),
            "{n}"
        );
    }
}

#[test]
fn the_graph_around_a_fusion_has_its_reads_and_their_verdicts() {
    let mut client = Client::start();
    let text = read_repo_file(GPU_SAMPLE);
    let document = uri("kernel_reuse.hlo");
    client.open(&document, &text);
    let g = graph(
        &mut client,
        &document,
        position_of(&text, "fusion.1 = ", 2),
        1,
    );
    check_ranges(&text, &g);
    let nodes = g["nodes"].as_array().unwrap();
    let focus = nodes
        .iter()
        .find(|n| n["id"] == g["focus"])
        .expect("the focus is drawn");
    assert_eq!(focus["name"], "fusion.1");
    assert_eq!(focus["open"], true, "the focus fusion opens");
    assert!(
        nodes.iter().any(|n| n["group"] == focus["id"]),
        "its fused computation is drawn"
    );
    let edges = g["edges"].as_array().unwrap();
    let into_focus: Vec<&Value> = edges.iter().filter(|e| e["to"] == focus["id"]).collect();
    assert_eq!(into_focus.len(), 1, "{edges:?}");
    assert!(
        into_focus[0]["coalesced"].is_boolean(),
        "a GPU kernel's read is judged: {}",
        into_focus[0]
    );
    assert!(into_focus[0]["map"].is_string() && into_focus[0]["class"].is_string());
    assert!(g["dot"].as_str().unwrap().starts_with("digraph hlo {"));
    assert_eq!(g["legend"].as_array().unwrap().len(), 8);
    client.shutdown_and_exit();
}

#[test]
fn off_any_instruction_the_graph_is_the_computation() {
    let mut client = Client::start();
    let text = read_repo_file("examples/softmax.hlo");
    let document = uri("softmax.hlo");
    client.open(&document, &text);
    let g = graph(&mut client, &document, position_of(&text, "ENTRY", 0), 2);
    assert!(g["focus"].is_null(), "{g}");
    assert!(!g["nodes"].as_array().unwrap().is_empty());
    check_ranges(&text, &g);
    // Past the end of the text: nothing to draw.
    let none = graph(&mut client, &document, pos(10_000, 0), 2);
    assert!(none.is_null(), "{none}");
    client.shutdown_and_exit();
}

#[test]
fn asked_for_svg_the_answer_holds_the_picture_of_its_nodes_and_edges() {
    let mut client = Client::start();
    let text = read_repo_file(GPU_SAMPLE);
    let document = uri("kernel_reuse.hlo");
    client.open(&document, &text);
    let g = client.result(
        "hlo-lsp/graph",
        json!({"textDocument": {"uri": document},
               "position": position_of(&text, "custom-call.1 = ", 2),
               "radius": 1, "format": "svg"}),
    );
    let svg = g["svg"].as_str().expect("an svg field");
    assert!(svg.starts_with("<svg "), "{svg}");
    let focus = g["focus"].as_str().unwrap();
    assert!(svg.contains(&format!(r#"<g class="node" id="{focus}">"#)));
    let into: Vec<&Value> = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["to"] == focus)
        .collect();
    assert_eq!(into.len(), 2, "custom-call.1 reads fusion.2 twice: {g}");
    for e in into {
        let arrow = format!(
            r#"data-from="{}" data-to="{focus}""#,
            e["from"].as_str().unwrap()
        );
        assert!(svg.contains(&arrow), "no arrow {arrow} in\n{svg}");
    }
    // Unasked, no picture: the VS Code panel draws its own.
    let plain = graph(
        &mut client,
        &document,
        position_of(&text, "custom-call.1 = ", 2),
        1,
    );
    assert!(plain.get("svg").is_none(), "{plain}");
    client.shutdown_and_exit();
}
