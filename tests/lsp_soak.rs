//! Soak (issue 19): a few thousand mixed messages against the built binary, as a
//! busy editor and a broken client together would send them: hovers, inlay
//! hints, code actions, symbols and tokens on several documents, edits that
//! re-run the checks, requests cancelled right after they are sent (some of them
//! on a document whose analysis takes minutes), and junk (frames that are not
//! JSON, headers without a length, bytes outside any frame, unknown methods).
//!
//! Every request must get exactly one answer, the junk its error answer, the
//! server must stay alive, publish the diagnostics of the last version of every
//! edited document, and answer a hover on another document quickly at the end.
//! The sequence is pseudo-random from a fixed seed (`HLO_LSP_SOAK_SEED` picks
//! another, `HLO_LSP_SOAK_MESSAGES` another length).

use crate::lsp_support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lsp_support::{pos, position_of, read_repo_file, tiling_search, uri, Client};
use serde_json::{json, Value};

/// A small, fixed-seed generator (xorshift64*): the same sequence on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// One open document as the client knows it.
struct Doc {
    uri: String,
    language: &'static str,
    text: String,
    version: i64,
    /// Edited by the soak (the slow document is only ever read).
    editable: bool,
    /// Requests on it are cancelled at once (its analysis takes minutes).
    slow: bool,
}

/// What the answer to a request must be.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// A result, or an error the protocol allows for a live request
    /// (`ContentModified` after an edit, `RequestCancelled`).
    Answer,
    /// This JSON-RPC error code.
    Error(i64),
}

fn documents() -> Vec<Doc> {
    let doc = |name: &str, language, text: String, editable, slow| Doc {
        uri: uri(name),
        language,
        text,
        version: 1,
        editable,
        slow,
    };
    vec![
        doc(
            "softmax.hlo",
            "hlo",
            read_repo_file("examples/softmax.hlo"),
            true,
            false,
        ),
        doc(
            "multi_output_fusion.hlo",
            "hlo",
            read_repo_file("examples/multi_output_fusion.hlo"),
            true,
            false,
        ),
        doc(
            "merge_2x5_split_4.hlo",
            "hlo",
            read_repo_file("tests/data/tiling/merge_2x5_split_4.hlo"),
            true,
            false,
        ),
        doc(
            "matmul.mlir",
            "mlir",
            read_repo_file("tests/data/mlir/matmul_tile_using_for.mlir"),
            true,
            false,
        ),
        doc("slow.hlo", "hlo", tiling_search(10), false, true),
    ]
}

/// A random position in `text` (sometimes past a line's end or the last line).
fn somewhere(rng: &mut Rng, text: &str) -> Value {
    let lines: Vec<&str> = text.lines().collect();
    let line = rng.below(lines.len() as u64 + 2) as usize;
    let width = lines.get(line).map_or(4, |l| l.len() + 2);
    pos(line as u32, rng.below(width as u64) as u32)
}

/// A request on `doc`: (method, params).
fn request_on(rng: &mut Rng, doc: &Doc) -> (&'static str, Value) {
    let id = json!({"uri": doc.uri});
    let at = somewhere(rng, &doc.text);
    match rng.below(10) {
        0..=3 => (
            "textDocument/hover",
            json!({"textDocument": id, "position": at}),
        ),
        4 => {
            let end = pos(doc.text.lines().count() as u32 + 1, 0);
            (
                "textDocument/inlayHint",
                json!({"textDocument": id, "range": {"start": pos(0, 0), "end": end}}),
            )
        }
        5 => {
            let end = somewhere(rng, &doc.text);
            let (start, end) = if (at["line"].as_u64(), at["character"].as_u64())
                <= (end["line"].as_u64(), end["character"].as_u64())
            {
                (at, end)
            } else {
                (end, at)
            };
            (
                "textDocument/codeAction",
                json!({"textDocument": id, "range": {"start": start, "end": end},
                       "context": {"diagnostics": []}}),
            )
        }
        6 => ("textDocument/documentSymbol", json!({"textDocument": id})),
        7 => (
            "textDocument/semanticTokens/full",
            json!({"textDocument": id}),
        ),
        8 => (
            "textDocument/definition",
            json!({"textDocument": id, "position": at}),
        ),
        _ => (
            "textDocument/references",
            json!({"textDocument": id, "position": at, "context": {"includeDeclaration": true}}),
        ),
    }
}

/// Inserts a comment line at the top of `doc`, or removes the one inserted
/// before: the text and every later position move, and the checks re-run.
fn edit(client: &mut Client, doc: &mut Doc, serial: u64) {
    doc.version += 1;
    let change = if doc.text.starts_with("// soak ") {
        let first = doc.text.find('\n').unwrap() + 1;
        doc.text.replace_range(..first, "");
        json!({"range": {"start": pos(0, 0), "end": pos(1, 0)}, "text": ""})
    } else {
        let line = format!("// soak {serial}\n");
        doc.text.insert_str(0, &line);
        json!({"range": {"start": pos(0, 0), "end": pos(0, 0)}, "text": line})
    };
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": doc.uri, "version": doc.version},
               "contentChanges": [change]}),
    );
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Sends one piece of junk that carries request `id` (or none): returns the
/// error its answer must carry, `None` when nothing may be answered.
fn junk(client: &mut Client, rng: &mut Rng, id: i64) -> Option<i64> {
    match rng.below(5) {
        0 => {
            // Cut off mid-object: not JSON, but the id can still be read.
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover","params":{{"#);
            client.send_raw(&frame(body.as_bytes()));
            Some(-32700)
        }
        1 => {
            // A header without Content-Length, then the request itself.
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/hover"}}"#);
            client.send_raw(format!("Content-Type: text/plain\r\n\r\n{body}").as_bytes());
            Some(-32700)
        }
        2 => {
            let body =
                json!({"jsonrpc": "2.0", "id": id, "method": "hlo/noSuchMethod", "params": {}});
            client.send_raw(&frame(body.to_string().as_bytes()));
            Some(-32601)
        }
        3 => {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "$/noSuchRequest"});
            client.send_raw(&frame(body.to_string().as_bytes()));
            Some(-32601)
        }
        _ => {
            // Bytes outside any frame (no header in them): skipped and logged.
            let noise: Vec<u8> = (0..rng.below(200) + 1)
                .map(|_| match rng.below(4) {
                    0 => b'\n',
                    1 => 0xff,
                    _ => b'a' + rng.below(26) as u8,
                })
                .collect();
            client.send_raw(&noise);
            None
        }
    }
}

/// Reads answers until none is outstanding, checking each.
fn drain(client: &mut Client, outstanding: &mut HashMap<i64, Expect>, stats: &mut Stats) {
    let patience = lsp_support::timeout();
    while !outstanding.is_empty() {
        let Some(answer) = client.next_response(patience) else {
            let mut ids: Vec<_> = outstanding.keys().collect();
            ids.sort();
            panic!(
                "no answer within {patience:?} to requests {ids:?}\nstderr:\n{}",
                client.stderr()
            );
        };
        let Some(id) = answer["id"].as_i64() else {
            panic!("an answer without a request id: {answer}");
        };
        let Some(expect) = outstanding.remove(&id) else {
            panic!("an answer to no outstanding request (twice?): {answer}");
        };
        let code = answer["error"]["code"].as_i64();
        match (expect, code) {
            (Expect::Error(wanted), Some(code)) => assert_eq!(code, wanted, "{answer}"),
            (Expect::Error(_), None) => panic!("junk answered with a result: {answer}"),
            (Expect::Answer, None) => stats.results += 1,
            (Expect::Answer, Some(-32800)) => stats.cancelled += 1,
            (Expect::Answer, Some(-32801)) => stats.modified += 1,
            (Expect::Answer, Some(_)) => panic!("a live request failed: {answer}"),
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    requests: u64,
    results: u64,
    cancelled: u64,
    modified: u64,
    junk: u64,
    edits: u64,
}

#[test]
fn thousands_of_mixed_requests_each_get_one_answer_and_the_server_stays_alive() {
    let started = Instant::now();
    let mut rng = Rng(env_or("HLO_LSP_SOAK_SEED", 0x5eed_0019) | 1);
    let messages = env_or("HLO_LSP_SOAK_MESSAGES", 5_000);
    let mut client = Client::start();
    let mut docs = documents();
    for doc in &docs {
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": doc.uri, "languageId": doc.language,
                                    "version": 1, "text": doc.text}}),
        );
    }
    let mut outstanding: HashMap<i64, Expect> = HashMap::new();
    let mut stats = Stats::default();
    let mut next_junk_id = 1_000_000;
    for serial in 0..messages {
        match rng.below(20) {
            // Edits (the slow document stays as it is).
            0..=1 => {
                let k = rng.below(docs.len() as u64) as usize;
                if docs[k].editable {
                    edit(&mut client, &mut docs[k], serial);
                    stats.edits += 1;
                }
            }
            // Junk.
            2..=3 => {
                next_junk_id += 1;
                if let Some(code) = junk(&mut client, &mut rng, next_junk_id) {
                    outstanding.insert(next_junk_id, Expect::Error(code));
                }
                stats.junk += 1;
            }
            // A request cancelled right away (every request on the slow document).
            roll => {
                let doc = rng.pick(&docs);
                let (method, params) = request_on(&mut rng, doc);
                let id = client.send_request(method, params);
                outstanding.insert(id, Expect::Answer);
                stats.requests += 1;
                if doc.slow || roll <= 6 {
                    client.notify("$/cancelRequest", json!({"id": id}));
                }
            }
        }
        // A burst of messages, then every answer: up to ~50 in flight.
        if serial % 50 == 49 {
            drain(&mut client, &mut outstanding, &mut stats);
        }
    }
    drain(&mut client, &mut outstanding, &mut stats);
    assert!(client.is_running());
    // The last version of every edited document gets its diagnostics.
    for doc in docs.iter().filter(|d| d.editable && d.version > 1) {
        client.diagnostics(&doc.uri, doc.version);
    }
    // Still quick on a fresh document.
    let probe = uri("soak-probe.hlo");
    let text =
        "HloModule p\n\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n";
    client.open(&probe, text);
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": probe}, "position": position_of(text, "negate", 0)}),
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("negate"),
        "{hover}"
    );
    let elapsed = started.elapsed();
    eprintln!("soak: {messages} messages in {elapsed:?}: {stats:?}");
    assert!(
        stats.results > stats.requests / 4,
        "most requests should be answered with results: {stats:?}"
    );
    assert!(elapsed < Duration::from_secs(120), "{elapsed:?}");
    assert!(client.shutdown_and_exit().success());
}
