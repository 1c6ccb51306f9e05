//! Small constructors shared by the per-op map builders: variables from tensor
//! extents and the common map shapes (`(d..) -> ()`, `()[s..] -> (s..)`).

use crate::algebra::{Expr, IndexingMap, Interval, Variable};
use crate::analysis::unknown::Unknown;

/// `d{i}` as an expression.
pub fn d(i: usize) -> Expr {
    Expr::dim(i)
}

/// `s{i}` as an expression.
pub fn s(i: usize) -> Expr {
    Expr::range(i)
}

/// `rt{i}` as an expression.
pub fn rt(i: usize) -> Expr {
    Expr::runtime(i)
}

/// A constant expression.
pub fn c(v: i64) -> Expr {
    Expr::constant(v)
}

/// A variable ranging over `[0, extent - 1]`.
pub fn var(extent: i64) -> Variable {
    Variable::new(0, extent - 1)
}

/// A variable ranging over `[lo, hi]`.
pub fn var_in(lo: i64, hi: i64) -> Variable {
    Variable::new(lo, hi)
}

/// One variable per extent: the index space of a tensor.
pub fn vars(extents: &[i64]) -> Vec<Variable> {
    extents.iter().map(|&n| var(n)).collect()
}

/// The constraint `expr in [lo, hi]`.
pub fn within(expr: Expr, lo: i64, hi: i64) -> (Expr, Interval) {
    (expr, Interval::new(lo, hi))
}

/// A map over the tensor `extents` with range variables `ranges`.
pub fn map(
    extents: &[i64],
    ranges: Vec<Variable>,
    results: Vec<Expr>,
    constraints: Vec<(Expr, Interval)>,
) -> IndexingMap {
    IndexingMap::new(vars(extents), ranges, vec![], results, constraints)
}

/// `(d0, ..) -> ()`: every element reads the (scalar) operand.
pub fn to_scalar(extents: &[i64]) -> IndexingMap {
    map(extents, vec![], vec![], vec![])
}

/// `()[s0, ..] -> (s0, ..)`: the (scalar) input is read by every element of a
/// tensor with these extents.
pub fn from_scalar(extents: &[i64]) -> IndexingMap {
    let results = (0..extents.len()).map(s).collect();
    IndexingMap::new(vec![], vars(extents), vec![], results, vec![])
}

/// The identity on a tensor.
pub fn identity(extents: &[i64]) -> IndexingMap {
    IndexingMap::identity(extents)
}

/// Checked product of extents.
pub fn product(extents: &[i64]) -> Result<i64, Unknown> {
    extents
        .iter()
        .try_fold(1i64, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Unknown::malformed("element count overflows i64"))
}

/// `e * k + offset`, omitting a factor of 1 and an offset of 0 so that the raw
/// maps print the way XLA builds them.
pub fn affine(e: Expr, k: i64, offset: i64) -> Expr {
    let scaled = if k == 1 { e } else { e * k };
    if offset == 0 {
        scaled
    } else {
        scaled + offset
    }
}
