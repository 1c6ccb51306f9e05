//! Every query file an editor loads compiles against this grammar and captures something in
//! a real module: the queries shipped with the grammar (Neovim copies them as they are) and
//! Helix's renamed and hand-written ones (`editors/helix/queries/hlo`). A node type, field or
//! capture the grammar does not have makes `Query::new` fail, as it would in the editor; this
//! test needs no tree-sitter CLI and no editor.

use std::path::{Path, PathBuf};
use tree_sitter::{Parser, Query, QueryCursor, StreamingIterator};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A module with fused computations, parameters, attributes, layouts and a comment.
fn sample() -> String {
    let path = repo().join("editors/neovim/test/fixtures/transpose_fusion.hlo");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("// a comment\n{text}")
}

fn query_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "scm"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no queries in {}", dir.display());
    files
}

/// Compiles each query and counts its captures on the sample.
fn check_queries(dir: &Path) {
    let language = tree_sitter::Language::from(tree_sitter_hlo::LANGUAGE);
    let mut parser = Parser::new();
    parser.set_language(&language).unwrap();
    let text = sample();
    let tree = parser.parse(&text, None).unwrap();
    assert!(!tree.root_node().has_error(), "the sample does not parse");
    for file in query_files(dir) {
        let source = std::fs::read_to_string(&file).unwrap();
        let query = Query::new(&language, &source).unwrap_or_else(|e| {
            panic!(
                "{} does not compile against tree-sitter-hlo: {e}",
                file.display()
            )
        });
        let mut cursor = QueryCursor::new();
        let mut captures = cursor.captures(&query, tree.root_node(), text.as_bytes());
        let mut count = 0;
        while captures.next().is_some() {
            count += 1;
        }
        // Injections only match backend_config, which the sample lacks.
        let name = file.file_name().unwrap().to_string_lossy();
        if name != "injections.scm" {
            assert!(
                count > 0,
                "{} captures nothing in the sample",
                file.display()
            );
        }
    }
}

#[test]
fn grammar_queries_compile_and_capture() {
    check_queries(&repo().join("tree-sitter-hlo/queries"));
}

#[test]
fn helix_queries_compile_and_capture() {
    check_queries(&repo().join("editors/helix/queries/hlo"));
}
