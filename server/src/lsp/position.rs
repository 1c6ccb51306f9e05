//! Conversion between LSP positions (line + UTF-16 or UTF-8 code-unit column) and the
//! byte offsets the library uses.
//!
//! LSP counts columns in UTF-16 code units unless client and server agree on UTF-8
//! (`general.positionEncodings`). We prefer UTF-8 when offered because it maps onto byte
//! offsets without decoding the line. Positions from the wire are untrusted: a column
//! past the end of its line is clamped to the line end (as the specification asks), a
//! column inside a multi-unit character snaps to the character's start, and a line
//! past the end of the document is reported as out of range, so that nothing panics.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};

/// The unit in which the client counts columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// Bytes of UTF-8 (negotiated when the client offers it).
    Utf8,
    /// UTF-16 code units (the LSP default).
    #[default]
    Utf16,
}

impl PositionEncoding {
    /// Picks UTF-8 when the client lists it, else UTF-16 (which every client supports).
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Self {
        match offered {
            Some(kinds) if kinds.contains(&PositionEncodingKind::UTF8) => Self::Utf8,
            _ => Self::Utf16,
        }
    }

    /// The kind announced in the server capabilities.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Self::Utf8 => PositionEncodingKind::UTF8,
            Self::Utf16 => PositionEncodingKind::UTF16,
        }
    }
}

/// A position whose line does not exist in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineOutOfRange {
    pub line: u32,
    pub line_count: usize,
}

impl std::fmt::Display for LineOutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} is past the end of the document ({} lines)",
            self.line, self.line_count
        )
    }
}

/// Byte offset of the start of `line` (0-based) or an error past the last line.
fn line_start_byte(rope: &Rope, line: u32) -> Result<usize, LineOutOfRange> {
    let line_count = rope.len_lines();
    let index = line as usize;
    if index >= line_count {
        return Err(LineOutOfRange { line, line_count });
    }
    Ok(rope.line_to_byte(index))
}

/// Byte length of `line` without its terminator (`\n`, `\r\n` or `\r`).
fn line_content_len(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut len = slice.len_bytes();
    if len > 0 && slice.byte(len - 1) == b'\n' {
        len -= 1;
    }
    if len > 0 && slice.byte(len - 1) == b'\r' {
        len -= 1;
    }
    len
}

/// The byte offset of `position`; the column is clamped to the line's content and
/// snapped to a character boundary. Fails only when the line does not exist.
pub fn to_offset(
    rope: &Rope,
    position: Position,
    encoding: PositionEncoding,
) -> Result<usize, LineOutOfRange> {
    let start = line_start_byte(rope, position.line)?;
    let content = line_content_len(rope, position.line as usize);
    let column = position.character as usize;
    let within = match encoding {
        PositionEncoding::Utf8 => {
            let byte = start + column.min(content);
            // Snap back to the start of the character containing `byte`.
            rope.char_to_byte(rope.byte_to_char(byte)) - start
        }
        PositionEncoding::Utf16 => {
            let line = rope.line(position.line as usize).byte_slice(..content);
            let units = column.min(line.len_utf16_cu());
            // `utf16_cu_to_char` rounds down inside a surrogate pair.
            line.char_to_byte(line.utf16_cu_to_char(units))
        }
    };
    Ok(start + within)
}

/// Like [`to_offset`] but a line past the end maps to the end of the document:
/// edits from a confused client stay inside the text instead of being dropped.
pub fn to_offset_clamped(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    to_offset(rope, position, encoding).unwrap_or(rope.len_bytes())
}

/// The LSP position of a byte offset (clamped to the document, snapped to a char start).
pub fn to_position(rope: &Rope, offset: usize, encoding: PositionEncoding) -> Position {
    let offset = offset.min(rope.len_bytes());
    let char_index = rope.byte_to_char(offset);
    let line = rope.char_to_line(char_index);
    let line_start_char = rope.line_to_char(line);
    let character = match encoding {
        PositionEncoding::Utf8 => rope.char_to_byte(char_index) - rope.line_to_byte(line),
        PositionEncoding::Utf16 => {
            rope.char_to_utf16_cu(char_index) - rope.char_to_utf16_cu(line_start_char)
        }
    };
    Position::new(line as u32, character as u32)
}

/// The LSP range of a byte range.
pub fn to_range(rope: &Rope, bytes: std::ops::Range<usize>, encoding: PositionEncoding) -> Range {
    Range::new(
        to_position(rope, bytes.start, encoding),
        to_position(rope, bytes.end, encoding),
    )
}

/// The byte range of an LSP range, clamped; `start > end` is normalised by swapping.
pub fn to_byte_range_clamped(
    rope: &Rope,
    range: Range,
    encoding: PositionEncoding,
) -> std::ops::Range<usize> {
    let a = to_offset_clamped(rope, range.start, encoding);
    let b = to_offset_clamped(rope, range.end, encoding);
    a.min(b)..a.max(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn utf16_counts_surrogate_pairs_as_two_units() {
        // "😀" is 4 bytes and 2 UTF-16 units; "é" is 2 bytes and 1 unit.
        let rope = Rope::from_str("a😀é b\nx");
        assert_eq!(to_offset(&rope, pos(0, 1), PositionEncoding::Utf16), Ok(1));
        assert_eq!(to_offset(&rope, pos(0, 3), PositionEncoding::Utf16), Ok(5));
        assert_eq!(to_offset(&rope, pos(0, 4), PositionEncoding::Utf16), Ok(7));
        // Inside the surrogate pair: snap to the emoji's start.
        assert_eq!(to_offset(&rope, pos(0, 2), PositionEncoding::Utf16), Ok(1));
        assert_eq!(to_position(&rope, 5, PositionEncoding::Utf16), pos(0, 3));
        assert_eq!(to_position(&rope, 7, PositionEncoding::Utf8), pos(0, 7));
    }

    #[test]
    fn columns_past_the_line_end_clamp_and_lines_past_the_end_fail() {
        let rope = Rope::from_str("ab\r\ncd\n");
        assert_eq!(to_offset(&rope, pos(0, 99), PositionEncoding::Utf16), Ok(2));
        assert_eq!(to_offset(&rope, pos(1, 99), PositionEncoding::Utf8), Ok(6));
        // The empty last line after the final newline exists.
        assert_eq!(to_offset(&rope, pos(2, 5), PositionEncoding::Utf8), Ok(7));
        assert!(to_offset(&rope, pos(3, 0), PositionEncoding::Utf8).is_err());
        assert_eq!(
            to_offset_clamped(&rope, pos(9, 0), PositionEncoding::Utf8),
            7
        );
    }

    #[test]
    fn utf8_offsets_inside_a_character_snap_to_its_start() {
        let rope = Rope::from_str("é=1");
        assert_eq!(to_offset(&rope, pos(0, 1), PositionEncoding::Utf8), Ok(0));
        assert_eq!(to_position(&rope, 1, PositionEncoding::Utf8), pos(0, 0));
    }

    #[test]
    fn unicode_line_separators_are_not_lsp_line_breaks() {
        // U+2028 is not a line terminator in LSP; with `unicode_lines` off ropey agrees.
        let rope = Rope::from_str("a\u{2028}b\nc");
        assert_eq!(rope.len_lines(), 2);
        assert_eq!(to_position(&rope, 4, PositionEncoding::Utf16), pos(0, 2));
    }

    #[test]
    fn offsets_round_trip_through_positions_on_every_char_boundary() {
        let text = "x😀\r\né\rz\n\nend";
        let rope = Rope::from_str(text);
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            for (offset, _) in text.char_indices() {
                if text[..offset].ends_with('\r') && text[offset..].starts_with('\n') {
                    // The middle of a `\r\n` terminator has no LSP position of its own.
                    continue;
                }
                let p = to_position(&rope, offset, encoding);
                assert_eq!(to_offset(&rope, p, encoding), Ok(offset), "{offset} {p:?}");
            }
        }
    }

    #[test]
    fn negotiation_prefers_utf8_only_when_offered() {
        let offered = [PositionEncodingKind::UTF16, PositionEncodingKind::UTF8];
        assert_eq!(
            PositionEncoding::negotiate(Some(&offered)),
            PositionEncoding::Utf8
        );
        assert_eq!(PositionEncoding::negotiate(None), PositionEncoding::Utf16);
    }
}
