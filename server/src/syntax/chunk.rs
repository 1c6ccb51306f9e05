//! One top-level item of a document (module header, table, computation, separator):
//! its own text, its outline, and its tree while it is being edited or shown.
//!
//! A chunk is immutable and shared (`Arc`) by every version of the document whose
//! edits did not touch it, so what is derived from it (its tree, its outline, the model
//! built from it) is computed once. Trees cost several times the text, so a chunk keeps
//! its tree only when it was made by an edit (it is being worked on, and the next
//! keystroke reparses it incrementally) or when asked to ([`Chunk::keep_tree`]); other
//! chunks parse on demand, which takes microseconds for one computation.

use std::cell::RefCell;
use std::sync::Mutex;

use tree_sitter::{Node, Parser, Tree};

use super::outline::Outline;
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

/// One top-level item: its text and what is derived from that text alone. Positions
/// inside a chunk are relative to its start.
#[derive(Debug)]
pub struct Chunk {
    pub kind: ChunkKind,
    text: Box<str>,
    /// Names, `ENTRY` and the computations called, from a byte scan (no parse).
    outline: Outline,
    /// The parsed tree, while kept (see the module docs).
    tree: Mutex<Option<Tree>>,
    /// Start of each line after the first, relative to the chunk, for position lookups.
    line_starts: Box<[u32]>,
}

/// Where each line after the first starts in `text`, by the crate's one line-break
/// rule (`\n`, `\r\n`, a lone `\r`: [`super::line_index::line_break_ends`]).
fn line_starts(text: &str) -> Box<[u32]> {
    super::line_index::line_break_ends(text.as_bytes())
        .map(|i| i as u32)
        .collect()
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(super::new_parser());
}

/// Parses a chunk's text, reusing `old` (already edited) when given.
pub(super) fn parse_text(text: &str, old: Option<&Tree>) -> Tree {
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        // Without a timeout or cancellation flag tree-sitter always returns a tree.
        parser
            .parse(text, old)
            .expect("tree-sitter parse without timeout returns a tree")
    })
}

impl Chunk {
    /// A chunk of `text`, not parsed yet (its outline and line table are made now:
    /// both are byte scans, and chunks are made in parallel).
    pub fn new(kind: ChunkKind, text: &str) -> Chunk {
        Chunk {
            kind,
            outline: Outline::scan(kind, text),
            line_starts: line_starts(text),
            text: text.into(),
            tree: Mutex::new(None),
        }
    }

    /// A chunk that keeps `tree` (a parse of `text`).
    pub(super) fn with_tree(kind: ChunkKind, text: &str, tree: Tree) -> Chunk {
        let chunk = Chunk::new(kind, text);
        *chunk.tree.lock().unwrap_or_else(|e| e.into_inner()) = Some(tree);
        chunk
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn outline(&self) -> &Outline {
        &self.outline
    }

    /// The kept tree, if any (cheap: trees are reference counted).
    pub fn kept_tree(&self) -> Option<Tree> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The chunk's tree: the kept one, else a fresh parse that is not kept.
    pub fn tree(&self) -> Tree {
        self.kept_tree()
            .unwrap_or_else(|| parse_text(&self.text, None))
    }

    /// The chunk's tree, kept from now on (a chunk being shown or edited).
    pub fn keep_tree(&self) -> Tree {
        let mut kept = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        kept.get_or_insert_with(|| parse_text(&self.text, None))
            .clone()
    }

    /// Every `ERROR` and `MISSING` node of `tree` (a parse of this chunk), positions
    /// relative to the chunk.
    pub fn syntax_errors(&self, tree: &Tree) -> Vec<SyntaxError> {
        if !tree.root_node().has_error() {
            return Vec::new();
        }
        let mut errors = super::errors::collect(tree, &self.text);
        if self.kind == ChunkKind::Computation {
            if let Some(name) = &self.outline.name {
                super::errors::unclosed_computation(&self.text, name, &mut errors);
            }
        }
        errors
    }

    /// The top-level item node of `tree` (`module_header`, `computation`, ...), if
    /// the chunk parsed as one.
    pub fn item(tree: &Tree) -> Option<Node<'_>> {
        let root = tree.root_node();
        let mut cursor = root.walk();
        let item = root
            .named_children(&mut cursor)
            .find(|n| n.kind() != "comment");
        item
    }

    /// Number of line breaks in the chunk.
    pub fn newlines(&self) -> usize {
        self.line_starts().len()
    }

    /// Start (relative) of line `k` of the chunk (0 is the chunk's start).
    pub fn line_start(&self, k: usize) -> Option<usize> {
        match k {
            0 => Some(0),
            _ => self.line_starts().get(k - 1).map(|&s| s as usize),
        }
    }

    /// The line (0-based, within the chunk) holding relative byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts()
            .partition_point(|&s| s as usize <= offset)
    }

    fn line_starts(&self) -> &[u32] {
        &self.line_starts
    }

    /// Whether `other` breaks its lines at the same bytes.
    pub fn same_line_breaks(&self, other: &Chunk) -> bool {
        self.line_starts == other.line_starts
    }
}
