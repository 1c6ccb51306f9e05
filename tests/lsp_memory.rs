//! End-to-end through the language server: memory lenses on ENTRY and on a while
//! body of a JAX scan (XLA's CPU dump in tests/data/memory), and the hover's memory
//! line, both saying the numbers are estimated; opened from its folder, the same
//! lens and line carry XLA's numbers and say so.

use crate::lsp_support;

use lsp_support::{position_of, read_repo_file, repo_file, uri, Client};
use serde_json::json;

const SCAN: &str =
    "tests/data/memory/scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt";

#[test]
fn entry_and_while_body_have_peak_lenses_and_the_hover_has_a_memory_line() {
    let mut client = Client::start();
    let text = read_repo_file(SCAN);
    let document = uri("module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    client.open(&document, &text);
    client.wait_module_answers(&document, 1);
    let titles = peak_lenses(&mut client, &document);
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
    let markdown = client.hover_markdown(&document, position_of(&text, "%copy.5 = ", 1));
    assert!(
        markdown.contains("Memory (estimated): allocation ") && markdown.contains("2.0 KiB, live "),
        "{markdown}"
    );
    client.shutdown_and_exit();
}

/// The lenses' `(line, title)` of the memory lenses of `document`.
fn peak_lenses(client: &mut Client, document: &str) -> Vec<(u64, String)> {
    let found = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": document}}),
    );
    found
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
        .collect()
}

#[test]
fn beside_its_buffer_assignment_the_lens_and_hover_carry_xlas_numbers() {
    let mut client = Client::start();
    let text = read_repo_file(SCAN);
    let path = std::fs::canonicalize(repo_file(SCAN)).unwrap();
    let document = format!("file://{}", path.display());
    client.open(&document, &text);
    client.wait_module_answers(&document, 1);
    let titles = peak_lenses(&mut client, &document);
    let entry_line = text.lines().position(|l| l.starts_with("ENTRY")).unwrap() as u64;
    let entry = titles
        .iter()
        .find(|(l, _)| *l == entry_line)
        .map(|(_, t)| t.as_str())
        .expect("a lens on ENTRY");
    // The heap as XProf's memory viewer counts it (71 720 bytes when %copy.4 is
    // allocated, step 21); XLA's live-range file's own line (`Live ranges at 24
    // (peak)`, 69 644 bytes at %wrapped_add) is the hover's second number.
    assert_eq!(
        entry,
        "peak 70.0 KiB at %copy.4 · 13 buffers live (from XLA's buffer assignment)"
    );
    assert!(
        titles
            .iter()
            .all(|(_, t)| t.ends_with("(from XLA's buffer assignment)")),
        "{titles:?}"
    );
    let markdown = client.hover_markdown(&document, position_of(&text, "%copy.5 = ", 1));
    // The buffer assignment: `value: <23 copy.5 @0> (size=2048,offset=64)`; the live
    // ranges: `copy.5{}:20-23`.
    assert!(
        markdown.contains(
            "Memory (from XLA's buffer assignment): allocation 10, offset 64, 2.0 KiB, live 20 → 23 of 31"
        ),
        "{markdown}"
    );
    // The live-range strip of the buffers around it, the peak marked.
    assert!(
        markdown.contains("› %copy.5") && markdown.contains("▼") && markdown.contains("████"),
        "{markdown}"
    );
    // On the ENTRY's name: what is live at the peak, by the user's source line.
    let at = position_of(&text, "%main.", 1);
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": at}),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        markdown.contains("Live at the peak, by source line:")
            && markdown.contains("make_memory_dumps.py:194"),
        "{markdown}"
    );
    assert!(
        markdown.contains("peak 70.0 KiB at `%copy.4`, step 21 of 31")
            && markdown.contains("XLA's live-range peak: 68.0 KiB at %wrapped_add (step 24)"),
        "the hover says both peaks: {markdown}"
    );
    client.shutdown_and_exit();
}

/// The editor publishes the copy of a loop's state live at the peak (openxla/xla#5335)
/// with the document's other findings, in the while body where the copy is.
#[test]
fn the_copy_live_at_the_peak_is_published_as_information() {
    const LOOP: &str =
        "tests/data/memory/loop_carry_copy/module_0097.jit_loop_carry_copy.cpu_after_optimizations.txt";
    let mut client = Client::start();
    let text = read_repo_file(LOOP);
    let path = std::fs::canonicalize(repo_file(LOOP)).unwrap();
    let document = format!("file://{}", path.display());
    client.open(&document, &text);
    // The version's diagnostics are published at once, and again with the memory
    // findings once the module-wide answers are ready (they never hold up the rest).
    let is_peak_copy = |d: &serde_json::Value| d["code"] == "copy-at-memory-peak";
    let published = client.notification("textDocument/publishDiagnostics", |p| {
        p["uri"] == document.as_str()
            && p["version"] == 1
            && p["diagnostics"]
                .as_array()
                .is_some_and(|all| all.iter().any(is_peak_copy))
    });
    let found: Vec<_> = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| is_peak_copy(d))
        .cloned()
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d["severity"], 3, "information");
    assert_eq!(
        d["range"]["start"],
        position_of(&text, "%copy.5 = ", 0),
        "{d}"
    );
    assert_eq!(
        d["message"],
        "this copy holds 4.0 MiB at the memory peak: 24% of 16.0 MiB at %broadcast_multiply_fusion (from XLA's \
         buffer assignment); its operand %broadcast_multiply_fusion (4.0 MiB) is live then \
         too, so the data is held twice"
    );
    client.shutdown_and_exit();
}

/// `hlo-lsp/memoryTimeline`: ENTRY's timeline by default (rows that point at their
/// instruction, the SVG, XLA's own peak named where it is not the curve's top), a while
/// body's with the cursor in it, and ENTRY's again from a fused computation.
#[test]
fn the_memory_timeline_request_answers_the_computation_at_the_cursor() {
    let mut client = Client::start();
    let text = read_repo_file(SCAN);
    let path = std::fs::canonicalize(repo_file(SCAN)).unwrap();
    let document = format!("file://{}", path.display());
    client.open(&document, &text);
    let timeline = |client: &mut Client, position: Option<serde_json::Value>| {
        let mut params = json!({"textDocument": {"uri": document}});
        if let Some(p) = position {
            params["position"] = p;
        }
        client.result("hlo-lsp/memoryTimeline", params)
    };
    let t = timeline(&mut client, None);
    assert_eq!(t["computation"], "main.6");
    assert_eq!(t["source"], "buffer-assignment");
    // The panel's peak is the lens's: 70.0 KiB at %copy.4.
    assert_eq!(t["peak"]["bytes"], 71720, "{}", t["peak"]);
    assert_eq!(t["peak"]["instruction"], "copy.4", "{}", t["peak"]);
    assert_eq!(t["reported_peak"]["bytes"], 69644, "XLA's live-range file");
    assert!(t["svg"].as_str().unwrap().starts_with("<svg "));
    let lines: Vec<&str> = text.lines().collect();
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.len() as u64 + t["more"].as_u64().unwrap(), 32);
    for row in rows {
        let start = &row["range"]["start"];
        let line = lines[start["line"].as_u64().unwrap() as usize];
        let at = &line[start["character"].as_u64().unwrap() as usize..];
        let name = row["instruction"].as_str().unwrap();
        assert!(at.trim_start_matches('%').starts_with(name), "{row}");
    }
    assert_eq!(rows[0]["at_peak"], true);

    let body = timeline(&mut client, Some(position_of(&text, "%copy.5 = ", 1)));
    assert_eq!(body["computation"], "region_0.4");
    let steps = body["steps"].as_array().unwrap();
    assert!(steps[0].as_u64().unwrap() > 0, "{}", body["steps"]);

    let fused_line = lines
        .iter()
        .position(|l| l.starts_with("%fused_computation ("))
        .unwrap();
    let fused = timeline(
        &mut client,
        Some(json!({"line": fused_line + 1, "character": 2})),
    );
    assert_eq!(
        fused["computation"], "main.6",
        "a fused computation runs in no step: ENTRY's"
    );
    client.shutdown_and_exit();
}

/// The memory estimate needs the whole module, which a large dump takes seconds to
/// build: the server computes it in the background once a version's diagnostics are
/// out and asks the client for its lenses again. The first hover does not wait for
/// it (it answers at once, with or without the memory line); once it is ready the
/// lenses and hovers carry it, after an edit too.
#[test]
fn memory_answers_arrive_after_the_diagnostics_and_refresh_the_lenses() {
    let mut client = Client::spawn(&[]);
    client.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": null,
            "capabilities": {"workspace": {"codeLens": {"refreshSupport": true}}},
        }),
    );
    client.notify("initialized", json!({}));
    let text = read_repo_file(SCAN);
    let document = uri("module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    client.open(&document, &text);
    let at = position_of(&text, "%copy.5 = ", 1);
    let first = client.hover_markdown(&document, at.clone());
    assert!(first.starts_with("```hlo\n%copy.5 = "), "{first}");
    for version in [1, 2] {
        if version == 2 {
            // A character of a metadata string: the module's memory is unchanged.
            let edit = position_of(&text, "op_name=\"", 10);
            client.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": document, "version": 2},
                       "contentChanges": [{"range": {"start": edit, "end": edit}, "text": "z"}]}),
            );
        }
        client.diagnostics(&document, version);
        client.wait_module_answers(&document, version);
        let deadline = std::time::Instant::now() + lsp_support::timeout();
        while client.queued("workspace/codeLens/refresh").len() < version as usize {
            assert!(
                std::time::Instant::now() < deadline,
                "no workspace/codeLens/refresh for version {version}"
            );
            client.next_response(std::time::Duration::from_millis(50));
        }
        let lenses = peak_lenses(&mut client, &document);
        assert!(
            lenses
                .iter()
                .any(|(_, t)| t.ends_with("buffers live (estimated)")),
            "version {version}: {lenses:?}"
        );
        let markdown = client.hover_markdown(&document, at.clone());
        assert!(
            markdown.contains("Memory (estimated): allocation ") && markdown.contains("› %copy.5"),
            "version {version}: {markdown}"
        );
    }
    client.shutdown_and_exit();
}

/// On a profiled program with its `.hlo.pb` (tests/data/profiles/sample_mlp_step), the
/// ENTRY lens, the ENTRY hover and the timeline panel show one peak: XProf's memory
/// viewer's (`peakHeapMib` 2.8750343 MiB = 3 014 692 bytes at `ynn_fusion`).
#[test]
fn lens_hover_and_panel_show_xprofs_peak() {
    const MLP: &str = "tests/data/profiles/sample_mlp_step/module_0000.jit_sample_mlp_step.cpu_after_optimizations.txt";
    let mut client = Client::start();
    let text = read_repo_file(MLP);
    let path = std::fs::canonicalize(repo_file(MLP)).unwrap();
    let document = format!("file://{}", path.display());
    client.open(&document, &text);
    client.wait_module_answers(&document, 1);
    let entry_line = text.lines().position(|l| l.starts_with("ENTRY")).unwrap() as u64;
    let titles = peak_lenses(&mut client, &document);
    let lens = titles
        .iter()
        .find(|(l, _)| *l == entry_line)
        .map(|(_, t)| t.as_str())
        .expect("a lens on ENTRY");
    assert!(lens.starts_with("peak 2.9 MiB at %ynn_fusion · "), "{lens}");
    let at = position_of(&text, "%main.", 1);
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": at}),
    );
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        markdown.contains("peak 2.9 MiB at `%ynn_fusion`"),
        "{markdown}"
    );
    let t = client.result(
        "hlo-lsp/memoryTimeline",
        json!({"textDocument": {"uri": document}}),
    );
    assert_eq!(t["peak"]["bytes"], 3_014_692, "{}", t["peak"]);
    assert_eq!(t["peak"]["instruction"], "ynn_fusion", "{}", t["peak"]);
    client.shutdown_and_exit();
}
