//! The computations a document's earlier versions printed exactly as written, kept
//! so that formatting the next version prints only what changed.
//!
//! Formatting a dump already in XLA's form prints every computation to find that
//! none changed: 1.4 s of printing on a 588 MiB dump, at every format-on-save. An
//! edit replaces the chunks it touches and shares every other chunk with the
//! version before, so a chunk that printed as written then prints as written now,
//! provided nothing outside it changes how it prints. Chunks are remembered and
//! skipped only when nothing outside them does: every name prints as written (no
//! module-wide renaming), the stack-frame tables are kept (no `stack_frame_id` is
//! renumbered), the module has no comments, and never for the entry computation.
//! A computation that prints as written has every shape written (XLA prints the
//! one it infers from a callee). What is left, the style and whether the module
//! is scheduled, is the [`Context`] the chunks are remembered under.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet as HashSet;

use super::Style;
use crate::syntax::Chunk;

/// The chunks known to print as written (see the module docs); shared by a
/// document's versions. A fresh one knows none.
#[derive(Debug, Default)]
pub struct Known {
    kept: Mutex<Option<Kept>>,
}

#[derive(Debug)]
struct Kept {
    context: Context,
    chunks: AsWritten,
}

/// What besides its own text decides how a remembered chunk prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    pub style: Style,
    pub scheduled: bool,
}

/// A set of chunks by identity: a chunk is immutable and an edit makes new ones,
/// so the same chunk is the same text. The set holds the chunks, so no address in
/// it is reused by another chunk.
#[derive(Debug, Default)]
pub struct AsWritten {
    addresses: HashSet<usize>,
    held: Vec<Arc<Chunk>>,
}

impl AsWritten {
    pub fn from_chunks(chunks: Vec<Arc<Chunk>>) -> AsWritten {
        AsWritten {
            addresses: chunks.iter().map(address).collect(),
            held: chunks,
        }
    }

    pub fn contains(&self, chunk: &Arc<Chunk>) -> bool {
        self.addresses.contains(&address(chunk))
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

fn address(chunk: &Arc<Chunk>) -> usize {
    Arc::as_ptr(chunk) as usize
}

impl Known {
    /// The chunks remembered under `context` (none under another), taken out while
    /// a formatting uses them; [`Self::keep`] puts the next set back.
    pub fn take(&self, context: Context) -> AsWritten {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.take() {
            Some(k) if k.context == context => k.chunks,
            _ => AsWritten::default(),
        }
    }

    /// Remembers `chunks` under `context`, in place of what was remembered.
    pub fn keep(&self, context: Context, chunks: AsWritten) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        *kept = Some(Kept { context, chunks });
    }

    /// How many chunks are remembered (under any context).
    pub fn len(&self) -> usize {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.as_ref().map_or(0, |k| k.chunks.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
