//! Every HLO file we ship as test data (XLA's own samples and the JAX dumps)
//! parses with zero ERROR/MISSING nodes, and its chunks tile the text.

use std::path::{Path, PathBuf};

use hlo_lsp::syntax::{Chunk, ChunkKind, SyntaxDocument};

fn hlo_files() -> Vec<PathBuf> {
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data"));
    let mut files = Vec::new();
    for dir in ["samples/xla", "jax", "jax/spmd"] {
        for entry in std::fs::read_dir(data.join(dir)).expect("test data folder exists") {
            let path = entry.expect("readable entry").path();
            if path.extension().is_some_and(|e| e == "hlo") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn samples_and_dumps_parse_without_errors() {
    let files = hlo_files();
    assert!(
        files.len() >= 25,
        "expected the XLA samples and JAX dumps, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("UTF-8 sample");
        let doc = SyntaxDocument::parse(&text);
        for e in doc.syntax_errors() {
            let (line, col) = hlo_lsp::syntax::line_col(&text, e.range.start);
            failures.push(format!("{}:{line}:{col}: {}", path.display(), e.message));
        }
    }
    assert!(
        failures.is_empty(),
        "syntax errors:\n{}",
        failures.join("\n")
    );
}

#[test]
fn chunks_tile_the_text_and_hold_the_item_they_claim() {
    for path in hlo_files() {
        let text = std::fs::read_to_string(&path).expect("UTF-8 sample");
        let doc = SyntaxDocument::parse(&text);
        let mut at = 0;
        for chunk in doc.chunks() {
            assert_eq!(
                chunk.range().start,
                at,
                "{}: gap or overlap",
                path.display()
            );
            at = chunk.range().end;
            let expected = match chunk.kind() {
                ChunkKind::Header => Some("module_header"),
                ChunkKind::Computation => Some("computation"),
                ChunkKind::Table => Some("table"),
                ChunkKind::Separator => Some("module_separator"),
                ChunkKind::Other => None,
            };
            let tree = chunk.tree();
            let item = Chunk::item(&tree).map(|n| n.kind());
            assert_eq!(
                item,
                expected,
                "{}: chunk {:?}",
                path.display(),
                chunk.text()
            );
            let root = tree.root_node();
            let mut cursor = root.walk();
            let items = root
                .named_children(&mut cursor)
                .filter(|n| n.kind() != "comment")
                .count();
            assert!(
                items <= 1,
                "{}: one item per chunk, got {items}",
                path.display()
            );
        }
        assert_eq!(
            at,
            text.len(),
            "{}: chunks end before the text",
            path.display()
        );
    }
}
