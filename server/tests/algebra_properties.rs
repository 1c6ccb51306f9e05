//! Property tests of the simplifier against brute-force semantics: random maps
//! (random expression trees over small domains, with and without constraints)
//! must keep their feasible points and their results there when simplified;
//! simplification must be idempotent; printing must parse back to an equal map; a
//! compiled map must evaluate as the expression trees do.

use crate::algebra_support;

use algebra_support::check_equivalent;
use hlo_lsp::algebra::{BinOp, CompiledMap, Expr, IndexingMap, Interval, PrintOptions, Variable};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const DIMS: usize = 2;
const SYMS: usize = 1;

fn divisor() -> impl Strategy<Value = i64> {
    prop_oneof![-4i64..=-1, 1i64..=7]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        2 => (-6i64..=6).prop_map(Expr::constant),
        3 => (0..DIMS).prop_map(Expr::dim),
        2 => (0..SYMS).prop_map(Expr::range),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            4 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Add, a, b)),
            3 => (inner.clone(), -5i64..=6).prop_map(|(a, c)| Expr::raw(BinOp::Mul, a, Expr::constant(c))),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Mul, a, b)),
            3 => (inner.clone(), divisor()).prop_map(|(a, c)| Expr::raw(BinOp::FloorDiv, a, Expr::constant(c))),
            3 => (inner.clone(), divisor()).prop_map(|(a, c)| Expr::raw(BinOp::Mod, a, Expr::constant(c))),
            1 => (inner.clone(), divisor()).prop_map(|(a, c)| Expr::raw(BinOp::CeilDiv, a, Expr::constant(c))),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::FloorDiv, a, b)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Mod, a, b)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Min, a, b)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::raw(BinOp::Max, a, b)),
        ]
    })
}

fn variable() -> impl Strategy<Value = Variable> {
    (-4i64..=3, 0i64..=6).prop_map(|(lo, size)| Variable::new(lo, lo + size))
}

fn map(with_constraints: bool) -> impl Strategy<Value = IndexingMap> {
    let max_constraints = if with_constraints { 2 } else { 0 };
    (
        proptest::collection::vec(variable(), DIMS),
        proptest::collection::vec(variable(), SYMS),
        proptest::collection::vec(expr(), 1..=2),
        proptest::collection::vec((expr(), -8i64..=8, 0i64..=10), 0..=max_constraints),
    )
        .prop_map(|(dims, syms, results, constraints)| {
            let constraints = constraints
                .into_iter()
                .map(|(e, lo, size)| (e, Interval::new(lo, lo + size)))
                .collect();
            IndexingMap::new(dims, syms, vec![], results, constraints)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), .. ProptestConfig::default() })]

    #[test]
    fn simplification_keeps_results_on_the_domain(m in map(false)) {
        let s = m.simplified();
        prop_assert!(check_equivalent(&m, &s).is_ok(), "{}\n  simplified to\n{}\n  {:?}", m, s, check_equivalent(&m, &s));
    }

    #[test]
    fn simplification_keeps_the_domain_with_constraints(m in map(true)) {
        let s = m.simplified();
        prop_assert!(check_equivalent(&m, &s).is_ok(), "{}\n  simplified to\n{}\n  {:?}", m, s, check_equivalent(&m, &s));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), .. ProptestConfig::default() })]

    #[test]
    fn simplification_is_idempotent(m in map(true)) {
        let once = m.simplified();
        let twice = once.simplified();
        prop_assert_eq!(&once, &twice, "not idempotent: {} then {}", once, twice);
    }

    #[test]
    fn printed_maps_parse_back_equal(m in map(true)) {
        for options in [PrintOptions::default(), PrintOptions { div: hlo_lsp::algebra::DivSpelling::Slash, multiline: false }] {
            let text = m.print(&options);
            let parsed = IndexingMap::parse(&text);
            prop_assert!(parsed.is_ok(), "{} does not parse: {:?}", text, parsed);
            let parsed = parsed.unwrap();
            prop_assert!(check_equivalent(&m, &parsed).is_ok(), "{} parsed as {}", text, parsed);
            // The parser folds constants (`-3 * 6`), so the generated tree may print
            // differently once; from then on printing and parsing are a fixpoint.
            let canonical = parsed.print(&options);
            let reparsed = IndexingMap::parse(&canonical).unwrap();
            if parsed.is_known_empty() {
                // `KNOWN EMPTY` text carries no shape.
                prop_assert!(reparsed.is_known_empty());
            } else {
                // Constraints are a set: compare variables, results, and the
                // (sorted) printed domain.
                prop_assert_eq!(reparsed.dims(), parsed.dims());
                prop_assert_eq!(reparsed.range_vars(), parsed.range_vars());
                prop_assert_eq!(reparsed.results(), parsed.results());
                prop_assert_eq!(reparsed.constraints().len(), parsed.constraints().len());
            }
            prop_assert_eq!(reparsed.print(&options), canonical);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), .. ProptestConfig::default() })]

    /// At every point of the domain's box widened by one on each side: in the domain
    /// with defined results exactly when the trees say so, and the same results.
    #[test]
    fn compiled_maps_evaluate_as_the_trees(m in map(true)) {
        // A map found empty is not compiled: the trees find no point in it either.
        let mut compiled = CompiledMap::new(&m);
        let vars: Vec<&Variable> = m.dims().iter().chain(m.range_vars()).collect();
        if let Some(c) = &compiled {
            prop_assert_eq!(c.arity(), vars.len());
        }
        let mut point: Vec<i64> = vars.iter().map(|v| v.bounds.lo - 1).collect();
        let mut out = vec![0; m.results().len()];
        loop {
            let (dims, ranges) = point.split_at(DIMS);
            let expected = m
                .contains_point(dims, ranges, &[])
                .then(|| m.evaluate_at(dims, ranges, &[]))
                .flatten();
            let got = compiled
                .as_mut()
                .is_some_and(|c| c.results_at(&point, &mut out))
                .then(|| out.clone());
            prop_assert_eq!(got, expected, "at {:?} of {}", point, m);
            let Some(k) = (0..point.len()).rev().find(|&k| point[k] <= vars[k].bounds.hi) else {
                break;
            };
            point[k] += 1;
            for (j, v) in vars.iter().enumerate().skip(k + 1) {
                point[j] = v.bounds.lo - 1;
            }
        }
    }
}
