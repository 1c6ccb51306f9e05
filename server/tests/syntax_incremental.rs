//! Incremental parsing: random edit sequences (insert, delete, replace at random
//! byte offsets, also inside multi-byte UTF-8) must leave exactly the trees a fresh
//! parse of the resulting text gives, both through `SyntaxDocument::edit` (chunks
//! re-split and reparsed) and through raw `Tree::edit` + reparse of one tree.

use hlo_lsp::syntax::{new_parser, SyntaxDocument};
use proptest::prelude::*;
use tree_sitter::{InputEdit, Point, Tree};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

fn base_texts() -> Vec<String> {
    let mut texts = vec![
        "// RUN: x — ünïcödé\nHloModule m, is_scheduled=true\n\nFileNames\n1 \"/tmp/é.py\"\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1), metadata={op_name=\"日本語\"}\n  ROOT %s = f32[] add(%x, %y)\n}\n\n// -----\n\nENTRY e {\n  p = f32[8]{0} parameter(0), sharding={replicated}\n  c = f32[] constant(-inf)\n  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=%add, backend_config={\"k\":\"}\"}\n}\n"
            .to_string(),
    ];
    for f in [
        "samples/xla/xla__backends__gpu__tests__pdl.hlo",
        "jax/softmax.after.hlo",
        "jax/scatter.before.hlo",
    ] {
        texts.push(std::fs::read_to_string(format!("{DATA}/{f}")).expect("test data"));
    }
    texts
}

const SNIPPETS: &[&str] = &[
    "",
    "x",
    "%",
    " ",
    "\n",
    "{",
    "}",
    "(",
    ")",
    ",",
    "=",
    "\"",
    "\\",
    "/",
    "*",
    "é",
    "日本",
    "🙂",
    "// -----\n",
    "ENTRY ",
    "ROOT ",
    "f32[2]{0} ",
    "  y = f32[] add(a, b)\n",
    "/*index=5*/",
    "\nf {\n",
    "HloModule n\n",
    "}\n\ng (p: f32[]) -> f32[] {\n",
    "metadata={op_name=\"a{\"}",
    "FileNames\n1 \"z\"\n",
];

#[derive(Debug, Clone)]
struct RandomEdit {
    /// Position and removed length as fractions of the text, so they scale with it.
    at: f64,
    remove: usize,
    insert: &'static str,
}

fn edit_strategy() -> impl Strategy<Value = RandomEdit> {
    (
        0.0..=1.0f64,
        prop_oneof![Just(0usize), 0..4usize, 0..40usize],
        prop::sample::select(SNIPPETS),
    )
        .prop_map(|(at, remove, insert)| RandomEdit { at, remove, insert })
}

/// Byte offsets for an edit: any byte (maybe inside a UTF-8 sequence) as the
/// document receives it, and the char-boundary range it must act on.
fn offsets(text: &str, e: &RandomEdit) -> ((usize, usize), (usize, usize)) {
    let start = ((text.len() as f64) * e.at) as usize;
    let end = (start + e.remove).min(text.len());
    let (mut s, mut t) = (start.min(text.len()), end);
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    while !text.is_char_boundary(t) {
        t += 1;
    }
    ((start, end), (s, t))
}

/// Every node (named or not) with its byte range and flags, in order.
fn dump(tree: &Tree) -> Vec<(String, usize, usize, bool, bool)> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let n = cursor.node();
        out.push((
            n.kind().to_string(),
            n.start_byte(),
            n.end_byte(),
            n.is_missing(),
            n.is_error(),
        ));
        if cursor.goto_first_child() {
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

/// Chunks, their places, outlines, trees, errors and line index equal a fresh parse.
fn assert_same_as_fresh(doc: &SyntaxDocument) -> Result<(), TestCaseError> {
    let text = doc.text();
    let fresh = SyntaxDocument::parse(&text);
    let places = |d: &SyntaxDocument| -> Vec<_> {
        d.chunks()
            .iter()
            .map(|c| {
                (
                    c.range(),
                    c.kind(),
                    c.first_line,
                    c.starts_line,
                    c.outline().clone(),
                )
            })
            .collect()
    };
    prop_assert_eq!(
        places(doc),
        places(&fresh),
        "chunks differ for text {:?}",
        text
    );
    for (a, b) in doc.chunks().iter().zip(fresh.chunks()) {
        prop_assert_eq!(
            dump(&a.tree()),
            dump(&b.tree()),
            "tree of chunk {:?} differs",
            a.text()
        );
    }
    prop_assert_eq!(doc.syntax_errors(), fresh.syntax_errors());
    prop_assert_eq!(doc.line_count(), fresh.line_count());
    for line in 0..=fresh.line_count() {
        prop_assert_eq!(
            doc.line_start(line),
            fresh.line_start(line),
            "line {}",
            line
        );
        prop_assert_eq!(doc.line_text(line), fresh.line_text(line), "line {}", line);
    }
    Ok(())
}

fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let col = byte
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
    Point { row, column: col }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn document_edits_match_a_fresh_parse(
        which in 0..4usize,
        edits in prop::collection::vec(edit_strategy(), 1..8),
    ) {
        let base = &base_texts()[which];
        let mut doc = SyntaxDocument::parse(base);
        let mut model = base.clone();
        for e in &edits {
            let ((start, end), (s, t)) = offsets(&model, e);
            doc.edit(start, end, e.insert);
            model.replace_range(s..t, e.insert);
            prop_assert_eq!(doc.text(), model.as_str());
            assert_same_as_fresh(&doc)?;
        }
    }

    #[test]
    fn tree_edit_and_reparse_match_a_fresh_parse(
        which in 0..4usize,
        edits in prop::collection::vec(edit_strategy(), 1..8),
    ) {
        let mut text = base_texts()[which].clone();
        let mut parser = new_parser();
        let mut tree = parser.parse(&text, None).expect("tree");
        for e in &edits {
            let (_, (s, t)) = offsets(&text, e);
            let start_position = point_at(&text, s);
            let old_end_position = point_at(&text, t);
            text.replace_range(s..t, e.insert);
            let new_end = s + e.insert.len();
            tree.edit(&InputEdit {
                start_byte: s,
                old_end_byte: t,
                new_end_byte: new_end,
                start_position,
                old_end_position,
                new_end_position: point_at(&text, new_end),
            });
            tree = parser.parse(&text, Some(&tree)).expect("tree");
            let fresh = parser.parse(&text, None).expect("tree");
            // Tree-sitter guarantees the same tree for text without errors; with errors
            // its recovery depends on the old tree (ERROR nodes may be cut differently),
            // which is why `SyntaxDocument` reparses a broken chunk afresh and the test
            // above demands identical trees for every text.
            if fresh.root_node().has_error() {
                prop_assert!(tree.root_node().has_error(), "text {:?}", text);
            } else {
                prop_assert_eq!(dump(&tree), dump(&fresh), "text {:?}", text);
            }
        }
    }
}

#[test]
fn one_character_edit_in_a_body_reparses_to_the_fresh_tree() {
    let text = std::fs::read_to_string(format!("{DATA}/jax/layer_norm.after.hlo")).unwrap();
    let mut doc = SyntaxDocument::parse(&text);
    let at = text.find("%param_0").unwrap() + 3;
    let before: Vec<_> = doc.chunks().iter().map(|c| c.chunk.clone()).collect();
    doc.edit(at, at + 1, "Q");
    assert!(doc.text()[at - 3..].starts_with("%paQam_0"));
    // Only the chunk holding the edit is new; it keeps its tree for the next edit.
    let changed: Vec<_> = before
        .iter()
        .zip(doc.chunks())
        .filter(|(a, b)| !std::sync::Arc::ptr_eq(a, b.chunk))
        .map(|(_, b)| b)
        .collect();
    assert_eq!(changed.len(), 1);
    assert!(changed[0].kept_tree().is_some());
    assert_same_as_fresh(&doc).unwrap();
    assert!(doc.syntax_errors().is_empty());
}

/// Found by the fuzz target `check`: deleting `\u{fffd}=` from garbage lines must
/// leave the chunks a fresh split of the result gives.
#[test]
fn deleting_an_equals_sign_from_garbage_splits_as_fresh() {
    let text =
        "Hlo\n\u{fffd}{\n \u{10}), \u{fffd}\u{fffd}=o33=3,\n 3\u{1}\u{0}\u{fffd}\u{fffd}3=3=3";
    let mut doc = SyntaxDocument::parse(text);
    let at = text.find("\u{fffd}=").unwrap();
    doc.edit(at, at + "\u{fffd}=".len(), "");
    assert_same_as_fresh(&doc).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Several edits inside one chunk's body at once (`edit_within_chunk`, what a
    /// priority-fusion run makes each round) leave the chunks and trees a fresh parse
    /// gives; edits it declines change nothing.
    #[test]
    fn edits_within_one_chunk_match_a_fresh_parse(
        which in 0..4usize,
        chunk in 0.0..1.0f64,
        edits in prop::collection::vec(edit_strategy(), 1..6),
    ) {
        let base = &base_texts()[which];
        let mut doc = SyntaxDocument::parse(base);
        // Keep a tree as an edited chunk would.
        let i = ((doc.chunks().len() as f64) * chunk) as usize % doc.chunks().len();
        let range = doc.chunks().at(i).range();
        doc.chunks().at(i).keep_tree();
        let mut spots: Vec<(usize, usize, &str)> = edits
            .iter()
            .map(|e| {
                let start = range.start + ((range.len() as f64) * e.at) as usize;
                let start = start.min(range.end);
                (start, (start + e.remove).min(range.end), e.insert)
            })
            .collect();
        spots.sort();
        let mut ranges: Vec<(std::ops::Range<usize>, String)> = vec![];
        let mut last_end = 0;
        for (s, t, insert) in spots {
            if s < last_end || !base.is_char_boundary(s) || !base.is_char_boundary(t) {
                continue;
            }
            ranges.push((s..t, insert.to_string()));
            last_end = t;
        }
        let mut model = base.clone();
        for (r, t) in ranges.iter().rev() {
            model.replace_range(r.clone(), t);
        }
        match doc.edit_within_chunk(&ranges) {
            Some(_) => prop_assert_eq!(doc.text(), model.as_str()),
            None => prop_assert_eq!(doc.text(), base.as_str()),
        }
        assert_same_as_fresh(&doc)?;
    }
}

/// A module of `n` computations of varied sizes: several blocks of chunks (64 a block).
fn many_computations(n: usize) -> String {
    let mut text = String::from("HloModule many\n\n");
    for k in 0..n {
        text.push_str(&format!(
            "%c{k} (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n"
        ));
        for j in 0..k % 5 {
            text.push_str(&format!("  %n{j} = f32[4]{{0}} negate(%p)\n"));
        }
        text.push_str("  ROOT %r = f32[4]{0} abs(%p)\n}\n\n");
    }
    text.push_str("ENTRY %e (p: f32[4]) -> f32[4] {\n  ROOT %p = f32[4]{0} parameter(0)\n}\n");
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Issue 47: later chunks move by their blocks' bases. Random edits (most change a
    /// chunk's length or line count, some the number of chunks) anywhere in a module
    /// of several blocks leave every chunk at the place (start, line, whether it
    /// starts its line) a fresh parse of the edited text gives.
    #[test]
    fn places_after_edits_across_blocks_match_a_fresh_parse(
        edits in prop::collection::vec(edit_strategy(), 1..12),
    ) {
        let base = many_computations(300);
        let mut doc = SyntaxDocument::parse(&base);
        prop_assert!(doc.chunks().len() > 4 * 64);
        let mut model = base.clone();
        let places = |d: &SyntaxDocument| -> Vec<_> {
            d.chunks()
                .iter()
                .map(|c| (c.range(), c.kind(), c.first_line, c.starts_line))
                .collect()
        };
        for e in &edits {
            let ((start, end), (s, t)) = offsets(&model, e);
            doc.edit(start, end, e.insert);
            model.replace_range(s..t, e.insert);
            prop_assert_eq!(doc.text(), model.as_str());
            let fresh = SyntaxDocument::parse(&model);
            prop_assert_eq!(places(&doc), places(&fresh));
            prop_assert_eq!(doc.line_count(), fresh.line_count());
            for line in (0..=fresh.line_count()).step_by(37) {
                prop_assert_eq!(doc.line_start(line), fresh.line_start(line), "line {}", line);
            }
            for byte in (0..=model.len()).step_by(997) {
                prop_assert_eq!(doc.line_of(byte), fresh.line_of(byte), "byte {}", byte);
                prop_assert_eq!(doc.chunk_index_at(byte), fresh.chunk_index_at(byte));
            }
        }
    }
}
