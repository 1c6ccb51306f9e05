//! Utilization against brute force. Maps with runtime variables (gather indices,
//! dynamic-slice offsets): the least and most utilization over every possible run
//! must be what plain loops over every value of the index tensor give, with the
//! op's own semantics (clamped start indices); with a small budget the bounds must
//! contain them. Without runtime variables: exact counts, and bounds beyond the budget.

use std::collections::BTreeMap;

use hlo_lsp::analysis::utilization::{utilization, Utilization};
use hlo_lsp::analysis::{analyze, view, ArrayShape, OperandIndexing, Query};
use proptest::prelude::*;

/// The maps from the fusion `f` of `text` to its operand `k`.
fn fusion_entry(text: &str, k: usize) -> OperandIndexing {
    let (_, modules) = view::parse(text);
    let m = &modules[0];
    let c = m
        .computations()
        .position(|c| c.find("f").is_some())
        .unwrap();
    let q = Query::output_to_input(c, m.computation(c).find("f").unwrap(), 0);
    analyze(m, &q).entries[k].clone()
}

/// A fusion gathering `k` rows of `slice` rows each from an `n`x2 operand.
fn gather_hlo(n: i64, k: i64, slice: i64) -> String {
    format!(
        "HloModule g
%fused (p0: f32[{n},2], p1: s32[{k},1]) -> f32[{k},{slice},2] {{
  %p0 = f32[{n},2]{{1,0}} parameter(0)
  %p1 = s32[{k},1]{{1,0}} parameter(1)
  ROOT %g = f32[{k},{slice},2]{{2,1,0}} gather(%p0, %p1), offset_dims={{1,2}}, collapsed_slice_dims={{}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{{slice},2}}
}}
ENTRY %main (a: f32[{n},2], b: s32[{k},1]) -> f32[{k},{slice},2] {{
  %a = f32[{n},2]{{1,0}} parameter(0)
  %b = s32[{k},1]{{1,0}} parameter(1)
  ROOT %f = f32[{k},{slice},2]{{2,1,0}} fusion(%a, %b), kind=kLoop, calls=%fused
}}
"
    )
}

/// `(distinct, total)` reads of the gather for one index tensor, from its semantics:
/// start row `clamp(index, 0, n - slice)`, `slice` rows of both columns.
fn gather_run(n: i64, slice: i64, indices: &[i64]) -> (u64, u64) {
    let mut reads: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    for &i in indices {
        let start = i.clamp(0, n - slice);
        for r in start..start + slice {
            for col in 0..2 {
                *reads.entry((r, col)).or_default() += 1;
            }
        }
    }
    (reads.len() as u64, reads.values().sum())
}

/// The least and most `(fraction, multiplicity)` over every index tensor with values
/// in `-1..=n` (beyond both ends, clamped by the gather).
fn gather_truth(n: i64, k: i64, slice: i64) -> ((f64, f64), (f64, f64)) {
    let size = (n * 2) as f64;
    let mut indices = vec![-1i64; k as usize];
    let mut least: Option<(u64, u64)> = None;
    let mut most: Option<(u64, u64)> = None;
    loop {
        let run = gather_run(n, slice, &indices);
        let fewer = |a: (u64, u64), b: (u64, u64)| a.0 < b.0 || (a.0 == b.0 && a.1 > b.1);
        if least.is_none_or(|l| fewer(run, l)) {
            least = Some(run);
        }
        if most.is_none_or(|m| fewer(m, run)) {
            most = Some(run);
        }
        let mut j = 0;
        loop {
            if j == indices.len() {
                let f = |(d, t): (u64, u64)| (d as f64 / size, t as f64 / d as f64);
                return (f(least.unwrap()), f(most.unwrap()));
            }
            indices[j] += 1;
            if indices[j] <= n {
                break;
            }
            indices[j] = -1;
            j += 1;
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Checks a spread against the truth: equal ends when attained, containing it for bounds.
fn check_gather(u: &Utilization, truth: ((f64, f64), (f64, f64))) -> Result<(), TestCaseError> {
    let ((least_f, least_m), (most_f, most_m)) = truth;
    match &u.spread {
        None => {
            prop_assert!(
                close(least_f, most_f) && close(least_m, most_m),
                "{u:?} vs {truth:?}"
            );
            prop_assert!(
                close(u.fraction, most_f) && close(u.multiplicity, most_m),
                "{u:?} vs {truth:?}"
            );
            prop_assert!(u.exact);
        }
        Some(s) if s.attained => {
            prop_assert!(
                close(s.least.0, least_f) && close(s.least.1, least_m),
                "{u:?} vs {truth:?}"
            );
            prop_assert!(
                close(s.most.0, most_f) && close(s.most.1, most_m),
                "{u:?} vs {truth:?}"
            );
        }
        Some(s) => {
            prop_assert!(
                s.least.0 <= least_f + 1e-9 && s.most.0 >= most_f - 1e-9,
                "{u:?} vs {truth:?}"
            );
            let (lo, hi) = (s.most.1.min(s.least.1), s.most.1.max(s.least.1));
            prop_assert!(
                lo <= most_m.min(least_m) + 1e-9 && hi >= most_m.max(least_m) - 1e-9,
                "{u:?} vs {truth:?}"
            );
            prop_assert!(!u.exact);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn gather_utilization_is_the_range_over_every_index_value(n in 2i64..6, k in 1i64..4, slice in 1i64..3) {
        let slice = slice.min(n);
        let entry = fusion_entry(&gather_hlo(n, k, slice), 0);
        // A slice as tall as the operand has one start: no runtime variable is left.
        let runtime = entry.maps.iter().any(|m| !m.runtime_vars.is_empty());
        prop_assert_eq!(runtime, slice < n, "{:?}", entry);
        let truth = gather_truth(n, k, slice);
        let shape = ArrayShape::new(vec![n, 2]);
        let exact = utilization(&entry, &shape, 1_000_000).unwrap();
        prop_assert!(exact.spread.is_none_or(|s| s.attained), "{exact:?}");
        check_gather(&exact, truth)?;
        // A budget too small to enumerate: bounds that still contain the truth.
        let bounded = utilization(&entry, &shape, 2).unwrap();
        check_gather(&bounded, truth)?;
    }
}

#[test]
fn gather_of_three_rows_reads_between_one_and_three_rows() {
    // The JAX gather dump's shape: 3 rows of an f32[16,8] operand (here 16x2).
    let entry = fusion_entry(&gather_hlo(16, 3, 1), 0);
    let u = utilization(&entry, &ArrayShape::new(vec![16, 2]), 1_000_000).unwrap();
    let s = u.spread.expect("depends on the indices");
    assert!(s.attained);
    assert!(
        close(s.least.0, 1.0 / 16.0) && close(s.least.1, 3.0),
        "{u:?}"
    );
    assert!(close(s.most.0, 3.0 / 16.0) && close(s.most.1, 1.0), "{u:?}");
    assert_eq!(
        u.to_string(),
        "utilization between 6.2% (each read 3.00×) and 18.8% (each read 1.00×) of elements, by the runtime values"
    );
}

#[test]
fn a_dynamic_slice_reads_the_same_amount_for_every_offset() {
    let text = "HloModule d
%fused (p0: f32[10,8], p1: s32[]) -> f32[2,8] {
  %p0 = f32[10,8]{1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %z = s32[] constant(0)
  ROOT %s = f32[2,8]{1,0} dynamic-slice(%p0, %p1, %z), dynamic_slice_sizes={2,8}
}
ENTRY %main (a: f32[10,8], b: s32[]) -> f32[2,8] {
  %a = f32[10,8]{1,0} parameter(0)
  %b = s32[] parameter(1)
  ROOT %f = f32[2,8]{1,0} fusion(%a, %b), kind=kLoop, calls=%fused
}
";
    let entry = fusion_entry(text, 0);
    let u = utilization(&entry, &ArrayShape::new(vec![10, 8]), 1_000_000).unwrap();
    assert!(u.exact && u.spread.is_none(), "{u:?}");
    assert!(
        close(u.fraction, 0.2) && close(u.multiplicity, 1.0),
        "{u:?}"
    );
    assert_eq!(
        u.to_string(),
        "utilization 20.0% of elements, each read 1.00×"
    );
}

#[test]
fn beyond_the_budget_maps_without_runtime_values_get_bounds() {
    // A broadcast read: every element of f32[64] read 32 times; exact when counted,
    // bounds (containing it) when the budget forbids counting.
    let text = "HloModule b
%fused (p0: f32[64]) -> f32[32,64] {
  %p0 = f32[64]{0} parameter(0)
  %n = f32[64]{0} negate(%p0)
  %c = f32[64]{0} negate(%n)
  %a = f32[64]{0} add(%n, %c)
  ROOT %b = f32[32,64]{1,0} broadcast(%a), dimensions={1}
}
ENTRY %main (a: f32[64]) -> f32[32,64] {
  %a = f32[64]{0} parameter(0)
  ROOT %f = f32[32,64]{1,0} fusion(%a), kind=kLoop, calls=%fused
}
";
    let entry = fusion_entry(text, 0);
    let shape = ArrayShape::new(vec![64]);
    let exact = utilization(&entry, &shape, 1_000_000).unwrap();
    assert!(
        exact.exact && close(exact.fraction, 1.0) && close(exact.multiplicity, 32.0),
        "{exact:?}"
    );
    let mut two = entry.clone();
    let shifted = hlo_lsp::algebra::IndexingMap::parse(
        "(d0, d1) -> (d1 floordiv 2), domain: d0 in [0, 31], d1 in [0, 63]",
    )
    .unwrap();
    two.insert(hlo_lsp::analysis::OperandMap::plain(shifted));
    let counted = utilization(&two, &shape, 1_000_000).unwrap();
    let bounded = utilization(&two, &shape, 10).unwrap();
    let s = bounded.spread.expect("bounds");
    assert!(!s.attained && !bounded.exact, "{bounded:?}");
    assert!(
        s.least.0 <= counted.fraction && counted.fraction <= s.most.0,
        "{bounded:?} vs {counted:?}"
    );
    assert!(bounded.to_string().ends_with("(bounds)"), "{bounded}");
}
