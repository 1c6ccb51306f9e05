//! The `uncoalesced-read` findings shared between fusions that differ only in names
//! (`coalescing::memo`): shared exactly when nothing the analysis reads tells the
//! fusions apart, and shown with each fusion's own names.

use hlo_lsp::coalescing::diagnostics::{computation_diagnostics_with, Sharing, UNCOALESCED_READ};
use hlo_lsp::coalescing::memo;
use hlo_lsp::model::{nameless, Document, ModuleId};

use crate::analysis_support::renamed;

const TRANSFORMER: &str = include_str!("../../tests/data/bench/transformer.after.hlo");

/// Two renamed copies of a real dump in one module: every computation's findings
/// with the memo are those found by analyzing each fusion afresh, and the copy's
/// name its own instructions.
#[test]
fn shared_findings_are_fresh_findings() {
    let header_end = TRANSFORMER.find('\n').expect("a header line");
    // The copy's ENTRY is an ordinary computation (a module has one ENTRY); its
    // fusions are analyzed all the same.
    let copy = renamed(&TRANSFORMER[header_end..], "__b").replace("\nENTRY ", "\n");
    let text = format!(
        "{}{copy}{}",
        &TRANSFORMER[..header_end],
        &TRANSFORMER[header_end..]
    );
    // The dump is XLA's CPU output, which GPU findings leave alone: without the
    // marks of its backend (nor the schedule XLA's pipeline printed) it is read as
    // GPU text, with real findings to share.
    let text = text
        .replace("\"outer_dimension_partitions\"", "\"partitions\"")
        .replace("__ynn_fusion", "loop_fusion")
        .replacen("is_scheduled=true", "is_scheduled=false", 1);
    let document = Document::parse(&text);
    document.build_all();
    let file = document.file();
    let mut copied = 0;
    for (module, c) in file.all_computations() {
        let fresh = computation_diagnostics_with(file, module, c, Sharing::Fresh);
        let shared = computation_diagnostics_with(file, module, c, Sharing::Memo);
        assert_eq!(shared, fresh, "in {}", c.name);
        copied += shared.iter().filter(|d| d.message.contains("__b")).count();
    }
    let findings = hlo_lsp::checks::all(&document)
        .into_iter()
        .filter(|d| d.code == UNCOALESCED_READ)
        .count();
    assert!(
        copied >= 4 && copied * 2 == findings,
        "{copied} of {findings} in the copy"
    );
}

/// A module with five fusions of two-parameter computations: `a`, `b`, `c` and `e`
/// differ in names and metadata only, but `c` and `e` read an operand of another
/// layout; `d` computes something else. (Names are long enough not to be found by
/// chance in a finding's text, which would keep it from being shared.)
const FUSIONS: &str = r#"HloModule m

%fused_a (param_0.a: f32[64,128], param_1.a: f32[128,64]) -> f32[64,128] {
  %param_0.a = f32[64,128]{1,0} parameter(0)
  %param_1.a = f32[128,64]{1,0} parameter(1)
  %transpose.a = f32[64,128]{1,0} transpose(%param_1.a), dimensions={1,0}
  ROOT %add.a = f32[64,128]{1,0} add(%param_0.a, %transpose.a), metadata={op_name="a"}
}

%fused_b (param_0.b: f32[64,128], param_1.b: f32[128,64]) -> f32[64,128] {
  %param_0.b = f32[64,128]{1,0} parameter(0)
  %param_1.b = f32[128,64]{1,0} parameter(1)
  %transpose.b = f32[64,128]{1,0} transpose(%param_1.b), dimensions={1,0}
  ROOT %add.b = f32[64,128]{1,0} add(%param_0.b, %transpose.b), metadata={op_name="b" source_line=7}
}

%fused_c (param_0.c: f32[64,128], param_1.c: f32[128,64]) -> f32[64,128] {
  %param_0.c = f32[64,128]{1,0} parameter(0)
  %param_1.c = f32[128,64]{1,0} parameter(1)
  %transpose.c = f32[64,128]{1,0} transpose(%param_1.c), dimensions={1,0}
  ROOT %add.c = f32[64,128]{1,0} add(%param_0.c, %transpose.c)
}

%fused_e (param_0.e: f32[64,128], param_1.e: f32[128,64]) -> f32[64,128] {
  %param_0.e = f32[64,128]{1,0} parameter(0)
  %param_1.e = f32[128,64]{1,0} parameter(1)
  %transpose.e = f32[64,128]{1,0} transpose(%param_1.e), dimensions={1,0}
  ROOT %add.e = f32[64,128]{1,0} add(%param_0.e, %transpose.e)
}

%fused_d (param_0.d: f32[64,128], param_1.d: f32[128,64]) -> f32[64,128] {
  %param_0.d = f32[64,128]{1,0} parameter(0)
  %param_1.d = f32[128,64]{1,0} parameter(1)
  %transpose.d = f32[64,128]{1,0} transpose(%param_1.d), dimensions={1,0}
  ROOT %multiply.d = f32[64,128]{1,0} multiply(%param_0.d, %transpose.d)
}

ENTRY %main (input: f32[64,128], other: f32[128,64], other_t: f32[128,64]) -> f32[64,128] {
  %input = f32[64,128]{1,0} parameter(0)
  %other = f32[128,64]{1,0} parameter(1)
  %other_t = f32[128,64]{0,1} parameter(2)
  %fusion.a = f32[64,128]{1,0} fusion(%input, %other), kind=kLoop, calls=%fused_a, metadata={op_name="x"}
  %fusion.b = f32[64,128]{1,0} fusion(%input, %other), kind=kLoop, calls=%fused_b
  %fusion.c = f32[64,128]{1,0} fusion(%input, %other_t), kind=kLoop, calls=%fused_c
  %fusion.e = f32[64,128]{1,0} fusion(%input, %other_t), kind=kLoop, calls=%fused_e
  ROOT %fusion.d = f32[64,128]{1,0} fusion(%input, %other), kind=kLoop, calls=%fused_d
}
"#;

/// The key of fusion `fusion.NAME` of [`FUSIONS`].
fn fusion_key(document: &Document, name: &str) -> Vec<u8> {
    let m = document.file().module(ModuleId(0));
    let entry = m.entry_computation().expect("an ENTRY");
    let id = entry
        .instruction_id(&format!("fusion.{name}"))
        .expect("a fusion");
    nameless::fusion_key(m, entry, entry.instruction(id)).expect("a key")
}

#[test]
fn keys_tell_apart_what_the_analysis_reads_and_nothing_else() {
    let document = Document::parse(FUSIONS);
    let key = |name| fusion_key(&document, name);
    assert_eq!(key("a"), key("b"), "names and metadata are left out");
    assert_ne!(key("a"), key("c"), "an operand's layout is read");
    assert_eq!(key("c"), key("e"));
    assert_ne!(key("a"), key("d"), "the fused ops are read");
}

#[test]
fn fusions_of_one_key_share_a_finding_each_with_its_names() {
    let document = Document::parse(FUSIONS);
    let found: Vec<String> = hlo_lsp::checks::all(&document)
        .into_iter()
        .filter(|d| d.code == UNCOALESCED_READ)
        .map(|d| d.message)
        .collect();
    let of = |fusion: &str| -> Vec<&String> {
        found
            .iter()
            .filter(|m| m.contains(&format!("of %fusion.{fusion})")))
            .collect()
    };
    // XLA's emitter reads the transpose of `a` and `b` coalesced, not so that of an
    // operand in the other layout: `c` and `e` share the finding, each with its names.
    assert!(memo::is_shared(&fusion_key(&document, "c")));
    assert!(of("a").is_empty() && of("b").is_empty(), "{found:?}");
    assert_eq!(of("c").len(), 1, "{found:?}");
    assert_eq!(
        of("c")[0].replace("of %fusion.c)", "of %fusion.e)"),
        *of("e")[0]
    );
}
