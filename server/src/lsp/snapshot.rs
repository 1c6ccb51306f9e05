//! Immutable per-version views of a document, handed to request handlers and to the
//! diagnostics worker so that they never block (or observe) a later edit.
//!
//! A snapshot is cheap to make: the rope is a persistent tree shared with the live
//! document. Everything derived from the text is computed at most once per snapshot.

use ropey::Rope;
use tower_lsp_server::ls_types::{Diagnostic, Uri};

use super::position::PositionEncoding;

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
}

impl Snapshot {
    pub fn new(uri: Uri, version: i32, sequence: u64, rope: Rope) -> Self {
        Self {
            uri,
            version,
            sequence,
            rope,
        }
    }

    /// The full text (allocates; the library works on `&str`).
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// Syntax and semantic diagnostics of this version.
    pub fn diagnostics(&self, _encoding: PositionEncoding) -> Vec<Diagnostic> {
        // Wired to the syntax and model layers as they land on main.
        Vec::new()
    }
}
