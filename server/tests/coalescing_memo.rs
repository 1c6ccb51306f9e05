//! The `uncoalesced-read` findings shared between fusions that differ only in names
//! (`coalescing::memo`): shared exactly when nothing the analysis reads tells the
//! fusions apart, and shown with each fusion's own names.

use hlo_lsp::coalescing::diagnostics::{computation_diagnostics_with, Sharing, UNCOALESCED_READ};
use hlo_lsp::coalescing::memo;
use hlo_lsp::model::{Document, ModuleId};

const TRANSFORMER: &str = include_str!("../../tests/data/bench/transformer.after.hlo");

/// `text` with `suffix` appended to every `%name` (computations and instructions).
fn renamed(text: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len() * 11 / 10);
    let mut in_name = false;
    for ch in text.chars() {
        let name_char = ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-');
        if in_name && !name_char {
            out.push_str(suffix);
            in_name = false;
        }
        in_name |= ch == '%';
        out.push(ch);
    }
    out
}

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
/// layout; `d` computes something else.
const FUSIONS: &str = r#"HloModule m

%fa (p0: f32[64,128], p1: f32[128,64]) -> f32[64,128] {
  %p0 = f32[64,128]{1,0} parameter(0)
  %p1 = f32[128,64]{1,0} parameter(1)
  %t = f32[64,128]{1,0} transpose(%p1), dimensions={1,0}
  ROOT %add = f32[64,128]{1,0} add(%p0, %t), metadata={op_name="a"}
}

%fb (q0: f32[64,128], q1: f32[128,64]) -> f32[64,128] {
  %q0 = f32[64,128]{1,0} parameter(0)
  %q1 = f32[128,64]{1,0} parameter(1)
  %u = f32[64,128]{1,0} transpose(%q1), dimensions={1,0}
  ROOT %sum = f32[64,128]{1,0} add(%q0, %u), metadata={op_name="b" source_line=7}
}

%fc (s0: f32[64,128], s1: f32[128,64]) -> f32[64,128] {
  %s0 = f32[64,128]{1,0} parameter(0)
  %s1 = f32[128,64]{1,0} parameter(1)
  %w = f32[64,128]{1,0} transpose(%s1), dimensions={1,0}
  ROOT %plus = f32[64,128]{1,0} add(%s0, %w)
}

%fe (e0: f32[64,128], e1: f32[128,64]) -> f32[64,128] {
  %e0 = f32[64,128]{1,0} parameter(0)
  %e1 = f32[128,64]{1,0} parameter(1)
  %e2 = f32[64,128]{1,0} transpose(%e1), dimensions={1,0}
  ROOT %e3 = f32[64,128]{1,0} add(%e0, %e2)
}

%fd (r0: f32[64,128], r1: f32[128,64]) -> f32[64,128] {
  %r0 = f32[64,128]{1,0} parameter(0)
  %r1 = f32[128,64]{1,0} parameter(1)
  %v = f32[64,128]{1,0} transpose(%r1), dimensions={1,0}
  ROOT %m = f32[64,128]{1,0} multiply(%r0, %v)
}

ENTRY %main (x: f32[64,128], y: f32[128,64], z: f32[128,64]) -> f32[64,128] {
  %x = f32[64,128]{1,0} parameter(0)
  %y = f32[128,64]{1,0} parameter(1)
  %z = f32[128,64]{0,1} parameter(2)
  %a = f32[64,128]{1,0} fusion(%x, %y), kind=kLoop, calls=%fa, metadata={op_name="x"}
  %b = f32[64,128]{1,0} fusion(%x, %y), kind=kLoop, calls=%fb
  %c = f32[64,128]{1,0} fusion(%x, %z), kind=kLoop, calls=%fc
  %e = f32[64,128]{1,0} fusion(%x, %z), kind=kLoop, calls=%fe
  ROOT %d = f32[64,128]{1,0} fusion(%x, %y), kind=kLoop, calls=%fd
}
"#;

#[test]
fn keys_tell_apart_what_the_analysis_reads_and_nothing_else() {
    let document = Document::parse(FUSIONS);
    let m = document.file().module(ModuleId(0));
    let entry = m.entry_computation().expect("an ENTRY");
    let key = |name: &str| {
        let id = *entry.names.get(name).expect("a fusion");
        memo::key(m, entry, entry.instruction(id)).expect("a key")
    };
    assert_eq!(key("a"), key("b"), "names and metadata are left out");
    assert_ne!(key("a"), key("c"), "an operand's layout is read");
    assert_eq!(key("c"), key("e"));
    assert_ne!(key("a"), key("d"), "the fused ops are read");
}

#[test]
fn fusions_of_one_key_show_one_finding_each_with_its_names() {
    let document = Document::parse(FUSIONS);
    let found: Vec<String> = hlo_lsp::checks::all(&document)
        .into_iter()
        .filter(|d| d.code == UNCOALESCED_READ)
        .map(|d| d.message)
        .collect();
    let of = |fusion: &str| -> Vec<&String> {
        found
            .iter()
            .filter(|m| m.contains(&format!("of %{fusion})")))
            .collect()
    };
    // XLA's emitter reads the transpose of `a` and `b` coalesced, not so that of an
    // operand in the other layout: `c` and `e` share the finding, each with its names.
    assert!(of("a").is_empty() && of("b").is_empty(), "{found:?}");
    assert_eq!(of("c").len(), 1, "{found:?}");
    assert_eq!(of("c")[0].replace("of %c)", "of %e)"), *of("e")[0]);
}
