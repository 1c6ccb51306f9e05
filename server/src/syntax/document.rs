//! A document as a sequence of chunks, each owning its text, kept up to date under
//! edits.
//!
//! The chunk list is the document's only copy of its text: a rope whose leaves are
//! whole computations. An edit replaces the chunks it touches (usually one) with new
//! ones and moves the others without touching them, so everything derived from an
//! untouched chunk survives the edit. Costs: an edit copies the blocks of the chunks it
//! touches and the list of block bases (a few bytes per 64 computations), and the text
//! of the chunks it touches.
//!
//! Places are kept relative to their block's base ([`Base`]): an edit that changes a
//! chunk's length or line count moves every later chunk by moving the later blocks'
//! bases, leaving their chunks (shared with the previous version) alone. Moving each
//! later chunk instead copied every later block and touched every later chunk's
//! reference count: 15 of the 28 ms of a digit inserted in a 588 MiB module.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use tree_sitter::{InputEdit, Point, Tree};

use super::chunk::{parse_text, Chunk, ChunkKind};
use super::split::Splitter;
use super::SyntaxError;
use crate::blocks::{BlockToken, Blocks, BLOCK_LEN};

/// A chunk at its place in the document (a view: the document stores places relative
/// to their block, see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct Placed<'a> {
    /// Document offset of the chunk's first byte.
    pub start: usize,
    /// Number of the document line the chunk starts on (0-based).
    pub first_line: usize,
    /// Whether the chunk starts that line (no other item before it on the line).
    pub starts_line: bool,
    /// The chunk's kind, beside its place: walks over the places (the index of a
    /// new version) read it without reaching each chunk. Set with the chunk.
    kind: ChunkKind,
    pub chunk: &'a Arc<Chunk>,
}

impl<'a> Placed<'a> {
    /// The chunk's bytes in the document.
    pub fn range(&self) -> Range<usize> {
        self.start..self.start + self.chunk.len()
    }

    pub fn kind(&self) -> ChunkKind {
        self.kind
    }

    /// A node's (or any chunk-relative) range in the document.
    pub fn abs(&self, relative: Range<usize>) -> Range<usize> {
        relative.start + self.start..relative.end + self.start
    }

    /// The chunk's text, for as long as the document is borrowed (the `Chunk`
    /// method through `Deref` borrows this view only).
    pub fn text(&self) -> &'a str {
        self.chunk.text()
    }

    /// The chunk's outline, for as long as the document is borrowed.
    pub fn outline(&self) -> &'a super::Outline {
        self.chunk.outline()
    }
}

impl std::ops::Deref for Placed<'_> {
    type Target = Chunk;
    fn deref(&self) -> &Chunk {
        self.chunk
    }
}

/// A chunk as stored: its place relative to its block's [`Base`].
#[derive(Debug, Clone)]
struct Slot {
    /// Byte offset from the block's base (wrapping, see [`Base`]).
    start: usize,
    /// Line from the block's base line (wrapping).
    first_line: usize,
    starts_line: bool,
    kind: ChunkKind,
    chunk: Arc<Chunk>,
}

impl Slot {
    /// `chunk`, its place not known yet (see [`SyntaxDocument::place`]).
    fn unplaced(chunk: Arc<Chunk>) -> Slot {
        Slot {
            start: 0,
            first_line: 0,
            starts_line: true,
            kind: chunk.kind,
            chunk,
        }
    }

    /// This place with `chunk` instead of the chunk there.
    fn with_chunk(&self, chunk: Chunk) -> Slot {
        Slot {
            kind: chunk.kind,
            chunk: Arc::new(chunk),
            ..*self
        }
    }

    /// This place moved by `bytes` and `lines` (wrapping: a move back is a huge one).
    fn shift(&mut self, bytes: usize, lines: usize) {
        self.start = self.start.wrapping_add(bytes);
        self.first_line = self.first_line.wrapping_add(lines);
    }
}

/// What a block's slots are relative to: a chunk's place is its block's base plus
/// its slot's. Sums wrap (a base may lie past its chunks after an edit moved them
/// back); the true places fit a `usize`, so the wrapped sums are exact.
#[derive(Debug, Clone, Copy, Default)]
struct Base {
    byte: usize,
    line: usize,
}

/// The chunks of a document at their places: indexes, iterates and binary-searches
/// like the `Blocks` it views, giving each chunk with its absolute place.
#[derive(Debug, Clone, Copy)]
pub struct Chunks<'a> {
    slots: &'a Blocks<Slot>,
    bases: &'a [Base],
}

impl<'a> Chunks<'a> {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Chunk `i` at its place; panics past the last chunk (as indexing does).
    pub fn at(&self, i: usize) -> Placed<'a> {
        placed(&self.slots[i], self.bases[i / BLOCK_LEN])
    }

    pub fn get(&self, i: usize) -> Option<Placed<'a>> {
        (i < self.len()).then(|| self.at(i))
    }

    pub fn last(&self) -> Option<Placed<'a>> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    pub fn iter(&self) -> Iter<'a> {
        self.range(0..self.len())
    }

    /// The chunks of `range` (clamped to the chunks).
    pub fn range(&self, range: Range<usize>) -> Iter<'a> {
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        Iter {
            chunks: *self,
            range: start..end,
            front: [].iter(),
            front_base: Base::default(),
        }
    }

    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = Placed<'a>> + 'a {
        let chunks = *self;
        (0..self.len()).into_par_iter().map(move |i| chunks.at(i))
    }

    /// The number of leading chunks for which `pred` holds, when it holds for a
    /// prefix (as `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(Placed<'a>) -> bool) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            if pred(self.at(mid)) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// Block `b` of the chunks (chunks `b * BLOCK_LEN..`): two versions' tokens are the
    /// same exactly when they share the block's chunks and places relative to its base.
    pub fn token(&self, b: usize) -> BlockToken {
        self.slots.token(b)
    }
}

/// `slot` at its place in a block based at `base`.
fn placed(slot: &Slot, base: Base) -> Placed<'_> {
    Placed {
        start: base.byte.wrapping_add(slot.start),
        first_line: base.line.wrapping_add(slot.first_line),
        starts_line: slot.starts_line,
        kind: slot.kind,
        chunk: &slot.chunk,
    }
}

/// The chunks of a range, in order. Walks a block's slots as a slice: every edit
/// walks the places of all chunks (the index of the new version).
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    chunks: Chunks<'a>,
    range: Range<usize>,
    /// The slots of `range.start`'s block from `range.start` on (maybe past
    /// `range.end`), and their base.
    front: std::slice::Iter<'a, Slot>,
    front_base: Base,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Placed<'a>;
    fn next(&mut self) -> Option<Placed<'a>> {
        let i = self.range.next()?;
        if self.front.len() == 0 {
            let b = i / BLOCK_LEN;
            self.front = self.chunks.slots.block(b)[i % BLOCK_LEN..].iter();
            self.front_base = self.chunks.bases[b];
        }
        let slot = self.front.next()?;
        Some(placed(slot, self.front_base))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|i| self.chunks.at(i))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for Chunks<'a> {
    type Item = Placed<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Chunks<'a> {
    type Item = Placed<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Which chunks an edit replaced: `old` (indices before the edit) became `new_len`
/// chunks starting at `old.start`. Layers that keep one entry per chunk apply the same
/// splice to keep theirs aligned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub old: Range<usize>,
    pub new_len: usize,
}

/// HLO text as chunks (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SyntaxDocument {
    /// Shared with the versions this one was edited from, block by block; places
    /// relative to `bases`.
    slots: Blocks<Slot>,
    /// One per block of `slots`: what its places are relative to.
    bases: Arc<Vec<Base>>,
    len: usize,
    layout: Layout,
}

/// Where the chunks start, as lines and columns: two versions with the same layout
/// ([`Layout::same`]) have every chunk start at the same line and column, so that
/// what is shown relative to a chunk's start is shown at the same place in both.
/// An edit keeps it only when it changes neither the length nor the line breaks of
/// the chunk it replaces, and the chunk ends its last line (else the next chunk's
/// column depends on that line): a digit changed.
#[derive(Debug, Clone, Default)]
pub struct Layout(Arc<()>);

impl Layout {
    pub fn same(&self, other: &Layout) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl SyntaxDocument {
    /// Splits `text` into chunks; never fails. Chunks are parsed on demand.
    pub fn parse(text: &str) -> SyntaxDocument {
        let spans = super::split::spans(text);
        let chunks: Vec<Arc<Chunk>> = spans
            .into_par_iter()
            .map(|(range, kind)| Arc::new(Chunk::new(kind, &text[range])))
            .collect();
        let count = chunks.len();
        let mut doc = SyntaxDocument {
            slots: chunks.into_iter().map(Slot::unplaced).collect(),
            bases: Arc::new(vec![Base::default(); count.div_ceil(BLOCK_LEN)]),
            len: text.len(),
            layout: Layout::default(),
        };
        doc.place(0..count);
        doc
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunks at their places.
    pub fn chunks(&self) -> Chunks<'_> {
        Chunks {
            slots: &self.slots,
            bases: &self.bases,
        }
    }

    /// See [`Layout`].
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The whole text (a copy: the chunks own it).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.len);
        for c in self.chunks() {
            out.push_str(c.text());
        }
        out
    }

    /// The text of `range` (clamped to the text), borrowed when one chunk holds it.
    pub fn slice(&self, range: Range<usize>) -> Cow<'_, str> {
        let (start, end) = (range.start.min(self.len), range.end.min(self.len));
        if start >= end {
            return Cow::Borrowed("");
        }
        let first = self.chunk_index_at(start).unwrap_or(0);
        let c = self.chunks().at(first);
        if end <= c.range().end {
            return Cow::Borrowed(c.text().get(start - c.start..end - c.start).unwrap_or(""));
        }
        let mut out = String::with_capacity(end - start);
        for c in self.chunks().range(first..self.chunks().len()) {
            if c.start >= end {
                break;
            }
            let from = start.saturating_sub(c.start);
            let to = (end - c.start).min(c.len());
            out.push_str(c.text().get(from..to).unwrap_or(""));
        }
        Cow::Owned(out)
    }

    /// Index of the chunk containing `byte` (the last chunk for the end of text).
    pub fn chunk_index_at(&self, byte: usize) -> Option<usize> {
        if self.chunks().is_empty() {
            return None;
        }
        let i = self.chunks().partition_point(|c| c.start <= byte);
        Some(i.saturating_sub(1))
    }

    /// The chunk containing `byte`.
    pub fn chunk_at(&self, byte: usize) -> Option<Placed<'_>> {
        self.chunk_index_at(byte).map(|i| self.chunks().at(i))
    }

    /// Every `ERROR` and `MISSING` node, in document order (parses every chunk that
    /// keeps no tree: for tests and tools; the model keeps each chunk's errors).
    pub fn syntax_errors(&self) -> Vec<SyntaxError> {
        self.chunks()
            .par_iter()
            .flat_map_iter(|c| {
                let tree = c.tree();
                c.syntax_errors(&tree)
                    .into_iter()
                    .map(move |e| SyntaxError {
                        range: c.abs(e.range),
                        message: e.message,
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Number of lines (a text ending in a newline has an empty last line).
    pub fn line_count(&self) -> usize {
        self.chunks()
            .last()
            .map_or(1, |c| c.first_line + c.newlines() + 1)
    }

    /// Byte offset where `line` starts; `None` past the last line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        if line == 0 {
            return Some(0);
        }
        // The last chunk starting on or before the line: the line starts inside it, or
        // (when the chunk starts on that line) where the chunk's first line starts.
        let i = self.chunks().partition_point(|c| c.first_line <= line);
        let c = self.chunks().get(i.checked_sub(1)?)?;
        if c.first_line == line {
            return Some(self.first_line_start(i - 1));
        }
        Some(c.start + c.line_start(line - c.first_line)?)
    }

    /// Where the line holding chunk `i`'s first byte starts: at the chunk, or in an
    /// earlier chunk when items share a line (`}  g {`, a module on one line).
    fn first_line_start(&self, i: usize) -> usize {
        let mut j = i;
        while !self.chunks().at(j).starts_line {
            // Chunk `j - 1` ends on the line: the line starts in it, or before it.
            let before = self.chunks().at(j - 1);
            if before.newlines() > 0 {
                return before.start + before.line_start(before.newlines()).unwrap_or(0);
            }
            j -= 1;
        }
        self.chunks().at(j).start
    }

    /// The text of `line` without its terminator (`\n`, `\r\n`, `\r`): borrowed from its
    /// chunk unless items on the line are chunks of their own.
    pub fn line_text(&self, line: usize) -> Option<Cow<'_, str>> {
        if self.chunks().is_empty() {
            return (line == 0).then_some(Cow::Borrowed(""));
        }
        let start = self.line_start(line)?;
        let end = self.line_start(line + 1).unwrap_or(self.len);
        let content = |text: &str| text.split(['\n', '\r']).next().unwrap_or("").len();
        Some(match self.slice(start..end) {
            Cow::Borrowed(text) => Cow::Borrowed(&text[..content(text)]),
            Cow::Owned(mut text) => {
                text.truncate(content(&text));
                Cow::Owned(text)
            }
        })
    }

    /// The 0-based line of `byte` and the byte offset where that line starts.
    pub fn line_of(&self, byte: usize) -> (usize, usize) {
        let byte = byte.min(self.len);
        let Some(i) = self.chunk_index_at(byte) else {
            return (0, 0);
        };
        let c = self.chunks().at(i);
        let k = c.line_of(byte - c.start);
        let line_start = match k {
            0 => self.first_line_start(i),
            _ => c.start + c.line_start(k).unwrap_or(0),
        };
        (c.first_line + k, line_start)
    }

    /// Whether `byte` is a char boundary of the text.
    pub fn is_char_boundary(&self, byte: usize) -> bool {
        match self.chunk_at(byte) {
            Some(c) if byte < c.range().end => c.text().is_char_boundary(byte - c.start),
            _ => byte <= self.len,
        }
    }

    /// Replaces `start_byte..old_end_byte` with `new_text` and brings the chunks up to
    /// date: only chunks whose text changed are replaced (the one holding the edit is
    /// reparsed, incrementally when it kept its tree), and chunk boundaries are
    /// rescanned only around the edit. Offsets are clamped to the text and widened to
    /// char boundaries. Returns which chunks were replaced.
    pub fn edit(&mut self, start_byte: usize, old_end_byte: usize, new_text: &str) -> Splice {
        let (start, old_end) = self.clamp_range(start_byte, old_end_byte);
        if start == old_end && new_text.is_empty() {
            return Splice {
                old: 0..0,
                new_len: 0,
            };
        }
        if self.chunks().is_empty() {
            let old = 0..0;
            *self = SyntaxDocument::parse(new_text);
            return Splice {
                old,
                new_len: self.chunks().len(),
            };
        }
        let edit = Edit {
            start,
            old_end,
            new_end: start + new_text.len(),
        };
        // The chunk holding the edit's start, as it was: whether the edit kept the
        // layout is read from it.
        let held = self
            .chunk_index_at(start)
            .map(|i| (i, self.chunks().at(i).chunk.clone()));
        let splice = match self.inside_one_chunk(start, old_end, new_text) {
            Some(i) => self
                .replace_one(i, &edit, new_text)
                .unwrap_or_else(|| self.resplit(&edit, new_text)),
            None => self.resplit(&edit, new_text),
        };
        self.len = self.len + edit.new_end - edit.old_end;
        self.place_spliced(splice.old.start, splice.new_len);
        self.renew_layout(held, &splice);
        splice
    }

    /// Gives this version a new [`Layout`] unless `splice` replaced one chunk, `old`
    /// (its index and the chunk that was there), by one of the same length and line
    /// breaks that ends its last line.
    fn renew_layout(&mut self, old: Option<(usize, Arc<Chunk>)>, splice: &Splice) {
        let i = splice.old.start;
        let keeps = splice.old.len() == 1
            && splice.new_len == 1
            && old.is_some_and(|(at, old)| {
                let new = self.chunks().at(i);
                at == i && old.len() == new.len() && old.same_line_breaks(new.chunk)
            })
            && ends_with_line_break(&self.chunks().at(i));
        if !keeps {
            self.layout = Layout::default();
        }
    }

    /// Applies several edits that all lie inside one chunk at once: `edits` are
    /// `(old byte range, new text)` in document bytes, sorted and not overlapping. The
    /// chunk's text is rebuilt once and reparsed once from its kept tree (each edit
    /// applied to the tree first), where [`Self::edit`] one at a time would copy,
    /// rescan and reparse the chunk per edit. `None` (nothing changed) when an edit
    /// reaches outside the chunk, its first or last line, or the new text would not
    /// split as that one chunk; the caller then edits one at a time.
    pub fn edit_within_chunk(&mut self, edits: &[(Range<usize>, String)]) -> Option<Splice> {
        let first = edits.first()?;
        let i = self.chunk_index_at(first.0.start)?;
        let old = self.chunks().at(i);
        let (base, bytes) = (old.start, old.text().as_bytes());
        let body_start = base + bytes.iter().position(|&b| b == b'\n')? + 1;
        let body_end = base
            + bytes[..bytes.len().saturating_sub(1)]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
        let mut previous_end = body_start;
        for (r, _) in edits {
            let inside = previous_end <= r.start && r.start <= r.end && r.end < body_end;
            if !inside || !old.text().is_char_boundary(r.start - base) {
                return None;
            }
            if !old.text().is_char_boundary(r.end - base) {
                return None;
            }
            previous_end = r.end;
        }
        let mut text = String::with_capacity(old.len());
        let mut at = base;
        for (r, t) in edits {
            text.push_str(&old.text()[at - base..r.start - base]);
            text.push_str(t);
            at = r.end;
        }
        text.push_str(&old.text()[at - base..]);
        if !self.splits_as_one(i, &text) {
            return None;
        }
        let old = self.chunks().at(i);
        let tree = old.kept_tree().map(|mut tree| {
            // From the last edit back: each edit's positions are then those of the
            // text before it, which the later edits did not move.
            for (r, t) in edits.iter().rev() {
                let (start, old_end) = (r.start - base, r.end - base);
                let start_position = point_at(old.text(), start);
                tree.edit(&InputEdit {
                    start_byte: start,
                    old_end_byte: old_end,
                    new_end_byte: start + t.len(),
                    start_position,
                    old_end_position: point_at(old.text(), old_end),
                    new_end_position: point_after(start_position, t),
                });
            }
            tree
        });
        let tree = match tree {
            Some(tree) => {
                let reparsed = parse_text(&text, Some(&tree));
                if reparsed.root_node().has_error() {
                    parse_text(&text, None)
                } else {
                    reparsed
                }
            }
            None => parse_text(&text, None),
        };
        let placed = self.slots[i].with_chunk(Chunk::with_tree(old.kind, &text, tree));
        let old_len = old.len();
        let held = Some((i, old.chunk.clone()));
        self.slots.set(i, placed);
        self.len = self.len + self.chunks().at(i).len() - old_len;
        self.place_spliced(i, 1);
        let splice = Splice {
            old: i..i + 1,
            new_len: 1,
        };
        self.renew_layout(held, &splice);
        Some(splice)
    }

    /// Places chunks `range`, each where the one before it ends, and returns where
    /// the last one ends: byte, line, and whether a line starts there.
    fn place(&mut self, range: Range<usize>) -> (usize, usize, bool) {
        let (mut start, mut line) = self.end_of(range.start);
        let mut starts_line = self.starts_a_line(range.start);
        let mut i = range.start;
        while i < range.end {
            let stop = range.end.min((i / BLOCK_LEN + 1) * BLOCK_LEN);
            let base = self.bases[i / BLOCK_LEN];
            self.slots.update(i..stop, |c| {
                c.start = start.wrapping_sub(base.byte);
                c.first_line = line.wrapping_sub(base.line);
                c.starts_line = starts_line;
                start += c.chunk.len();
                line += c.chunk.newlines();
                starts_line = ends_with_line_break(&c.chunk);
            });
            i = stop;
        }
        (start, line, starts_line)
    }

    /// Whether chunk `i` starts a line: it is the first, or its predecessor ends one.
    fn starts_a_line(&self, i: usize) -> bool {
        i.checked_sub(1)
            .is_none_or(|p| ends_with_line_break(&self.chunks().at(p)))
    }

    /// Places the `count` chunks an edit put at `from`, and moves the chunks after
    /// them by the bytes and lines the edit added: their places relative to one
    /// another hold, and reading each of tens of thousands of chunks to recompute
    /// them made an edit cost what the file holds.
    fn place_spliced(&mut self, from: usize, count: usize) {
        let (start, line, starts_line) = self.place(from..from + count);
        let at = from + count;
        let Some(next) = self.chunks().get(at) else {
            return;
        };
        let (old_start, old_line) = (next.start, next.first_line);
        // The chunks after keep their predecessors, but for this one.
        if next.starts_line != starts_line {
            self.slots
                .update(at..at + 1, |next| next.starts_line = starts_line);
        }
        if (start, line) != (old_start, old_line) {
            self.move_from(
                at,
                start.wrapping_sub(old_start),
                line.wrapping_sub(old_line),
            );
        }
    }

    /// Moves chunks `at..` by `bytes` and `lines` (wrapping, see [`Base`]): the rest
    /// of `at`'s block chunk by chunk, the later blocks by their bases, so that they
    /// stay shared with the version before.
    fn move_from(&mut self, at: usize, bytes: usize, lines: usize) {
        let mut block = at / BLOCK_LEN;
        if !at.is_multiple_of(BLOCK_LEN) {
            let end = self.slots.len().min((block + 1) * BLOCK_LEN);
            self.slots.update(at..end, |c| c.shift(bytes, lines));
            block += 1;
        }
        for base in &mut Arc::make_mut(&mut self.bases)[block..] {
            base.byte = base.byte.wrapping_add(bytes);
            base.line = base.line.wrapping_add(lines);
        }
    }

    /// Replaces the slots of `range` by `new` (a different number of them, so every
    /// later chunk changes block): every block is rebuilt, with places relative to
    /// the document's start. The new slots are placed afterwards.
    fn rebuild(&mut self, range: Range<usize>, new: Vec<Slot>) {
        let chunks = self.chunks();
        let absolute = |c: Placed| Slot {
            start: c.start,
            first_line: c.first_line,
            starts_line: c.starts_line,
            kind: c.kind,
            chunk: c.chunk.clone(),
        };
        let before = chunks.range(0..range.start).map(absolute);
        let after = chunks.range(range.end..chunks.len()).map(absolute);
        let slots: Blocks<Slot> = before.chain(new).chain(after).collect();
        self.bases = Arc::new(vec![Base::default(); slots.len().div_ceil(BLOCK_LEN)]);
        self.slots = slots;
    }

    /// Where chunk `i` starts: the end of its predecessor (byte, line).
    fn end_of(&self, i: usize) -> (usize, usize) {
        match i.checked_sub(1).map(|p| self.chunks().at(p)) {
            Some(p) => (p.start + p.len(), p.first_line + p.newlines()),
            None => (0, 0),
        }
    }

    fn clamp_range(&self, start: usize, end: usize) -> (usize, usize) {
        let len = self.len;
        let (mut start, mut end) = (start.min(len), end.min(len));
        if end < start {
            std::mem::swap(&mut start, &mut end);
        }
        while !self.is_char_boundary(start) {
            start -= 1;
        }
        while !self.is_char_boundary(end) {
            end += 1;
        }
        (start, end)
    }

    /// When an edit is unlikely to move any chunk boundary, the index of the one chunk
    /// it touches: neither the removed nor the inserted text holds a byte the splitter
    /// looks at (brackets, quotes, comment and escape characters, newlines, commas),
    /// the edit is strictly inside an indented line, and that line is not the chunk's
    /// first or last. In a well-formed computation that line is inside the body, but
    /// not in garbage, so [`Self::replace_one`] still checks the new text's split.
    fn inside_one_chunk(&self, start: usize, old_end: usize, new_text: &str) -> Option<usize> {
        const SPECIAL: &[u8] = b"{}()\"\\/*\n\r,";
        let i = self.chunk_index_at(start)?;
        let chunk = self.chunks().at(i);
        if old_end > chunk.range().end {
            return None;
        }
        let bytes = chunk.text().as_bytes();
        let (rel_start, rel_end) = (start - chunk.start, old_end - chunk.start);
        let removed = &bytes[rel_start..rel_end];
        if removed
            .iter()
            .chain(new_text.as_bytes())
            .any(|b| SPECIAL.contains(b))
        {
            return None;
        }
        let line_start = bytes[..rel_start]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let first_line_end = bytes.iter().position(|&b| b == b'\n')?;
        let last_line_start = bytes[..bytes.len().saturating_sub(1)]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let indented = matches!(bytes.get(line_start), Some(b' ' | b'\t'));
        let inside = line_start > first_line_end && rel_end < last_line_start;
        (indented && rel_start > line_start && inside).then_some(i)
    }

    /// The fast path: chunk `i` holds the whole edit and keeps its boundaries; `None`
    /// (nothing changed) when the new text does not split as one chunk ending where the
    /// old one did.
    fn replace_one(&mut self, i: usize, edit: &Edit, new_text: &str) -> Option<Splice> {
        let old = self.chunks().at(i);
        let base = old.start;
        let mut text = String::with_capacity(old.len() + new_text.len());
        text.push_str(&old.text()[..edit.start - base]);
        text.push_str(new_text);
        text.push_str(&old.text()[edit.old_end - base..]);
        if !self.splits_as_one(i, &text) {
            return None;
        }
        let placed = self.slots[i].with_chunk(edited_chunk(&old, &text, edit));
        self.slots.set(i, placed);
        Some(Splice {
            old: i..i + 1,
            new_len: 1,
        })
    }

    /// Whether `text`, the new text of chunk `i`, is one chunk of the same kind that
    /// still ends where the next chunk starts. Garbage can break that with bytes the
    /// fast path lets through: after a bracket closed the item early, a word may start
    /// the next item in mid-line (found by fuzzing), and deleting the words after a
    /// `,` makes the item continue into the next chunk.
    fn splits_as_one(&self, i: usize, text: &str) -> bool {
        let next = self.chunks().get(i + 1).map_or("", |c| c.text());
        let mut region = String::with_capacity(text.len() + next.len());
        region.push_str(text);
        region.push_str(next);
        Splitter::region(&region, self.chunks().at(i).start)
            .next()
            .is_some_and(|(range, kind)| {
                range.end == text.len() && kind == self.chunks().at(i).kind
            })
    }

    /// Rescans chunk boundaries from the chunk before the edit until the scan meets an
    /// old boundary past the edit, then replaces the chunks in between.
    fn resplit(&mut self, edit: &Edit, new_text: &str) -> Splice {
        let i = self.chunk_index_at(edit.start).unwrap_or(0);
        let first = i.saturating_sub(1);
        let base = self.chunks().at(first).start;
        // Old chunks from the one holding the edit's end: the scan may stop at any of
        // their starts. Take a few, and more when the scan runs past them.
        let end_chunk = self.chunk_index_at(edit.old_end).unwrap_or(i);
        let mut take = 2;
        loop {
            let last = (end_chunk + take).min(self.chunks().len());
            let region = self.region_text(first, last, edit, new_text);
            if let Some((spans, stop)) = self.scan_region(&region, base, first, last, edit) {
                return self.splice_in(first, stop, &region, base, spans, edit);
            }
            if last == self.chunks().len() {
                let spans: Vec<_> = Splitter::region(&region, base).collect();
                return self.splice_in(first, last, &region, base, spans, edit);
            }
            take *= 4;
        }
    }

    /// The new text of old chunks `first..last` (the edit applied).
    fn region_text(&self, first: usize, last: usize, edit: &Edit, new_text: &str) -> String {
        let base = self.chunks().at(first).start;
        let end = self.chunks().at(last - 1).range().end;
        let old = self.slice(base..end);
        let mut text = String::with_capacity(old.len() + new_text.len());
        text.push_str(&old[..edit.start - base]);
        text.push_str(new_text);
        text.push_str(&old[(edit.old_end - base).min(old.len())..]);
        text
    }

    /// Splits `region` (the new text from `base`, old chunks `first..last`) until a
    /// span starts where an old chunk past the edit started: the chunks from there on
    /// are unchanged. Returns the spans before it and that old chunk's index.
    fn scan_region(
        &self,
        region: &str,
        base: usize,
        first: usize,
        last: usize,
        edit: &Edit,
    ) -> Option<(Spans, usize)> {
        let mut spans = Vec::new();
        // Old chunks that start at or after the edit's old end keep their text.
        let mut j = first
            + self
                .chunks()
                .range(first..last)
                .take_while(|c| c.start < edit.old_end)
                .count();
        for (range, kind) in Splitter::region(region, base) {
            let at = base + range.start;
            if at >= edit.new_end {
                while j < last && edit.map_end(self.chunks().at(j).start) < at {
                    j += 1;
                }
                // A chunk that moves to or from the document's start is scanned again:
                // there it may be a single-instruction file, which runs to the end.
                let same_place = |c: &Placed| (c.start == 0) == (at == 0);
                if j < last
                    && edit.map_end(self.chunks().at(j).start) == at
                    && same_place(&self.chunks().at(j))
                {
                    return Some((spans, j));
                }
            }
            spans.push((range, kind));
        }
        None
    }

    /// Replaces old chunks `first..stop` by chunks for `spans` (ranges in `region`).
    fn splice_in(
        &mut self,
        first: usize,
        stop: usize,
        region: &str,
        base: usize,
        spans: Spans,
        edit: &Edit,
    ) -> Splice {
        let old: Vec<Placed> = self.chunks().range(first..stop).collect();
        let rebuilt: Vec<Slot> = spans
            .into_par_iter()
            .map(|(range, kind)| {
                let start = base + range.start;
                Slot::unplaced(rebuild_chunk(&old, start, &region[range], kind, edit))
            })
            .collect();
        let new_len = rebuilt.len();
        if new_len == stop - first {
            self.slots.splice(first..stop, rebuilt);
        } else {
            self.rebuild(first..stop, rebuilt);
        }
        Splice {
            old: first..stop,
            new_len,
        }
    }
}

/// Chunk spans from a scan, in the scanned text's bytes.
type Spans = Vec<(Range<usize>, ChunkKind)>;

/// A text edit in document bytes.
#[derive(Debug, Clone, Copy)]
struct Edit {
    start: usize,
    old_end: usize,
    new_end: usize,
}

impl Edit {
    /// Where an old offset at or after the edit's old end lands in the new text.
    fn map_end(&self, old: usize) -> usize {
        old + self.new_end - self.old_end
    }
}

/// The chunk for a rescanned span at document offset `start` with text `text`: the
/// old chunk when its text did not change, the edited old chunk when one old chunk held
/// the whole edit and spans the same text around it, a new chunk otherwise (parsed
/// and kept when it holds the edit: it is being worked on).
fn rebuild_chunk(
    old: &[Placed],
    start: usize,
    text: &str,
    kind: ChunkKind,
    edit: &Edit,
) -> Arc<Chunk> {
    let end = start + text.len();
    let unchanged = old.iter().find(|c| {
        let before = c.start == start && c.range().end == end && end <= edit.start;
        let after = c.start >= edit.old_end
            && edit.map_end(c.start) == start
            && edit.map_end(c.range().end) == end;
        (before || after) && c.kind == kind
    });
    if let Some(c) = unchanged {
        return c.chunk.clone();
    }
    let holds_edit = start <= edit.start && edit.new_end <= end;
    let holder = old.iter().find(|c| {
        c.start == start && edit.old_end <= c.range().end && edit.map_end(c.range().end) == end
    });
    match holder {
        Some(c) if holds_edit && c.kind == kind => Arc::new(edited_chunk(c, text, edit)),
        _ if holds_edit => Arc::new(Chunk::with_tree(kind, text, parse_text(text, None))),
        _ => Arc::new(Chunk::new(kind, text)),
    }
}

/// `old` after `edit`, whose new text is `text`: reparsed incrementally from the old
/// tree when it kept one, else parsed afresh; the tree is kept.
fn edited_chunk(old: &Placed, text: &str, edit: &Edit) -> Chunk {
    let tree = match old.kept_tree() {
        Some(tree) => reparse(tree, old, text, edit),
        None => parse_text(text, None),
    };
    Chunk::with_tree(old.kind, text, tree)
}

/// Reparses `tree` (of `old`'s text) for `text` (old's text with `edit` applied).
fn reparse(mut tree: Tree, old: &Placed, text: &str, edit: &Edit) -> Tree {
    let base = old.start;
    tree.edit(&InputEdit {
        start_byte: edit.start - base,
        old_end_byte: edit.old_end - base,
        new_end_byte: edit.new_end - base,
        start_position: point_at(old.text(), edit.start - base),
        old_end_position: point_at(old.text(), edit.old_end - base),
        new_end_position: point_at(text, edit.new_end - base),
    });
    let reparsed = parse_text(text, Some(&tree));
    // Tree-sitter's error recovery depends on the old tree: with errors, an
    // incremental parse may shape its ERROR nodes differently from a fresh parse.
    // Diagnostics must not depend on the edit history, so a chunk with errors is
    // parsed afresh (one computation: cheap, and only while the text is broken).
    if reparsed.root_node().has_error() {
        parse_text(text, None)
    } else {
        reparsed
    }
}

/// Where `text` ends when it starts at `start` (row and byte column).
fn point_after(start: Point, text: &str) -> Point {
    match text.rfind('\n') {
        Some(last) => Point {
            row: start.row + text.matches('\n').count(),
            column: text.len() - last - 1,
        },
        None => Point {
            row: start.row,
            column: start.column + text.len(),
        },
    }
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

/// Whether `chunk`'s text ends with a line break (then the next chunk starts a line).
fn ends_with_line_break(chunk: &Chunk) -> bool {
    chunk.line_start(chunk.newlines()) == Some(chunk.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module of `n` small computations and an entry: one chunk each, several
    /// blocks of them.
    fn computations(n: usize) -> String {
        let mut text = String::from("HloModule m\n\n");
        for k in 0..n {
            text.push_str(&format!(
                "%c{k} (p: f32[]) -> f32[] {{\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] negate(%p)\n}}\n\n"
            ));
        }
        text.push_str("ENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n");
        text
    }

    /// Every chunk's place and length, the same walked in order, backwards and by
    /// index.
    fn places(doc: &SyntaxDocument) -> Vec<(usize, usize, bool, usize)> {
        let place = |c: Placed| (c.start, c.first_line, c.starts_line, c.len());
        let chunks = doc.chunks();
        let walked: Vec<_> = chunks.iter().map(place).collect();
        let mut backwards: Vec<_> = chunks.iter().rev().map(place).collect();
        backwards.reverse();
        assert_eq!(walked, backwards);
        let indexed: Vec<_> = (0..chunks.len()).map(|i| place(chunks.at(i))).collect();
        assert_eq!(walked, indexed);
        let from_70: Vec<_> = chunks.range(70..chunks.len()).map(place).collect();
        assert_eq!(walked[70.min(walked.len())..], from_70[..]);
        walked
    }

    /// Which blocks `after` shares with `before`.
    fn shared(before: &SyntaxDocument, after: &SyntaxDocument) -> Vec<bool> {
        let blocks = before.chunks().len().div_ceil(BLOCK_LEN);
        let (b, a) = (before.chunks(), after.chunks());
        (0..blocks).map(|k| b.token(k).same(&a.token(k))).collect()
    }

    /// Edits `doc` at `rel` bytes into chunk `i`'s text and checks the places against
    /// a fresh parse; returns the version before.
    fn edit_in_chunk(doc: &mut SyntaxDocument, i: usize, find: &str, new: &str) -> SyntaxDocument {
        let before = doc.clone();
        let c = doc.chunks().at(i);
        let at = c.start + c.text().find(find).expect("text in the chunk");
        doc.edit(at, at + find.len(), new);
        assert_eq!(places(doc), places(&SyntaxDocument::parse(&doc.text())));
        before
    }

    /// Issue 47: an edit that changes a chunk's length (or line count) moves the
    /// later chunks by their blocks' bases, so the version after it shares every
    /// block but the edited one with the version before.
    #[test]
    fn a_length_changing_edit_copies_the_edited_block_only() {
        let mut doc = SyntaxDocument::parse(&computations(300));
        let blocks = doc.chunks().len().div_ceil(BLOCK_LEN);
        assert!(blocks >= 4, "{blocks} blocks");
        let all_but = |k: usize| (0..blocks).map(|b| b != k).collect::<Vec<_>>();
        // A digit inserted, then deleted, in a body in block 1.
        let before = edit_in_chunk(&mut doc, 70, "%r =", "%r7 =");
        assert_eq!(shared(&before, &doc), all_but(1));
        let before = edit_in_chunk(&mut doc, 70, "%r7 =", "%r =");
        assert_eq!(shared(&before, &doc), all_but(1));
        // A line added (a resplit that keeps the number of chunks).
        let before = edit_in_chunk(&mut doc, 130, "  ROOT", "\n  ROOT");
        assert_eq!(shared(&before, &doc), all_but(2));
        // The last chunk of a block: the next block moves by its base alone.
        let before = edit_in_chunk(&mut doc, 2 * BLOCK_LEN - 1, "%r =", "%rr =");
        assert_eq!(shared(&before, &doc), all_but(1));
    }

    /// An edit that adds or removes chunks rebuilds the blocks; places stay right
    /// through the rebuild and the edits after it.
    #[test]
    fn places_hold_across_edits_that_add_and_remove_chunks() {
        let mut doc = SyntaxDocument::parse(&computations(200));
        let count = doc.chunks().len();
        edit_in_chunk(
            &mut doc,
            100,
            "}\n",
            "}\n\n%added {\n  ROOT %a = f32[] constant(1)\n}\n",
        );
        assert_eq!(doc.chunks().len(), count + 1);
        edit_in_chunk(&mut doc, 150, "%r =", "%longer_name =");
        edit_in_chunk(&mut doc, 10, "negate", "abs");
        let c = doc.chunks().at(101);
        doc.edit(c.start, c.range().end, "");
        assert_eq!(doc.chunks().len(), count);
        assert_eq!(places(&doc), places(&SyntaxDocument::parse(&doc.text())));
        edit_in_chunk(&mut doc, 180, "(%p)", "(%p)\n  %z = f32[] negate(%r)");
    }
}
