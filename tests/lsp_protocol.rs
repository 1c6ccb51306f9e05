//! End-to-end protocol tests through the real `hlo-lsp` binary over stdio:
//! initialize and capabilities, position-encoding negotiation, text sync (ordered
//! incremental edits, bursts), bad input over the wire, shutdown and exit codes.

use crate::lsp_support;

use lsp_support::{pos, uri, Client};
use serde_json::{json, Value};

#[test]
fn initialize_announces_incremental_sync_and_negotiates_utf8() {
    let (client, result) = Client::start_with(json!({}), true);
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(result["capabilities"]["textDocumentSync"]["change"], 2);
    assert_eq!(result["serverInfo"]["name"], "hlo-lsp");
    assert!(client.shutdown_and_exit().success());

    let (client, result) = Client::start_with(json!({}), false);
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-16");
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn serve_subcommand_speaks_lsp_too() {
    let mut client = Client::spawn(&["serve"]);
    let response = client.request("initialize", json!({"capabilities": {}}));
    assert!(response["result"]["capabilities"].is_object(), "{response}");
    client.notify("initialized", json!({}));
    assert!(client.shutdown_and_exit().success());
}

/// A 60 MB `didOpen` comes through stdin: on Linux the server asks for a 1 MiB pipe
/// so the client's write is read in pieces of that size (when the system allows it).
#[cfg(target_os = "linux")]
#[test]
fn the_server_widens_the_pipe_it_reads() {
    let allowed: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    let client = Client::start();
    let bytes = client
        .stdin_pipe_bytes()
        .expect("the size of the server's stdin pipe");
    if allowed >= 1 << 20 {
        assert_eq!(bytes, 1 << 20);
    } else {
        eprintln!("pipes here hold at most {allowed} bytes; the server's holds {bytes}");
    }
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn exit_without_shutdown_exits_with_code_1() {
    let mut client = Client::start();
    client.notify("exit", Value::Null);
    let status = client.wait_for_exit();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn end_of_input_without_exit_ends_the_server_with_code_1() {
    let mut client = Client::start();
    let status = client.wait_for_exit();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn requests_after_shutdown_are_rejected() {
    let mut client = Client::start();
    assert!(client
        .request("shutdown", Value::Null)
        .get("error")
        .is_none());
    let response = client.request("shutdown", Value::Null);
    assert_eq!(response["error"]["code"], -32600, "{response}");
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_for_exit().code(), Some(0));
}

/// Outline and folds are written as JSON text past tower-lsp (see the server's
/// `json_answers`): they still answer under their own id beside other requests, the
/// errors of a document that is not open and of a request after `shutdown` are
/// tower-lsp's as for any other request, and the answer has the protocol's shape.
#[test]
fn answers_written_as_json_text_keep_ids_errors_and_shape() {
    let mut client = Client::start();
    let outline = uri("outline.hlo");
    let text = "HloModule m\n\n%add {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\nENTRY %main {\n  %a = f32[8] parameter(0)\n  ROOT %n = f32[8] negate(%a)\n}\n";
    client.open(&outline, text);
    let document = json!({"textDocument": {"uri": outline}});
    let symbols = client.send_request("textDocument/documentSymbol", document.clone());
    let hover = client.send_request(
        "textDocument/hover",
        json!({"textDocument": {"uri": outline}, "position": {"line": 10, "character": 9}}),
    );
    let folds = client.send_request("textDocument/foldingRange", document.clone());
    let folds = client.response(folds);
    let hover = client.response(hover);
    let symbols = client.response(symbols);
    assert_eq!(symbols["jsonrpc"], "2.0");
    let names: Vec<&str> = symbols["result"][0]["children"]
        .as_array()
        .expect("computations under the module")
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "main"], "{symbols}");
    assert_eq!(
        symbols["result"][0]["children"][1]["range"]["start"]["line"],
        8
    );
    assert_eq!(
        lsp_support::fold_lines(&folds["result"]),
        [(2, 6), (8, 11)],
        "{folds}"
    );
    assert!(hover["result"]["contents"].is_object(), "{hover}");

    let unknown = json!({"textDocument": {"uri": uri("not-open.hlo")}});
    let missing = client.request("textDocument/documentSymbol", unknown);
    assert!(missing["error"]["message"].is_string(), "{missing}");
    assert!(missing.get("result").is_none(), "{missing}");
    assert!(client
        .request("shutdown", Value::Null)
        .get("error")
        .is_none());
    let late = client.request("textDocument/foldingRange", document);
    assert_eq!(late["error"]["code"], -32600, "{late}");
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_for_exit().code(), Some(0));
}

/// Replaces `range` of `text` like an editor would (UTF-16 columns, ASCII here).
fn edit_text(text: &str, start: (usize, usize), end: (usize, usize), new: &str) -> String {
    let offset = |(line, column): (usize, usize)| -> usize {
        let mut offset = 0;
        for (index, l) in text.split_inclusive('\n').enumerate() {
            if index == line {
                return offset + column.min(l.trim_end_matches('\n').len());
            }
            offset += l.len();
        }
        offset
    };
    let (a, b) = (offset(start), offset(end));
    format!("{}{}{}", &text[..a], new, &text[b..])
}

/// A burst of 200 edits sent back to back (each insert depends on the previous
/// one's result) ends in exactly the text the client holds.
#[test]
fn burst_of_200_incremental_edits_applies_in_order() {
    let mut client = Client::start();
    let document = uri("burst.hlo");
    let mut text =
        String::from("HloModule burst\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n");
    client.open(&document, &text);
    for version in 2..202 {
        // Alternate inserts at positions that only exist after the previous edit.
        let line = 1 + (version as usize % 3);
        let (start, end, new) = if version % 5 == 0 {
            ((line, 0), (line, 1), String::new())
        } else {
            ((line, 0), (line, 0), format!("{}", version % 10))
        };
        text = edit_text(&text, start, end, &new);
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": document, "version": version},
                "contentChanges": [{"range": {"start": pos(start.0 as u32, start.1 as u32), "end": pos(end.0 as u32, end.1 as u32)}, "text": new}],
            }),
        );
    }
    let echoed = client.result(
        "hlo-lsp/documentText",
        json!({"textDocument": {"uri": document}}),
    );
    assert_eq!(echoed["version"], 201);
    assert_eq!(echoed["text"].as_str().unwrap(), text);
    // Diagnostics get published for the final version.
    client.diagnostics(&document, 201);
    assert!(client.shutdown_and_exit().success());
}

#[test]
fn malformed_messages_get_errors_and_the_server_keeps_serving() {
    let mut client = Client::start();
    let document = uri("bad.hlo");
    client.open(
        &document,
        "HloModule m\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n",
    );
    // Not JSON, a header without a length, JSON but not JSON-RPC: logged and skipped.
    client.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    client.send_raw(b"Content-Type: text/plain\r\n\r\n");
    client.send(&json!({"hello": "world"}));
    let logged = client.notification("window/logMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("not JSON")
    });
    assert_eq!(logged["type"], 2, "{logged}");
    // A malformed request with an id gets an error answer for that id.
    client.send(&json!({"jsonrpc": "2.0", "id": 99, "method": 17}));
    let response = client.response(99);
    assert_eq!(response["error"]["code"], -32600, "{response}");
    // Wrong params for a known method.
    let response = client.request("textDocument/hover", json!({"textDocument": 5}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // Unknown method.
    let response = client.request("textDocument/doesNotExist", json!({}));
    assert_eq!(response["error"]["code"], -32601, "{response}");
    // Unknown document.
    let response = client.request(
        "hlo-lsp/documentText",
        json!({"textDocument": {"uri": uri("never-opened.hlo")}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // Edits and closes of unknown documents and garbage notifications are ignored.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri("never-opened.hlo"), "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    client.notify("textDocument/didChange", json!({"garbage": true}));
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri("never-opened.hlo")}}),
    );
    // Edits with positions past the end of a line, past the end of the file, and
    // inside a surrogate pair are clamped, never a crash.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": document, "version": 2}, "contentChanges": [
            {"range": {"start": pos(0, 500), "end": pos(0, 900)}, "text": " // 😀"},
            {"range": {"start": pos(0, 16), "end": pos(0, 16)}, "text": "x"},
            {"range": {"start": pos(99, 0), "end": pos(120, 4)}, "text": "\n// end"},
        ]}),
    );
    let echoed = client.result(
        "hlo-lsp/documentText",
        json!({"textDocument": {"uri": document}}),
    );
    assert_eq!(
        echoed["text"],
        "HloModule m // x😀\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n\n// end"
    );
    assert!(client.is_running());
    assert!(client.shutdown_and_exit().success());
}

/// Issue 31, tried as an editor does: a real dump open, requests in flight, then
/// `shutdown` and `exit` with no pause (in the same write, and in two), with a short
/// pause, and after the shutdown's answer. Each time the shutdown is answered with a
/// null result, the process exits with status 0, and stderr (which editors keep in
/// their LSP log) has no `failed to send` line: notifications sent after `exit` used
/// to fail, and each failure was forwarded to the client's log, failing again.
#[test]
fn shutdown_then_exit_in_any_timing_is_answered_and_exits_cleanly() {
    #[derive(Debug, Clone, Copy)]
    enum Timing {
        SameWrite,
        NoPause,
        Pause(u64),
        AfterAnswer,
    }
    let text = lsp_support::read_repo_file("tests/data/bench/transformer.after.hlo");
    let timings = [
        Timing::SameWrite,
        Timing::NoPause,
        Timing::Pause(5),
        Timing::Pause(50),
        Timing::AfterAnswer,
    ];
    for round in 0..2 {
        for timing in timings {
            let context = format!("round {round}, {timing:?}");
            let mut client = Client::start();
            let document = uri("transformer.after.hlo");
            client.open(&document, &text);
            for line in [40, 400, 4000] {
                client.send_request(
                    "textDocument/hover",
                    json!({"textDocument": {"uri": document}, "position": pos(line, 6)}),
                );
            }
            let frame = |message: Value| {
                let body = serde_json::to_vec(&message).unwrap();
                let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                frame.extend_from_slice(&body);
                frame
            };
            let shutdown_id = 1000;
            let shutdown =
                frame(json!({"jsonrpc": "2.0", "id": shutdown_id, "method": "shutdown"}));
            let exit = frame(json!({"jsonrpc": "2.0", "method": "exit"}));
            match timing {
                Timing::SameWrite => client.send_raw(&[shutdown, exit].concat()),
                Timing::NoPause => {
                    client.send_raw(&shutdown);
                    client.send_raw(&exit);
                }
                Timing::Pause(ms) => {
                    client.send_raw(&shutdown);
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    client.send_raw(&exit);
                }
                Timing::AfterAnswer => {
                    client.send_raw(&shutdown);
                    client.response(shutdown_id);
                    client.send_raw(&exit);
                }
            }
            let status = client.wait_for_exit();
            if !matches!(timing, Timing::AfterAnswer) {
                let response = client.response(shutdown_id);
                assert!(response.get("error").is_none(), "{context}: {response}");
                assert_eq!(response["result"], Value::Null, "{context}: {response}");
            }
            client.wait_log("exit notification received", 1, lsp_support::timeout());
            std::thread::sleep(std::time::Duration::from_millis(100));
            let stderr = client.stderr();
            assert_eq!(status.code(), Some(0), "{context}\n{stderr}");
            assert!(!stderr.contains("failed to send"), "{context}\n{stderr}");
        }
    }
}
