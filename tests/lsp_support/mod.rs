//! A small LSP client for end-to-end tests: starts the real `hlo-lsp` binary, speaks
//! JSON-RPC over its stdio, answers the server's own requests, and keeps every
//! notification so tests can wait for a specific one.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any single wait may take before the test fails (instead of hanging):
/// `HLO_LSP_TEST_TIMEOUT` seconds, default 30 (the 50 MB benchmark sets more).
pub fn timeout() -> Duration {
    let seconds = std::env::var("HLO_LSP_TEST_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    Duration::from_secs(seconds)
}

/// Path of a file under the repository's `tests/data` or `examples`.
pub fn repo_file(relative: &str) -> String {
    format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"))
}

pub fn read_repo_file(relative: &str) -> String {
    std::fs::read_to_string(repo_file(relative)).expect("test data file")
}

/// A `file://` URI for a (virtual) file name.
pub fn uri(name: &str) -> String {
    format!("file:///virtual/{name}")
}

/// The server under test: `HLO_LSP_SERVER` when set (a benchmark compares an older
/// build that way), else the binary cargo built for these tests.
pub fn server_binary() -> String {
    std::env::var("HLO_LSP_SERVER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_hlo-lsp").to_string())
}

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<(Instant, Value)>,
    /// When the last message [`Client::wait_message`] returned was read off the wire
    /// (before the client parsed it); `None` when it came from a queue.
    arrived: Option<Instant>,
    /// Notifications received while waiting for something else.
    notifications: VecDeque<Value>,
    /// Responses received while waiting for something else.
    responses: VecDeque<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
}

impl Client {
    /// Starts the server with `args` (e.g. `[]` or `["serve"]`).
    pub fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(server_binary())
            .args(args)
            .env("HLO_LSP_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting hlo-lsp");
        let stdout = child.stdout.take().unwrap();
        let (sender, incoming) = mpsc::channel();
        std::thread::spawn(move || read_messages(BufReader::new(stdout), sender));
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut stderr_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            incoming,
            arrived: None,
            notifications: VecDeque::new(),
            responses: VecDeque::new(),
            next_id: 1,
            stderr,
        }
    }

    /// Starts the server and completes `initialize`/`initialized` with `options`.
    /// Offers UTF-16 only (the harder encoding) unless `utf8` is set.
    pub fn start_with(options: Value, utf8: bool) -> (Self, Value) {
        let mut client = Self::spawn(&[]);
        let encodings = if utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let result = client.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "capabilities": {
                    "general": {"positionEncodings": encodings},
                    "window": {"workDoneProgress": true},
                    "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}
                },
                "initializationOptions": options,
            }),
        );
        client.notify("initialized", json!({}));
        let result = result.get("result").cloned().expect("initialize result");
        (client, result)
    }

    pub fn start() -> Self {
        Self::start_with(json!({}), false).0
    }

    /// How many bytes the pipe to the server's stdin holds (Linux), read on our end
    /// of it: the size the server asked for, or the system's default.
    #[cfg(target_os = "linux")]
    pub fn stdin_pipe_bytes(&self) -> Option<usize> {
        use std::os::fd::AsRawFd;
        let fd = self.stdin.as_ref()?.as_raw_fd();
        // SAFETY: F_GETPIPE_SZ only reads the size of the pipe `fd` is an end of.
        let bytes = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
        usize::try_from(bytes).ok()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits up to `patience` until the server's log holds `needle` `count` times;
    /// returns how many times it does.
    pub fn wait_log(&self, needle: &str, count: usize, patience: Duration) -> usize {
        let deadline = Instant::now() + patience;
        loop {
            let seen = self.stderr().matches(needle).count();
            if seen >= count || Instant::now() >= deadline {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the answers of version `version` of `uri` that need its whole
    /// module (the memory estimate, the stack-frame tables) are ready: the server
    /// computes them in the background once that version's diagnostics are out, and
    /// hovers and lenses leave them out until then.
    pub fn wait_module_answers(&self, uri: &str, version: i64) {
        let line = format!("module answers of {uri} version {version} ready");
        assert_eq!(
            self.wait_log(&line, 1, timeout()),
            1,
            "no `{line}`; stderr:\n{}",
            self.stderr()
        );
    }

    /// Writes raw bytes to the server's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("writing to hlo-lsp");
        stdin.flush().unwrap();
    }

    /// Sends one framed JSON-RPC message.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        self.send_raw(&frame);
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and returns the whole response object (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// The `result` of a request that must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}\nstderr:\n{}",
            self.stderr()
        );
        response["result"].clone()
    }

    /// Waits for an error answer to a message without a usable id.
    pub fn wait_error(&mut self) -> Value {
        self.wait_message(|m| m.get("error").is_some() && m["id"].is_null())
    }

    /// Waits for the response with `id`.
    pub fn response(&mut self, id: i64) -> Value {
        self.wait_message(|message| {
            message.get("id") == Some(&json!(id)) && message.get("method").is_none()
        })
    }

    /// Waits for the next notification `method` that satisfies `accept`
    /// (earlier notifications that do not match stay queued for later waits).
    pub fn notification(&mut self, method: &str, accept: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method && accept(&n["params"]))
        {
            self.arrived = None;
            return self.notifications.remove(index).unwrap()["params"].take();
        }
        let mut message = self.wait_message(|m| {
            m["method"] == method && m.get("id").is_none() && accept(&m["params"])
        });
        message["params"].take()
    }

    /// When the message the last wait returned arrived: its bytes read, before this
    /// client parsed them (for latency that is the server's, not the client's).
    pub fn last_arrival(&self) -> Option<Instant> {
        self.arrived
    }

    /// Drops queued notifications named `method` (e.g. older diagnostics).
    pub fn discard(&mut self, method: &str) {
        self.notifications.retain(|n| n["method"] != method);
    }

    /// All queued notifications named `method`, oldest first.
    pub fn queued(&self, method: &str) -> Vec<Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == method)
            .map(|n| n["params"].clone())
            .collect()
    }

    fn wait_message(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self.responses.iter().position(&wanted) {
            self.arrived = None;
            return self.responses.remove(index).unwrap();
        }
        let deadline = Instant::now() + timeout();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (arrived, message) = match self.incoming.recv_timeout(left) {
                Ok(received) => received,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out; stderr:\n{}", self.stderr())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("server closed its output; stderr:\n{}", self.stderr())
                }
            };
            if wanted(&message) {
                self.arrived = Some(arrived);
                return message;
            }
            self.keep(message);
        }
    }

    /// Files a message nobody waits for yet: answers the server's own requests
    /// (progress creation, refreshes) while the server's input is open, queues
    /// notifications and responses.
    fn keep(&mut self, message: Value) {
        if message.get("method").is_some() && message.get("id").is_some() && self.stdin.is_some() {
            let id = message["id"].clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        if message.get("method").is_some() {
            self.notifications.push_back(message);
        } else {
            self.responses.push_back(message);
        }
    }

    /// The next response to any request (queued ones first), waiting at most
    /// `patience`; `None` when none came. Notifications are queued meanwhile.
    pub fn next_response(&mut self, patience: Duration) -> Option<Value> {
        if let Some(response) = self.responses.pop_front() {
            return Some(response);
        }
        let deadline = Instant::now() + patience;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok((_, message)) if message.get("method").is_none() => return Some(message),
                Ok((_, message)) => self.keep(message),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("server closed its output; stderr:\n{}", self.stderr())
                }
            }
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "hlo", "version": 1, "text": text}}),
        );
    }

    /// The hover's markdown at `position` of `uri` (empty when there is none).
    pub fn hover_markdown(&mut self, uri: &str, position: Value) -> String {
        let hover = self.result(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": position}),
        );
        hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let mut params = self.notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == version
        });
        match params["diagnostics"].take() {
            Value::Array(diagnostics) => diagnostics,
            _ => Vec::new(),
        }
    }

    /// `shutdown` then `exit`; returns the process status.
    pub fn shutdown_and_exit(mut self) -> ExitStatus {
        let response = self.request("shutdown", Value::Null);
        assert!(
            response.get("error").is_none(),
            "shutdown failed: {response}"
        );
        self.notify("exit", Value::Null);
        self.wait_for_exit()
    }

    /// Waits (bounded) for the process to end.
    pub fn wait_for_exit(&mut self) -> ExitStatus {
        self.stdin.take();
        let deadline = Instant::now() + timeout();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "hlo-lsp did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The server's process id (benchmarks read its peak memory from `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// True while the process runs.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if self.is_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads `Content-Length`-framed JSON messages until the stream ends.
fn read_messages(mut reader: impl BufRead, sender: mpsc::Sender<(Instant, Value)>) {
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let Some(length) = length else { return };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let arrived = Instant::now();
        let Ok(message) = serde_json::from_slice(&body) else {
            return;
        };
        if sender.send((arrived, message)).is_err() {
            return;
        }
    }
}

/// The `(startLine, endLine)` of each range of a `foldingRange` answer.
pub fn fold_lines(folds: &Value) -> Vec<(u64, u64)> {
    folds
        .as_array()
        .expect("a list of folding ranges")
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().expect("startLine"),
                f["endLine"].as_u64().expect("endLine"),
            )
        })
        .collect()
}

/// An LSP position.
pub fn pos(line: u32, character: u32) -> Value {
    json!({"line": line, "character": character})
}

/// The position of the first occurrence of `needle` (plus `offset` characters) in
/// `text`, in UTF-16 units (the test texts are ASCII where it matters).
pub fn position_of(text: &str, needle: &str, offset: usize) -> Value {
    let byte = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in text"))
        + offset;
    let before = &text[..byte];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().unwrap().encode_utf16().count();
    pos(line as u32, column as u32)
}

/// Byte offset of an LSP position (UTF-16 columns) in `text`.
pub fn byte_offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    let start = text
        .split_inclusive('\n')
        .take(line)
        .map(str::len)
        .sum::<usize>();
    let mut units = 0;
    for (i, ch) in text[start..].char_indices() {
        if units >= character || ch == '\n' {
            return start + i;
        }
        units += ch.len_utf16();
    }
    text.len()
}

/// `text` after LSP text edits (non-overlapping), applied from the last as an
/// editor would.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                byte_offset(text, &e["range"]["start"]),
                byte_offset(text, &e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (start, end, new_text) in spans {
        out.replace_range(start..end, new_text);
    }
    out
}

/// A Triton fusion whose tiling has no valid tile near the configured one: the
/// output `f32[50 x rank]` merges `[10, 5]` pairs, and a tile of 4 divides
/// neither way, so the search for the nearest valid tiling walks 6^rank
/// combinations (each size from 1 to 32 per dimension) of which only all-ones
/// qualifies. At rank 10 (60 million combinations) the hover's analysis takes
/// minutes while memory stays flat: the slow request of the resilience and soak
/// tests.
pub fn tiling_search(rank: usize) -> String {
    let pairs = vec!["10,5"; rank].join(",");
    let merged = vec!["50"; rank].join(",");
    let layout = |r: usize| {
        (0..r)
            .rev()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let tiles = vec!["\"4\""; rank].join(",");
    format!(
        "HloModule tiling_search\n\nfused_merge {{\n  p0 = f32[{pairs}]{{{inner}}} parameter(0)\n  ROOT r = f32[{merged}]{{{outer}}} reshape(p0)\n}}\n\nENTRY main {{\n  a = f32[{pairs}]{{{inner}}} parameter(0)\n  ROOT f = f32[{merged}]{{{outer}}} fusion(a), kind=kCustom, calls=fused_merge, backend_config={{\"fusion_backend_config\":{{\"kind\":\"__triton\",\"block_level_fusion_config\":{{\"output_tiles\":[{{\"sizes\":[{tiles}]}}],\"num_warps\":\"1\"}}}}}}\n}}\n",
        inner = layout(2 * rank),
        outer = layout(rank),
    )
}

/// The resolved code-lens titles of `document` by line, asked again every 100 ms
/// until `ready` accepts them (the server computes some lenses in the background:
/// a profile's join, a pass history); panics after a minute.
pub fn lens_titles_when(
    client: &mut Client,
    document: &str,
    ready: impl Fn(&[(u64, String)]) -> bool,
) -> Vec<(u64, String)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = client.result(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": document}}),
        );
        let mut titles = Vec::new();
        for lens in found.as_array().into_iter().flatten() {
            let resolved = match lens["command"].is_null() {
                true => client.result("codeLens/resolve", lens.clone()),
                false => lens.clone(),
            };
            let title = resolved["command"]["title"].as_str().unwrap_or_default();
            let line = resolved["range"]["start"]["line"].as_u64().unwrap();
            titles.push((line, title.to_string()));
        }
        if ready(&titles) {
            return titles;
        }
        assert!(Instant::now() < deadline, "not ready: {titles:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
