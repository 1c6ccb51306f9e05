//! A JSON string literal's text, decoded where it lies.
//!
//! A `didOpen` of a 60 MB dump carries the dump as one JSON string with every line
//! break escaped. serde_json decodes such a string into a scratch buffer that grows
//! by doubling and then copies it into the `String` it hands out: the text is
//! written three times over, into pages faulted in for each copy (a fifth of a
//! second of the first hover on a 58 MiB dump). The message is ours once it is
//! read, and decoding only ever shortens a literal, so [`decode_to_front`] writes
//! the text over the message itself.

use std::ops::Range;

/// Decodes the body of a JSON string literal (the bytes between its quotes, already
/// checked by a JSON parser) that lies at `literal` in `buffer`, writing the text
/// at the start of `buffer`; returns the length of the text, which then fills
/// `buffer[..length]`. (Written at the start, the text can keep the buffer's
/// allocation without another move.)
///
/// Never fails: an escape for half of a surrogate pair (which JSON allows and UTF-8
/// cannot hold) becomes U+FFFD, and a malformed escape (which a checked literal
/// does not have) is kept as it is written.
pub fn decode_to_front(buffer: &mut [u8], literal: Range<usize>) -> usize {
    let end = literal.end;
    let (mut read, mut write) = (literal.start, 0);
    while let Some(found) = memchr::memchr(b'\\', &buffer[read..end]) {
        let backslash = read + found;
        move_run(buffer, read..backslash, write);
        write += backslash - read;
        let (decoded, consumed) = escape(&buffer[backslash..end]);
        let mut utf8 = [0; 4];
        let decoded = decoded.encode_utf8(&mut utf8).as_bytes();
        buffer[write..write + decoded.len()].copy_from_slice(decoded);
        write += decoded.len();
        read = backslash + consumed;
    }
    move_run(buffer, read..end, write);
    write + end - read
}

/// Moves the unescaped run `from` down to `to` (a no-op until the first escape).
fn move_run(literal: &mut [u8], from: std::ops::Range<usize>, to: usize) {
    if from.start != to {
        literal.copy_within(from, to);
    }
}

/// The character the escape at the start of `at` stands for, and its length in
/// bytes. Every decoded character is shorter than its escape, which is what lets
/// [`decode_to_front`] write over the literal.
fn escape(at: &[u8]) -> (char, usize) {
    let simple = match at.get(1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(at),
        _ => return ('\\', 1),
    };
    (simple, 2)
}

/// `\uXXXX`, or a surrogate pair written as two of them.
fn unicode_escape(at: &[u8]) -> (char, usize) {
    let Some(unit) = hex4(&at[2..]) else {
        return ('\\', 1);
    };
    if let Some(c) = char::from_u32(unit) {
        return (c, 6);
    }
    let is_high = (0xD800..0xDC00).contains(&unit);
    let low = (is_high && at.get(6..8) == Some(&b"\\u"[..]))
        .then(|| hex4(&at[8..]))
        .flatten()
        .filter(|low| (0xDC00..0xE000).contains(low));
    match low {
        Some(low) => {
            let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            (
                char::from_u32(scalar).unwrap_or(char::REPLACEMENT_CHARACTER),
                12,
            )
        }
        None => (char::REPLACEMENT_CHARACTER, 6),
    }
}

/// Four hexadecimal digits at the start of `at`.
fn hex4(at: &[u8]) -> Option<u32> {
    let digits = std::str::from_utf8(at.get(..4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `decode_to_front` makes of the literal serde_json writes for `text`.
    fn round_trip(literal: &str) -> String {
        let mut bytes = literal.as_bytes().to_vec();
        let length = decode_to_front(&mut bytes, 1..literal.len() - 1);
        bytes.truncate(length);
        String::from_utf8(bytes).unwrap()
    }

    proptest! {
        /// Every text serde_json writes (quotes, backslashes, control characters,
        /// characters outside the BMP) comes back whole.
        #[test]
        fn gives_back_what_serde_json_wrote(text in "(\\PC|[\"\\\\/\u{0}-\u{1f}\u{7f}]|\u{1F600}|\n){0,80}") {
            prop_assert_eq!(round_trip(&serde_json::to_string(&text).unwrap()), text);
        }

        /// Literals that escape more than they must (`\/`, `\u` for any character, pairs
        /// for astral ones) decode as serde_json decodes them.
        #[test]
        fn decodes_as_serde_json_does(chars in proptest::collection::vec(any::<char>(), 0..40), style in 0u8..3) {
            let literal: String = std::iter::once("\"".to_string())
                .chain(chars.iter().map(|&c| escaped(c, style)))
                .chain(std::iter::once("\"".to_string()))
                .collect();
            let expected: String = serde_json::from_str(&literal).unwrap();
            prop_assert_eq!(round_trip(&literal), expected);
        }
    }

    /// `c` written as JSON allows: as itself, or as `\u` escapes (a pair beyond the BMP).
    fn escaped(c: char, style: u8) -> String {
        match (c, style) {
            ('"' | '\\', _) | ('\u{0}'..='\u{1f}', _) | (_, 1) => {
                let mut units = [0; 2];
                c.encode_utf16(&mut units)
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect()
            }
            ('/', 2) => "\\/".to_string(),
            _ => c.to_string(),
        }
    }

    #[test]
    fn half_of_a_surrogate_pair_becomes_the_replacement_character() {
        assert_eq!(round_trip(r#""a\ud83db""#), "a\u{FFFD}b");
        assert_eq!(round_trip(r#""\ude00\ud83d""#), "\u{FFFD}\u{FFFD}");
        assert_eq!(round_trip(r#""\ud83d\u0041""#), "\u{FFFD}A");
        assert_eq!(round_trip(r#""\ud83d\ude00""#), "\u{1F600}");
    }

    #[test]
    fn a_malformed_escape_is_kept_as_written() {
        assert_eq!(round_trip(r#""a\qb""#), "a\\qb");
        assert_eq!(round_trip(r#""\u12""#), "\\u12");
        assert_eq!(round_trip(r#""end\""#), "end\\");
    }
}
