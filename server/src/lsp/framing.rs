//! Finding messages in the client's byte stream, also when a frame is wrong.
//!
//! LSP frames each message as `Content-Length: N\r\n\r\n` plus N bytes of JSON. A
//! client that miscounts N (characters instead of bytes, a dropped byte), or sends a
//! header without a length, would leave a strict reader out of step for good: every
//! later message read from the wrong place. The [`Framer`] instead:
//! * looks for the next `Content-Length:` header wherever it is (case-insensitive,
//!   also in the middle of a line), and reports the bytes it skips to get there;
//! * repairs a frame that is too short: when the N bytes end inside a JSON value and
//!   the bytes up to the next header complete it, the message is the whole value;
//! * repairs a frame that is too long: when a complete JSON value inside the N bytes
//!   is followed by a `Content-Length:` header, the message ends there and the
//!   header starts the next frame (so a later message is not swallowed);
//! * never buffers more than [`MAX_JUNK`] bytes of input without a header.
//!
//! It is synchronous and does no I/O: [`super::wire`] feeds it.

use serde::de::IgnoredAny;

/// What the framer found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// One message body. `repair` says how a wrong frame was corrected.
    Message {
        body: Vec<u8>,
        repair: Option<String>,
    },
    /// Input skipped while looking for a header, and why.
    Dropped { bytes: Vec<u8>, reason: String },
}

/// Bytes kept while no header is in sight; older ones are dropped.
pub const MAX_JUNK: usize = 1 << 16;
/// A header block longer than this is not one.
const MAX_HEADER: usize = 1 << 13;
/// Messages above this size are refused (a corrupt length).
pub const MAX_MESSAGE_BYTES: usize = 1 << 30;

const MARKER: &[u8] = b"content-length:";

/// Messages from this size on are moved out of the buffer, not copied.
const LARGE_TAKE: usize = 1 << 20;

/// The incremental framer (see the module docs).
#[derive(Debug, Default)]
pub struct Framer {
    buffer: Vec<u8>,
    /// Start of the unread input in `buffer`.
    start: usize,
    /// The frame being received (header parsed, body incomplete).
    pending: Option<Pending>,
    /// Set by [`Self::stop_waiting`]: deliver a body cut short as it is.
    impatient: bool,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Body start, relative to `start`.
    body: usize,
    length: usize,
    /// How far the body was searched for a following header, relative to `body`.
    searched: usize,
}

impl Framer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends input.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buffer.len() / 2 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// True while a complete body that ends inside a JSON value waits for the bytes
    /// that may complete it (a `Content-Length` too short, the rest not yet read),
    /// or while bytes without a header wait for one: a request sent under a
    /// header without `Content-Length` would otherwise be answered only when the
    /// client next writes.
    pub fn waiting_for_more(&self) -> bool {
        match self.pending {
            Some(p) => self.data().len() >= p.body + p.length,
            None => self.junk_waiting().is_some(),
        }
    }

    /// How many bytes at the start of the input are junk waiting for a header
    /// (all but a tail that may be the start of one), if any.
    fn junk_waiting(&self) -> Option<usize> {
        let data = self.data();
        if data.is_empty() || find_marker(data, 0).is_some() {
            return None;
        }
        let junk = data.len() - marker_prefix_suffix(data);
        (junk > 0).then_some(junk)
    }

    /// No more bytes came for a while: deliver the waiting body as it is (the
    /// reader then answers it with a parse error), or drop the bytes without a
    /// header (answering a request among them).
    pub fn stop_waiting(&mut self) {
        self.impatient = true;
    }

    /// The next event, or `None` when more input is needed. `ended`: no more input
    /// will come, so whatever is left is reported.
    pub fn next(&mut self, ended: bool) -> Option<Event> {
        match self.pending {
            Some(pending) => self.body(pending, ended),
            None => self.header(ended),
        }
    }

    fn data(&self) -> &[u8] {
        &self.buffer[self.start..]
    }

    fn take(&mut self, count: usize) -> Vec<u8> {
        if count < LARGE_TAKE {
            let taken = self.data()[..count].to_vec();
            self.start += count;
            return taken;
        }
        // A large message leaves with the buffer's allocation rather than as a copy,
        // so that the buffer does not hold a message's size (twice) for good.
        self.buffer.drain(..self.start);
        self.start = 0;
        let rest = self.buffer[count..].to_vec();
        let mut taken = std::mem::replace(&mut self.buffer, rest);
        taken.truncate(count);
        taken
    }

    fn drop_bytes(&mut self, count: usize, reason: impl Into<String>) -> Event {
        Event::Dropped {
            bytes: self.take(count),
            reason: reason.into(),
        }
    }

    /// Finds and parses the next header block.
    fn header(&mut self, ended: bool) -> Option<Event> {
        let data = self.data();
        if data.is_empty() {
            return None;
        }
        let Some(marker) = find_marker(data, 0) else {
            if ended {
                let all = data.len();
                return Some(self.drop_bytes(all, "no Content-Length header before the end"));
            }
            if data.len() > MAX_JUNK {
                let keep = MARKER.len() - 1;
                let dropped = data.len() - keep;
                return Some(self.drop_bytes(dropped, "no Content-Length header"));
            }
            if self.impatient {
                self.impatient = false;
                let junk = self.junk_waiting()?;
                if self.data()[..junk].iter().all(u8::is_ascii_whitespace) {
                    self.start += junk;
                    return None;
                }
                return Some(self.drop_bytes(junk, "no Content-Length header, and no more input"));
            }
            return None;
        };
        let block = header_block_start(data, marker);
        if block > 0 {
            if data[..block].iter().all(u8::is_ascii_whitespace) {
                self.start += block;
                return self.header(ended);
            }
            return Some(self.drop_bytes(block, "bytes before the next Content-Length header"));
        }
        let Some((blank, body)) = find_blank_line(data, marker) else {
            if ended || data.len() - marker > MAX_HEADER {
                let through = marker + MARKER.len();
                return Some(self.drop_bytes(through, "header without an end"));
            }
            return None;
        };
        let value = line_at(&data[marker + MARKER.len()..blank]);
        let length = match std::str::from_utf8(value).ok().map(str::trim) {
            Some(text) => text.parse::<usize>().ok(),
            None => None,
        };
        let Some(length) = length else {
            let shown = String::from_utf8_lossy(value).trim().to_string();
            return Some(self.drop_bytes(body, format!("invalid Content-Length {shown:?}")));
        };
        if length > MAX_MESSAGE_BYTES {
            return Some(self.drop_bytes(
                body,
                format!("message of {length} bytes is too large (at most {MAX_MESSAGE_BYTES})"),
            ));
        }
        self.pending = Some(Pending {
            body,
            length,
            searched: 0,
        });
        // Room for the whole body at once: growing by doubling would copy a large
        // message several times and leave up to twice its size allocated.
        let missing = (body + length).saturating_sub(self.data().len());
        self.buffer.reserve(missing.min(1 << 28));
        self.next(ended)
    }

    /// Delivers the pending frame's body once it is complete (or repaired).
    fn body(&mut self, mut pending: Pending, ended: bool) -> Option<Event> {
        let region = &self.data()[pending.body..];
        // A complete value followed by a header that starts inside the declared
        // length: the length is too long (the header may run past it).
        let mut at = pending.searched.saturating_sub(MARKER.len() - 1);
        while let Some(marker) = find_marker(region, at).filter(|&m| m < pending.length) {
            if parses(trim_end(&region[..marker])) {
                let repair = format!(
                    "Content-Length {} is too long: the message ends after {marker} bytes, where the next header starts",
                    pending.length
                );
                return Some(self.deliver(pending.body, marker, Some(repair)));
            }
            at = marker + 1;
        }
        pending.searched = region.len();
        if region.len() < pending.length {
            self.pending = (!ended).then_some(pending);
            if ended {
                let all = self.data().len();
                return Some(self.drop_bytes(all, "message cut short by the end of input"));
            }
            return None;
        }
        let body = &region[..pending.length];
        match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Some(self.deliver(pending.body, pending.length, None)),
            Err(error) if error.is_eof() => self.repair_short(pending, ended),
            Err(_) if !ended && !self.impatient && ends_in_marker_prefix(body, region) => {
                // A header may be starting at the end of the body: wait for it.
                self.pending = Some(pending);
                None
            }
            Err(_) => Some(self.deliver(pending.body, pending.length, None)),
        }
    }

    /// The body ends inside a JSON value: when the bytes before the next
    /// `Content-Length` complete it, the length was short and the message is the
    /// whole value. What follows the value is left to be dropped as junk (or read as
    /// the next header's other lines): were the message "everything up to the next
    /// header", it would depend on how the input was split into reads (a read
    /// ending just after the value would deliver it, the same bytes read at once
    /// with junk behind would not). For the same reason the value may run up to the
    /// marker itself, not only to the start of its header block: a line such as
    /// `8:` reads as a header line only once the marker after it has arrived.
    fn repair_short(&mut self, pending: Pending, ended: bool) -> Option<Event> {
        let data = self.data();
        let body_end = pending.body + pending.length;
        let next_marker = find_marker(data, body_end);
        let tail_end = next_marker.unwrap_or(data.len());
        let settled = ended || self.impatient || next_marker.is_some();
        if tail_end == body_end && !settled {
            // The rest of a short frame may still be on its way.
            self.pending = Some(pending);
            return None;
        }
        if tail_end > body_end {
            let whole = &data[pending.body..tail_end];
            if let Some(end) = first_value_end(whole, settled) {
                let missing = pending.body + end - body_end;
                let repair = format!(
                    "Content-Length {} is too short: the message's JSON value ends {missing} bytes after it",
                    pending.length
                );
                return Some(self.deliver(pending.body, end, Some(repair)));
            }
            if !settled && data.len() - body_end <= MAX_JUNK {
                // The rest may still be on its way.
                self.pending = Some(pending);
                return None;
            }
        }
        Some(self.deliver(pending.body, pending.length, None))
    }

    /// Ends the pending frame: `length` bytes of body from `body`.
    fn deliver(&mut self, body: usize, length: usize, repair: Option<String>) -> Event {
        self.pending = None;
        self.impatient = false;
        self.start += body;
        Event::Message {
            body: self.take(length),
            repair,
        }
    }
}

/// Whether `body` (the first bytes of `region`) is one JSON value followed by the
/// start of a header that has not fully arrived yet: the test the too-long repair
/// makes once the header is whole (a value then a header starting inside the body),
/// so that a read ending inside the header does not decide otherwise. (serde_json's
/// stream reader would refuse a number or literal followed by a letter.)
fn ends_in_marker_prefix(body: &[u8], region: &[u8]) -> bool {
    let prefix = marker_prefix_suffix(region);
    let start = region.len() - prefix;
    prefix > 0 && start < body.len() && parses(trim_end(&region[..start]))
}

/// The length of the longest end of `data` that is a proper start of the
/// `Content-Length:` marker (any case): it may be the beginning of a header.
fn marker_prefix_suffix(data: &[u8]) -> usize {
    (1..MARKER.len().min(data.len() + 1))
        .rev()
        .find(|&n| data[data.len() - n..].eq_ignore_ascii_case(&MARKER[..n]))
        .unwrap_or(0)
}

/// Where the JSON value at the start of `bytes` ends, if it is complete. A number
/// that reaches the end of `bytes` may go on in the next read, so it counts only
/// when no more input can follow (`settled`).
fn first_value_end(bytes: &[u8], settled: bool) -> Option<usize> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
    let Some(Ok(_)) = values.next() else {
        return None;
    };
    let end = values.byte_offset();
    let open_number = end == bytes.len() && bytes[end - 1].is_ascii_digit();
    (settled || !open_number).then_some(end)
}

/// Whether `bytes` is exactly one JSON value.
fn parses(bytes: &[u8]) -> bool {
    !bytes.is_empty() && serde_json::from_slice::<IgnoredAny>(bytes).is_ok()
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

/// The first `Content-Length:` (any case) at or after `from`.
fn find_marker(data: &[u8], from: usize) -> Option<usize> {
    if from >= data.len() {
        return None;
    }
    // Found by its colon, which memchr finds fast (a dump's text has few): a byte
    // by byte comparison of every window took about 40 ms of CPU on a 60 MB didOpen.
    let last = MARKER.len() - 1;
    memchr::memchr_iter(b':', data.get(from + last..)?)
        .map(|colon| from + colon)
        .find(|&start| data[start..=start + last].eq_ignore_ascii_case(MARKER))
}

/// Where the header block holding the marker at `marker` starts: the marker's line
/// start when the marker begins it, extended back over complete header lines
/// (`Content-Type: ...`); the marker itself when other bytes precede it on its line.
fn header_block_start(data: &[u8], marker: usize) -> usize {
    let line_start = |end: usize| {
        data[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
    };
    if line_start(marker) != marker {
        return marker;
    }
    let mut block = marker;
    while block > 0 {
        let previous = line_start(block - 1);
        if !is_header_line(&data[previous..block - 1]) {
            break;
        }
        block = previous;
    }
    block
}

/// `Name: value` with a token name (the line without its `\n`).
fn is_header_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line.iter().position(|&b| b == b':') {
        Some(colon) if colon > 0 => line[..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-'),
        _ => false,
    }
}

/// The end of the header block starting at `from` (the blank line) and the start
/// of the body: `\r\n\r\n`, or `\n\n` from lenient clients.
fn find_blank_line(data: &[u8], from: usize) -> Option<(usize, usize)> {
    let rest = &data[from..];
    let crlf = rest
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    let lf = rest.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let (at, len) = match (crlf, lf) {
        (Some(a), Some(b)) => {
            if a.0 <= b.0 {
                a
            } else {
                b
            }
        }
        (a, b) => a.or(b)?,
    };
    Some((from + at, from + at + len))
}

/// The bytes of `data` up to its first line end.
fn line_at(data: &[u8]) -> &[u8] {
    let end = data
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(data.len());
    &data[..end]
}

/// The id of a request that could not be decoded, read leniently from its text: the
/// value of an `"id"` key at the top level of the object (so that an `"id"` inside
/// `params`, as in `$/cancelRequest`, is not taken for it). Numbers and strings only.
pub fn salvage_id(body: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(body);
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let end = string_end(bytes, i)?;
                if depth == 1 && &bytes[i..end] == b"\"id\"" {
                    if let Some(id) = value_after_colon(&text[end..]) {
                        return Some(id);
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The pieces of `bytes` that each start with a top-level `{` (outside strings):
/// skipped input may hold several requests, each to be answered.
pub fn top_level_objects(bytes: &[u8]) -> Vec<&[u8]> {
    let (mut depth, mut i) = (0usize, 0usize);
    let mut starts = vec![];
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                if depth == 0 && bytes[i] == b'{' {
                    starts.push(i);
                }
                depth += 1;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => match string_end(bytes, i) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => break,
            },
            _ => {}
        }
        i += 1;
    }
    let ends = starts.iter().skip(1).copied().chain([bytes.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&a, b)| &bytes[a..b])
        .collect()
}

/// The index just past the string starting at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn value_after_colon(rest: &str) -> Option<serde_json::Value> {
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
    match values.next()? {
        Ok(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(id),
        _ => {
            // A number cut short by the end of the text, or followed by junk.
            let digits: String = rest
                .chars()
                .enumerate()
                .take_while(|(k, c)| c.is_ascii_digit() || (*k == 0 && *c == '-'))
                .map(|(_, c)| c)
                .collect();
            digits.parse::<i64>().ok().map(serde_json::Value::from)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    /// Every event for `input` fed in pieces of `piece` bytes.
    fn events(input: &[u8], piece: usize) -> Vec<Event> {
        let mut framer = Framer::new();
        let mut out = vec![];
        for chunk in input.chunks(piece.max(1)) {
            framer.push(chunk);
            while let Some(event) = framer.next(false) {
                out.push(event);
            }
        }
        while let Some(event) = framer.next(true) {
            out.push(event);
        }
        out
    }

    fn messages(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Message { body, .. } => Some(String::from_utf8_lossy(body).into_owned()),
                Event::Dropped { .. } => None,
            })
            .collect()
    }

    const A: &str = r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{}}"#;
    const B: &str = r#"{"jsonrpc":"2.0","method":"b","params":{"x":"é"}}"#;
    const C: &str = r#"{"jsonrpc":"2.0","id":"c","method":"c"}"#;

    #[test]
    fn bytes_without_a_header_are_dropped_once_input_pauses() {
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover"}"#;
        let mut framer = Framer::new();
        framer.push(format!("Content-Type: text/plain\r\n\r\n{request}\r\nConten").as_bytes());
        assert_eq!(framer.next(false), None, "a header may still come");
        assert!(framer.waiting_for_more());
        framer.stop_waiting();
        match framer.next(false) {
            Some(Event::Dropped { bytes, reason }) => {
                assert!(String::from_utf8_lossy(&bytes).ends_with(&format!("{request}\r\n")));
                assert!(reason.contains("no more input"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // The start of a header is kept, and completes later.
        assert!(!framer.waiting_for_more());
        framer.push(format!("t-Length: {}\r\n\r\n{A}", A.len()).as_bytes());
        assert_eq!(messages(&[framer.next(false).unwrap()]), [A]);
        // Whitespace between frames goes without a word.
        framer.push(b"\r\n\n");
        assert!(framer.waiting_for_more());
        framer.stop_waiting();
        assert_eq!(framer.next(false), None);
        assert!(!framer.waiting_for_more());
        assert_eq!(marker_prefix_suffix(b"xx"), 0);
        assert_eq!(marker_prefix_suffix(b"x\ncontent-LEN"), 11);
    }

    #[test]
    fn well_framed_messages_pass_unchanged_in_any_pieces() {
        let input = [frame(A), frame(B), frame(C)].concat();
        for piece in [1, 2, 7, 64, input.len()] {
            let found = events(input.as_bytes(), piece);
            assert_eq!(messages(&found), [A, B, C], "piece {piece}");
            assert!(found
                .iter()
                .all(|e| matches!(e, Event::Message { repair: None, .. })));
        }
    }

    #[test]
    fn a_frame_one_byte_short_is_repaired_and_the_next_one_read() {
        let short = format!("Content-Length: {}\r\n\r\n{B}", B.len() - 1);
        let input = [frame(A), short, frame(C)].concat();
        for piece in [1, 5, input.len()] {
            let found = events(input.as_bytes(), piece);
            assert_eq!(messages(&found), [A, B, C], "piece {piece}: {found:?}");
            assert!(found.iter().any(
                |e| matches!(e, Event::Message { repair: Some(r), .. } if r.contains("too short"))
            ));
        }
    }

    #[test]
    fn a_short_frame_completed_then_junk_gives_the_value_however_it_is_read() {
        // Found by the `framing` fuzz target: read at once, the junk after the
        // value made the repair fail and the two bytes `{"` were the message;
        // read in pieces ending after the value, the value was.
        let input = format!("Content-Length: 2\r\n\r\n{A}x{}", frame(C));
        for piece in [1, 7, A.len() + 23, input.len()] {
            let found = events(input.as_bytes(), piece);
            assert_eq!(messages(&found), [A, C], "piece {piece}: {found:?}");
        }
        // A number at the end of a read may go on in the next one.
        let number = "Content-Length: 1\r\n\r\n 12".as_bytes();
        for piece in [1, 2, number.len()] {
            assert_eq!(messages(&events(number, piece)), [" 12"], "piece {piece}");
        }
    }

    #[test]
    fn a_number_then_a_header_inside_the_length_is_cut_however_it_is_read() {
        // Found by the `framing` fuzz target: read in pieces that ended inside
        // `Content-Length`, the body `3Content` was delivered whole; read at once,
        // the header was seen and the message was `3`.
        for value in ["3", "true", " 3"] {
            let input = format!("Content-Length: 8\r\n\r\n{value}{}", frame(A));
            for piece in [1, 5, input.len()] {
                let found = events(input.as_bytes(), piece);
                assert_eq!(messages(&found), [value, A], "piece {piece}: {found:?}");
            }
        }
    }

    #[test]
    fn a_short_frame_value_may_end_in_what_reads_as_a_header_line() {
        // Found by the `framing` fuzz target: `8:` after a one-byte body read as a
        // header line once the `Content-Length` after it had arrived, but not
        // before, so a read ending in between delivered the value `\n8` and the
        // whole input the body `\n`.
        let input = format!("Content-Length: 1\r\n\r\n\n8:\n{}", frame(A));
        for piece in [1, 17, 26, input.len()] {
            let found = events(input.as_bytes(), piece);
            assert_eq!(messages(&found), ["\n8", A], "piece {piece}: {found:?}");
        }
    }

    #[test]
    fn a_short_body_right_before_the_next_header_is_not_held_back() {
        let input = format!("Content-Length: 3\r\n\r\n{{\"a{}", frame(A));
        let mut framer = Framer::new();
        framer.push(input.as_bytes());
        let found = [framer.next(false), framer.next(false)];
        assert_eq!(messages(&found.map(Option::unwrap)), ["{\"a", A]);
    }

    #[test]
    fn a_frame_too_long_ends_at_the_next_header() {
        let long = format!("Content-Length: {}\r\n\r\n{A}", A.len() + 9);
        let input = [long, frame(B), frame(C)].concat();
        for piece in [1, 3, input.len()] {
            let found = events(input.as_bytes(), piece);
            assert_eq!(messages(&found), [A, B, C], "piece {piece}: {found:?}");
        }
    }

    #[test]
    fn headers_without_length_and_junk_are_dropped_and_reading_resumes() {
        let input = [
            "Content-Type: text/plain\r\n\r\n".to_string(),
            B.to_string(),
            "garbage\r\n".to_string(),
            frame(A),
            "Content-Length: zz\r\n\r\n".to_string(),
            frame(C),
            "\r\n".to_string(),
        ]
        .concat();
        let found = events(input.as_bytes(), 4);
        assert_eq!(messages(&found), [A, C], "{found:?}");
        let dropped: Vec<&str> = found
            .iter()
            .filter_map(|e| match e {
                Event::Dropped { reason, .. } => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        assert!(dropped.iter().any(|r| r.contains("before the next")));
        assert!(dropped.iter().any(|r| r.contains("invalid Content-Length")));
    }

    #[test]
    fn other_headers_and_lowercase_names_are_a_frame() {
        let input = format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: {}\r\n\r\n{A}",
            A.len()
        );
        assert_eq!(
            events(input.as_bytes(), 3),
            [Event::Message {
                body: A.as_bytes().to_vec(),
                repair: None
            }]
        );
    }

    #[test]
    fn a_broken_body_of_the_right_length_is_delivered_for_a_parse_error() {
        let input = [frame("{not json"), frame(A)].concat();
        assert_eq!(messages(&events(input.as_bytes(), 2)), ["{not json", A]);
        // Cut short by the end of input: dropped, nothing is waited for.
        let cut = format!("Content-Length: 500\r\n\r\n{A}");
        let found = events(cut.as_bytes(), 8);
        assert!(matches!(&found[..], [Event::Dropped { .. }]), "{found:?}");
    }

    #[test]
    fn junk_without_any_header_is_bounded() {
        let mut framer = Framer::new();
        let mut dropped = 0;
        for _ in 0..100 {
            framer.push(&[b'x'; 10_000]);
            while let Some(Event::Dropped { bytes, .. }) = framer.next(false) {
                dropped += bytes.len();
            }
            assert!(framer.data().len() <= MAX_JUNK + 10_000);
        }
        framer.push(frame(A).as_bytes());
        assert!(matches!(framer.next(false), Some(Event::Dropped { .. })));
        assert!(matches!(framer.next(false), Some(Event::Message { .. })));
        assert!(dropped > 900_000);
    }

    #[test]
    fn ids_are_salvaged_from_the_top_level_only() {
        let pieces = top_level_objects(br#"junk {"id":1,"a":"{"} x {"id":2} [{"id":3}] {"#);
        assert_eq!(
            pieces,
            [
                &br#"{"id":1,"a":"{"} x "#[..],
                br#"{"id":2} [{"id":3}] "#,
                b"{"
            ]
        );
        let id = |text: &str| salvage_id(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":12,"method":"x","params":{"#),
            Some(12.into())
        );
        assert_eq!(id(r#"{"id": "abc", "method":"#), Some("abc".into()));
        assert_eq!(id(r#"{"method":"$/cancelRequest","params":{"id":5}"#), None);
        assert_eq!(id(r#"{"params":{"a":"\"id\":3"},"id":4"#), Some(4.into()));
        assert_eq!(id("{\"id\":7\u{fffd}"), Some(7.into()));
        assert_eq!(id(r#"{"id":{"x":1}}"#), None);
        assert_eq!(id(r#"not json"#), None);
    }

    proptest! {
        /// The marker is found where a comparison of every window finds it: in any
        /// case, among colons and partial markers, at and after `from`.
        #[test]
        fn the_marker_is_found_where_every_window_is_compared(
            text in "(content-length:|CONTENT-LENGTH:|Content-Length|ontent-Length:|:|x|\\r\\n){0,12}",
            from in 0usize..120,
        ) {
            let data = text.as_bytes();
            let every_window = data
                .windows(MARKER.len())
                .enumerate()
                .skip(from)
                .find(|(_, w)| w.eq_ignore_ascii_case(MARKER))
                .map(|(i, _)| i);
            prop_assert_eq!(find_marker(data, from), every_window);
        }

        /// Whatever is wrong with one frame, every intact message after the next
        /// intact header is read, in order.
        #[test]
        fn one_bad_frame_never_loses_the_messages_after_it(
            before in 0usize..3,
            error in -3i64..4,
            junk in "[ -~]{0,12}",
            piece in 1usize..40,
        ) {
            let mut input = String::new();
            let all = [A, B, C];
            for body in &all[..before] {
                input += &frame(body);
            }
            let length = (B.len() as i64 + error).max(0);
            input += &format!("{junk}Content-Length: {length}\r\n\r\n{B}");
            input += &frame(C);
            input += &frame(A);
            let found = messages(&events(input.as_bytes(), piece));
            prop_assert!(found.ends_with(&[C.to_string(), A.to_string()]), "{found:?}");
            prop_assert_eq!(&found[..before], &all[..before]);
        }
    }
}
