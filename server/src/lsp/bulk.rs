//! Document texts carried past tower-lsp.
//!
//! A `didOpen` of a 60 MB dump is a 60 MB message. Through tower-lsp it was held
//! several times at once: in the reader's buffer (which keeps its size for good
//! afterwards), as the decoded message, and as the parameters. The wire filter
//! ([`super::wire`]) takes the text out of a large `didOpen` or `didChange` while it
//! reads the message once, keeps it here, and passes on a small message whose text
//! is a ticket; the sequencer ([`super::sync`]) redeems the ticket when the
//! notification is applied. Tickets carry a number drawn at start, so a text a client
//! sends can never be mistaken for one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::Value;

/// Messages above this size have their texts carried here.
pub const LARGE_MESSAGE_BYTES: usize = 1 << 20;

/// The texts taken out of messages, until the sequencer asks for them.
#[derive(Debug)]
pub struct Bulk {
    /// Part of every ticket: tells tickets of this process from client text.
    nonce: u64,
    next: AtomicU64,
    texts: Mutex<HashMap<String, String>>,
}

impl Default for Bulk {
    fn default() -> Self {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()).rotate_left(32);
        Self {
            nonce,
            next: AtomicU64::new(0),
            texts: Mutex::default(),
        }
    }
}

impl Bulk {
    /// `body` with the text of a `didOpen` (or of each change of a `didChange`)
    /// replaced by a ticket, when it is a large message of that kind; `None` for
    /// every other message (passed on as it is).
    pub fn take_texts(&self, body: &[u8]) -> Option<Vec<u8>> {
        if body.len() < LARGE_MESSAGE_BYTES {
            return None;
        }
        let mut message: Value = serde_json::from_slice(body).ok()?;
        let method = message.get("method")?.as_str()?.to_string();
        let params = message.get_mut("params")?;
        let texts: Vec<&mut Value> = match method.as_str() {
            "textDocument/didOpen" => params
                .pointer_mut("/textDocument/text")
                .into_iter()
                .collect(),
            "textDocument/didChange" => params
                .get_mut("contentChanges")?
                .as_array_mut()?
                .iter_mut()
                .filter_map(|change| change.get_mut("text"))
                .collect(),
            _ => return None,
        };
        let mut kept = super::workspace::lock(&self.texts);
        for slot in texts {
            if let Value::String(text) = slot {
                let ticket = self.ticket();
                kept.insert(ticket.clone(), std::mem::replace(text, ticket));
            }
        }
        drop(kept);
        serde_json::to_vec(&message).ok()
    }

    fn ticket(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        format!("{TICKET}{:016x}:{n}", self.nonce)
    }

    /// The text a ticket stands for (once), or `text` itself when it is not one.
    pub fn redeem(&self, text: String) -> String {
        if !text.starts_with(TICKET) {
            return text;
        }
        super::workspace::lock(&self.texts)
            .remove(&text)
            .unwrap_or(text)
    }
}

/// How every ticket starts.
const TICKET: &str = "hlo-lsp-bulk-text:";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn large_text() -> String {
        "x\n".repeat(LARGE_MESSAGE_BYTES)
    }

    #[test]
    fn a_large_open_carries_its_text_here_once() {
        let bulk = Bulk::default();
        let text = large_text();
        let message = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": "file:///a.hlo", "languageId": "hlo", "version": 1, "text": text}}});
        let small = bulk
            .take_texts(&serde_json::to_vec(&message).unwrap())
            .unwrap();
        assert!(small.len() < 300, "{}", String::from_utf8_lossy(&small));
        let mut passed: Value = serde_json::from_slice(&small).unwrap();
        let ticket = passed["params"]["textDocument"]["text"].take();
        let ticket = ticket.as_str().unwrap().to_string();
        assert_eq!(bulk.redeem(ticket.clone()), text);
        // Once only: a second redemption gives the ticket back as text.
        assert_eq!(bulk.redeem(ticket.clone()), ticket);
        passed["params"]["textDocument"]["text"] = Value::Null;
        let mut expected = message.clone();
        expected["params"]["textDocument"]["text"] = Value::Null;
        assert_eq!(passed, expected);
    }

    #[test]
    fn each_change_of_a_large_change_is_carried() {
        let bulk = Bulk::default();
        let text = large_text();
        let message = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": "file:///a.hlo", "version": 2},
                       "contentChanges": [{"text": text}, {"text": "short", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}]}});
        let small = bulk
            .take_texts(&serde_json::to_vec(&message).unwrap())
            .unwrap();
        let passed: Value = serde_json::from_slice(&small).unwrap();
        let changes = passed["params"]["contentChanges"].as_array().unwrap();
        assert_eq!(
            bulk.redeem(changes[0]["text"].as_str().unwrap().into()),
            text
        );
        assert_eq!(
            bulk.redeem(changes[1]["text"].as_str().unwrap().into()),
            "short"
        );
        assert_eq!(
            changes[1]["range"],
            message["params"]["contentChanges"][1]["range"]
        );
    }

    #[test]
    fn small_and_other_messages_pass_as_they_are() {
        let bulk = Bulk::default();
        let small = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": "file:///a.hlo", "languageId": "hlo", "version": 1, "text": "HloModule m"}}});
        assert!(bulk
            .take_texts(&serde_json::to_vec(&small).unwrap())
            .is_none());
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
            "params": {"command": "x", "arguments": [large_text()]}});
        assert!(bulk
            .take_texts(&serde_json::to_vec(&other).unwrap())
            .is_none());
        assert!(bulk.take_texts(large_text().as_bytes()).is_none());
        // Client text that looks like a ticket is its own text.
        let forged = format!("{TICKET}0000000000000000:0");
        assert_eq!(bulk.redeem(forged.clone()), forged);
    }
}
