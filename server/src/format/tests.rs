use super::{format, format_with, Comments, Style};

const SHORT: &str =
    "HloModule m\n\nENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n}\n";

#[test]
fn a_hand_written_module_gets_xla_names_layouts_and_signature() {
    let want = "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n\
                ENTRY %e (p: f32[2,3]) -> f32[2,3] {\n  %p = f32[2,3]{1,0} parameter(0)\n  \
                ROOT %n = f32[2,3]{1,0} negate(%p)\n}\n\n";
    assert_eq!(format(SHORT, Some(Style::Short)).as_deref(), Ok(want));
}

#[test]
fn the_long_form_prints_operand_shapes() {
    let out = format(SHORT, Some(Style::Long)).expect("formats");
    assert!(out.contains("negate(f32[2,3]{1,0} %p)"), "{out}");
}

/// A module with a comment in each place one is written: above a computation, in
/// its header line, above an instruction, inside one and after it, above and after
/// the closing brace, at the end.
const COMMENTED: &str = "HloModule m\n\n// the adder\nadd /*binary*/ {\n  x = f32[] parameter(0)\n  \
     y = f32[] parameter(1)\n  /* sum\n     of both */\n  ROOT s = f32[] add(x, y) // root\n  \
     // nothing after\n} // add\n\nENTRY e {\n  p = f32[4] parameter(0)\n  \
     c = f32[] constant(0 /*zero*/)\n  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=add\n}\n\
     // the end\n";

#[test]
fn comments_stay_beside_what_they_were_written_beside() {
    let out = format(COMMENTED, Some(Style::Short)).expect("formats");
    let want = "HloModule m, entry_computation_layout={(f32[4]{0})->f32[]}\n\n\
                // the adder\n/*binary*/\n%add (x: f32[], y: f32[]) -> f32[] {\n  \
                %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  /* sum\n     of both */\n  \
                ROOT %s = f32[] add(%x, %y) // root\n  // nothing after\n} // add\n\n\
                ENTRY %e (p: f32[4]) -> f32[] {\n  %p = f32[4]{0} parameter(0)\n  \
                %c = f32[] constant(0) /*zero*/\n  \
                ROOT %r = f32[] reduce(%p, %c), dimensions={0}, to_apply=%add\n}\n\n// the end\n";
    assert_eq!(out, want);
    // Formatting again moves nothing.
    assert_eq!(format(&out, Some(Style::Short)).as_deref(), Ok(want));
}

#[test]
fn comments_follow_their_instruction_when_xla_reorders_it() {
    let text = "HloModule m\n\nENTRY e {\n  // the constant\n  c = f32[] constant(1)\n  \
                p = f32[] parameter(0)\n  ROOT a = f32[] add(p, c)\n}\n";
    let out = format(text, Some(Style::Short)).expect("formats");
    assert!(
        out.contains("  %p = f32[] parameter(0)\n  // the constant\n  %c = f32[] constant(1)\n"),
        "{out}"
    );
}

#[test]
fn comparing_with_xla_drops_comments_as_it_does() {
    let out = format_with(COMMENTED, Some(Style::Short), Comments::Drop).expect("formats");
    let bare = format(
        "HloModule m\n\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  \
         ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  p = f32[4] parameter(0)\n  \
         c = f32[] constant(0)\n  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=add\n}\n",
        Some(Style::Short),
    )
    .expect("formats");
    assert_eq!(out, bare);
}

#[test]
fn a_refusal_in_commented_text_points_into_the_written_text() {
    let text = "HloModule m\n\nENTRY e {\n  /* a comment */ p = f32[] parameter(0)\n  ROOT = \n}\n";
    let refusal = format(text, None).expect_err("a syntax error");
    assert!(
        refusal.offset >= text.find("ROOT").expect("ROOT"),
        "{refusal:?}"
    );
}

#[test]
fn the_comment_lines_a_file_starts_with_are_kept_above_the_module() {
    let lead = "// RUN: hlo-opt %s\n// what this module is\n\n";
    let out = format(&format!("{lead}{SHORT}"), Some(Style::Short)).expect("formats");
    assert_eq!(
        out,
        format!(
            "{lead}{}",
            format(SHORT, Some(Style::Short)).expect("formats")
        )
    );
}

#[test]
fn attributes_follow_xla_order() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  \
                ROOT b = f32[2,4] broadcast(p), metadata={op_name=\"x\"}, sharding={replicated}, dimensions={1}\n}\n";
    let out = format(text, None).expect("formats");
    assert!(
        out.contains(
            "broadcast(%p), dimensions={1}, sharding={replicated}, metadata={op_name=\"x\"}"
        ),
        "{out}"
    );
}

/// `old` with `edits` applied from the last, as an editor does.
fn apply(old: &str, edits: &[crate::model::TextEdit]) -> String {
    let mut out = old.to_string();
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    for e in sorted {
        out.replace_range(e.range.clone(), &e.new_text);
    }
    out
}

#[test]
fn line_edits_rebuild_the_new_text_and_touch_only_changed_lines() {
    let cases = [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb\nc\n", "a\nb\nc\n\n"),
        ("a\nb\n", "x\na\nb\ny\nz\n"),
        ("a\nb\nc", "c"),
        ("", "a\n"),
        ("a\n", ""),
    ];
    for (old, new) in cases {
        let edits = super::line_edits(old, new);
        assert_eq!(apply(old, &edits), new, "{old:?} -> {new:?}: {edits:?}");
    }
    let edits = super::line_edits("a\nb\nc\n", "a\nB\nc\n");
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].range, 2..4);
    // Lines added at the end go before the final line break, not past the last line.
    let edits = super::line_edits("a\n", "a\n\n");
    assert_eq!(edits[0].range, 1..1);
}

#[test]
fn range_edits_stay_inside_the_touched_instruction() {
    let doc = crate::model::Document::parse(SHORT);
    let at = SHORT.find("negate").expect("negate");
    let edits = super::edits(&doc, None, Some(at..at)).expect("formats");
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0].new_text, "  ROOT %n = f32[2,3]{1,0} negate(%p)\n");
}
