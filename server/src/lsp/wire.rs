//! A guard on the incoming byte stream, between stdin and tower-lsp.
//!
//! tower-lsp's reader stops for good after the first message it cannot decode
//! (tokio-util's `FramedRead` ends the stream after an error), and trusts every
//! `Content-Length`. This task finds the messages with the [`framing::Framer`]
//! (which resynchronises on the next header after a wrong length and repairs frames
//! that are too short or too long) and passes on only messages tower-lsp can decode.
//! Everything else becomes a stand-in message that tower-lsp routes to our handlers:
//! * a body that is not JSON (or not UTF-8): a request `hlo-lsp/parseError` with the
//!   id read leniently from the text, else `null`, answered with `ParseError` as
//!   JSON-RPC asks; the same for a request found in bytes skipped between frames;
//! * JSON that is not JSON-RPC: a request `hlo-lsp/invalidRequest` with the
//!   original id when one can be recovered (`InvalidRequest`), else a notification
//!   `hlo-lsp/invalidMessage`, which logs the reason;
//! * skipped bytes and repaired frames: a notification `hlo-lsp/framingNote`, logged
//!   as a warning with the byte count and the start of the bytes.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc::{Request, Response};

use super::bulk::Bulk;
use super::framing::{salvage_id, top_level_objects, Event, Framer};

/// Method of the stand-in request for a malformed message with an id.
pub const INVALID_REQUEST: &str = "hlo-lsp/invalidRequest";
/// Method of the stand-in notification for a malformed message without one.
pub const INVALID_MESSAGE: &str = "hlo-lsp/invalidMessage";
/// Method of the stand-in request for a message that is not JSON.
pub const PARSE_ERROR: &str = "hlo-lsp/parseError";
/// Method of the stand-in notification for skipped bytes and repaired frames.
pub const FRAMING_NOTE: &str = "hlo-lsp/framingNote";

/// How long a body that ends inside a JSON value waits for the bytes that may
/// complete it before it is answered as it is.
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(50);

/// The most one read takes: as much as a widened pipe holds (see
/// [`widen_stdin_pipe`]), so a 60 MB `didOpen` is read in 60 hand-offs from the
/// thread that reads stdin rather than a thousand.
const READ_BYTES: usize = 1 << 20;

/// Asks for a 1 MiB pipe on stdin when it is one (Linux; 64 KiB by default): each
/// read of a large message then wakes the reader a sixteenth as often. The client's
/// write of a 60 MB `didOpen` waited on those wake-ups, 60 ms of the first hover.
/// Nothing changes when the pipe cannot grow (a limit, or stdin is not a pipe).
pub fn widen_stdin_pipe() {
    #[cfg(target_os = "linux")]
    // SAFETY: `fcntl` on a descriptor that may not be a pipe fails with EBADF or
    // EINVAL and changes nothing.
    unsafe {
        libc::fcntl(0, libc::F_SETPIPE_SZ, READ_BYTES as libc::c_int);
    }
}

/// Copies framed messages from `input` to `output` until `input` ends, taking the
/// texts of large text-sync notifications out into `bulk`.
pub async fn filter(
    mut input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    bulk: &Bulk,
) {
    let mut framer = Framer::new();
    let mut buffer = vec![0; READ_BYTES];
    let mut ended = false;
    loop {
        while let Some(event) = framer.next(ended) {
            for message in stand_ins(event, bulk) {
                if !forward(&mut output, &message).await {
                    return;
                }
            }
        }
        if ended {
            return;
        }
        let read = if framer.waiting_for_more() {
            match tokio::time::timeout(PATIENCE, input.read(&mut buffer)).await {
                Ok(read) => read,
                Err(_elapsed) => {
                    framer.stop_waiting();
                    continue;
                }
            }
        } else {
            input.read(&mut buffer).await
        };
        match read {
            Ok(0) | Err(_) => ended = true,
            Ok(read) => framer.push(&buffer[..read]),
        }
    }
}

/// What tower-lsp gets for one framing event (see the module docs).
fn stand_ins(event: Event, bulk: &Bulk) -> Vec<Vec<u8>> {
    match event {
        Event::Message { body, repair } => {
            let note = repair.map(|repair| note(&repair));
            let body = bulk.take_texts(body);
            let message = match check(&body) {
                Ok(()) => body,
                Err(Invalid::NotJson(reason)) => {
                    stand_in(PARSE_ERROR, Some(salvaged(&body)), &reason)
                }
                Err(Invalid::NotJsonRpc(Some(id), reason)) => {
                    stand_in(INVALID_REQUEST, Some(id), &reason)
                }
                Err(Invalid::NotJsonRpc(None, reason)) => stand_in(INVALID_MESSAGE, None, &reason),
            };
            note.into_iter().chain([message]).collect()
        }
        Event::Dropped { bytes, reason } => {
            let text = format!(
                "dropped {} bytes ({reason}): {}",
                bytes.len(),
                preview(&bytes)
            );
            let mut out = vec![note(&text)];
            // A request in the skipped bytes still gets its answer (each one,
            // when several were skipped together).
            for object in top_level_objects(&bytes) {
                if let (Some(id), true) = (salvage_id(object), contains(object, b"\"method\"")) {
                    out.push(stand_in(PARSE_ERROR, Some(id), &text));
                }
            }
            out
        }
    }
}

fn note(reason: &str) -> Vec<u8> {
    stand_in(FRAMING_NOTE, None, reason)
}

fn salvaged(body: &[u8]) -> Value {
    salvage_id(body).unwrap_or(Value::Null)
}

fn contains(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// The first bytes of `bytes`, escaped, for a log line.
fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]);
    let shown: String = text.escape_debug().collect();
    if bytes.len() > 80 {
        format!("\"{shown}\"…")
    } else {
        format!("\"{shown}\"")
    }
}

/// Why a body cannot go to tower-lsp as it is.
enum Invalid {
    NotJson(String),
    NotJsonRpc(Option<Value>, String),
}

/// Ok when tower-lsp decodes `body`; else why not (and the id to answer, if any).
/// Decodes the body as tower-lsp will, without keeping copies of it.
fn check(body: &[u8]) -> Result<(), Invalid> {
    if serde_json::from_slice::<Request>(body).is_ok()
        || serde_json::from_slice::<Response>(body).is_ok()
    {
        return Ok(());
    }
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        Invalid::NotJson(match std::str::from_utf8(body) {
            Err(bad) => format!("message is not UTF-8 (byte {})", bad.valid_up_to()),
            Ok(_) => format!("message is not JSON: {error}"),
        })
    })?;
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    Err(Invalid::NotJsonRpc(
        id,
        format!("not a JSON-RPC 2.0 message: {}", abbreviate(&value)),
    ))
}

fn abbreviate(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A stand-in message: a request for `method` when `id` is given, else a notification.
fn stand_in(method: &str, id: Option<Value>, reason: &str) -> Vec<u8> {
    let message = match id {
        Some(id) => {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"reason": reason}})
        }
        None => json!({"jsonrpc": "2.0", "method": method, "params": {"reason": reason}}),
    };
    serde_json::to_vec(&message).expect("JSON values serialize")
}

/// Writes one framed message; false once the reader side is gone.
async fn forward(output: &mut (impl AsyncWrite + Unpin), body: &[u8]) -> bool {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    output.write_all(header.as_bytes()).await.is_ok()
        && output.write_all(body).await.is_ok()
        && output.flush().await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(input: &[u8]) -> Vec<Value> {
        let mut output = Vec::new();
        filter(input, &mut output, &Bulk::default()).await;
        let mut framer = Framer::new();
        framer.push(&output);
        std::iter::from_fn(|| framer.next(true))
            .map(|event| match event {
                Event::Message { body, repair: None } => serde_json::from_slice(&body).unwrap(),
                other => panic!("the output is framed exactly: {other:?}"),
            })
            .collect()
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn valid_messages_pass_and_malformed_ones_become_stand_ins() {
        let input = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#),
            frame("{not json"),
            frame(r#"{"jsonrpc":"2.0","id":7,"method":3}"#),
            frame(r#"{"jsonrpc":"2.0","id":8,"method":"x","params":{"#),
            "Content-Length: zz\r\n\r\n".to_string(),
            "Content-Type: x\r\n\r\n".to_string(),
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        let messages = run(input.as_bytes()).await;
        let methods: Vec<&str> = messages
            .iter()
            .map(|m| m["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            methods,
            [
                "shutdown",
                PARSE_ERROR,
                INVALID_REQUEST,
                PARSE_ERROR,
                FRAMING_NOTE,
                FRAMING_NOTE,
                "exit"
            ],
            "{messages:?}"
        );
        assert_eq!(messages[1]["id"], Value::Null);
        assert_eq!(messages[2]["id"], 7);
        assert_eq!(messages[3]["id"], 8);
    }

    #[tokio::test]
    async fn a_truncated_body_at_the_end_is_noted_not_waited_for() {
        let messages = run(b"Content-Length: 50\r\n\r\n{}").await;
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0]["method"], FRAMING_NOTE);
    }

    #[tokio::test]
    async fn a_request_in_skipped_bytes_is_answered_with_a_parse_error() {
        let input = format!(
            "Content-Type: x\r\n\r\n{}{}",
            r#"{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{}}"#,
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#)
        );
        let messages = run(input.as_bytes()).await;
        assert_eq!(messages[0]["method"], FRAMING_NOTE);
        assert_eq!(messages[1]["method"], PARSE_ERROR);
        assert_eq!(messages[1]["id"], 4);
        assert_eq!(messages[2]["method"], "exit");
    }
}
