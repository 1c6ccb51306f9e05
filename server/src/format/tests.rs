use super::{format, Style};

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

#[test]
fn comments_are_refused_not_dropped() {
    let text = "HloModule m\n\nENTRY e {\n  // why\n  ROOT p = f32[] parameter(0)\n}\n";
    let refusal = format(text, None).expect_err("refused");
    assert_eq!(refusal.offset, text.find("//").expect("a comment"));
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
