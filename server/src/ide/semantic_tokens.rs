//! Semantic tokens from the syntax trees: which bytes are an opcode, a shape, a
//! declaration of an instruction or computation, a reference, an attribute... The
//! server encodes them in the protocol's relative form (`lsp::semantic_tokens`).

use tree_sitter::Node;

use super::snapshot::HloSnapshot;
use crate::syntax::Placed;

/// What a token is; the server's legend lists the kinds in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TokenKind {
    Keyword,
    Comment,
    Function,
    Variable,
    Type,
    Property,
    EnumMember,
    String,
    Number,
    Namespace,
}

use TokenKind::*;

/// Modifier bit: the token declares its name.
pub const DECLARATION: u32 = 1;
/// Modifier bit: an opcode, one of XLA's built-in operations.
pub const DEFAULT_LIBRARY: u32 = 2;

/// A token in absolute byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub end: usize,
    pub kind: TokenKind,
    /// [`DECLARATION`] and [`DEFAULT_LIBRARY`] bits.
    pub modifiers: u32,
}

/// Classifies a node whose parent is of kind `parent`: `Some` for a token, `None`
/// to look at its children.
fn classify(node: Node, parent: &str) -> Option<(TokenKind, u32)> {
    Some(match node.kind() {
        "comment" => (Comment, 0),
        "opcode" => (Function, DEFAULT_LIBRARY),
        "shape" => (Type, 0),
        "attribute_name" => (Property, 0),
        "attribute_atom" | "boolean" => (EnumMember, 0),
        "string" => (String, 0),
        "number" | "literal" => (Number, 0),
        "entry" | "root" | "HloModule" | "table_kind" => (Keyword, 0),
        "identifier" if parent == "module_header" => (Namespace, DECLARATION),
        "name" => match parent {
            "instruction" | "parameter" => (Variable, DECLARATION),
            "computation" => (Function, DECLARATION),
            "computation_ref" | "computation_list" => (Function, 0),
            _ => (Variable, 0),
        },
        _ => return None,
    })
}

fn collect_chunk(chunk: &Placed, out: &mut Vec<Token>) {
    let tree = chunk.tree();
    let mut cursor = tree.walk();
    let mut descend = true;
    // The kinds of the cursor's ancestors: `Node::parent` searches from the root,
    // which made deep trees quadratic.
    let mut ancestors = Vec::new();
    loop {
        let node = cursor.node();
        if descend {
            let parent = ancestors.last().copied().unwrap_or("");
            if let Some((kind, modifiers)) = classify(node, parent) {
                let range = chunk.abs(node.byte_range());
                if !range.is_empty() {
                    out.push(Token {
                        start: range.start,
                        end: range.end,
                        kind,
                        modifiers,
                    });
                }
            } else if cursor.goto_first_child() {
                ancestors.push(node.kind());
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            return;
        }
        ancestors.pop();
        descend = false;
    }
}

/// Every token of the document, in text order.
pub fn tokens(snapshot: &HloSnapshot) -> Vec<Token> {
    tokens_in(snapshot, 0..snapshot.syntax().len())
}

/// The tokens that overlap `range` (document bytes), in text order: only the chunks
/// it covers are read (what an editor shows of a large dump).
pub fn tokens_in(snapshot: &HloSnapshot, range: std::ops::Range<usize>) -> Vec<Token> {
    let chunks = snapshot.syntax().chunks();
    let first = chunks
        .partition_point(|c| c.start + c.chunk.len() <= range.start)
        .min(chunks.len());
    let mut tokens = Vec::new();
    for chunk in chunks
        .range(first..chunks.len())
        .take_while(|c| c.start < range.end.max(range.start + 1))
    {
        collect_chunk(&chunk, &mut tokens);
    }
    tokens.retain(|t| t.start < range.end.max(range.start + 1) && t.end > range.start);
    tokens.sort_by_key(|t| t.start);
    tokens
}
