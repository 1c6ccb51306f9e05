//! The tiling report as a library: the hover line of a tiled fusion, the
//! diagnostics' ranges and quick fixes (editing only the sizes list), and the
//! candidate ranking, on test data with known answers.

use hlo_lsp::analysis::view;
use hlo_lsp::model;
use hlo_lsp::model::{Diagnostic, HloFile};
use hlo_lsp::tiling::diagnostics::codes;
use hlo_lsp::tiling::report::{analyze_file, hover_line, ReportOptions};

/// The tiling findings as `hlo-lsp check` reports them: quick fixes prefer coalesced
/// reads on the default GPU.
fn diagnostics(file: &HloFile) -> Vec<Diagnostic> {
    let options = ReportOptions {
        transaction_bytes: Some(
            hlo_lsp::coalescing::Options::default()
                .device
                .dram_to_l2_transaction_bytes,
        ),
        ..ReportOptions::default()
    };
    hlo_lsp::tiling::diagnostics::diagnostics(file, &options)
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../tests/data/{relative}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn apply(text: &str, fix: &model::Fix) -> String {
    let mut out = text.to_string();
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
    for e in edits {
        out.replace_range(e.range.clone(), &e.new_text);
    }
    out
}

#[test]
fn hover_line_of_tiled_fusions() {
    let text = read("samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo");
    let file = model::parse_hlo(&text);
    let at = text.find("triton_gemm_dot1 = f16[15,17]").unwrap();
    assert_eq!(
        hover_line(&file, &view::from_model(&file.modules[0]), at).as_deref(),
        Some("tiles 16x16 · 2 predicates · 0 holes in reductions")
    );
    // Not a fusion: no line.
    let at = text.find("p0 = f16[").unwrap();
    assert_eq!(
        hover_line(&file, &view::from_model(&file.modules[0]), at),
        None
    );

    let text = read("tiling/sum_init_one.hlo");
    let file = model::parse_hlo(&text);
    let at = text.find("ROOT f = ").unwrap() + 5;
    assert_eq!(
        hover_line(&file, &view::from_model(&file.modules[0]), at).as_deref(),
        Some("tiles 2 · 0 predicates · 28 holes in reductions")
    );
    let text = read("tiling/merge_2x5_split_4.hlo");
    let file = model::parse_hlo(&text);
    let at = text.find("ROOT f = ").unwrap() + 5;
    assert_eq!(
        hover_line(&file, &view::from_model(&file.modules[0]), at).as_deref(),
        Some("tiles 4 · 1 predicate · 0 holes in reductions · invalid tiling")
    );
    // One hole, one predicate: both singular.
    let text = read(
        "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
    );
    let file = model::parse_hlo(&text);
    let at = text.find("ROOT triton_fusion = ").unwrap() + 5;
    assert_eq!(
        hover_line(&file, &view::from_model(&file.modules[0]), at).as_deref(),
        Some("tiles 1x1x127 · 1 predicate · 1 hole in reductions")
    );
}

#[test]
fn fixes_rewrite_only_the_sizes_list() {
    // Invalid: 4 over a merged 2x5 → 10.
    let text = read("tiling/merge_2x5_split_4.hlo");
    let file = model::parse_hlo(&text);
    let found = diagnostics(&file);
    let on_fusion = found
        .iter()
        .find(|d| d.code == codes::INVALID_TILING && &text[d.range.clone()] == "\"4\"")
        .expect("invalid-tiling on the sizes list");
    let fixed = apply(&text, &on_fusion.fixes[0]);
    assert_eq!(
        fixed,
        text.replace("\"sizes\":[\"4\"]", "\"sizes\":[\"10\"]")
    );
    let after = diagnostics(&model::parse_hlo(&fixed));
    assert!(
        after.iter().all(|d| d.code != codes::INVALID_TILING),
        "{after:?}"
    );

    // Indivisible: 4 over 6 → the nearest tiling with fewer guards, 2.
    let text = read("tiling/split_6_by_4.hlo");
    let file = model::parse_hlo(&text);
    let found = diagnostics(&file);
    let d = found
        .iter()
        .find(|d| d.code == codes::INDIVISIBLE_TILE && !d.fixes.is_empty())
        .expect("a fix on the indivisible split");
    assert!(
        d.message
            .contains("2 tiles, the last one masked by `d0 < 6` (2 holes)"),
        "{}",
        d.message
    );
    assert!(d
        .related
        .iter()
        .any(|(_, m)| m == "minimal predicates: d0 < 6"));
    let fixed = apply(&text, &d.fixes[0]);
    assert_eq!(
        fixed,
        text.replace("\"sizes\":[\"4\"]", "\"sizes\":[\"2\"]")
    );
    let after = diagnostics(&model::parse_hlo(&fixed));
    assert!(after.is_empty(), "{after:?}");
}

#[test]
fn escaped_configs_are_fixed_in_their_own_quoting() {
    // kernel_reuse writes the config as a string with \" escapes and bare keys.
    let text = read("samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo");
    let file = model::parse_hlo(&text);
    let found = diagnostics(&file);
    let d = found
        .iter()
        .find(|d| d.code == codes::INDIVISIBLE_TILE && !d.fixes.is_empty())
        .expect("a fix");
    let edit = &d.fixes[0].edits[0];
    assert_eq!(&text[edit.range.clone()], r#"\"16\",\"16\""#);
    assert!(edit.new_text.starts_with(r#"\""#), "{}", edit.new_text);
    let fixed = apply(&text, &d.fixes[0]);
    let refile = model::parse_hlo(&fixed);
    let (reports, problems) = analyze_file(&refile, &ReportOptions::default());
    assert!(problems.is_empty());
    assert_eq!(reports.len(), 2, "the fixed config still reads");
}

#[test]
fn candidates_are_valid_and_ranked() {
    let text = read("tiling/merge_2x5_split_4.hlo");
    let file = model::parse_hlo(&text);
    let options = ReportOptions {
        candidates: 10,
        transaction_bytes: Some(64),
        ..ReportOptions::default()
    };
    let (reports, _) = analyze_file(&file, &options);
    let out = &reports[0].outputs[0];
    let sizes: Vec<Vec<i64>> = out.candidates.iter().map(|c| c.sizes.clone()).collect();
    // Powers of two and the full extent that keep the reshape's read a rectangle:
    // 1 (no holes) and 10; 2, 4 and 8 wrap rows of 5. (16 is not a candidate.)
    assert_eq!(sizes, vec![vec![1], vec![10]]);
    assert_eq!(out.suggestion.as_ref().unwrap().sizes, vec![10]);
}
