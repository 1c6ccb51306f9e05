//! Error recovery: a broken instruction yields a local error with a useful
//! message; the rest of its computation and of the module still parse.

use hlo_lsp::syntax::{line_col, SyntaxDocument};
use tree_sitter::Node;

const MODULE: &str = "HloModule m\n\nadd (x: f32[], y: f32[]) -> f32[] {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  BROKEN\n  b = f32[4]{0} negate(a)\n  ROOT c = f32[4]{0} add(a, b)\n}\n";

fn instruction_names(doc: &SyntaxDocument) -> Vec<String> {
    let mut names = Vec::new();
    for chunk in doc.chunks() {
        let tree = chunk.tree();
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "instruction" {
                let name = n
                    .child_by_field_name("name")
                    .expect("instruction has a name");
                names.push(chunk.text()[name.byte_range()].to_string());
            }
            let mut c = n.walk();
            let children: Vec<Node> = n.children(&mut c).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    names
}

#[test]
fn garbage_line_is_one_local_error() {
    let doc = SyntaxDocument::parse(MODULE);
    let errors = doc.syntax_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    // Tree-sitter may take `BROKEN` as the next instruction's name and flag `b`:
    // either way the error sits on those two lines and everything else parses.
    let (line, _) = line_col(MODULE, errors[0].range.start);
    assert!((11..=12).contains(&line), "{errors:?}");
    let names = instruction_names(&doc);
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(names[..4], ["x", "y", "s", "a"]);
    assert_eq!(names[5], "c");
}

#[test]
fn missing_operand_list_says_what_was_expected() {
    let text = MODULE
        .replace("BROKEN\n", "")
        .replace("negate(a)", "negate");
    let doc = SyntaxDocument::parse(&text);
    let errors = doc.syntax_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .message
            .contains("expected operand list after opcode 'negate'"),
        "{}",
        errors[0].message
    );
    assert_eq!(instruction_names(&doc), ["x", "y", "s", "a", "c"]);
}

#[test]
fn unclosed_operand_list_stays_in_its_computation() {
    let text = MODULE
        .replace("BROKEN\n", "")
        .replace("parameter(1)", "parameter(1");
    let doc = SyntaxDocument::parse(&text);
    let errors = doc.syntax_errors();
    assert!(!errors.is_empty());
    let add_end = text.find("ENTRY").unwrap();
    assert!(errors.iter().all(|e| e.range.end <= add_end), "{errors:?}");
    let names = instruction_names(&doc);
    assert!(
        names.ends_with(&["a".into(), "b".into(), "c".into()]),
        "{names:?}"
    );
}

#[test]
fn missing_closing_brace_does_not_swallow_the_next_computation() {
    let text = MODULE
        .replace("BROKEN\n", "")
        .replacen("}\n\nENTRY", "\n\nENTRY", 1);
    let doc = SyntaxDocument::parse(&text);
    assert!(!doc.syntax_errors().is_empty());
    let entry = doc
        .chunks()
        .iter()
        .find(|c| c.text().starts_with("ENTRY"))
        .expect("ENTRY chunk");
    let tree = entry.tree();
    assert!(
        !tree.root_node().has_error(),
        "{}",
        tree.root_node().to_sexp()
    );
}

#[test]
fn bad_text_never_panics_and_errors_have_messages() {
    for text in [
        "",
        "}",
        "{{{{",
        "HloModule",
        "ENTRY {",
        "a = b",
        "\"unterminated",
        "/* open",
        "f32[",
        "x (",
        "// -----",
    ] {
        let doc = SyntaxDocument::parse(text);
        for e in doc.syntax_errors() {
            assert!(!e.message.is_empty());
            assert!(e.range.start <= e.range.end && e.range.end <= text.len());
        }
    }
}

/// A dump cut short inside its last computation: the error says what is missing
/// where the text ends, not "unexpected '%e ...'" at the computation's first line.
#[test]
fn a_file_cut_inside_a_computation_says_its_brace_is_missing_where_it_ends() {
    let whole = MODULE.replace("  BROKEN\n", "");
    for cut in ["  ROOT c = f32[4]{0} add(a, b)\n", "add(a, b)\n", ", b)\n"] {
        let text = whole.trim_end().strip_suffix('}').unwrap();
        let text = text.strip_suffix(cut).unwrap();
        let doc = SyntaxDocument::parse(text);
        let errors = doc.syntax_errors();
        let last = errors.last().expect("an error");
        assert_eq!(
            last.message, "expected '}' to close computation 'e': its text ends here",
            "cut before {cut:?}: {errors:?}"
        );
        assert_eq!(last.range.start, text.trim_end().len(), "{errors:?}");
        let entry = text.find("ENTRY").unwrap();
        assert!(
            errors.iter().all(|e| e.range.start > entry),
            "an error at the computation's first line: {errors:?}"
        );
    }
}
