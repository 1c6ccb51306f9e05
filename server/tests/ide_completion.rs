//! Completion, signature help and the quick fixes of issue 48, as a user reads them:
//! each fixture is HLO (or StableHLO) text as typed, broken included, with `$0` at the
//! cursor; the answer of [`hlo_lsp::ide`] is compared with its snapshot (insta).
//!
//! To accept a deliberate change: `INSTA_UPDATE=always cargo test -p hlo-lsp --test
//! library ide_completion`, then read the diff.

use std::sync::Arc;

use hlo_lsp::checks::incremental::Checked;
use hlo_lsp::ide::completion::{self, Options};
use hlo_lsp::ide::{self, HloSnapshot, MlirSnapshot};
use hlo_lsp::model::{self, Opcode};

fn fixture(marked: &str) -> (String, usize) {
    let at = marked
        .find("$0")
        .expect("the fixture marks the cursor with $0");
    (marked.replacen("$0", "", 1), at)
}

fn snapshot(text: &str) -> ide::Snapshot {
    let document = Arc::new(model::Document::parse(text));
    if text.contains("func.func") {
        return ide::Snapshot::Mlir(MlirSnapshot::new(document));
    }
    let checked = Arc::new(Checked::new(&document));
    ide::Snapshot::Hlo(HloSnapshot::new(document, checked).with_file_name("fixture.hlo"))
}

/// The first `n` items at the marker: what they replace, then one line per item.
fn complete_with(marked: &str, n: usize, options: Options) -> String {
    let (text, at) = fixture(marked);
    let Some(answer) = completion::complete(&snapshot(&text), at, options) else {
        return "(no completion)".into();
    };
    let mut out = format!(
        "replaces {:?}{}\n",
        &text[answer.replace.clone()],
        if answer.incomplete {
            " (incomplete)"
        } else {
            ""
        }
    );
    for item in answer.items.iter().take(n) {
        out.push_str(&format!(
            "{} [{:?}] {} → {}{}\n",
            item.label,
            item.kind,
            item.detail.as_deref().unwrap_or("-"),
            item.insert,
            if item.snippet { " (snippet)" } else { "" }
        ));
    }
    out
}

fn complete(marked: &str, n: usize) -> String {
    complete_with(
        marked,
        n,
        Options {
            snippets: true,
            ..Options::default()
        },
    )
}

fn first_label(marked: &str) -> String {
    let (text, at) = fixture(marked);
    completion::complete(&snapshot(&text), at, Options::default())
        .and_then(|c| c.items.first().map(|i| i.label.clone()))
        .unwrap_or_default()
}

/// A fusion being written by hand, line by line.
const NEW_FUSION: &str = "HloModule m

%add_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

%fused_bias_add (p0: f32[8,128], p1: f32[128]) -> f32[8,128] {
  %p0 = f32[8,128]{1,0} parameter(0)
  %p1 = f32[128]{0} parameter(1)
  %broadcast.1 = f32[8,128]{1,0} broadcast(%p1), dimensions={1}
  ROOT %add.2 = f32[8,128]{1,0} add(%p0, %broadcast.1)
}

ENTRY %main (x: f32[8,128], b: f32[128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0)
  %b = f32[128]{0} parameter(1)
  $0
}
";

fn in_fusion(line: &str) -> String {
    NEW_FUSION.replace("$0", line)
}

#[test]
fn completion_of_an_opcode_ranks_by_the_name() {
    insta::assert_snapshot!(complete(&in_fusion("%fusion.3 = f32[8,128]{1,0} fu$0"), 4));
}

#[test]
fn completion_of_an_opcode_without_snippets_is_plain() {
    insta::assert_snapshot!(complete_with(
        &in_fusion("%broadcast.3 = f32[8,128]{1,0} $0"),
        3,
        Options {
            snippets: false,
            ..Options::default()
        }
    ));
}

#[test]
fn completion_of_an_opcode_reads_the_operands_and_attributes_after_it() {
    // No name to go by: one operand and `dimensions=` after it.
    assert_eq!(
        first_label(&in_fusion("%y = f32[8,128]{1,0} $0(%b), dimensions={1}")),
        "broadcast"
    );
    assert_eq!(
        first_label(&in_fusion("%y = f32[8,128]{1,0} $0(%x, %x), kind=kLoop")),
        "fusion"
    );
    assert_eq!(
        first_label(&in_fusion("%y = f32[8,128]{1,0} $0(0)")),
        "parameter"
    );
}

#[test]
fn completion_of_operands_in_scope() {
    insta::assert_snapshot!(complete(
        &in_fusion("%fusion.3 = f32[8,128]{1,0} fusion(%$0"),
        5
    ));
}

#[test]
fn completion_of_an_operand_prefers_the_written_shape() {
    // XLA's long form writes the operand's shape before its name.
    assert_eq!(
        first_label(&in_fusion("%n = f32[128]{0} negate(f32[128]{0} %$0")),
        "b"
    );
}

#[test]
fn completion_of_attributes_of_a_fusion() {
    insta::assert_snapshot!(complete(
        &in_fusion("%fusion.3 = f32[8,128]{1,0} fusion(%x, %b), $0"),
        5
    ));
}

#[test]
fn completion_of_an_attribute_name_reads_the_value_after_it() {
    assert_eq!(
        first_label(&in_fusion(
            "%fusion.3 = f32[8,128]{1,0} fusion(%x, %b), kind=kLoop, $0=%fused_bias_add"
        )),
        "calls"
    );
    assert_eq!(
        first_label(&in_fusion(
            "%fusion.3 = f32[8,128]{1,0} fusion(%x, %b), $0=kLoop, calls=%fused_bias_add"
        )),
        "kind"
    );
}

#[test]
fn completion_of_calls_puts_a_fitting_signature_first() {
    insta::assert_snapshot!(complete(
        &in_fusion("%fusion.3 = f32[8,128]{1,0} fusion(%x, %b), kind=kLoop, calls=$0"),
        3
    ));
}

#[test]
fn completion_of_to_apply_puts_a_scalar_reduction_first() {
    assert_eq!(
        first_label(&in_fusion(
            "%zero = f32[] constant(0)\n  %r = f32[8]{0} reduce(%x, %zero), dimensions={1}, to_apply=$0"
        )),
        "add_f32"
    );
}

#[test]
fn completion_of_fusion_kinds_and_directions() {
    insta::assert_snapshot!(complete(
        &in_fusion("%fusion.3 = f32[8,128]{1,0} fusion(%x, %b), kind=$0"),
        4
    ));
    assert_eq!(
        first_label(&in_fusion(
            "%c = pred[8,128]{1,0} compare(%x, %x), direction=$0"
        )),
        "EQ"
    );
}

#[test]
fn completion_of_element_types_and_layouts() {
    insta::assert_snapshot!(complete(&in_fusion("%y = $0"), 4));
    insta::assert_snapshot!(complete(&in_fusion("%y = f32[8,128]{$0"), 2));
}

#[test]
fn completion_of_custom_call_targets_seen() {
    let text = in_fusion(
        "%g = f32[8,8]{1,0} custom-call(%x, %x), custom_call_target=\"__cublas$gemm\"\n  %h = f32[8,8]{1,0} custom-call(%x, %x), custom_call_target=\"$0",
    );
    insta::assert_snapshot!(complete(&text, 3));
}

/// Targets another open document writes come after this document's and before
/// the ones XLA knows.
#[test]
fn completion_of_custom_call_targets_of_other_documents() {
    let text = in_fusion(
        "%g = f32[8,8]{1,0} custom-call(%x, %x), custom_call_target=\"__cublas$gemm\"\n  %h = f32[8,8]{1,0} custom-call(%x, %x), custom_call_target=\"$0",
    );
    let other = snapshot(&in_fusion(
        "%k = f32[8,8]{1,0} custom-call(%x), custom_call_target=\"my_kernel\"",
    ));
    let options = Options {
        snippets: true,
        workspace_targets: completion::custom_call_targets_written(&other).into(),
    };
    let (text, at) = fixture(&text);
    let labels: Vec<String> = completion::complete(&snapshot(&text), at, options)
        .map(|c| c.items.into_iter().take(3).map(|i| i.label).collect())
        .unwrap_or_default();
    assert_eq!(labels[..2], ["__cublas$gemm", "my_kernel"], "{labels:?}");
}

#[test]
fn completion_of_backend_config_keys() {
    assert!(complete(
        &in_fusion("%fusion.3 = f32[8,128]{1,0} fusion(%x), kind=kLoop, backend_config={\"$0"),
        30
    )
    .contains("operation_queue_id"));
}

#[test]
fn completion_survives_broken_text() {
    // Unclosed operand list, a stray brace above, a line with no shape.
    let text = in_fusion("%q = f32[8 {{\n  %z = f32[8,128]{1,0} add(%x, %$0");
    let answer = complete(&text, 3);
    assert!(answer.contains("x [Instruction]"), "{answer}");
    for cut in [
        "%",
        "%y",
        "%y =",
        "%y = f",
        "%y = f32[8",
        "%y = f32[8,128]{1,0} ",
        "%y = f32[8,128]{1,0} a(",
        "%y = f32[8,128]{1,0} add(%x,",
        "%y = f32[8,128]{1,0} add(%x), ",
        "%y = f32[8,128]{1,0} add(%x), metadata={op_name=\"",
    ] {
        // Never a panic; an answer or none.
        let _ = complete(&in_fusion(&format!("{cut}$0")), 1);
    }
}

#[test]
fn completion_of_stablehlo_ops_and_values() {
    let text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<4xf32>
  %1 = stablehlo.add %0, %$0
";
    insta::assert_snapshot!(complete(text, 3));
    let text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.ad$0\n";
    assert!(complete(text, 200).contains("stablehlo.add [MlirOp]"));
}

/// The signature help at the marker: the label with the active parameter in `«»`.
fn signature_at(marked: &str) -> String {
    let (text, at) = fixture(marked);
    let Some(help) = ide::signature_help::signature_help(&snapshot(&text), at) else {
        return "(no signature help)".into();
    };
    let s = &help.signature;
    match help.active.and_then(|a| s.parameters.get(a)) {
        Some(r) => format!(
            "{}«{}»{}",
            &s.label[..r.start],
            &s.label[r.clone()],
            &s.label[r.end..]
        ),
        None => s.label.clone(),
    }
}

#[test]
fn signature_help_follows_the_cursor() {
    insta::assert_snapshot!([
        signature_at(&in_fusion("%y = f32[8,128]{1,0} add(%x, $0")),
        signature_at(&in_fusion("%y = f32[8,128]{1,0} broadcast(%b), dim$0")),
        signature_at(&in_fusion(
            "%y = f32[8,128]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_c$0"
        )),
        signature_at(&in_fusion("%y = f32[8,128]{1,0} fusion(%x, %b, $0")),
        signature_at(&in_fusion("%y = f32[8,128]{1,0} select(%p, %x, $0")),
    ]
    .join("\n"));
}

#[test]
fn signature_help_answers_on_every_opcode() {
    let mut missing = Vec::new();
    for op in Opcode::all() {
        let text = in_fusion(&format!("%y = f32[8,128]{{1,0}} {}($0", op.name()));
        let (text, at) = fixture(&text);
        match ide::signature_help::signature_help(&snapshot(&text), at) {
            Some(help) if help.signature.label.starts_with(&format!("{}(", op.name())) => {}
            other => missing.push(format!("{op}: {other:?}")),
        }
    }
    assert!(
        missing.is_empty(),
        "no signature help for:\n{}",
        missing.join("\n")
    );
}

/// Every quick fix of a document: title and edits.
fn fixes_of(text: &str) -> String {
    let snapshot = snapshot(text);
    let mut out = String::new();
    for action in ide::code_actions::actions(&snapshot, &(0..text.len())) {
        out.push_str(&format!("{}\n", action.fix.title));
        for edit in &action.fix.edits {
            out.push_str(&format!(
                "  {:?} → {:?}\n",
                &text[edit.range.clone()],
                edit.new_text
            ));
        }
    }
    out
}

#[test]
fn quick_fixes_from_shape_inference_and_names() {
    let text = "HloModule m

ENTRY %main (x: f32[4,8], y: f32[8]) -> f32[8,4] {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[8]{0} parameter(1)
  %t = f32[4,8]{1,0} transpose(%x), dimensions={1,0}
  %b = f32[4,8]{1,0} broadcast(%y)
  %r = f32[4]{0} reverse(%y)
  %x = f32[4,8]{1,0} negate(%b)
  ROOT %n = f32[8,4]{1,0} transpose(%t), dimensions={1,0}
}
";
    insta::assert_snapshot!(fixes_of(text));
}

#[test]
fn a_quick_fix_makes_its_finding_go_away() {
    let text = "ENTRY %main (y: f32[8]) -> f32[4,8] {
  %y = f32[8]{0} parameter(0)
  ROOT %b = f32[4,8]{1,0} broadcast(%y)
}
";
    let snapshot = snapshot(text);
    let actions = ide::code_actions::actions(&snapshot, &(0..text.len()));
    assert_eq!(actions.len(), 1, "{actions:?}");
    let mut fixed = text.to_string();
    for edit in actions[0].fix.edits.iter().rev() {
        fixed.replace_range(edit.range.clone(), &edit.new_text);
    }
    let document = model::Document::parse(&fixed);
    let left: Vec<_> = hlo_lsp::checks::all(&document)
        .into_iter()
        .filter(|d| d.is_error())
        .collect();
    assert!(left.is_empty(), "{fixed}\n{left:?}");
}
