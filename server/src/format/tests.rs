use super::{format, format_with, Comments, Known, Style};

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
    let edits = super::edits(&doc, None, Some(at..at), &Known::default()).expect("formats");
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0].new_text, "  ROOT %n = f32[2,3]{1,0} negate(%p)\n");
}

/// The computations' names in printed order.
fn computation_names(printed: &str) -> Vec<&str> {
    printed
        .lines()
        .filter(|l| l.ends_with('{') && !l.starts_with(' '))
        .filter_map(|l| l.trim_start_matches("ENTRY ").split(' ').next())
        .collect()
}

const WHILE: &str = "HloModule m\n\ncond {\n  p = (s32[]) parameter(0)\n  \
     ROOT t = pred[] constant(true)\n}\n\nbody {\n  p = (s32[]) parameter(0)\n  \
     ROOT q = (s32[]) copy(p)\n}\n\nENTRY e {\n  a = s32[] constant(0)\n  \
     t = (s32[]) tuple(a)\n  ROOT w = (s32[]) while(t), condition=cond, body=body\n}\n";

/// XLA lists a while's body before its condition (`HloInstruction::CreateWhile`), so
/// its walk places the body first whatever order they are written in (what
/// jaxlib 0.10.2 prints for this module).
#[test]
fn a_while_body_is_printed_before_its_condition() {
    let out = format(WHILE, Some(Style::Short)).expect("formats");
    assert_eq!(computation_names(&out), ["%body", "%cond", "%e"]);
    assert_eq!(
        format(&out, Some(Style::Short)).as_deref(),
        Ok(out.as_str())
    );
}

/// jaxlib walks the entry's instructions as written and prints `%x, %a, %y, %b`:
/// `%x, %y, %a, %b` is no order XLA's walk gives, whatever the instruction order.
#[test]
fn an_order_xla_cannot_print_is_walked_as_written() {
    let text = "HloModule m\n\nx {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n\n\
        y {\n  p = f32[] parameter(0)\n  ROOT n = f32[] exponential(p)\n}\n\n\
        a {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=x\n}\n\n\
        b {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=y\n}\n\n\
        ENTRY e {\n  p = f32[] parameter(0)\n  ca = f32[] call(p), to_apply=a\n  \
        ROOT cb = f32[] call(ca), to_apply=b\n}\n";
    let out = format(text, Some(Style::Short)).expect("formats");
    assert_eq!(computation_names(&out), ["%x", "%a", "%y", "%b", "%e"]);
}

/// A dump's order comes from XLA's own instruction lists, not the printed order:
/// here `%fused` before `%add` (the fusion was made before the reduce). jaxlib's
/// re-parse would print `%add` first; the formatter keeps an order XLA can print.
#[test]
fn an_order_xla_can_print_is_kept() {
    let text = "HloModule m\n\nfused {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n\n\
        add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n\
        ENTRY e {\n  p = f32[4] parameter(0)\n  c = f32[] constant(0)\n  \
        r = f32[] reduce(p, c), dimensions={0}, to_apply=add\n  \
        f = f32[4] fusion(p), kind=kLoop, calls=fused\n  ROOT t = (f32[], f32[4]) tuple(r, f)\n}\n";
    let out = format(text, Some(Style::Short)).expect("formats");
    assert_eq!(computation_names(&out), ["%fused", "%add", "%e"]);
}

/// The attributes after a computation's closing brace are printed wherever they are
/// written: on its line, on the next one, after a one-line computation; a
/// computation without them is not parsed to find none.
#[test]
fn attributes_after_the_closing_brace_are_kept_wherever_written() {
    let body = "  ROOT p = f32[] parameter(0)";
    for text in [
        format!("HloModule m\n\nENTRY e {{\n{body}\n}}, execution_thread=\"t\"\n"),
        format!("HloModule m\n\nENTRY e {{\n{body}\n}}\n, execution_thread=\"t\"\n"),
        format!("HloModule m\n\nENTRY e {{ {body} }}, execution_thread=\"t\"\n"),
    ] {
        let out = format(&text, Some(Style::Short)).expect("formats");
        assert!(
            out.contains("}, execution_thread=\"t\""),
            "{text:?} -> {out}"
        );
    }
    // Commas in the body do not count: nothing follows the closing brace.
    assert!(!super::printer::may_have_attributes(
        "ENTRY e {\n  ROOT p = f32[] parameter(0), metadata={op_name=\"a,b\"}\n}\n"
    ));
    assert!(super::printer::may_have_attributes(
        "ENTRY e { ROOT p = f32[] parameter(0) }"
    ));
}

/// Range formatting of a file far from XLA's form edits the lines the range
/// touches and nothing else: the whole file's diff gives up there (one edit of
/// everything between its first and last change), which range formatting sent
/// whole, rewriting the file for a selected line.
#[test]
fn range_formatting_stays_in_the_range_where_the_whole_diff_gives_up() {
    let mut text = String::from("HloModule m\n");
    for k in 0..1200 {
        text += &format!("c{k} {{\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}}\n");
    }
    text += "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] call(x), to_apply=c7\n}\n";
    let doc = crate::model::Document::parse(&text);
    let whole = super::edits(&doc, Some(Style::Short), None, &Known::default()).expect("formats");
    assert!(
        whole.iter().any(|e| e.range.len() > text.len() / 2),
        "the whole file's diff is expected to give up on this file"
    );
    let line = text.find("c600 {").expect("c600") + "c600 {\n  p = f32[2] parameter(0)\n".len();
    let end = line + text[line..].find('\n').expect("a line");
    let edits = super::edits(
        &doc,
        Some(Style::Short),
        Some(line + 4..line + 6),
        &Known::default(),
    )
    .expect("formats");
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert!(
        edits[0].range.start >= line && edits[0].range.end <= end + 1,
        "{edits:?}"
    );
    assert!(
        edits[0].new_text.contains("f32[2]{0} negate(%p"),
        "{}",
        edits[0].new_text
    );
}

/// Range formatting keeps every comment of the computations it touches: applied to
/// each computation whole, the text keeps the comments full formatting keeps.
#[test]
fn range_formatting_keeps_the_comments_of_what_it_touches() {
    let doc = crate::model::Document::parse(COMMENTED);
    let file = doc.file();
    for (_, c) in file.all_computations() {
        let range = c.range();
        let edits = super::edits(&doc, Some(Style::Short), Some(range), &Known::default())
            .expect("formats");
        let mut text = COMMENTED.to_string();
        for e in edits.iter().rev() {
            text.replace_range(e.range.clone(), &e.new_text);
        }
        for comment in [
            "/*binary*/",
            "/* sum",
            "// root",
            "// nothing after",
            "/*zero*/",
        ] {
            assert!(
                text.contains(comment),
                "{comment} lost formatting {}:\n{text}",
                c.name
            );
        }
    }
}

/// A module printed in its written order: each changed computation, and each run
/// of blank lines between computations, edited on its own; a computation already
/// in XLA's form is not touched.
#[test]
fn whole_formatting_edits_only_what_differs_from_xla_form() {
    let canonical = "%c (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  \
                     ROOT %n = f32[2]{0} negate(%p)\n}";
    let text = format!(
        "HloModule m, entry_computation_layout={{(f32[2]{{0}})->f32[2]{{0}}}}\n\n{canonical}\n\n\n\n\
         ENTRY %e (x: f32[2]) -> f32[2] {{\n  %x = f32[2]{{0}} parameter(0)\n  \
         ROOT   %y = f32[2] call(%x), to_apply=%c\n}}\n"
    );
    let doc = crate::model::Document::parse(&text);
    let edits = super::edits(&doc, Some(Style::Short), None, &Known::default()).expect("formats");
    let want = format(&text, Some(Style::Short)).expect("formats");
    assert_eq!(apply(&text, &edits), want, "{edits:?}");
    let kept = text.find(canonical).expect("c")..text.find(canonical).expect("c") + canonical.len();
    assert!(
        edits
            .iter()
            .all(|e| e.range.end <= kept.start || e.range.start >= kept.end),
        "{edits:?}"
    );
    // The ROOT line, and the blank lines after `%c` and after ENTRY.
    assert_eq!(edits.len(), 3, "{edits:?}");
}

/// A module XLA prints in another order (a caller before its callee) is printed
/// whole and diffed: the edits still give the printed text.
#[test]
fn whole_formatting_of_a_module_xla_reorders_gives_the_printed_text() {
    let text = "HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n  \
                ROOT y = f32[2] call(x), to_apply=c\n}\n\n\
                c {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
    let doc = crate::model::Document::parse(text);
    let edits = super::edits(&doc, Some(Style::Short), None, &Known::default()).expect("formats");
    assert_eq!(
        apply(text, &edits),
        format(text, Some(Style::Short)).expect("formats")
    );
}

/// Three computations in XLA's form: two called ones and the entry.
const CALLED_TWICE: &str = "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n\
    %c1 (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%a)\n}\n\n\
    %c2 (b: f32[2]) -> f32[2] {\n  %b = f32[2]{0} parameter(0)\n  ROOT %m = f32[2]{0} negate(%b)\n}\n\n\
    ENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2]{0} parameter(0)\n  \
    %y = f32[2]{0} call(%x), to_apply=%c1\n  ROOT %z = f32[2]{0} call(%y), to_apply=%c2\n}\n\n";

/// The called computations are remembered as printed as written; the next
/// formatting of the same version skips them and still finds nothing to change.
#[test]
fn computations_in_xla_form_are_remembered_outside_the_entry() {
    assert_eq!(
        format(CALLED_TWICE, Some(Style::Short)).as_deref(),
        Ok(CALLED_TWICE)
    );
    let doc = crate::model::Document::parse(CALLED_TWICE);
    let known = Known::default();
    for _ in 0..2 {
        let edits = super::edits(&doc, Some(Style::Short), None, &known).expect("formats");
        assert_eq!(edits, vec![]);
        assert_eq!(known.len(), 2);
    }
}

/// An edit in one computation that changes how a remembered one prints (a name
/// XLA then renames there; another style) gives the edits a fresh formatting gives.
#[test]
fn a_remembered_computation_prints_again_when_what_decides_its_printing_changes() {
    let doc = crate::model::Document::parse(CALLED_TWICE);
    let known = Known::default();
    super::edits(&doc, Some(Style::Short), None, &known).expect("formats");
    // `%n` of c1 renamed `%m`: XLA keeps it and renames c2's `%m` `%m.1`.
    let at = CALLED_TWICE.find("%n = ").expect("%n") + 1;
    let (renamed, _) = doc.edited(at, at + 1, "m");
    let fresh = super::edits(&renamed, Some(Style::Short), None, &Known::default());
    let c2 = CALLED_TWICE.find("%c2 (").expect("c2");
    assert!(
        fresh
            .as_ref()
            .expect("formats")
            .iter()
            .any(|e| e.range.start > c2 && e.new_text.contains("%m.1")),
        "{fresh:?}"
    );
    assert_eq!(
        super::edits(&renamed, Some(Style::Short), None, &known),
        fresh
    );
    // The long form prints every operand's shape, in c1 and c2 too.
    let long = super::edits(&doc, Some(Style::Long), None, &known);
    assert_eq!(
        long,
        super::edits(&doc, Some(Style::Long), None, &Known::default())
    );
    assert!(long.expect("formats").len() >= 3);
}

/// Stack-frame tables XLA rebuilds renumber every computation's frame ids by the
/// order the computations use them: nothing is remembered then, not even a
/// computation that uses none and prints as written.
#[test]
fn nothing_is_remembered_while_the_frame_tables_are_rebuilt() {
    let text = "HloModule m\n\n\
        FileNames\n1 \"a.py\"\n2 \"b.py\"\n\n\
        FunctionNames\n1 \"f\"\n\n\
        FileLocations\n\
        1 {file_name_id=2 function_name_id=1 line=1 end_line=1 column=2 end_column=3}\n\
        2 {file_name_id=1 function_name_id=1 line=5 end_line=5 column=2 end_column=24}\n\n\
        StackFrames\n1 {file_location_id=2 parent_frame_id=1}\n2 {file_location_id=1 parent_frame_id=1}\n\n\
        %c1 (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n  \
        ROOT %n = f32[2]{0} negate(%a), metadata={op_name=\"n\"}\n}\n\n\
        ENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2]{0} parameter(0)\n  \
        ROOT %y = f32[2]{0} call(%x), to_apply=%c1, metadata={op_name=\"y\" stack_frame_id=1}\n}\n\n";
    let doc = crate::model::Document::parse(text);
    let known = Known::default();
    let edits = super::edits(&doc, Some(Style::Short), None, &known).expect("formats");
    assert!(
        edits
            .iter()
            .any(|e| e.new_text.contains("file_location_id=")),
        "the tables are expected to be rebuilt: {edits:?}"
    );
    assert_eq!(known.len(), 0);
}
