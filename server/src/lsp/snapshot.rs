//! A document's version as the server hands it to request handlers and to the
//! diagnostics worker: the library's [`ide::Snapshot`] with the client's URI and
//! version, so that a handler never blocks (or observes) a later edit.

use tower_lsp_server::ls_types::{Position, Range, Uri};

use super::position::{self, PositionEncoding};
use crate::ide;
use crate::syntax::SyntaxDocument;

/// The state of one document at one version.
#[derive(Debug)]
pub struct Snapshot {
    pub uri: Uri,
    /// The client's version number of this text.
    pub version: i32,
    /// Arrival number of the text-sync notification that produced this version; a
    /// request computed on this snapshot is stale once a later one has arrived.
    pub sequence: u64,
    /// What the library knows of this version, per language: handlers route on it.
    pub ide: ide::Snapshot,
}

impl Snapshot {
    pub fn new(uri: Uri, version: i32, sequence: u64, ide: ide::Snapshot) -> Self {
        Self {
            uri,
            version,
            sequence,
            ide,
        }
    }

    /// The chunks of this version.
    pub fn syntax(&self) -> &SyntaxDocument {
        self.ide.syntax()
    }

    /// The whole text (the `documentText` request).
    pub fn text(&self) -> &str {
        self.ide.text()
    }

    /// Byte offset of an LSP position; `None` for a line past the end.
    pub fn offset(&self, position: Position, encoding: PositionEncoding) -> Option<usize> {
        position::to_offset(self.syntax(), position, encoding).ok()
    }

    /// Byte range of an LSP range: a position past the text is the text's end (a
    /// range past the last line touches nothing, where it was the whole text), an
    /// end before the start is the start (ranges clients send for hints and
    /// formatting).
    pub fn byte_range(&self, range: Range, encoding: PositionEncoding) -> std::ops::Range<usize> {
        let start = position::to_offset_clamped(self.syntax(), range.start, encoding);
        let end = position::to_offset_clamped(self.syntax(), range.end, encoding).max(start);
        start..end
    }

    /// LSP range of a byte range.
    pub fn range(&self, bytes: std::ops::Range<usize>, encoding: PositionEncoding) -> Range {
        position::to_range(self.syntax(), bytes, encoding)
    }
}
