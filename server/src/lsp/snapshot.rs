//! Immutable per-version views of a document, handed to request handlers and to the
//! diagnostics worker so that they never block (or observe) a later edit.
//!
//! A snapshot is cheap to make: the rope is a persistent tree shared with the live
//! document and the syntax trees are reference counted. Everything derived from the
//! text (the HLO model, diagnostics) is computed at most once per snapshot, on first
//! use, by whichever request needs it first.

use std::sync::{Arc, OnceLock};

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range, Uri};

use super::position::{self, PositionEncoding};
use crate::model::{self, HloFile};
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
    pub rope: Rope,
    pub syntax: Arc<SyntaxDocument>,
    model: OnceLock<Arc<HloFile>>,
}

impl Snapshot {
    pub fn new(
        uri: Uri,
        version: i32,
        sequence: u64,
        rope: Rope,
        syntax: Arc<SyntaxDocument>,
    ) -> Self {
        Self {
            uri,
            version,
            sequence,
            rope,
            syntax,
            model: OnceLock::new(),
        }
    }

    /// The full text (the syntax layer's copy, identical to the rope's).
    pub fn text(&self) -> &str {
        self.syntax.text()
    }

    /// The typed HLO model of this version (built once).
    pub fn model(&self) -> &Arc<HloFile> {
        self.model
            .get_or_init(|| Arc::new(model::build::build(&self.syntax)))
    }

    /// Byte offset of an LSP position; `None` for a line past the end.
    pub fn offset(&self, position: Position, encoding: PositionEncoding) -> Option<usize> {
        position::to_offset(&self.rope, position, encoding).ok()
    }

    /// LSP range of a byte range.
    pub fn range(&self, bytes: std::ops::Range<usize>, encoding: PositionEncoding) -> Range {
        position::to_range(&self.rope, bytes, encoding)
    }
}
