//! Known answers: the seed's example, chains that shrink to one op, and chains that
//! must be left alone.

use super::maps::Replacement;
use super::rewrite::apply;
use super::*;
use crate::model::parse_hlo;

fn module(body: &str) -> String {
    format!("HloModule m\n\nENTRY e {{\n{body}}}\n")
}

/// The text after applying fix `k` of the only diagnostic; the result must parse
/// without any diagnostic.
fn fixed(text: &str, k: usize) -> String {
    let found = diagnostics_of(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let out = apply(text, &found[0].fixes[k].edits);
    let file = parse_hlo(&out);
    assert!(
        file.diagnostics.is_empty(),
        "{out}\n{:#?}",
        file.diagnostics
    );
    out
}

const SEED: &str = "  p0 = f32[10,10,10]{2,1,0} parameter(0)\n  \
                    r1 = f32[50,20]{1,0} reshape(p0)\n  \
                    ROOT r2 = f32[10,10,10]{2,1,0} reshape(r1)\n";

#[test]
fn the_seed_chain_is_removed_and_its_source_becomes_root() {
    let text = module(SEED);
    let found = diagnostics_of(&text);
    assert_eq!(found.len(), 1);
    let d = &found[0];
    assert_eq!((d.code, d.severity), ("reshape-chain", Severity::Hint));
    assert!(d.message.contains("identity"), "{}", d.message);
    assert!(
        d.message
            .contains("f32[10,10,10]{2,1,0} -> f32[50,20]{1,0} -> f32[10,10,10]{2,1,0}"),
        "{}",
        d.message
    );
    assert_eq!(d.range.start, text.find("r1 =").unwrap());
    assert_eq!(d.fixes.len(), 1);
    assert_eq!(
        fixed(&text, 0),
        module("  ROOT p0 = f32[10,10,10]{2,1,0} parameter(0)\n")
    );
}

#[test]
fn uses_of_the_last_member_read_the_source() {
    let text = module(
        "  %p0 = f32[10,10,10] parameter(0)\n  %r1 = f32[50,20] reshape(%p0)\n  \
         %r2 = f32[10,10,10] reshape(%r1)\n  \
         ROOT %s = f32[10,10,10] add(%r2, f32[10,10,10] %r2)\n",
    );
    assert_eq!(
        fixed(&text, 0),
        module(
            "  %p0 = f32[10,10,10] parameter(0)\n  \
             ROOT %s = f32[10,10,10] add(%p0, f32[10,10,10] %p0)\n"
        )
    );
}

#[test]
fn a_real_reshape_chain_becomes_one_reshape() {
    let text = module(
        "  p0 = f32[10,10,10] parameter(0)\n  r1 = f32[50,20] reshape(p0)\n  \
         ROOT r2 = f32[1000] reshape(r1), metadata={op_name=\"flat\"}\n",
    );
    let found = diagnostics_of(&text);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].message.contains("single reshape"),
        "{}",
        found[0].message
    );
    assert!(found[0]
        .fixes
        .iter()
        .all(|f| !f.title.starts_with("Remove")));
    assert_eq!(
        fixed(&text, 0),
        module(
            "  p0 = f32[10,10,10] parameter(0)\n  \
             ROOT r2 = f32[1000] reshape(p0), metadata={op_name=\"flat\"}\n"
        )
    );
}

#[test]
fn two_transposes_become_one() {
    let text = module(
        "  p = f32[2,3,4] parameter(0)\n  t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}\n  \
         ROOT t2 = f32[4,3,2] transpose(t1), dimensions={1,0,2}\n",
    );
    // t2[i,j,k] = t1[j,i,k] = p[k,j,i].
    assert_eq!(
        fixed(&text, 0),
        module(
            "  p = f32[2,3,4] parameter(0)\n  \
             ROOT t2 = f32[4,3,2] transpose(p), dimensions={2,1,0}\n"
        )
    );
}

#[test]
fn inverse_transposes_are_removed() {
    let text = module(
        "  p = f32[2,3] parameter(0)\n  t1 = f32[3,2] transpose(p), dimensions={1,0}\n  \
         t2 = f32[2,3] transpose(t1), dimensions={1,0}\n  ROOT n = f32[2,3] negate(t2)\n",
    );
    assert_eq!(
        fixed(&text, 0),
        module("  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n")
    );
}

#[test]
fn an_intermediate_with_two_users_blocks_the_chain() {
    let text = module(
        "  p = f32[10,10,10] parameter(0)\n  r1 = f32[50,20] reshape(p)\n  \
         r2 = f32[10,10,10] reshape(r1)\n  n = f32[50,20] negate(r1)\n  \
         ROOT t = (f32[10,10,10], f32[50,20]) tuple(r2, n)\n",
    );
    assert!(parse_hlo(&text).diagnostics.is_empty());
    assert_eq!(diagnostics_of(&text), vec![]);
}

#[test]
fn a_root_intermediate_blocks_the_chain() {
    let text = module(
        "  p = f32[10,10,10] parameter(0)\n  ROOT r1 = f32[50,20] reshape(p)\n  \
         r2 = f32[10,10,10] reshape(r1)\n",
    );
    assert_eq!(diagnostics_of(&text), vec![]);
}

#[test]
fn a_layout_change_is_not_removable() {
    let text = module(
        "  p = f32[4,6]{0,1} parameter(0)\n  a = f32[24]{0} reshape(p)\n  \
         ROOT b = f32[4,6]{1,0} reshape(a)\n",
    );
    let found = diagnostics_of(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    // Still one logical reshape (the identity on indices), but never a removal.
    assert!(found[0]
        .fixes
        .iter()
        .all(|f| !f.title.starts_with("Remove")));
    assert!(!found[0].message.contains("identity"));
    let single_noop =
        module("  p = f32[4,6]{0,1} parameter(0)\n  ROOT b = f32[4,6]{1,0} reshape(p)\n");
    assert_eq!(diagnostics_of(&single_noop), vec![]);
}

#[test]
fn a_bitcast_then_transpose_that_cancel_is_removed() {
    // The bitcast reads the buffer of p as its transpose; the transpose undoes it.
    let text = module(
        "  p = f32[4,6]{1,0} parameter(0)\n  b = f32[6,4]{0,1} bitcast(p)\n  \
         ROOT t = f32[4,6]{1,0} transpose(b), dimensions={1,0}\n",
    );
    assert_eq!(
        fixed(&text, 0),
        module("  ROOT p = f32[4,6]{1,0} parameter(0)\n")
    );
}

#[test]
fn bitcasts_prefer_a_bitcast() {
    let text = module(
        "  p = f32[4,6] parameter(0)\n  a = f32[24] bitcast(p)\n  ROOT b = f32[2,12] bitcast(a)\n",
    );
    let found = diagnostics_of(&text);
    let titles: Vec<&str> = found[0].fixes.iter().map(|f| f.title.as_str()).collect();
    assert!(titles[0].contains("one bitcast"), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("one reshape")),
        "{titles:?}"
    );
    assert_eq!(
        fixed(&text, 0),
        module("  p = f32[4,6] parameter(0)\n  ROOT b = f32[2,12] bitcast(p)\n")
    );
}

#[test]
fn a_single_noop_is_reported_and_removed() {
    for op in ["reshape(p)", "bitcast(p)", "transpose(p), dimensions={0,1}"] {
        let text = module(&format!(
            "  p = f32[2,3] parameter(0)\n  r = f32[2,3] {op}\n  ROOT n = f32[2,3] negate(r)\n"
        ));
        let found = diagnostics_of(&text);
        assert_eq!(found.len(), 1, "{op}: {found:#?}");
        assert_eq!(found[0].code, "noop-reshape");
        assert_eq!(
            fixed(&text, 0),
            module("  p = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n")
        );
    }
    // A transpose that permutes is not a no-op even on a square shape.
    let text =
        module("  p = f32[3,3] parameter(0)\n  ROOT r = f32[3,3] transpose(p), dimensions={1,0}\n");
    assert_eq!(diagnostics_of(&text), vec![]);
}

#[test]
fn the_best_window_of_a_longer_chain_is_found() {
    // a-b cancel; c is a real reshape: the identity window is offered alone.
    let text = module(
        "  p = f32[4,6] parameter(0)\n  a = f32[6,4] transpose(p), dimensions={1,0}\n  \
         b = f32[4,6] transpose(a), dimensions={1,0}\n  c = f32[24] reshape(b)\n  \
         ROOT n = f32[24] negate(c)\n",
    );
    let found = diagnostics_of(&text);
    // The whole chain is one reshape; that wins over the shorter identity window.
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0]
        .message
        .contains("3 instructions compose to a single reshape"));
    assert_eq!(
        fixed(&text, 0),
        module(
            "  p = f32[4,6] parameter(0)\n  c = f32[24] reshape(p)\n  ROOT n = f32[24] negate(c)\n"
        )
    );
}

#[test]
fn chains_inside_fused_computations_are_found() {
    let text = "HloModule m\n\nfused {\n  p = f32[4,6] parameter(0)\n  a = f32[24] reshape(p)\n  \
                ROOT b = f32[4,6] reshape(a)\n}\n\nENTRY e {\n  x = f32[4,6] parameter(0)\n  \
                ROOT f = f32[4,6] fusion(x), kind=kLoop, calls=fused\n}\n";
    let out = fixed(text, 0);
    assert!(
        out.contains("fused {\n  ROOT p = f32[4,6] parameter(0)\n}"),
        "{out}"
    );
}

#[test]
fn replacement_kinds_are_verified_not_guessed() {
    // A transpose followed by a reshape is neither a transpose nor a reshape.
    let text = module(
        "  p = f32[2,3] parameter(0)\n  t = f32[3,2] transpose(p), dimensions={1,0}\n  \
         ROOT r = f32[6] reshape(t)\n",
    );
    assert_eq!(diagnostics_of(&text), vec![]);
    let file = parse_hlo(&text);
    let c = file.modules[0].computation(model::ComputationId(0));
    let chains = chain::maximal_chains(c.text, c.model());
    assert_eq!(chains.len(), 1);
    assert_eq!(
        maps::replacements(c.model(), &chains[0]),
        Vec::<Replacement>::new()
    );
}

#[test]
fn members_out_of_text_order_are_spanned_and_removed() {
    let text = "ENTRY e {\n  ROOT b = f32[4,6] reshape(a)\n  a = f32[24] reshape(p)\n  \
                p = f32[4,6] parameter(0)\n}\n";
    let found = diagnostics_of(text);
    assert_eq!(
        found[0].range,
        text.find("ROOT b").unwrap()..text.find("\n  p =").unwrap()
    );
    assert_eq!(
        fixed(text, 0),
        "ENTRY e {\n  ROOT p = f32[4,6] parameter(0)\n}\n"
    );
}

#[test]
fn inline_operands_are_never_rewritten() {
    // The source is written inline (XLA's nested operand form): it has no line of its
    // own to mark ROOT or to name, so the chain is left alone.
    let text = "ENTRY e {\n  p = f32[4,6] parameter(0)\n  \
                a = f32[24] reshape(f32[4,6] negate(f32[4,6] p))\n  \
                ROOT b = f32[4,6] reshape(a)\n}\n";
    assert!(
        parse_hlo(text).diagnostics.is_empty(),
        "{:#?}",
        parse_hlo(text).diagnostics
    );
    assert_eq!(diagnostics_of(text), vec![]);
}

#[test]
fn tiled_layouts_get_no_bitcast() {
    // Reshapes are logical: tiles do not matter, the pair is still one reshape. A
    // bitcast of tiled buffers is not the analysis' row-major reinterpretation, so no
    // bitcast is offered.
    let text = module(
        "  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n  a = f32[1024]{0} bitcast(p)\n  \
         r = f32[1024]{0} negate(a)\n  b = f32[2,512]{1,0} reshape(r)\n  \
         ROOT c = f32[1024]{0:T(1024)} reshape(b)\n",
    );
    let found = diagnostics_of(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let titles: Vec<&str> = found[0].fixes.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(
        titles,
        vec!["Replace the 2 instructions with one reshape of `r`"]
    );
}
