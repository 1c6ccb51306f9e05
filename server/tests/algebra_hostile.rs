//! Hostile maps for the simplifier (issue 14.5): a 1,000-term sum, 100 range
//! variables, constants at the i64 limits, floordiv/mod nested 50 deep. Each must
//! come back simplified within the step budget or unchanged with the limit said
//! (`try_simplify`), and mean what it meant (checked by brute force). The time is
//! measured by `hlo-lsp simplify` on the same shapes (every one under 50 ms including
//! the process, see the issue note), not asserted here.

use crate::algebra_support;

use algebra_support::check_equivalent;
use hlo_lsp::algebra::IndexingMap;

fn sum_of_1000_terms() -> String {
    let terms: Vec<String> = (0..1000)
        .map(|i| format!("d{} * {}", i % 2, i + 1))
        .collect();
    format!(
        "(d0, d1) -> ({}), domain: d0 in [0, 100], d1 in [0, 100]",
        terms.join(" + ")
    )
}

fn hundred_range_variables() -> String {
    let names: Vec<String> = (0..100).map(|i| format!("s{i}")).collect();
    let terms: Vec<String> = (0..100)
        .map(|i| format!("s{i} * {} floordiv 7", i + 3))
        .collect();
    let bounds: Vec<String> = (0..100)
        .map(|i| format!("s{i} in [0, {}]", i + 5))
        .collect();
    format!(
        "(d0)[{}] -> (d0 + {}), domain: d0 in [0, 10], {}",
        names.join(", "),
        terms.join(" + "),
        bounds.join(", ")
    )
}

fn constants_at_the_limits() -> String {
    "(d0) -> (d0 * 9223372036854775807 + 9223372036854775806, \
     (d0 + 9223372036854775807) floordiv 3, -9223372036854775807 mod (d0 + 1)), \
     domain: d0 in [0, 9223372036854775807]"
        .to_string()
}

fn floordiv_and_mod_50_deep() -> String {
    let mut e = "d0".to_string();
    for i in 0..50 {
        e = format!("(({e}) floordiv {} + d1) mod {}", i % 5 + 2, i % 7 + 3);
    }
    format!("(d0, d1) -> ({e}), domain: d0 in [0, 1000000], d1 in [0, 1000]")
}

/// Simplifies `text` and compares it with the original by brute force
/// (`algebra_support::check_equivalent`: every point of small domains, corners and a
/// fixed sample of large ones), after checking the original is defined at its
/// domain's lowest point, so that the comparison cannot be empty.
fn simplified_means_the_same(text: &str) {
    let original = IndexingMap::parse(text).expect("the hostile map parses");
    let lowest = |vars: &[hlo_lsp::algebra::Variable]| -> Vec<i64> {
        vars.iter().map(|v| v.bounds.lo).collect()
    };
    assert!(
        original
            .evaluate(&lowest(original.dims()), &lowest(original.range_vars()))
            .is_some(),
        "the original is undefined at the lowest point: {text}"
    );
    let mut simplified = original.clone();
    if let Err(limit) = simplified.try_simplify() {
        assert_eq!(simplified, original, "unchanged when the budget ran out");
        assert!(!limit.to_string().is_empty());
    }
    if let Err(why) = check_equivalent(&original, &simplified) {
        panic!("{why}\n{text}\nsimplified: {simplified}");
    }
}

#[test]
fn a_sum_of_1000_terms() {
    simplified_means_the_same(&sum_of_1000_terms());
}

#[test]
fn a_hundred_range_variables() {
    simplified_means_the_same(&hundred_range_variables());
}

#[test]
fn constants_at_the_i64_limits() {
    simplified_means_the_same(&constants_at_the_limits());
}

#[test]
fn floordiv_and_mod_nested_50_deep() {
    simplified_means_the_same(&floordiv_and_mod_50_deep());
}

/// Found by the `map_text` fuzz target: a product of constants that overflows
/// stops the sum rules (no linear form), and the fallback rebuilt the sum with
/// its term folded to zero as `… + 0`, which the printed map does not read back.
#[test]
fn an_overflowing_constant_product_simplifies_to_text_that_reads_back() {
    let text = "(d1) -> (444465 * 44444444444442 + d1 floordiv 4), domain: d1 in [0, 1]";
    let simplified = IndexingMap::parse(text).unwrap().simplified();
    let printed = simplified.to_string();
    assert!(!printed.contains("+ 0"), "{printed}");
    let back = IndexingMap::parse(&printed).unwrap();
    assert_eq!(back, simplified, "{printed}");
    assert!(back.equivalent(&simplified), "{printed}");
}
