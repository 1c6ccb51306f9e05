//! Facts about shapes with layouts that the fusion rules ask (XLA's `ShapeUtil`):
//! whether two shapes are equal apart from the element type, and whether a reshape or a
//! transpose between two layouts moves no byte (a bitcast). Multi-output fusions share
//! one loop, so their roots must index the same physical space, which is what these
//! answer.

use crate::model::{ArrayShape, Shape};

/// The layout's minor-to-major order as indices (the default when none is written).
fn minor_to_major(a: &ArrayShape) -> Vec<usize> {
    a.minor_to_major()
        .into_iter()
        .map(|d| usize::try_from(d).unwrap_or(usize::MAX))
        .collect()
}

/// Logical dimensions from major to minor.
fn major_to_minor(a: &ArrayShape) -> Vec<usize> {
    let mut order = minor_to_major(a);
    order.reverse();
    order
}

/// XLA's `ShapeUtil::EqualIgnoringElementType`: same nesting, extents and layouts.
pub fn equal_ignoring_element_type(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) => {
            x.dims == y.dims && minor_to_major(x) == minor_to_major(y)
        }
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| equal_ignoring_element_type(p, q))
        }
        _ => false,
    }
}

/// XLA's `ShapeUtil::TransposeIsBitcast`: the transpose of `input` by `dimensions`
/// into `output` keeps every element at its byte offset (output dimension `d` is
/// input dimension `dimensions[d]`, so the layouts must agree through it).
pub fn transpose_is_bitcast(input: &ArrayShape, output: &ArrayShape, dimensions: &[i64]) -> bool {
    let (in_m2m, out_m2m) = (minor_to_major(input), minor_to_major(output));
    if in_m2m.len() != out_m2m.len() || dimensions.len() != out_m2m.len() {
        return false;
    }
    out_m2m
        .iter()
        .zip(&in_m2m)
        .all(|(&o, &i)| dimensions.get(o).and_then(|&d| usize::try_from(d).ok()) == Some(i))
}

/// XLA's `ShapeUtil::ReshapeIsBitcast` (element types ignored): a reshape moves no
/// byte when, for every group of dimensions the reshape merges or splits (the finest
/// groups of consecutive non-unit dimensions with equal products on both sides), the
/// group is stored contiguously and row-major on both sides, and the groups are stored
/// in the same order.
pub fn reshape_is_bitcast(a: &ArrayShape, b: &ArrayShape) -> bool {
    if a.element_count() != b.element_count() || a.element_count().is_none() {
        return false;
    }
    let kept =
        |s: &ArrayShape| -> Vec<usize> { (0..s.rank()).filter(|&d| s.dims[d] != 1).collect() };
    let (la, lb) = (kept(a), kept(b));
    // Group index of each non-unit logical dimension, per side.
    let mut group_a = vec![usize::MAX; a.rank()];
    let mut group_b = vec![usize::MAX; b.rank()];
    let (mut i, mut j, mut group) = (0, 0, 0);
    while i < la.len() || j < lb.len() {
        let (mut pa, mut pb) = (1i64, 1i64);
        loop {
            if pa <= pb && i < la.len() {
                pa = pa.saturating_mul(a.dims[la[i]]);
                group_a[la[i]] = group;
                i += 1;
            } else if j < lb.len() {
                pb = pb.saturating_mul(b.dims[lb[j]]);
                group_b[lb[j]] = group;
                j += 1;
            } else {
                break;
            }
            if pa == pb {
                break;
            }
        }
        if pa != pb {
            return false;
        }
        group += 1;
    }
    // Physical order of groups, checking each group is contiguous and row-major.
    let physical_groups = |s: &ArrayShape, groups: &[usize]| -> Option<Vec<usize>> {
        let order: Vec<usize> = major_to_minor(s)
            .into_iter()
            .filter(|&d| d < s.rank() && s.dims[d] != 1)
            .collect();
        let mut out: Vec<usize> = vec![];
        let mut last_dim: Option<usize> = None;
        for d in order {
            let g = groups[d];
            if out.last() == Some(&g) {
                // Row-major inside the group: logical order agrees with physical order.
                if last_dim.is_some_and(|l| l > d) {
                    return None;
                }
            } else {
                if out.contains(&g) {
                    return None;
                }
                out.push(g);
            }
            last_dim = Some(d);
        }
        Some(out)
    };
    match (physical_groups(a, &group_a), physical_groups(b, &group_b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// XLA's `ShapeUtil::IsReshapeOrTransposeBitcast(a, b, /*ignore_element_type=*/true)`:
/// equal shapes, a bitcast reshape, or a transpose that is a bitcast (same rank and the
/// same extents in physical order).
pub fn is_reshape_or_transpose_bitcast(a: &Shape, b: &Shape) -> bool {
    if equal_ignoring_element_type(a, b) {
        return true;
    }
    let (Some(x), Some(y)) = (a.as_array(), b.as_array()) else {
        return false;
    };
    if reshape_is_bitcast(x, y) {
        return true;
    }
    let physical = |s: &ArrayShape| -> Vec<i64> {
        major_to_minor(s)
            .iter()
            .map(|&d| s.dims.get(d).copied().unwrap_or(-1))
            .collect()
    };
    x.rank() == y.rank() && physical(x) == physical(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_shape;

    fn array(text: &str) -> ArrayShape {
        parse_shape(text).unwrap().as_array().unwrap().clone()
    }

    #[test]
    fn reshape_bitcasts() {
        assert!(reshape_is_bitcast(
            &array("f32[4,6]{1,0}"),
            &array("f32[24]{0}")
        ));
        assert!(reshape_is_bitcast(
            &array("f32[4,6]{1,0}"),
            &array("f32[2,2,6]{2,1,0}")
        ));
        // Column-major storage of [4,6] is not row-major [24].
        assert!(!reshape_is_bitcast(
            &array("f32[4,6]{0,1}"),
            &array("f32[24]{0}")
        ));
        // Both column-major with matching groups: a bitcast.
        assert!(reshape_is_bitcast(
            &array("f32[4,6,1]{0,1,2}"),
            &array("f32[4,6]{0,1}")
        ));
        assert!(!reshape_is_bitcast(
            &array("f32[4,6]{1,0}"),
            &array("f32[25]{0}")
        ));
    }

    #[test]
    fn transpose_bitcasts() {
        assert!(transpose_is_bitcast(
            &array("f32[4,6]{1,0}"),
            &array("f32[6,4]{0,1}"),
            &[1, 0]
        ));
        assert!(!transpose_is_bitcast(
            &array("f32[4,6]{1,0}"),
            &array("f32[6,4]{1,0}"),
            &[1, 0]
        ));
    }
}
