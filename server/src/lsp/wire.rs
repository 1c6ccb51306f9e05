//! A guard on the incoming byte stream, between stdin and tower-lsp.
//!
//! tower-lsp's reader stops for good after the first message it cannot decode
//! (tokio-util's `FramedRead` ends the stream after an error), so a single malformed
//! message would take the server down. This task re-frames the input and passes on
//! only messages tower-lsp can decode. A malformed message is replaced by:
//! * a request `hlo-lsp/invalidRequest` with the original id when one can be
//!   recovered: the client gets an `InvalidRequest` error answer for its id;
//! * otherwise a notification `hlo-lsp/invalidMessage`, which logs the reason.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tower_lsp_server::jsonrpc::{Request, Response};

/// Method of the stand-in request for a malformed message with an id.
pub const INVALID_REQUEST: &str = "hlo-lsp/invalidRequest";
/// Method of the stand-in notification for a malformed message without one.
pub const INVALID_MESSAGE: &str = "hlo-lsp/invalidMessage";

/// Messages above this size are refused instead of buffered (a corrupt length).
const MAX_MESSAGE_BYTES: usize = 1 << 30;

/// Copies framed messages from `input` to `output` until `input` ends.
pub async fn filter(input: impl AsyncRead + Unpin, mut output: impl AsyncWrite + Unpin) {
    let mut reader = BufReader::new(input);
    loop {
        let body = match read_frame(&mut reader).await {
            Frame::Body(body) => body,
            Frame::Skip(reason) => {
                forward(&mut output, &stand_in(None, &reason)).await;
                continue;
            }
            Frame::End => return,
        };
        let message = match check(&body) {
            Ok(()) => body,
            Err((id, reason)) => stand_in(id, &reason),
        };
        if !forward(&mut output, &message).await {
            return;
        }
    }
}

enum Frame {
    Body(Vec<u8>),
    /// A frame whose header was unusable; its bytes were consumed.
    Skip(String),
    End,
}

/// Reads one header block and its body.
async fn read_frame(reader: &mut (impl AsyncBufReadExt + Unpin)) -> Frame {
    let mut length: Option<Result<usize, String>> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("invalid Content-Length {:?}", value.trim())),
                );
            }
        }
    }
    let length = match length {
        Some(Ok(length)) if length <= MAX_MESSAGE_BYTES => length,
        Some(Ok(length)) => return Frame::Skip(format!("message of {length} bytes is too large")),
        Some(Err(reason)) => return Frame::Skip(reason),
        None => return Frame::Skip("header without Content-Length".into()),
    };
    let mut body = vec![0; length];
    match reader.read_exact(&mut body).await {
        Ok(_) => Frame::Body(body),
        Err(_) => Frame::End,
    }
}

/// Ok when tower-lsp decodes `body`; else the id to answer (if any) and why.
fn check(body: &[u8]) -> Result<(), (Option<Value>, String)> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| (None, format!("message is not JSON: {error}")))?;
    let accepted = serde_json::from_value::<Request>(value.clone()).is_ok()
        || serde_json::from_value::<Response>(value.clone()).is_ok();
    if accepted {
        return Ok(());
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    Err((
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

/// The stand-in message for a malformed one (see the module docs).
fn stand_in(id: Option<Value>, reason: &str) -> Vec<u8> {
    let message = match id {
        Some(id) => {
            json!({"jsonrpc": "2.0", "id": id, "method": INVALID_REQUEST, "params": {"reason": reason}})
        }
        None => json!({"jsonrpc": "2.0", "method": INVALID_MESSAGE, "params": {"reason": reason}}),
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
        filter(input, &mut output).await;
        let text = String::from_utf8(output).unwrap();
        text.split("Content-Length: ")
            .filter(|frame| !frame.is_empty())
            .map(|frame| serde_json::from_str(frame.split_once("\r\n\r\n").unwrap().1).unwrap())
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
            "Content-Length: zz\r\n\r\n".to_string(),
            "Content-Type: x\r\n\r\n".to_string(),
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        let messages = run(input.as_bytes()).await;
        assert_eq!(messages.len(), 6, "{messages:?}");
        assert_eq!(messages[0]["method"], "shutdown");
        assert_eq!(messages[1]["method"], INVALID_MESSAGE);
        assert_eq!(messages[2]["method"], INVALID_REQUEST);
        assert_eq!(messages[2]["id"], 7);
        assert_eq!(messages[3]["method"], INVALID_MESSAGE);
        assert_eq!(messages[4]["method"], INVALID_MESSAGE);
        assert_eq!(messages[5]["method"], "exit");
    }

    #[tokio::test]
    async fn a_truncated_body_ends_the_stream() {
        assert!(run(b"Content-Length: 50\r\n\r\n{}").await.is_empty());
    }
}
