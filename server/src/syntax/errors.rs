//! Syntax errors from `ERROR` and `MISSING` nodes, with messages that say what
//! was expected where the surrounding nodes tell.

use std::ops::Range;

use tree_sitter::{Node, Tree};

use super::outline::NameAt;

/// A syntax error: where (bytes of its chunk, or of the document once placed by
/// [`super::SyntaxDocument::syntax_errors`]) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub range: Range<usize>,
    pub message: String,
}

/// All errors in one chunk's tree (`text` is the chunk's text), in order, positions
/// relative to the chunk. Only subtrees with errors are walked, with a cursor that keeps
/// the path from the root: asking a node for its parent walks down from the root in
/// tree-sitter, which made deep trees quadratic.
pub(super) fn collect(tree: &Tree, text: &str) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    // The ancestors of the cursor's node, outermost first.
    let mut path: Vec<Node> = Vec::new();
    loop {
        let node = cursor.node();
        let descend = if node.is_error() || node.is_missing() {
            out.push(SyntaxError {
                range: node.byte_range(),
                message: describe(text, node, &path),
            });
            false
        } else {
            node.has_error()
        };
        if descend && cursor.goto_first_child() {
            path.push(node);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            path.pop();
        }
    }
}

/// A computation whose text ends before its closing `}` (a dump cut short, or a `}`
/// deleted): tree-sitter then fails on the whole computation and reports it from its
/// first line ("unexpected '%fused_computation.4 (...'"), where nothing is wrong.
/// Such errors, the ones covering the computation's name, give way to one at the
/// end of its text that says what is missing.
pub(super) fn unclosed_computation(text: &str, name: &NameAt, errors: &mut Vec<SyntaxError>) {
    if super::split::open_braces(text) == 0 {
        return;
    }
    let body = text.trim_end();
    let at = name.start as usize;
    errors.retain(|e| !(e.range.start <= at && at < e.range.end));
    let end = body.len();
    errors.push(SyntaxError {
        range: end..end,
        message: format!(
            "expected '}}' to close computation '{}': its text ends here",
            name.name
        ),
    });
}

fn node_text<'a>(text: &'a str, node: Node) -> &'a str {
    text.get(node.byte_range()).unwrap_or("")
}

/// What went wrong at `node`, whose ancestors are `path` (outermost first).
fn describe(text: &str, node: Node, path: &[Node]) -> String {
    if node.is_missing() {
        let what = if node.is_named() {
            node.kind().replace('_', " ")
        } else {
            format!("'{}'", node.kind())
        };
        return format!("expected {what}{}", context(text, path));
    }
    let own = node_text(text, node);
    // What came just before the point where parsing failed: the ERROR's own last
    // child (tree-sitter often wraps the partial instruction) or its left sibling.
    let last_inside = node.child(node.child_count().saturating_sub(1));
    let in_instruction = path.last().is_some_and(|p| p.kind() == "instruction");
    for prev in [last_inside, node.prev_sibling()].into_iter().flatten() {
        let prev_text = snippet(node_text(text, prev));
        match prev.kind() {
            "opcode" => return format!("expected operand list after opcode '{prev_text}'"),
            "=" if in_instruction => {
                return format!("expected shape and opcode{}", context(text, path));
            }
            "=" => return format!("expected a value after '='{}", context(text, path)),
            "attribute_name" => return format!("expected '=' after attribute name '{prev_text}'"),
            _ => {}
        }
    }
    if own.trim().is_empty() {
        return format!("syntax error{}", context(text, path));
    }
    if path.len() == 1 && starts_like_a_call(own) {
        // XLA reads a file that is no module as one instruction, `name = ...`.
        return format!(
            "expects '=' in instruction: a file that is one instruction reads \
             `name = shape opcode(...)` or `shape opcode(...)`, not '{}'",
            snippet(own)
        );
    }
    if let Some(at) = own.rfind("/*").filter(|&at| !own[at..].contains("*/")) {
        return format!("unterminated comment '{}'", snippet(&own[at..]));
    }
    format!("unexpected '{}'{}", snippet(own), context(text, path))
}

/// `multiply(...`: a word right before `(`, as an instruction without its `name =`.
fn starts_like_a_call(text: &str) -> bool {
    let text = text.trim_start();
    let word = text
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'%'))
        .count();
    word > 0 && text[word..].starts_with('(')
}

/// ` in instruction 'x'` / ` in computation 'c'`, from the nearest named ancestor.
fn context(text: &str, path: &[Node]) -> String {
    for n in path.iter().rev() {
        let label = match n.kind() {
            "instruction" => "instruction",
            "computation" => "computation",
            "module_header" => "module header",
            "nested_instruction" => "nested instruction",
            _ => continue,
        };
        return match n.child_by_field_name("name") {
            Some(name) => format!(" in {label} '{}'", snippet(node_text(text, name))),
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
