//! Parses arbitrary bytes, checks every node's range lies inside its parent's and
//! the input, then applies one edit derived from the input and reparses
//! incrementally, comparing with a fresh parse. Crashes, hangs (libFuzzer's
//! -timeout) and mismatches are findings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

fn check(node: Node, len: usize) {
    assert!(node.start_byte() <= node.end_byte() && node.end_byte() <= len);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        assert!(node.start_byte() <= child.start_byte() && child.end_byte() <= node.end_byte());
        check(child, len);
    }
}

fn point(text: &[u8], byte: usize) -> Point {
    let before = &text[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let col = byte - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    Point { row, column: col }
}

fn sexp(tree: &Tree) -> String {
    tree.root_node().to_sexp()
}

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_hlo::LANGUAGE.into()).unwrap();
    let Some(mut tree) = parser.parse(data, None) else { return };
    check(tree.root_node(), data.len());
    if data.len() < 4 {
        return;
    }
    // Edit: remove data[0] % 8 bytes at an offset chosen by data[1..3], insert "{\n".
    let at = (usize::from(data[1]) << 8 | usize::from(data[2])) % data.len();
    let old_end = (at + usize::from(data[0] % 8)).min(data.len());
    let mut edited = data[..at].to_vec();
    edited.extend_from_slice(b"{\n");
    edited.extend_from_slice(&data[old_end..]);
    tree.edit(&InputEdit {
        start_byte: at,
        old_end_byte: old_end,
        new_end_byte: at + 2,
        start_position: point(data, at),
        old_end_position: point(data, old_end),
        new_end_position: point(&edited, at + 2),
    });
    let Some(incremental) = parser.parse(&edited, Some(&tree)) else { return };
    let fresh = parser.parse(&edited, None).unwrap();
    check(incremental.root_node(), edited.len());
    assert_eq!(sexp(&incremental), sexp(&fresh));
});
