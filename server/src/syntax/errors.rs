//! Syntax errors from `ERROR` and `MISSING` nodes, with messages that say what
//! was expected where the surrounding nodes tell.

use std::ops::Range;

use tree_sitter::Node;

use super::Chunk;

/// A syntax error: where (document bytes) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub range: Range<usize>,
    pub message: String,
}

/// All errors in one chunk's tree, in order. Only subtrees with errors are walked.
pub(super) fn collect(chunk: &Chunk, doc_text: &str) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    let mut cursor = chunk.tree.walk();
    loop {
        let node = cursor.node();
        let descend = if node.is_error() || node.is_missing() {
            out.push(SyntaxError {
                range: chunk.abs_range(node),
                message: describe(chunk, doc_text, node),
            });
            false
        } else {
            node.has_error()
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

fn describe(chunk: &Chunk, doc_text: &str, node: Node) -> String {
    if node.is_missing() {
        let what = if node.is_named() {
            node.kind().replace('_', " ")
        } else {
            format!("'{}'", node.kind())
        };
        return format!("expected {what}{}", context(chunk, doc_text, node));
    }
    let text = chunk.node_text(doc_text, node);
    // What came just before the point where parsing failed: the ERROR's own last
    // child (tree-sitter often wraps the partial instruction) or its left sibling.
    let last_inside = node.child(node.child_count().saturating_sub(1));
    for prev in [last_inside, node.prev_sibling()].into_iter().flatten() {
        let prev_text = snippet(chunk.node_text(doc_text, prev));
        match prev.kind() {
            "opcode" => return format!("expected operand list after opcode '{prev_text}'"),
            "=" if node.parent().is_some_and(|p| p.kind() == "instruction") => {
                return format!(
                    "expected shape and opcode{}",
                    context(chunk, doc_text, node)
                );
            }
            "=" => {
                return format!(
                    "expected a value after '='{}",
                    context(chunk, doc_text, node)
                )
            }
            "attribute_name" => return format!("expected '=' after attribute name '{prev_text}'"),
            _ => {}
        }
    }
    if text.trim().is_empty() {
        return format!("syntax error{}", context(chunk, doc_text, node));
    }
    format!(
        "unexpected '{}'{}",
        snippet(text),
        context(chunk, doc_text, node)
    )
}

/// ` in instruction 'x'` / ` in computation 'c'`, from the nearest named ancestor.
fn context(chunk: &Chunk, doc_text: &str, node: Node) -> String {
    let mut cur = node.parent();
    while let Some(n) = cur {
        let label = match n.kind() {
            "instruction" => "instruction",
            "computation" => "computation",
            "module_header" => "module header",
            "nested_instruction" => "nested instruction",
            _ => {
                cur = n.parent();
                continue;
            }
        };
        return match n.child_by_field_name("name") {
            Some(name) => format!(" in {label} '{}'", snippet(chunk.node_text(doc_text, name))),
            None => format!(" in {label}"),
        };
    }
    String::new()
}

/// The first line of `text`, at most 40 characters.
fn snippet(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut s: String = line.chars().take(40).collect();
    if line.chars().count() > 40 || text.trim().lines().nth(1).is_some() {
        s.push('…');
    }
    s
}
