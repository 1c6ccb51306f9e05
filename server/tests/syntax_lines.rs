//! Lines of a chunked document against the text itself: for texts whose items
//! (module header, computations, separators) share lines, as a module written on
//! one line does, and whose lines end in `\n`, `\r\n` or a lone `\r`, every byte's
//! line and line start, every line's start and text, and every chunk's start
//! position must be what a scan of the whole text says.

use hlo_lsp::lsp::position::{chunk_start, to_position, PositionEncoding};
use hlo_lsp::syntax::SyntaxDocument;
use proptest::prelude::*;

/// Where each line starts, as LSP counts lines.
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut out = vec![0];
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            out.push(i + 1);
        }
    }
    out
}

fn check(text: &str) {
    check_document(&SyntaxDocument::parse(text), text);
}

/// `doc`'s lines against `text`, which it holds.
fn check_document(doc: &SyntaxDocument, text: &str) {
    let starts = line_starts(text);
    assert_eq!(doc.line_count(), starts.len(), "{text:?}");
    for (line, &start) in starts.iter().enumerate() {
        assert_eq!(doc.line_start(line), Some(start), "line {line} of {text:?}");
        let end = starts.get(line + 1).copied().unwrap_or(text.len());
        let content = text[start..end].trim_end_matches(['\n', '\r']);
        assert_eq!(
            doc.line_text(line).as_deref(),
            Some(content),
            "line {line} of {text:?}"
        );
    }
    assert_eq!(doc.line_start(starts.len()), None);
    for byte in (0..=text.len()).filter(|&b| text.is_char_boundary(b)) {
        let line = starts.partition_point(|&s| s <= byte) - 1;
        assert_eq!(
            doc.line_of(byte),
            (line, starts[line]),
            "byte {byte} of {text:?}"
        );
        let column = text[starts[line]..byte].encode_utf16().count() as u32;
        let p = to_position(doc, byte, PositionEncoding::Utf16);
        assert_eq!(
            (p.line, p.character),
            (line as u32, column),
            "byte {byte} of {text:?}"
        );
    }
    for (i, c) in doc.chunks().iter().enumerate() {
        for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16] {
            let at = to_position(doc, c.start, encoding);
            assert_eq!(chunk_start(doc, i, encoding), at, "chunk {i} of {text:?}");
        }
    }
}

#[test]
fn a_module_on_one_line() {
    check("HloModule m f { ROOT p = f32[] parameter(0) } ENTRY é { ROOT q = f32[] parameter(0) }");
    check("HloModule m\n\nf {\n  ROOT p = f32[] parameter(0)\n}  g { ROOT q = f32[] parameter(0) }\r\néh {\r ROOT r = f32[] parameter(0)\n}\n");
}

/// Edits that join an item's line to the next one's and split it again: the
/// chunk after the edit keeps its text but no longer (or again) starts a line.
#[test]
fn joining_and_splitting_lines_between_items() {
    let text = "HloModule m\n\nf {\n  ROOT p = f32[] parameter(0)\n}\ng {\n  ROOT q = f32[] parameter(0)\n}\r\nENTRY e {\n  ROOT r = f32[] parameter(0)\n}\n";
    for (at, _) in text.match_indices("}\n").chain(text.match_indices("}\r\n")) {
        let break_len = if text[at + 1..].starts_with("\r\n") {
            2
        } else {
            1
        };
        for joined_by in ["", " ", "  "] {
            let mut doc = SyntaxDocument::parse(text);
            doc.edit(at + 1, at + 1 + break_len, joined_by);
            let joined = format!(
                "{}{joined_by}{}",
                &text[..at + 1],
                &text[at + 1 + break_len..]
            );
            check_document(&doc, &joined);
            doc.edit(at + 1, at + 1 + joined_by.len(), "\n");
            let split = format!("{}\n{}", &text[..at + 1], &text[at + 1 + break_len..]);
            check_document(&doc, &split);
        }
    }
}

const ITEMS: &[&str] = &[
    "HloModule m",
    "HloModule é, is_scheduled=true",
    "f {\n  ROOT p = f32[] parameter(0)\n}",
    "g { ROOT q = f32[] parameter(0) }",
    "%ü (x: f32[]) -> f32[] {\r\n  ROOT %x = f32[] parameter(0)\r\n}",
    "ENTRY e {\r ROOT r = f32[2] parameter(0)\r}",
    "// -----",
    "FileNames\n1 \"a.py\"",
];

const GAPS: &[&str] = &[" ", "  ", "\n", "\r\n", "\r", "\n\n", " \n ", ""];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn lines_of_items_that_share_lines(
        items in prop::collection::vec((0..ITEMS.len(), 0..GAPS.len()), 1..8)
    ) {
        let text: String = items.iter().map(|&(i, g)| format!("{}{}", ITEMS[i], GAPS[g])).collect();
        check(&text);
    }
}
