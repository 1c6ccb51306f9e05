//! Splitting a document into chunks by a byte scan, before any parsing.
//!
//! Tree-sitter's cost grows with the tree, so one tree per top-level item (module
//! header, table, computation, `// -----` separator) lets us parse items in
//! parallel and reparse only the item an edit touched. The scan tracks bracket
//! depth (`{}` and `()`), skipping strings and comments, and starts a new chunk at a
//! line that begins a new item once the current one is complete, or inside a line
//! where a complete header or computation is followed by the next item (a module
//! written on one line, as XLA's parser accepts it).
//!
//! Invariant the incremental path relies on: the scan state is fresh at every chunk
//! boundary, so scanning from any boundary yields the same chunks as scanning the
//! whole document.

use std::ops::Range;

use super::ChunkKind;

/// Scans chunks starting at a chunk boundary.
pub struct Splitter<'a> {
    text: &'a [u8],
    pos: usize,
    /// Document offset of `text`'s first byte: only a chunk at the document's start
    /// may be a single-instruction file.
    base: usize,
}

impl<'a> Splitter<'a> {
    /// `start` must be 0 or a chunk boundary of `text`, the whole document.
    pub fn new(text: &'a str, start: usize) -> Self {
        Splitter {
            text: text.as_bytes(),
            pos: start,
            base: 0,
        }
    }

    /// Scans `region`, a piece of the document that starts at the chunk boundary
    /// `base` (the incremental path rescans such pieces).
    pub fn region(region: &'a str, base: usize) -> Self {
        Splitter {
            text: region.as_bytes(),
            pos: 0,
            base,
        }
    }
}

impl Iterator for Splitter<'_> {
    type Item = (Range<usize>, ChunkKind);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let (end, kind) = scan_chunk(self.text, start, self.base + start == 0);
        self.pos = end;
        Some((start..end, kind))
    }
}

/// Texts from this size on are split in pieces on several threads ([`spans`]).
const PARALLEL_SPLIT_BYTES: usize = 4 << 20;

/// The chunks of the whole document `text`, as [`Splitter`] finds them. A large
/// text is scanned in pieces at once (the serial scan was 40 ms of the first hover
/// on a 58 MiB dump, and a tenth of a second on 600 MB).
pub fn spans(text: &str) -> Vec<(Range<usize>, ChunkKind)> {
    if text.len() < PARALLEL_SPLIT_BYTES {
        return Splitter::new(text, 0).collect();
    }
    spans_in_pieces(text, 4 * rayon::current_num_threads())
}

/// [`spans`] with the text cut into about `pieces` pieces. Each piece starts where
/// a chunk probably starts (a line after a closing `}` line) and is scanned until a
/// chunk ends at or past the next piece's start. The pieces are then joined in
/// order: a piece is taken when the chunks before it end exactly at its start,
/// which makes its start a chunk boundary, and the scan state is fresh at every
/// boundary (the module's invariant), so its chunks are the ones a single scan
/// finds. Where a guess was wrong, the chunks are scanned again in order up to the
/// next piece that fits; the answer is always the single scan's.
fn spans_in_pieces(text: &str, pieces: usize) -> Vec<(Range<usize>, ChunkKind)> {
    use rayon::prelude::*;
    let starts = piece_starts(text.as_bytes(), pieces);
    let scanned: Vec<Vec<(Range<usize>, ChunkKind)>> = (0..starts.len())
        .into_par_iter()
        .map(|k| {
            let until = starts.get(k + 1).copied().unwrap_or(text.len());
            scan_piece(text, starts[k], until)
        })
        .collect();
    let mut spans: Vec<(Range<usize>, ChunkKind)> = Vec::new();
    let mut at = 0;
    let mut next = 0;
    while at < text.len() {
        while next < starts.len() && starts[next] < at {
            next += 1;
        }
        if next < starts.len() && starts[next] == at {
            spans.extend(scanned[next].iter().cloned());
            next += 1;
        } else {
            // A chunk starts at every offset before the end; `None` cannot come.
            let Some(span) = Splitter::new(text, at).next() else {
                break;
            };
            spans.push(span);
        }
        at = spans.last().map_or(text.len(), |(range, _)| range.end);
    }
    spans
}

/// The chunks from `start` until one ends at or past `until`.
fn scan_piece(text: &str, start: usize, until: usize) -> Vec<(Range<usize>, ChunkKind)> {
    let mut chunks = Vec::new();
    for (range, kind) in Splitter::new(text, start) {
        let end = range.end;
        chunks.push((range, kind));
        if end >= until {
            break;
        }
    }
    chunks
}

/// 0 and, near each of `pieces - 1` even cuts, the start of the first non-blank
/// line after a line that is only `}`: where a computation most likely ends.
fn piece_starts(text: &[u8], pieces: usize) -> Vec<usize> {
    let closing = memchr::memmem::Finder::new(b"\n}\n");
    let mut starts = vec![0];
    for k in 1..pieces {
        let cut = k * text.len() / pieces;
        let Some(found) = closing.find(&text[cut..]) else {
            break;
        };
        let mut start = cut + found + 3;
        while let Some(line_end) = text[start..].iter().position(|&b| b == b'\n') {
            if !text[start..start + line_end]
                .iter()
                .all(u8::is_ascii_whitespace)
            {
                break;
            }
            start += line_end + 1;
        }
        if start < text.len() && start > *starts.last().unwrap_or(&0) {
            starts.push(start);
        }
    }
    starts
}

/// Per-chunk scan state.
struct State {
    kind: Option<ChunkKind>,
    depth: u32,
    /// Of `depth`, the braces (`{` not yet closed by `}`): a chunk that ends with one
    /// open is a computation whose `}` is missing ([`open_braces`]).
    braces: u32,
    /// A computation's body brace has been seen.
    opened: bool,
    /// Last byte outside whitespace and comments (`,` means "continues").
    last_significant: u8,
    /// Words begun at depth 0 (`HloModule m` is two: a third one not after `,` or
    /// `=` starts the next item).
    words: u32,
    /// The file is one instruction (`n = f32[4] negate(p)`, `f32[4] negate(f32[4])`),
    /// as XLA's parser accepts it: one chunk to the end (XLA wants nothing after it).
    single: bool,
}

fn scan_chunk(text: &[u8], start: usize, document_start: bool) -> (usize, ChunkKind) {
    let (end, state) = scan(text, start, document_start);
    (end, state.kind.unwrap_or(ChunkKind::Other))
}

/// How many `{` are still open at the end of `chunk` (one chunk's text), counted as
/// the split counts brackets (strings and comments skipped, as in the grammar): a
/// computation cut short, or whose `}` was deleted, ends with one open. The scan
/// state is fresh at every chunk boundary, so the chunk alone gives the same count.
pub(super) fn open_braces(chunk: &str) -> u32 {
    scan(chunk.as_bytes(), 0, false).1.braces
}

/// Scans the chunk that starts at `start`: where it ends, and the state there.
fn scan(text: &[u8], start: usize, document_start: bool) -> (usize, State) {
    let mut state = State {
        kind: None,
        depth: 0,
        braces: 0,
        opened: false,
        last_significant: b'\n',
        words: 0,
        single: false,
    };
    let mut p = start;
    while p < text.len() {
        let line_end = memchr_newline(text, p).map_or(text.len(), |i| i + 1);
        let line = &text[p..line_end];
        let indent = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
            .count();
        let content = &line[indent..];
        let blank = content.is_empty() || content[0] == b'\n';
        if content.starts_with(b"// -----") {
            if p == start {
                state.kind = Some(ChunkKind::Separator);
                return (line_end, state);
            }
            return (p, state);
        }
        let comment = content.starts_with(b"//");
        if p != start && !blank && !comment && starts_new_item(&state, indent, content) {
            return (p, state);
        }
        if state.kind.is_none() && !blank && !comment {
            state.kind = Some(classify(content));
            state.single = document_start && is_single_instruction(content);
        }
        if let Some(at) = scan_line(line, &mut state) {
            return (p + at, state);
        }
        p = line_end;
    }
    (text.len(), state)
}

/// Whether a non-blank, non-comment line starts a new chunk.
fn starts_new_item(state: &State, indent: usize, content: &[u8]) -> bool {
    if state.single {
        return false;
    }
    if state.depth > 0 {
        return indent == 0 && looks_like_item_start(content);
    }
    let continues = state.last_significant == b',' || content[0] == b',';
    match state.kind {
        None => false,
        Some(ChunkKind::Table) => !content[0].is_ascii_digit(),
        Some(ChunkKind::Computation) => state.opened && !continues,
        Some(_) => !continues,
    }
}

/// Resynchronisation inside an unclosed bracket (say a deleted `}`): a line at
/// column 0 that can only be the start of a module, table or computation ends the
/// broken chunk, so one missing brace does not swallow the rest of the file.
fn looks_like_item_start(content: &[u8]) -> bool {
    if !(content[0].is_ascii_alphabetic() || content[0] == b'_' || content[0] == b'%') {
        return false;
    }
    if starts_with_word(content, b"HloModule") || starts_with_word(content, b"ENTRY") {
        return true;
    }
    if TABLE_KEYWORDS.iter().any(|k| starts_with_word(content, k)) {
        return true;
    }
    let trimmed = trim_end(content);
    trimmed.ends_with(b"{") && !trimmed.contains(&b'=') && !trimmed.contains(&b'"')
}

const TABLE_KEYWORDS: [&[u8]; 4] = [
    b"FileNames",
    b"FunctionNames",
    b"FileLocations",
    b"StackFrames",
];

fn classify(content: &[u8]) -> ChunkKind {
    if starts_with_word(content, b"HloModule") {
        ChunkKind::Header
    } else if TABLE_KEYWORDS.iter().any(|k| starts_with_word(content, k)) {
        ChunkKind::Table
    } else if content[0].is_ascii_alphabetic() || content[0] == b'_' || content[0] == b'%' {
        ChunkKind::Computation
    } else {
        ChunkKind::Other
    }
}

/// Whether a file's first line starts an instruction, not a computation: its first
/// word is followed by `=` (`n = ...`) or is a shape's element type (`f32[4] ...`).
/// XLA's parser decides the same way (`HloParserImpl::Run`).
fn is_single_instruction(content: &[u8]) -> bool {
    if starts_with_word(content, b"ENTRY") || starts_with_word(content, b"HloModule") {
        return false;
    }
    let word = content.iter().take_while(|&&b| is_word_byte(b)).count();
    match content.get(word) {
        Some(b'[') => true,
        _ => content[word..]
            .iter()
            .find(|&&b| b != b' ' && b != b'\t')
            .is_some_and(|&b| b == b'='),
    }
}

fn starts_with_word(content: &[u8], word: &[u8]) -> bool {
    content.starts_with(word)
        && content
            .get(word.len())
            .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'))
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &s[..n]
}

/// Updates depth and the last significant byte over one line. Strings and
/// `/* */` comments end at the line's end at the latest, as in the grammar.
/// Returns the offset of a next item that begins inside the line.
fn scan_line(line: &[u8], state: &mut State) -> Option<usize> {
    let mut i = 0;
    while i < line.len() {
        if state.depth > 0 {
            // Most of a computation is inside its braces: skip to what matters there.
            match line[i..]
                .iter()
                .position(|&b| MATTERS_IN_BRACKETS[b as usize])
            {
                Some(k) => i += k,
                None => return None,
            }
        }
        let b = line[i];
        match b {
            b'"' => {
                i += 1;
                while i < line.len() && line[i] != b'"' && line[i] != b'\n' {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                state.last_significant = b'"';
            }
            // A `//` comment ends at the line's end, or at a lone `\r` (old Mac files).
            b'/' if line.get(i + 1) == Some(&b'/') => {
                match line[i..].iter().position(|&b| b == b'\r') {
                    Some(k) => i += k,
                    None => return None,
                }
            }
            b'/' if line.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < line.len() && !(line[i] == b'*' && line.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            b'{' | b'(' => {
                state.depth += 1;
                if b == b'{' {
                    state.opened = true;
                    state.braces += 1;
                }
                state.last_significant = b;
            }
            b'}' | b')' => {
                state.depth = state.depth.saturating_sub(1);
                if b == b'}' {
                    state.braces = state.braces.saturating_sub(1);
                }
                state.last_significant = b;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => {
                let word_start = is_word_start(b) && (i == 0 || !is_word_byte(line[i - 1]));
                if word_start && state.depth == 0 {
                    if item_is_complete(state) {
                        return Some(i);
                    }
                    state.words += 1;
                }
                // The rest of a word changes nothing but the last byte: skip it
                // (names and numbers are most of a dump's bytes).
                if is_word_byte(b) {
                    while line.get(i + 1).is_some_and(|&next| is_word_byte(next)) {
                        i += 1;
                    }
                }
                state.last_significant = line[i];
            }
        }
        i += 1;
    }
    None
}

/// Whether a word at depth 0 here starts the next item: after a computation's
/// body (and its attributes, `}, execution_thread="h"`), or after a module
/// header's name and attributes; never after the `,` or `=` that continue them.
fn item_is_complete(state: &State) -> bool {
    if state.single {
        return false;
    }
    let continues = matches!(state.last_significant, b',' | b'=');
    match state.kind {
        Some(ChunkKind::Computation) => state.opened && !continues,
        Some(ChunkKind::Header) => state.words >= 2 && !continues,
        _ => false,
    }
}

/// Inside brackets, only strings, comments and brackets change the state: a word
/// starts an item only at depth 0, and the bracket that returns to depth 0 is the
/// last significant byte there. A table, so that the skip is one load per byte.
static MATTERS_IN_BRACKETS: [bool; 256] = {
    let mut table = [false; 256];
    let mut k = 0;
    let bytes = *b"\"/{}()";
    while k < bytes.len() {
        table[bytes[k] as usize] = true;
        k += 1;
    }
    table
};

fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'%'
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'%')
}

fn memchr_newline(text: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', &text[from..]).map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(&str, ChunkKind)> {
        Splitter::new(text, 0).map(|(r, k)| (&text[r], k)).collect()
    }

    /// The split in pieces finds the single scan's chunks wherever the pieces fall,
    /// also where a guessed start is inside a string, a comment or a broken bracket.
    #[test]
    fn the_split_in_pieces_finds_the_single_scans_chunks() {
        let mut text = String::from("HloModule m\n\n");
        let body = "%f.N (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(f32[4]{0} %p), metadata={op_name=\"a\\n}\\n\"}\n}\n\n";
        for n in 0..40 {
            text.push_str(&body.replace('N', &n.to_string()));
            match n % 5 {
                0 => text.push_str("/* a comment\n}\n%not.a.start {\n*/\n"),
                1 => text.push_str("%s = \"a string\n}\n\n%inside.it {\n\"\n"),
                2 => text
                    .push_str("%broken (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0\n}\n\n"),
                3 => text.push_str("// -----\n"),
                _ => {}
            }
        }
        text.push_str("ENTRY %e (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4]{0} parameter(0)\n}\n");
        let single: Vec<_> = Splitter::new(&text, 0).collect();
        let boundaries: Vec<usize> = single.iter().map(|(range, _)| range.start).collect();
        let guesses = piece_starts(text.as_bytes(), 500);
        let wrong = guesses.iter().filter(|g| !boundaries.contains(g)).count();
        assert!(
            wrong > 5 && wrong < guesses.len() / 2,
            "{wrong} of {} guesses wrong",
            guesses.len()
        );
        for pieces in [1, 2, 3, 7, 16, 64, 500, 5000] {
            assert_eq!(spans_in_pieces(&text, pieces), single, "{pieces} pieces");
        }
        for cut in (0..text.len()).step_by(7) {
            let prefix = &text[..text.floor_char_boundary(cut)];
            let single: Vec<_> = Splitter::new(prefix, 0).collect();
            assert_eq!(spans_in_pieces(prefix, 9), single, "text cut at {cut}");
        }
    }

    /// The same on real dumps (XLA's text and JAX's), cut in many pieces.
    #[test]
    fn the_split_in_pieces_of_real_dumps_is_the_single_scans() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
        let mut checked = 0;
        for folder in ["bench", "samples", "dumps/step", "memory"] {
            let Ok(entries) = std::fs::read_dir(data.join(folder)) else {
                continue;
            };
            for path in entries.flatten().map(|entry| entry.path()) {
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if path.extension().is_some_and(|e| e == "hlo" || e == "txt") {
                    let single: Vec<_> = Splitter::new(&text, 0).collect();
                    assert_eq!(spans_in_pieces(&text, 64), single, "{}", path.display());
                    checked += 1;
                }
            }
        }
        assert!(checked >= 5, "only {checked} dumps found");
    }

    #[test]
    fn splits_header_tables_computations_and_separators() {
        let text = "HloModule m, a={x,\n y}\n\nFileNames\n1 \"a{\"\n\nf {\n  x = f32[] parameter(0)\n}, execution_thread=\"h\"\n// -----\nENTRY e {\n ROOT y = f32[] constant(1)\n}\n";
        let got = kinds(text);
        assert_eq!(
            got,
            vec![
                ("HloModule m, a={x,\n y}\n\n", ChunkKind::Header),
                ("FileNames\n1 \"a{\"\n\n", ChunkKind::Table),
                (
                    "f {\n  x = f32[] parameter(0)\n}, execution_thread=\"h\"\n",
                    ChunkKind::Computation
                ),
                ("// -----\n", ChunkKind::Separator),
                (
                    "ENTRY e {\n ROOT y = f32[] constant(1)\n}\n",
                    ChunkKind::Computation
                ),
            ]
        );
    }

    #[test]
    fn a_computation_cut_short_ends_with_its_brace_open() {
        let whole = "ENTRY e {\n  p = f32[2]{0} parameter(0), metadata={op_name=\"}\"}\n  // }\n  ROOT n = f32[2]{0} negate(p)\n}\n";
        assert_eq!(open_braces(whole), 0);
        let cut = &whole[..whole.find("ROOT").unwrap()];
        assert_eq!(
            open_braces(cut),
            1,
            "the `}}` in a string and a comment do not close it"
        );
        assert_eq!(
            open_braces(&whole[..whole.find("negate(p").unwrap() + 8]),
            1
        );
    }

    #[test]
    fn braces_in_strings_and_comments_do_not_count() {
        let text = "a {\n x = f32[] c(), b=\"}\" // }\n}\nb {\n}\n";
        let got = kinds(text);
        assert_eq!(got.len(), 2, "{got:?}");
    }

    #[test]
    fn a_missing_brace_resynchronises_at_the_next_computation() {
        let text = "a {\n x = f32[] c(\n\nb (p: f32[]) -> f32[] {\n}\n";
        let got = kinds(text);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[1].0.starts_with("b ("));
    }

    #[test]
    fn a_module_on_one_line_splits_into_its_items() {
        let text = "HloModule m, entry_computation_layout={(f32[4])->f32[4]}, is_scheduled=true \
                    f { p = f32[4] parameter(0) ROOT n = f32[4] negate(p) }, execution_thread=\"h\" \
                    ENTRY e { p = f32[4] parameter(0) ROOT c = f32[4] call(p), to_apply=f }";
        let got = kinds(text);
        let kinds: Vec<ChunkKind> = got.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            kinds,
            [
                ChunkKind::Header,
                ChunkKind::Computation,
                ChunkKind::Computation
            ],
            "{got:?}"
        );
        assert!(got[1].0.starts_with("f {"), "{got:?}");
        assert!(got[2].0.starts_with("ENTRY e"), "{got:?}");
        // Scanning again from every boundary gives the same chunks.
        let mut at = 0;
        for (piece, _) in &got {
            let again: Vec<_> = Splitter::new(text, at).map(|(r, _)| r).collect();
            assert_eq!(again.first().map(|r| &text[r.clone()]), Some(*piece));
            at += piece.len();
        }
    }

    #[test]
    fn a_single_instruction_file_is_one_chunk() {
        for text in [
            "%m = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %a, f32[2,4]{1,0} %b)\n",
            "f32[5] conditional(s32[], f32[5]), branch_computations={\n{\n t = f32[5] parameter(0)\n}\n}\n",
            "p = f32[2] parameter(0)\nq = f32[2] negate(p)\n",
        ] {
            let got = kinds(text);
            assert_eq!(got, vec![(text, ChunkKind::Computation)], "{text:?}");
        }
        // Only at the start of a file: a module's computations still split.
        let got = kinds("ENTRY e {\n}\nf {\n}\n");
        assert_eq!(got.len(), 2, "{got:?}");
    }

    #[test]
    fn only_the_document_start_reads_as_a_single_instruction() {
        // A header attribute on its own line after a stray `}` is its own chunk; a
        // rescan from that boundary (the incremental path) must not take it for a
        // single-instruction file and run to the end.
        let text = "HloModule m, a={1},} b={true}\n\nf {\n p = f32[] parameter(0)\n}\n";
        let whole: Vec<_> = Splitter::new(text, 0).collect();
        assert!(whole.len() > 2, "{whole:?}");
        let base = whole[1].0.start;
        let again: Vec<_> = Splitter::region(&text[base..], base)
            .map(|(r, k)| (r.start + base..r.end + base, k))
            .collect();
        assert_eq!(again, whole[1..]);
    }

    #[test]
    fn a_line_comment_ends_at_a_lone_carriage_return() {
        let text = "HloModule m:\r// Garbage\rENTRY c1 {\r// Foo\rROOT c = f32[1]{0} constant({1}) // x\r}";
        let got = kinds(text);
        let kinds: Vec<ChunkKind> = got.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            kinds,
            [ChunkKind::Header, ChunkKind::Computation],
            "{got:?}"
        );
    }

    #[test]
    fn leading_comments_join_the_first_item() {
        let got = kinds("// RUN: x\n// CHECK: y\nHloModule m\n");
        assert_eq!(
            got,
            vec![("// RUN: x\n// CHECK: y\nHloModule m\n", ChunkKind::Header)]
        );
    }
}
