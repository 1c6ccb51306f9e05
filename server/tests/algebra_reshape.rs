//! Reshape chains that cancel must compose to the identity: for random shapes
//! A → B → A and A → B → C → A, the composed output-to-input map of the chain,
//! simplified, is `(d0, ...) -> (d0, ...)` with no constraints left. The reshape
//! maps are built here from the row-major definition (linearize the output index,
//! delinearize it in the input shape), independently of the analysis code.

use crate::algebra_support;

use algebra_support::check_equivalent;
use hlo_lsp::algebra::{Expr, IndexingMap, Variable};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// Output-to-input map of a reshape producing `out` from `input`.
fn reshape_map(out: &[i64], input: &[i64]) -> IndexingMap {
    let mut linear = Expr::constant(0);
    let mut stride = 1;
    for (i, &n) in out.iter().enumerate().rev() {
        linear = Expr::dim(i) * stride + linear;
        stride *= n;
    }
    let mut results = Vec::new();
    let mut stride = 1;
    for &n in input.iter().rev() {
        results.push(linear.clone().floor_div(stride).modulo(n));
        stride *= n;
    }
    results.reverse();
    let dims = out.iter().map(|&n| Variable::new(0, n - 1)).collect();
    IndexingMap::new(dims, vec![], vec![], results, vec![])
}

/// A random factorization of `n` driven by `choices`.
fn factorize(n: i64, choices: &[usize]) -> Vec<i64> {
    let mut rest = n;
    let mut out = Vec::new();
    for &c in choices {
        if c % 9 == 0 {
            out.push(1);
            continue;
        }
        let divisors: Vec<i64> = (2..=rest).filter(|d| rest % d == 0).collect();
        if divisors.is_empty() {
            break;
        }
        let d = divisors[c % divisors.len()];
        out.push(d);
        rest /= d;
    }
    if rest > 1 || out.is_empty() {
        out.push(rest);
    }
    out
}

fn assert_identity(
    shape: &[i64],
    chain: &str,
    composed: &IndexingMap,
) -> Result<(), TestCaseError> {
    let simplified = composed.simplified();
    prop_assert!(
        simplified.constraints().is_empty(),
        "{chain}: constraints left in {simplified}"
    );
    prop_assert!(simplified.range_vars().is_empty() && simplified.runtime_vars().is_empty());
    prop_assert_eq!(simplified.results().len(), shape.len());
    for (i, (r, &n)) in simplified.results().iter().zip(shape).enumerate() {
        let identity = *r == Expr::dim(i) || (n == 1 && *r == Expr::constant(0));
        prop_assert!(
            identity,
            "{}: result {} is `{}` in {}",
            chain,
            i,
            r,
            simplified
        );
        prop_assert_eq!(simplified.dims()[i].bounds.lo, 0);
        prop_assert_eq!(simplified.dims()[i].bounds.hi, n - 1);
    }
    prop_assert!(check_equivalent(&IndexingMap::identity(shape), &simplified).is_ok());
    prop_assert!(
        check_equivalent(composed, &simplified).is_ok(),
        "{chain}: unsound simplification"
    );
    Ok(())
}

fn shape() -> impl Strategy<Value = Vec<i64>> {
    proptest::collection::vec(1i64..=6, 1..=4)
}

fn choices() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0usize..1000, 1..=4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), .. ProptestConfig::default() })]

    #[test]
    fn a_b_a_composes_to_identity(a in shape(), cb in choices()) {
        let n: i64 = a.iter().product();
        let b = factorize(n, &cb);
        let to_b = reshape_map(&b, &a);
        let back = reshape_map(&a, &b);
        let chain = format!("{a:?} -> {b:?} -> {a:?}");
        assert_identity(&a, &chain, &back.compose(&to_b))?;
    }

    #[test]
    fn a_b_c_a_composes_to_identity(a in shape(), cb in choices(), cc in choices()) {
        let n: i64 = a.iter().product();
        let b = factorize(n, &cb);
        let c = factorize(n, &cc);
        let to_b = reshape_map(&b, &a);
        let to_c = reshape_map(&c, &b);
        let back = reshape_map(&a, &c);
        let chain = format!("{a:?} -> {b:?} -> {c:?} -> {a:?}");
        assert_identity(&a, &chain, &back.compose(&to_c).compose(&to_b))?;
    }
}

#[test]
fn documented_reshape_chain_cancels() {
    // The indexing documentation's example: f32[10,10,10] -> [50,20] -> [10,10,10].
    let to_b = reshape_map(&[50, 20], &[10, 10, 10]);
    let back = reshape_map(&[10, 10, 10], &[50, 20]);
    let composed = back.compose(&to_b).simplified();
    assert_eq!(
        composed.to_string(),
        IndexingMap::identity(&[10, 10, 10]).to_string()
    );
}
