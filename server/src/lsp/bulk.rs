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

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::json_string::decode_to_front;

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
    /// replaced by a ticket, when it is a large message of that kind; every other
    /// message as it is.
    ///
    /// The message is read once, borrowing every value but the texts' places, and
    /// the texts are decoded where they lie (the only text of a `didOpen` keeps the
    /// message's own allocation): a 60 MB text is never copied whole, nor held
    /// twice.
    pub fn take_texts(&self, body: Vec<u8>) -> Vec<u8> {
        if body.len() < LARGE_MESSAGE_BYTES {
            return body;
        }
        let places = match text_places(&body) {
            Some(places) if !places.is_empty() => places,
            _ => return body,
        };
        let tickets: Vec<String> = places.iter().map(|_| self.ticket()).collect();
        let small = with_tickets(&body, &places, &tickets);
        let texts = decoded_texts(body, &places);
        super::workspace::lock(&self.texts).extend(tickets.into_iter().zip(texts));
        small
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

/// The parts of a text-sync message [`Bulk::take_texts`] reads: everything else is
/// skipped unread.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow)]
    text_document: Option<TextSlot<'a>>,
    #[serde(borrow)]
    content_changes: Option<Vec<TextSlot<'a>>>,
}

#[derive(Deserialize)]
struct TextSlot<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

/// Where the string literals of the texts lie in `body` (quotes included), in
/// order; `None` when `body` is not a text-sync message JSON can read.
fn text_places(body: &[u8]) -> Option<Vec<Range<usize>>> {
    let message: Message = serde_json::from_slice(body).ok()?;
    let params = message.params?;
    let slots: Vec<TextSlot> = match message.method?.as_ref() {
        "textDocument/didOpen" => params.text_document.into_iter().collect(),
        "textDocument/didChange" => params.content_changes?,
        _ => return None,
    };
    let start = body.as_ptr() as usize;
    let places = slots
        .iter()
        .filter_map(|slot| slot.text)
        .map(|raw| {
            let at = raw.get().as_ptr() as usize - start;
            at..at + raw.get().len()
        })
        .filter(|place| body[place.start] == b'"')
        .collect();
    Some(places)
}

/// `body` with the literal at each place replaced by its ticket.
fn with_tickets(body: &[u8], places: &[Range<usize>], tickets: &[String]) -> Vec<u8> {
    let mut small = Vec::new();
    let mut copied = 0;
    for (place, ticket) in places.iter().zip(tickets) {
        small.extend_from_slice(&body[copied..place.start]);
        small.extend_from_slice(format!("\"{ticket}\"").as_bytes());
        copied = place.end;
    }
    small.extend_from_slice(&body[copied..]);
    small
}

/// The texts of the literals at `places`: a single one decoded in `body`'s own
/// allocation, several each in a copy of its literal.
fn decoded_texts(mut body: Vec<u8>, places: &[Range<usize>]) -> Vec<String> {
    let inside = |place: &Range<usize>| place.start + 1..place.end - 1;
    if let [place] = places {
        let length = decode_to_front(&mut body, inside(place));
        body.truncate(length);
        return vec![into_text(body)];
    }
    places
        .iter()
        .map(|place| {
            let mut literal = body[place.clone()].to_vec();
            let length = decode_to_front(&mut literal, inside(&(0..place.len())));
            literal.truncate(length);
            into_text(literal)
        })
        .collect()
}

/// The decoded bytes as text. They are UTF-8 (the literal was, and each escape
/// becomes a whole character), so the lossy branch is only a guard.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn large_text() -> String {
        "x\n".repeat(LARGE_MESSAGE_BYTES)
    }

    #[test]
    fn a_large_open_carries_its_text_here_once() {
        let bulk = Bulk::default();
        let text = large_text();
        let message = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": "file:///a.hlo", "languageId": "hlo", "version": 1, "text": text}}});
        let small = bulk.take_texts(serde_json::to_vec(&message).unwrap());
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

    /// Keys in any order, params before the method, and a text with quotes,
    /// backslashes, tabs and characters beyond ASCII: the text comes back whole and
    /// the rest of the message unchanged.
    #[test]
    fn a_text_with_every_kind_of_escape_comes_back_whole() {
        let bulk = Bulk::default();
        let line = "%x = f32[2]{0} add(a, b), metadata={op_name=\"jit(f)/\\u00e9\"}\t# é 😀\r\n";
        let text = line.repeat(LARGE_MESSAGE_BYTES / line.len() + 1);
        let body = format!(
            r#"{{"params": {{"textDocument": {{"text": {}, "version": 3, "uri": "file:///a.hlo"}}}}, "method": "textDocument/didOpen", "jsonrpc": "2.0"}}"#,
            serde_json::to_string(&text).unwrap()
        );
        let mut passed: Value =
            serde_json::from_slice(&bulk.take_texts(body.into_bytes())).unwrap();
        let ticket = passed["params"]["textDocument"]["text"].take();
        assert_eq!(bulk.redeem(ticket.as_str().unwrap().to_string()), text);
        assert_eq!(
            passed,
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": "file:///a.hlo", "version": 3, "text": null}}})
        );
    }

    #[test]
    fn each_change_of_a_large_change_is_carried() {
        let bulk = Bulk::default();
        let text = large_text();
        let message = json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": "file:///a.hlo", "version": 2},
                       "contentChanges": [{"text": text}, {"text": "short", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}]}});
        let small = bulk.take_texts(serde_json::to_vec(&message).unwrap());
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
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
            "params": {"command": "x", "arguments": [large_text()]}});
        let not_json = large_text().into_bytes();
        for message in [
            serde_json::to_vec(&small).unwrap(),
            serde_json::to_vec(&other).unwrap(),
            not_json,
        ] {
            assert_eq!(bulk.take_texts(message.clone()), message);
        }
        // Client text that looks like a ticket is its own text.
        let forged = format!("{TICKET}0000000000000000:0");
        assert_eq!(bulk.redeem(forged.clone()), forged);
    }
}
