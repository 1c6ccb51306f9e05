//! A document as chunks, each with its own tree, kept up to date under edits.

use std::cell::RefCell;
use std::ops::Range;

use rayon::prelude::*;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use super::split::Splitter;
use super::SyntaxError;

/// What a chunk holds, from the byte scan (the tree says what actually parsed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkKind {
    /// `HloModule name, attributes...`
    Header,
    /// `[ENTRY] name [(signature) -> shape] { instructions }`
    Computation,
    /// `FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`.
    Table,
    /// `// -----` between modules.
    Separator,
    /// Comments only, or text that starts no known item.
    Other,
}

/// One top-level item and its tree.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// Bytes of the document this chunk covers; chunks tile the document.
    pub range: Range<usize>,
    pub kind: ChunkKind,
    /// A `source_file` tree of the chunk's text; positions relative to `range.start`.
    pub tree: Tree,
}

impl Chunk {
    /// A node's byte range in the document.
    pub fn abs_range(&self, node: Node) -> Range<usize> {
        let r = node.byte_range();
        r.start + self.range.start..r.end + self.range.start
    }

    /// A node's text, given the document's text.
    pub fn node_text<'a>(&self, doc_text: &'a str, node: Node) -> &'a str {
        &doc_text[self.abs_range(node)]
    }

    /// This chunk's text, given the document's text.
    pub fn text<'a>(&self, doc_text: &'a str) -> &'a str {
        &doc_text[self.range.clone()]
    }

    /// The chunk's top-level item node (`module_header`, `computation`, ...), if it
    /// parsed as one.
    pub fn item(&self) -> Option<Node<'_>> {
        let root = self.tree.root_node();
        let mut cursor = root.walk();
        let item = root
            .named_children(&mut cursor)
            .find(|n| n.kind() != "comment");
        item
    }
}

/// HLO text and its syntax trees, one per chunk.
#[derive(Debug, Clone)]
pub struct SyntaxDocument {
    text: String,
    chunks: Vec<Chunk>,
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(super::new_parser());
}

/// Parses one chunk's text, reusing `old` (already edited) when given.
fn parse_chunk(text: &str, old: Option<&Tree>) -> Tree {
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        // Without a timeout or cancellation flag tree-sitter always returns a tree.
        parser
            .parse(text, old)
            .expect("tree-sitter parse without timeout returns a tree")
    })
}

impl SyntaxDocument {
    /// Splits and parses `text`; never fails (errors are nodes in the trees).
    pub fn parse(text: &str) -> SyntaxDocument {
        let spans: Vec<_> = Splitter::new(text, 0).collect();
        let chunks = spans
            .into_par_iter()
            .map(|(range, kind)| {
                let tree = parse_chunk(&text[range.clone()], None);
                Chunk { range, kind, tree }
            })
            .collect();
        SyntaxDocument {
            text: text.to_owned(),
            chunks,
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Index of the chunk containing `byte` (the last chunk for the end of text).
    pub fn chunk_index_at(&self, byte: usize) -> Option<usize> {
        if self.chunks.is_empty() {
            return None;
        }
        let i = self.chunks.partition_point(|c| c.range.start <= byte);
        Some(i.saturating_sub(1))
    }

    /// The chunk containing `byte`.
    pub fn chunk_at(&self, byte: usize) -> Option<&Chunk> {
        self.chunk_index_at(byte).map(|i| &self.chunks[i])
    }

    /// The smallest named node at `byte`, with its chunk.
    pub fn named_node_at(&self, byte: usize) -> Option<(&Chunk, Node<'_>)> {
        let chunk = self.chunk_at(byte)?;
        let rel = byte.checked_sub(chunk.range.start)?;
        let node = chunk
            .tree
            .root_node()
            .named_descendant_for_byte_range(rel, rel)?;
        Some((chunk, node))
    }

    /// Every `ERROR` and `MISSING` node, in document order.
    pub fn syntax_errors(&self) -> Vec<SyntaxError> {
        self.chunks
            .iter()
            .filter(|c| c.tree.root_node().has_error())
            .flat_map(|c| super::errors::collect(c, &self.text))
            .collect()
    }

    /// Replaces `start_byte..old_end_byte` with `new_text` and brings the trees up to
    /// date: only chunks whose text changed are reparsed (incrementally when the
    /// chunk survives the edit), and chunk boundaries are rescanned only around it.
    /// Offsets are clamped to the text and widened to char boundaries.
    pub fn edit(&mut self, start_byte: usize, old_end_byte: usize, new_text: &str) {
        let (start, old_end) = self.clamp_range(start_byte, old_end_byte);
        if start == old_end && new_text.is_empty() {
            return;
        }
        if self.chunks.is_empty() {
            self.text.replace_range(start..old_end, new_text);
            *self = SyntaxDocument::parse(&self.text);
            return;
        }
        let new_end = start + new_text.len();
        let fast = self.boundaries_unaffected(start, old_end, new_text);
        let edit = self.describe_edit(start, old_end, new_end);
        self.text.replace_range(start..old_end, new_text);
        if let Some(i) = fast {
            self.shift_after(i + 1, &edit);
            let chunk = &mut self.chunks[i];
            chunk.range.end = edit.map_end(chunk.range.end);
            reparse(chunk, &self.text, &edit);
            return;
        }
        self.resplit(&edit);
    }

    /// The edit with the points tree-sitter needs, taken from the text before the
    /// edit, relative to the chunk holding its start.
    fn describe_edit(&self, start: usize, old_end: usize, new_end: usize) -> Edit {
        let i = self.chunk_index_at(start).unwrap_or(0);
        let base = self.chunks[i].range.start;
        let old_chunk_text = &self.text[base..self.chunks[i].range.end.max(old_end)];
        Edit {
            start,
            old_end,
            new_end,
            base,
            start_position: point_at(old_chunk_text, start - base),
            old_end_position: point_at(old_chunk_text, old_end - base),
        }
    }

    fn clamp_range(&self, start: usize, end: usize) -> (usize, usize) {
        let len = self.text.len();
        let (mut start, mut end) = (start.min(len), end.min(len));
        if end < start {
            std::mem::swap(&mut start, &mut end);
        }
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        (start, end)
    }

    /// When an edit cannot move any chunk boundary, the index of the one chunk it
    /// touches. True when neither the removed nor the inserted text holds a byte
    /// the splitter looks at (brackets, quotes, comment and escape characters,
    /// newlines, commas), the edit is strictly inside an indented line, and that line
    /// is not the chunk's first or last.
    fn boundaries_unaffected(&self, start: usize, old_end: usize, new_text: &str) -> Option<usize> {
        const SPECIAL: &[u8] = b"{}()\"\\/*\n\r,";
        let removed = &self.text.as_bytes()[start..old_end];
        if removed
            .iter()
            .chain(new_text.as_bytes())
            .any(|b| SPECIAL.contains(b))
        {
            return None;
        }
        let i = self.chunk_index_at(start)?;
        let chunk = &self.chunks[i];
        let bytes = self.text.as_bytes();
        let line_start = bytes[..start]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let first_line_end = bytes[chunk.range.clone()]
            .iter()
            .position(|&b| b == b'\n')?
            + chunk.range.start;
        let last_line_start = bytes[chunk.range.start..chunk.range.end.saturating_sub(1)]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(chunk.range.start, |p| chunk.range.start + p + 1);
        let indented = matches!(bytes.get(line_start), Some(b' ' | b'\t'));
        let inside = line_start > first_line_end && old_end < last_line_start;
        (indented && start > line_start && inside && old_end <= chunk.range.end).then_some(i)
    }

    /// Moves chunks `from..` by the edit's length change (their text is unchanged).
    fn shift_after(&mut self, from: usize, edit: &Edit) {
        for c in &mut self.chunks[from..] {
            c.range = edit.map_end(c.range.start)..edit.map_end(c.range.end);
        }
    }

    /// Rescans chunk boundaries from the chunk before the edit until the scan meets an
    /// old boundary past the edit, then reparses the chunks in between.
    fn resplit(&mut self, edit: &Edit) {
        let i = self.chunk_index_at(edit.start).unwrap_or(0);
        let first = i.saturating_sub(1);
        let scan_from = self.chunks[first].range.start;
        // Old chunks that start at or after the edit's old end keep their text.
        let mut j = self
            .chunks
            .partition_point(|c| c.range.start < edit.old_end);
        let mut new_spans = Vec::new();
        let mut met_old_boundary = false;
        for (range, kind) in Splitter::new(&self.text, scan_from) {
            if range.start >= edit.new_end {
                while j < self.chunks.len()
                    && edit.map_end(self.chunks[j].range.start) < range.start
                {
                    j += 1;
                }
                if j < self.chunks.len() && edit.map_end(self.chunks[j].range.start) == range.start
                {
                    met_old_boundary = true;
                    break;
                }
            }
            new_spans.push((range, kind));
        }
        if !met_old_boundary {
            j = self.chunks.len();
        }
        let old: Vec<Chunk> = self.chunks.drain(first..j).collect();
        let text = &self.text;
        let rebuilt: Vec<Chunk> = new_spans
            .into_par_iter()
            .map(|(range, kind)| rebuild_chunk(&old, range, kind, text, edit))
            .collect();
        let after = first + rebuilt.len();
        self.chunks.splice(first..first, rebuilt);
        self.shift_after(after, edit);
    }
}

/// A text edit in document bytes.
#[derive(Debug, Clone, Copy)]
struct Edit {
    start: usize,
    old_end: usize,
    new_end: usize,
    /// Start of the chunk that held `start` before the edit; the points are
    /// relative to it.
    base: usize,
    start_position: Point,
    old_end_position: Point,
}

impl Edit {
    /// Where an old offset at or after the edit's old end lands in the new text.
    fn map_end(&self, old: usize) -> usize {
        old + self.new_end - self.old_end
    }
}

/// The chunk for a rescanned span: the old tree when its text did not change,
/// an incremental reparse when one old chunk held the whole edit and spans the same
/// text around it, a fresh parse otherwise.
fn rebuild_chunk(
    old: &[Chunk],
    range: Range<usize>,
    kind: ChunkKind,
    text: &str,
    edit: &Edit,
) -> Chunk {
    let unchanged_before = old
        .iter()
        .find(|c| c.range == range && c.range.end <= edit.start);
    let unchanged_after = old.iter().find(|c| {
        c.range.start >= edit.old_end
            && edit.map_end(c.range.start) == range.start
            && edit.map_end(c.range.end) == range.end
    });
    if let Some(c) = unchanged_before.or(unchanged_after) {
        return Chunk {
            range,
            kind,
            tree: c.tree.clone(),
        };
    }
    let holder = old.iter().find(|c| {
        c.range.start == range.start
            && c.range.start == edit.base
            && edit.old_end <= c.range.end
            && edit.map_end(c.range.end) == range.end
    });
    let tree = match holder {
        Some(c) => c.tree.clone(),
        None => parse_chunk(&text[range.clone()], None),
    };
    let mut chunk = Chunk { range, kind, tree };
    if holder.is_some() {
        reparse(&mut chunk, text, edit);
    }
    chunk
}

/// Reparses a chunk that held the whole edit and whose range is already updated.
fn reparse(chunk: &mut Chunk, text: &str, edit: &Edit) {
    let chunk_text = &text[chunk.range.clone()];
    let base = chunk.range.start;
    let new_end_position = point_at(chunk_text, edit.new_end - base);
    chunk.tree.edit(&InputEdit {
        start_byte: edit.start - base,
        old_end_byte: edit.old_end - base,
        new_end_byte: edit.new_end - base,
        start_position: edit.start_position,
        old_end_position: edit.old_end_position,
        new_end_position,
    });
    let tree = parse_chunk(chunk_text, Some(&chunk.tree));
    // Tree-sitter's error recovery depends on the old tree: with errors, an
    // incremental parse may shape its ERROR nodes differently from a fresh parse.
    // Diagnostics must not depend on the edit history, so a chunk with errors is
    // parsed afresh (one computation: cheap, and only while the text is broken).
    chunk.tree = if tree.root_node().has_error() {
        parse_chunk(chunk_text, None)
    } else {
        tree
    };
}

/// Row and byte column of `byte` in `text`.
fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    Point {
        row,
        column: byte - line_start,
    }
}
