//! End-to-end tests of navigation across computations, back to the source and across a
//! dump directory, through the real `hlo-lsp` binary, on the JAX dumps of
//! `tests/data/dumps/step` (made by `tests/data/dumps/make_dumps.py`).

use crate::lsp_support;

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

/// The hover's markdown at `needle` (+1 byte).
fn hover(client: &mut Client, document: &str, text: &str, needle: &str) -> String {
    let hover = client.result("textDocument/hover", at(document, text, needle, 1));
    hover["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn hover_shows_the_python_stack_of_an_instruction() {
    let mut client = Client::start();
    let text = dump(AFTER);
    let document = uri(AFTER);
    client.open(&document, &text);
    client.wait_module_answers(&document, 1);
    let shown = hover(&mut client, &document, &text, "%broadcast_add_fusion = ");
    // Right after the instruction, one line, innermost frame first.
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[3],
        "Source: make_dumps.py:39 in step.body.<lambda> ← make_dumps.py:39 in step.body ← make_dumps.py:41 in step ← … 2 more",
        "{shown}"
    );
    // A fused instruction of the nested jit: its frame's parent is the call site.
    let shown = hover(&mut client, &document, &text, "%reduce_sum.2 = ");
    assert!(
        shown.contains("Source: make_dumps.py:34 in attention ← make_dumps.py:42 in step ← make_dumps.py:56 in main ← … 1 more"),
        "{shown}"
    );
    // No metadata, no line.
    let shown = hover(&mut client, &document, &text, "%param_0 = ");
    assert!(!shown.contains("Source:"), "{shown}");
}

/// The first hover after opening a small dump, sent at once, has every section: on a
/// file of a few MB the server reads the stack-frame tables and the memory estimate
/// for it (milliseconds) rather than leave them to the background.
#[test]
fn the_first_hover_on_a_small_dump_has_its_source_line() {
    let mut client = Client::start();
    let text = dump(AFTER);
    let document = uri(AFTER);
    client.open(&document, &text);
    let shown = hover(&mut client, &document, &text, "%broadcast_add_fusion = ");
    assert!(
        shown.contains("Source: make_dumps.py:39 in step.body.<lambda>"),
        "{shown}"
    );
    assert!(
        !shown.contains("computing…") && !shown.contains("reading"),
        "{shown}"
    );
}

#[test]
fn hover_reads_old_metadata_and_tolerates_missing_tables() {
    let mut client = Client::start();
    let text = "HloModule m\n\nFileNames\n1 \"/src/model.py\"\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\nENTRY %main (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0), metadata={op_name=\"x\" stack_frame_id=7}\n  %n = f32[4] negate(%x), metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" source_file=\"/src/model.py\" source_line=42}\n  ROOT %e = f32[4] exponential(%n), metadata={op_name=\"jit(f)/exp\" stack_frame_id=1}\n}\n";
    let document = uri("partial.hlo");
    client.open(&document, text);
    assert_eq!(client.diagnostics(&document, 1), Vec::<Value>::new());
    client.wait_module_answers(&document, 1);
    let shown = hover(&mut client, &document, text, "%n = ");
    assert!(shown.contains("Source: model.py:42\n"), "{shown}");
    // A frame whose location is missing: the stack has one unknown frame.
    let shown = hover(&mut client, &document, text, "%e = ");
    assert!(shown.contains("Source: ?\n"), "{shown}");
    // A frame id the table does not have: no source line, no error.
    let shown = hover(&mut client, &document, text, "%x = ");
    assert!(!shown.contains("Source:"), "{shown}");
}

/// A client whose workspace is `tests/data/dumps` (where `make_dumps.py` is).
fn start_in_dumps() -> (Client, String) {
    let root = lsp_support::repo_file("tests/data/dumps");
    let root = std::fs::canonicalize(root).unwrap();
    let root_uri = format!("file://{}", root.display());
    let mut client = Client::spawn(&[]);
    client.result(
        "initialize",
        json!({
            "processId": null,
            "rootUri": root_uri,
            "capabilities": {"window": {"workDoneProgress": true}},
        }),
    );
    client.notify("initialized", json!({}));
    (client, root_uri)
}

#[test]
fn document_links_open_the_python_source_at_the_line() {
    let (mut client, root) = start_in_dumps();
    let text = dump(AFTER);
    let document = format!("{root}/step/{AFTER}");
    client.open(&document, &text);
    let links = client.result(
        "textDocument/documentLink",
        json!({"textDocument": {"uri": document}}),
    );
    let links = links.as_array().unwrap();
    let script = format!("{root}/make_dumps.py");
    // The FileNames entry: the file.
    let name = links
        .iter()
        .find(|l| covered(&text, &l["range"]) == "\"make_dumps.py\"")
        .unwrap_or_else(|| panic!("{links:?}"));
    assert_eq!(name["target"], script);
    // A stack frame id: the innermost frame's line.
    let line = position_of(&text, "%broadcast_add_fusion = ", 0)["line"].clone();
    let frame = links
        .iter()
        .find(|l| l["range"]["start"]["line"] == line)
        .unwrap_or_else(|| panic!("{links:?}"));
    assert_eq!(covered(&text, &frame["range"]), "6");
    assert_eq!(frame["target"], format!("{script}#L39"));
    // A FileLocations entry: its line.
    let location = links
        .iter()
        .find(|l| {
            covered(&text, &l["range"]).starts_with("{file_name_id=1 function_name_id=6 line=34")
        })
        .unwrap_or_else(|| panic!("{links:?}"));
    assert_eq!(location["target"], format!("{script}#L34"));
    // Every instruction with a frame has a link (and nothing else does).
    let frames = text.matches("stack_frame_id=").count();
    assert_eq!(links.len(), frames + 1 + 9, "{links:?}");

    // A source file that is not in the workspace gets no link.
    let other = "HloModule m\n\nENTRY %main (x: f32[4]) -> f32[4] {\n  ROOT %x = f32[4] parameter(0), metadata={source_file=\"/elsewhere/missing.py\" source_line=3}\n}\n";
    let document = format!("{root}/other.hlo");
    client.open(&document, other);
    let links = client.result(
        "textDocument/documentLink",
        json!({"textDocument": {"uri": document}}),
    );
    assert_eq!(links, json!([]));

    // Without stack-frame tables, a `source_file` found in the workspace links,
    // quoted as XLA writes it or bare (the metadata parse reads both).
    for written in ["\"make_dumps.py\"", "make_dumps.py"] {
        let text = format!("HloModule m\n\nENTRY %main (x: f32[4]) -> f32[4] {{\n  ROOT %x = f32[4] parameter(0), metadata={{source_file={written} source_line=3}}\n}}\n");
        let document = format!("{root}/found.hlo");
        client.open(&document, &text);
        let links = client.result(
            "textDocument/documentLink",
            json!({"textDocument": {"uri": document}}),
        );
        let links = links.as_array().unwrap();
        assert_eq!(links.len(), 1, "{written}: {links:?}");
        assert_eq!(covered(&text, &links[0]["range"]), written);
        assert_eq!(links[0]["target"], format!("{script}#L3"));
    }
}

#[test]
fn the_diff_command_compares_an_open_dump_with_one_on_disk() {
    let (mut client, root) = start_in_dumps();
    let pre = "module_0004.jit_step.0000.HLO_passes_after_layout_assignment.after_reshape-decomposer.before_fusion.txt";
    let post = "module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt";
    let (before, after) = (format!("{root}/step/{pre}"), format!("{root}/step/{post}"));
    // The editor's copy of the second, edited: its own fused computation renamed.
    let edited = dump(post).replace("%fused_computation.2", "%fused_compare");
    client.open(&after, &edited);
    let answer = client.result(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.diff", "arguments": [before, after]}),
    );
    let text = answer["text"].as_str().unwrap();
    assert!(
        text.contains("+ computation %fused_compare (5 instructions)\n"),
        "{text}"
    );
    assert!(
        text.contains("computations: 6 added, 0 removed, 4 changed, 4 unchanged\n"),
        "{text}"
    );
    assert_eq!(answer["modules"][0]["added"].as_array().unwrap().len(), 6);
    insta::assert_snapshot!(serde_json::to_string_pretty(&answer["modules"]).unwrap());
    // Bad arguments are the client's error (invalid params), not a crash.
    let response = client.request(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.diff", "arguments": [before]}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // A file that cannot be read fails the request (LSP's RequestFailed), naming it.
    let response = client.request(
        "workspace/executeCommand",
        json!({"command": "hlo-lsp.diff", "arguments": [before, format!("{root}/missing.txt")]}),
    );
    assert_eq!(response["error"]["code"], -32803, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing.txt"),
        "{response}"
    );
}

/// Waits for the end of the workspace index's progress; returns its message.
fn index_finished(client: &mut Client) -> String {
    let end = client.notification("$/progress", |p| p["value"]["kind"] == "end");
    end["value"]["message"].as_str().unwrap_or("").to_string()
}

#[test]
fn workspace_symbols_find_computations_of_unopened_dumps() {
    let (mut client, root) = start_in_dumps();
    let summary = index_finished(&mut client);
    assert_eq!(summary, "4 files, 48 computations", "{summary}");
    let found = client.result("workspace/symbol", json!({"query": "fused_computation.5"}));
    let mut places: Vec<(String, Value)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let uri = s["location"]["uri"].as_str().unwrap();
            (
                uri.rsplit('/').next().unwrap().to_string(),
                s["location"]["range"]["start"].clone(),
            )
        })
        .collect();
    places.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(places.len(), 2, "{found}");
    assert_eq!(places[0].0, "module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt");
    assert_eq!(places[1].0, AFTER);
    assert_eq!(
        places[1].1,
        position_of(&dump(AFTER), "%fused_computation.5 (", 0)
    );
    // Fusions are found too, with their computation.
    let found = client.result("workspace/symbol", json!({"query": "subtract_exponential"}));
    let fusion = found
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["location"]["uri"].as_str().unwrap().ends_with(AFTER))
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(fusion["containerName"], "main.9");
    // An open document answers for itself (its text, not the file's).
    let document = format!("{root}/step/{AFTER}");
    let edited = dump(AFTER).replace("%fused_computation.5", "%renamed_fusion_body");
    client.open(&document, &edited);
    let found = client.result("workspace/symbol", json!({"query": "fused_computation.5"}));
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    let found = client.result("workspace/symbol", json!({"query": "renamed_fusion_body"}));
    assert_eq!(found[0]["location"]["uri"], document);
    let _ = &mut client;
}

#[test]
fn a_dump_written_again_is_indexed_again() {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-index-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(AFTER);
    std::fs::write(&path, dump(AFTER)).unwrap();
    let mut client = Client::spawn(&[]);
    client.result(
        "initialize",
        json!({
            "processId": null,
            "workspaceFolders": [{"uri": format!("file://{}", dir.display()), "name": "dumps"}],
            "capabilities": {"window": {"workDoneProgress": true}},
        }),
    );
    client.notify("initialized", json!({}));
    assert_eq!(index_finished(&mut client), "1 files, 17 computations");
    let found = client.result(
        "workspace/symbol",
        json!({"query": "wrapped_reduce_computation"}),
    );
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    // XLA writes the dump again, with a renamed computation (and a later time).
    std::fs::write(
        &path,
        dump(AFTER).replace("wrapped_reduce_computation", "wrapped_max"),
    )
    .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let found = client.result(
        "workspace/symbol",
        json!({"query": "wrapped_reduce_computation"}),
    );
    assert_eq!(found, json!([]));
    let found = client.result("workspace/symbol", json!({"query": "wrapped_max"}));
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    // A dump written after the server started is found once the folders are walked
    // again (at most once a second).
    std::fs::write(
        dir.join("new.hlo"),
        dump(AFTER).replace("wrapped_reduce_computation", "written_later"),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let found = client.result("workspace/symbol", json!({"query": "written_later"}));
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 31: the workspace index read files a `.gitignore` excludes. A dump in an
/// ignored folder and one matching an ignored pattern are not indexed; the others are.
#[test]
fn workspace_index_skips_gitignored_dumps() {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-gitignore-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("scratch")).unwrap();
    std::fs::write(dir.join(".gitignore"), "scratch/\n*.old.hlo\n").unwrap();
    let renamed = |name: &str| dump(AFTER).replace("wrapped_reduce_computation", name);
    std::fs::write(dir.join(AFTER), renamed("kept_reduce")).unwrap();
    std::fs::write(dir.join("scratch/copy.hlo"), renamed("in_ignored_folder")).unwrap();
    std::fs::write(dir.join("step.old.hlo"), renamed("in_ignored_file")).unwrap();
    let mut client = Client::spawn(&[]);
    client.result(
        "initialize",
        json!({
            "processId": null,
            "workspaceFolders": [{"uri": format!("file://{}", dir.display()), "name": "dumps"}],
            "capabilities": {"window": {"workDoneProgress": true}},
        }),
    );
    client.notify("initialized", json!({}));
    assert_eq!(index_finished(&mut client), "1 files, 17 computations");
    let found = client.result("workspace/symbol", json!({"query": "kept_reduce"}));
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    for ignored in ["in_ignored_folder", "in_ignored_file"] {
        let found = client.result("workspace/symbol", json!({"query": ignored}));
        assert_eq!(found, json!([]), "{ignored}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
