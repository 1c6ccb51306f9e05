//! Conversion between LSP positions (line + UTF-16 or UTF-8 code-unit column) and the
//! byte offsets the library uses.
//!
//! LSP counts columns in UTF-16 code units unless client and server agree on UTF-8
//! (`general.positionEncodings`). We prefer UTF-8 when offered because it maps onto byte
//! offsets without decoding the line. Positions from the wire are untrusted: a column
//! past the end of its line is clamped to the line end (as the specification asks), a
//! column inside a multi-unit character snaps to the character's start, and a line
//! past the end of the document is reported as out of range, so that nothing panics.

use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};

use crate::syntax::SyntaxDocument;

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

/// The byte offset of `position`; the column is clamped to the line's content and
/// snapped to a character boundary. Fails only when the line does not exist.
pub fn to_offset(
    doc: &SyntaxDocument,
    position: Position,
    encoding: PositionEncoding,
) -> Result<usize, LineOutOfRange> {
    let line = position.line as usize;
    let out_of_range = || LineOutOfRange {
        line: position.line,
        line_count: doc.line_count(),
    };
    let start = doc.line_start(line).ok_or_else(out_of_range)?;
    let content = doc.line_text(line).ok_or_else(out_of_range)?;
    let column = position.character as usize;
    let within = match encoding {
        PositionEncoding::Utf8 => {
            // Snap back to the start of the character containing the column.
            let mut byte = column.min(content.len());
            while !content.is_char_boundary(byte) {
                byte -= 1;
            }
            byte
        }
        PositionEncoding::Utf16 => {
            // Inside a surrogate pair: the character's start.
            let mut units = 0;
            let mut byte = content.len();
            for (i, c) in content.char_indices() {
                if units + c.len_utf16() > column {
                    byte = i;
                    break;
                }
                units += c.len_utf16();
            }
            byte
        }
    };
    Ok(start + within)
}

/// Like [`to_offset`] but a line past the end maps to the end of the document:
/// edits from a confused client stay inside the text instead of being dropped.
pub fn to_offset_clamped(
    doc: &SyntaxDocument,
    position: Position,
    encoding: PositionEncoding,
) -> usize {
    to_offset(doc, position, encoding).unwrap_or(doc.len())
}

/// The LSP position of a byte offset (clamped to the document, snapped to a char start).
pub fn to_position(doc: &SyntaxDocument, offset: usize, encoding: PositionEncoding) -> Position {
    let mut offset = offset.min(doc.len());
    while !doc.is_char_boundary(offset) {
        offset -= 1;
    }
    let (line, line_start) = doc.line_of(offset);
    let character = match encoding {
        PositionEncoding::Utf8 => offset - line_start,
        PositionEncoding::Utf16 => doc
            .slice(line_start..offset)
            .chars()
            .map(char::len_utf16)
            .sum(),
    };
    Position::new(line as u32, character as u32)
}

/// The position of chunk `i`'s first byte, as [`to_position`] gives it, without
/// searching the chunks for it: a publish places thousands of computations' findings
/// from their computations' starts.
pub fn chunk_start(doc: &SyntaxDocument, i: usize, encoding: PositionEncoding) -> Position {
    let c = doc.chunks().at(i);
    if c.starts_line {
        Position::new(c.first_line as u32, 0)
    } else {
        to_position(doc, c.start, encoding)
    }
}

/// Converts a sequence of byte offsets that mostly increase (tokens, hints in text
/// order) to positions in time linear in the text they span: a column is counted
/// from the previous offset when it is on the same line, not from the line start,
/// so many tokens on one long line (a minified dump) are not quadratic.
pub struct PositionCursor<'a> {
    doc: &'a SyntaxDocument,
    encoding: PositionEncoding,
    /// The last offset converted, its line and column.
    last: Option<(usize, usize, u32)>,
}

impl<'a> PositionCursor<'a> {
    pub fn new(doc: &'a SyntaxDocument, encoding: PositionEncoding) -> Self {
        Self {
            doc,
            encoding,
            last: None,
        }
    }

    /// The LSP position of `offset` (as [`to_position`]).
    pub fn position(&mut self, offset: usize) -> Position {
        let mut offset = offset.min(self.doc.len());
        while !self.doc.is_char_boundary(offset) {
            offset -= 1;
        }
        let (line, line_start) = self.doc.line_of(offset);
        let (from, column) = match self.last {
            Some((at, last_line, column)) if last_line == line && at <= offset => (at, column),
            _ => (line_start, 0),
        };
        let column = column + self.units(from..offset);
        self.last = Some((offset, line, column));
        Position::new(line as u32, column)
    }

    fn units(&self, bytes: std::ops::Range<usize>) -> u32 {
        let units = match self.encoding {
            PositionEncoding::Utf8 => bytes.len(),
            PositionEncoding::Utf16 => self.doc.slice(bytes).chars().map(char::len_utf16).sum(),
        };
        units as u32
    }
}

/// The LSP range of a byte range.
pub fn to_range(
    doc: &SyntaxDocument,
    bytes: std::ops::Range<usize>,
    encoding: PositionEncoding,
) -> Range {
    Range::new(
        to_position(doc, bytes.start, encoding),
        to_position(doc, bytes.end, encoding),
    )
}

/// The byte range of an LSP range, clamped; `start > end` is normalised by swapping.
pub fn to_byte_range_clamped(
    doc: &SyntaxDocument,
    range: Range,
    encoding: PositionEncoding,
) -> std::ops::Range<usize> {
    let a = to_offset_clamped(doc, range.start, encoding);
    let b = to_offset_clamped(doc, range.end, encoding);
    a.min(b)..a.max(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn a_chunk_starts_where_to_position_puts_its_first_byte() {
        let text = "HloModule m\n\nf {\n  ROOT p = f32[] parameter(0)\n}  g { ROOT q = f32[] parameter(0) }\n\u{e9}h {\n ROOT r = f32[] parameter(0)\n}\n";
        let doc = SyntaxDocument::parse(text);
        assert!(doc.chunks().len() >= 4, "{:?}", doc.chunks().len());
        for (i, c) in doc.chunks().iter().enumerate() {
            for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
                let p = to_position(&doc, c.start, encoding);
                assert_eq!(chunk_start(&doc, i, encoding), p, "chunk {i}");
            }
        }
    }

    #[test]
    fn utf16_counts_surrogate_pairs_as_two_units() {
        // "😀" is 4 bytes and 2 UTF-16 units; "é" is 2 bytes and 1 unit.
        let doc = SyntaxDocument::parse("a😀é b\nx");
        assert_eq!(to_offset(&doc, pos(0, 1), PositionEncoding::Utf16), Ok(1));
        assert_eq!(to_offset(&doc, pos(0, 3), PositionEncoding::Utf16), Ok(5));
        assert_eq!(to_offset(&doc, pos(0, 4), PositionEncoding::Utf16), Ok(7));
        // Inside the surrogate pair: snap to the emoji's start.
        assert_eq!(to_offset(&doc, pos(0, 2), PositionEncoding::Utf16), Ok(1));
        assert_eq!(to_position(&doc, 5, PositionEncoding::Utf16), pos(0, 3));
        assert_eq!(to_position(&doc, 7, PositionEncoding::Utf8), pos(0, 7));
    }

    #[test]
    fn columns_past_the_line_end_clamp_and_lines_past_the_end_fail() {
        let doc = SyntaxDocument::parse("ab\r\ncd\n");
        assert_eq!(to_offset(&doc, pos(0, 99), PositionEncoding::Utf16), Ok(2));
        assert_eq!(to_offset(&doc, pos(1, 99), PositionEncoding::Utf8), Ok(6));
        // The empty last line after the final newline exists.
        assert_eq!(to_offset(&doc, pos(2, 5), PositionEncoding::Utf8), Ok(7));
        assert!(to_offset(&doc, pos(3, 0), PositionEncoding::Utf8).is_err());
        assert_eq!(
            to_offset_clamped(&doc, pos(9, 0), PositionEncoding::Utf8),
            7
        );
    }

    #[test]
    fn utf8_offsets_inside_a_character_snap_to_its_start() {
        let doc = SyntaxDocument::parse("é=1");
        assert_eq!(to_offset(&doc, pos(0, 1), PositionEncoding::Utf8), Ok(0));
        assert_eq!(to_position(&doc, 1, PositionEncoding::Utf8), pos(0, 0));
    }

    #[test]
    fn unicode_line_separators_are_not_lsp_line_breaks() {
        // U+2028 is not a line terminator in LSP.
        let doc = SyntaxDocument::parse("a\u{2028}b\nc");
        assert_eq!(doc.line_count(), 2);
        assert_eq!(to_position(&doc, 4, PositionEncoding::Utf16), pos(0, 2));
    }

    #[test]
    fn offsets_round_trip_through_positions_on_every_char_boundary() {
        let text = "x😀\r\né\rz\n\nend";
        let doc = SyntaxDocument::parse(text);
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            for (offset, _) in text.char_indices() {
                if text[..offset].ends_with('\r') && text[offset..].starts_with('\n') {
                    // The middle of a `\r\n` terminator has no LSP position of its own.
                    continue;
                }
                let p = to_position(&doc, offset, encoding);
                assert_eq!(to_offset(&doc, p, encoding), Ok(offset), "{offset} {p:?}");
            }
        }
    }

    #[test]
    fn the_cursor_agrees_with_to_position_in_any_order() {
        let text = "a😀b\nxé😀\u{2028}y\r\n\nz😀😀";
        let doc = SyntaxDocument::parse(text);
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            let mut cursor = PositionCursor::new(&doc, encoding);
            let forward = (0..=text.len() + 2).chain((0..=text.len()).rev());
            for offset in forward.chain([5, 1, 9, 2, 14]) {
                assert_eq!(
                    cursor.position(offset),
                    to_position(&doc, offset, encoding),
                    "{offset} {encoding:?}"
                );
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
