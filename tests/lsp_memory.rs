//! End-to-end through the language server: memory lenses on ENTRY and on a while
//! body of a JAX scan (XLA's CPU dump in tests/data/memory), and the hover's memory
//! line, both saying the numbers are estimated.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, uri, Client};
use serde_json::json;

const SCAN: &str =
    "tests/data/memory/scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt";

#[test]
fn entry_and_while_body_have_peak_lenses_and_the_hover_has_a_memory_line() {
    let mut client = Client::start();
    let text = read_repo_file(SCAN);
    let document = uri("module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    client.open(&document, &text);
    let found = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    let titles: Vec<(u64, String)> = found
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| {
            Some((
                l["range"]["start"]["line"].as_u64()?,
                l["command"]["title"].as_str()?.to_string(),
            ))
        })
        .filter(|(_, t)| t.starts_with("peak "))
        .collect();
    let line_of = |needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() as u64;
    let on = |line: u64| {
        titles
            .iter()
            .find(|(l, _)| *l == line)
            .map(|(_, t)| t.clone())
    };
    let entry = on(line_of("ENTRY")).expect("a lens on ENTRY");
    assert!(
        entry.contains(" at %") && entry.ends_with("buffers live (estimated)"),
        "{entry}"
    );
    let body = on(line_of("%region_0.4")).expect("a lens on the while body");
    assert!(
        body.starts_with("peak ") && body.contains("(estimated)"),
        "{body}"
    );
    assert!(
        on(line_of("%region_1.5")).is_none(),
        "the condition is no body: {titles:?}"
    );
    let at = position_of(&text, "%copy.5 = ", 1);
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": at}),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        markdown.contains("Memory (estimated): allocation ") && markdown.contains("2.0 KiB, live "),
        "{markdown}"
    );
    client.shutdown_and_exit();
}
