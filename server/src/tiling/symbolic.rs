//! The tile one indexing-map result reads, for concrete tile sizes: XLA's
//! symbolic tile, derived bottom-up over the expression.
//!
//! The map's dimension `d_i` (an output dimension of the fusion) is tiled by
//! `t_i`: its tile is offset `T_i * t_i` (`T_i` the tile index), size
//! `min(t_i, N_i)` and stride 1. Every operator maps the tiles of its operands
//! to the tile of its result, when that is again an arithmetic progression
//! (offset, size, stride) — the dimension of a hyper-rectangle:
//!
//! * `a + b`: one side a single point shifts the other; two progressions
//!   combine only when the outer one's stride is the inner one's span
//!   (`stride_inner * size_inner`), i.e. the inner tile covers its whole
//!   dimension (a reshape that expands dimensions: `(1*, partial?, full*)`).
//! * `a * c`: scales offset and stride.
//! * `a floordiv c`: divides the stride, or (when `c` is a multiple of the
//!   stride) shrinks the size to `ceil(size / c')`.
//! * `a mod c`: with `c' = c / stride`, a size `n` needs `n mod c' == 0`
//!   (whole rows) or `c' mod n == 0` (inside one row); otherwise the tile wraps
//!   across rows: a merge followed by an indivisible split, not a rectangle.
//!
//! Range variables (reduced or windowed dimensions) are read whole; runtime
//! variables are dynamic offsets of size 1.

use crate::algebra::{Expr, IndexingMap, VarKind};

/// One dimension of a tile: the elements `offset + k * stride`, `k < size`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileDim {
    /// Over the tile indices (dimension `i` = tile index of output dim `i`) and
    /// the map's runtime variables.
    pub offset: Expr,
    pub size: i64,
    pub stride: i64,
    /// Output dimensions this tile dimension derives from.
    pub sources: Vec<usize>,
}

/// A condition on the tile sizes for the tile to be a hyper-rectangle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// The output dimensions whose sizes it constrains.
    pub dims: Vec<usize>,
    /// The condition, in terms of the tile sizes (`t1 mod 5 == 0 || 5 mod t1 == 0`).
    pub condition: String,
    /// Whether the configured sizes satisfy it.
    pub satisfied: bool,
    /// Set for `mod` constraints: a merge of dimensions (inner extent
    /// `modulus`) followed by a split by `size` that divides neither way.
    pub merge_split: Option<MergeSplit>,
}

/// A merge of dimensions split again by a tile size (the seed's Theorem 5):
/// equivalent to split-then-merge only when the tile divides the inner extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeSplit {
    pub inner_extent: i64,
    pub tile: i64,
}

/// Why no tile could be derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// The tile of every result of `map` when output dimension `i` is tiled by
/// `sizes[i]` (clamped to the extent). Constraints met on the way are
/// appended to `constraints` (satisfied or not).
pub fn tile_of_map(
    map: &IndexingMap,
    sizes: &[i64],
    constraints: &mut Vec<Constraint>,
) -> Result<Vec<TileDim>, Unsupported> {
    if map.is_undefined() {
        return Err(Unsupported("the indexing map is undefined".into()));
    }
    let ctx = Ctx { map, sizes };
    map.results()
        .iter()
        .map(|e| ctx.tile(e, constraints))
        .collect()
}

struct Ctx<'a> {
    map: &'a IndexingMap,
    sizes: &'a [i64],
}

fn point(offset: Expr, sources: Vec<usize>) -> TileDim {
    TileDim {
        offset,
        size: 1,
        stride: 0,
        sources,
    }
}

fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn size_names(dims: &[usize]) -> String {
    match dims {
        [d] => format!("t{d}"),
        _ => format!(
            "({})",
            dims.iter()
                .map(|d| format!("t{d}"))
                .collect::<Vec<_>>()
                .join("*")
        ),
    }
}

impl Ctx<'_> {
    fn tile(&self, e: &Expr, cs: &mut Vec<Constraint>) -> Result<TileDim, Unsupported> {
        match e {
            Expr::Const(c) => Ok(point(Expr::constant(*c), vec![])),
            Expr::Var(v) => self.var_tile(*v),
            Expr::Add(a, b) => {
                let (a, b) = (self.tile(a, cs)?, self.tile(b, cs)?);
                Ok(self.add(a, b, cs))
            }
            Expr::Mul(a, b) => {
                let (x, c) = match (a.as_const(), b.as_const()) {
                    (_, Some(c)) => (a, c),
                    (Some(c), _) => (b, c),
                    _ => return Err(Unsupported(format!("non-affine product in {e:?}"))),
                };
                let t = self.tile(x, cs)?;
                if c == 0 {
                    return Ok(point(Expr::constant(0), t.sources));
                }
                let stride = t.stride.checked_mul(c).ok_or_else(overflow)?;
                Ok(TileDim {
                    offset: t.offset * c,
                    stride,
                    ..t
                })
            }
            Expr::FloorDiv(a, b) => {
                let c = positive_const(b)?;
                let t = self.tile(a, cs)?;
                Ok(floor_div(t, c))
            }
            Expr::Mod(a, b) => {
                let c = positive_const(b)?;
                let t = self.tile(a, cs)?;
                Ok(modulo(t, c, cs))
            }
            Expr::CeilDiv(..) | Expr::Min(..) | Expr::Max(..) => Err(Unsupported(
                "ceildiv, min and max have no hyper-rectangular tile here".into(),
            )),
        }
    }

    fn var_tile(&self, v: crate::algebra::Var) -> Result<TileDim, Unsupported> {
        let bounds = self.map.var_bounds(v);
        match v.kind {
            VarKind::Dim => {
                let i = v.index;
                let extent = bounds.hi.saturating_add(1).max(0);
                let t = *self
                    .sizes
                    .get(i)
                    .ok_or_else(|| Unsupported(format!("no tile size for dimension {i}")))?;
                // One tile: its index is always 0.
                let offset = if t >= extent {
                    Expr::constant(0)
                } else {
                    Expr::dim(i) * t
                };
                Ok(TileDim {
                    offset,
                    size: t.min(extent).max(1),
                    stride: 1,
                    sources: vec![i],
                })
            }
            VarKind::Range => {
                let size = bounds
                    .hi
                    .checked_sub(bounds.lo)
                    .and_then(|x| x.checked_add(1))
                    .ok_or_else(overflow)?;
                Ok(TileDim {
                    offset: Expr::constant(bounds.lo),
                    size: size.max(1),
                    stride: 1,
                    sources: vec![],
                })
            }
            VarKind::Runtime => Ok(point(Expr::var(v), vec![])),
        }
    }

    fn add(&self, a: TileDim, b: TileDim, cs: &mut Vec<Constraint>) -> TileDim {
        let sources = union(&a.sources, &b.sources);
        let offset = a.offset.clone() + b.offset.clone();
        if a.size == 1 || b.size == 1 {
            let t = if a.size == 1 { b } else { a };
            return TileDim {
                offset,
                sources,
                ..t
            };
        }
        let (inner, outer) = if a.stride.abs() <= b.stride.abs() {
            (a, b)
        } else {
            (b, a)
        };
        // The outer steps must land on the inner progression and leave no gap:
        // `outer.stride` a multiple of `inner.stride`, at most the inner span
        // (equal: a merged hyper-rectangle; less: overlapping rows, the same
        // elements read twice, still one progression).
        let span = inner.stride.checked_mul(inner.size);
        let steps = (inner.stride != 0 && outer.stride % inner.stride == 0)
            .then(|| outer.stride / inner.stride);
        let satisfied = matches!((steps, span), (Some(k), Some(s)) if k >= 0 && outer.stride <= s);
        cs.push(Constraint {
            dims: sources.clone(),
            condition: format!(
                "{} covers its whole dimension (stride {} must be a multiple of {} and at most {} x {})",
                size_names(&inner.sources),
                outer.stride,
                inner.stride,
                inner.stride,
                inner.size
            ),
            satisfied,
            merge_split: None,
        });
        let size = match steps {
            Some(k) if satisfied => (outer.size - 1)
                .saturating_mul(k)
                .saturating_add(inner.size),
            _ => inner.size.saturating_mul(outer.size),
        };
        TileDim {
            offset,
            size,
            stride: inner.stride,
            sources,
        }
    }
}

fn floor_div(t: TileDim, c: i64) -> TileDim {
    let offset = t.offset.clone().floor_div(c);
    if t.size == 1 {
        return point(offset, t.sources);
    }
    if t.stride % c == 0 {
        return TileDim {
            offset,
            stride: t.stride / c,
            ..t
        };
    }
    if t.stride != 0 && c % t.stride == 0 && aligned(&t, c / t.stride, c) {
        let c2 = c / t.stride;
        let size = t.size / c2 + i64::from(t.size % c2 != 0);
        return TileDim {
            offset,
            size: size.max(1),
            stride: 1,
            sources: t.sources,
        };
    }
    // Unaligned, or neither divides the other: the values still form a range
    // (floor is monotone); this bounds it from above.
    let span = t.stride.saturating_mul(t.size - 1).saturating_add(c - 1);
    let last = span / c;
    TileDim {
        offset,
        size: last.saturating_add(1).max(1),
        stride: 1,
        sources: t.sources,
    }
}

fn modulo(t: TileDim, c: i64, cs: &mut Vec<Constraint>) -> TileDim {
    let offset = t.offset.clone().modulo(c);
    if t.size == 1 || t.stride % c == 0 {
        return point(offset, t.sources);
    }
    let c2 = if t.stride != 0 && c % t.stride == 0 {
        c / t.stride
    } else {
        c
    };
    let n = t.size;
    let divides = n % c2 == 0 || c2 % n == 0;
    // The tiles must also start on a row (n multiple of the row) or on a
    // multiple of the tile inside a row: an offset like `T0 * 6` over rows of
    // 4 makes every tile wrap even though the sizes divide.
    let unit = if n % c2 == 0 {
        c
    } else {
        n.saturating_mul(t.stride)
    };
    let aligned = divides && divisible(&t.offset, unit);
    let names = size_names(&t.sources);
    let condition = if divides && !aligned {
        format!(
            "the tile offsets {} are multiples of {unit} (rows of {c2} wrap otherwise)",
            offset_note(&t)
        )
    } else {
        format!("{names} mod {c2} == 0 || {c2} mod {names} == 0 (the tile is {n})")
    };
    cs.push(Constraint {
        dims: t.sources.clone(),
        condition,
        satisfied: aligned,
        merge_split: (!divides).then_some(MergeSplit {
            inner_extent: c2,
            tile: n,
        }),
    });
    TileDim {
        offset,
        size: n.min(c2),
        stride: t.stride,
        sources: t.sources,
    }
}

/// Whether tile `t`, split into rows of `c2` elements (`c` in index units),
/// starts on a row (when it spans whole rows) or on a multiple of itself
/// inside a row: then it covers `ceil(size / c2)` rows exactly.
fn aligned(t: &TileDim, c2: i64, c: i64) -> bool {
    if t.size % c2 == 0 {
        divisible(&t.offset, c)
    } else if c2 % t.size == 0 {
        divisible(&t.offset, t.size.saturating_mul(t.stride))
    } else {
        false
    }
}

/// Whether every value of `e` is a multiple of `m` (sufficient test over the
/// affine structure: a variable alone is not, a multiple of `m` is).
fn divisible(e: &Expr, m: i64) -> bool {
    if m <= 1 {
        return true;
    }
    match e {
        Expr::Const(c) => c % m == 0,
        Expr::Add(a, b) => divisible(a, m) && divisible(b, m),
        Expr::Mul(a, b) => match (a.as_const(), b.as_const()) {
            (_, Some(k)) => divisible(a, m / gcd(k, m)),
            (Some(k), _) => divisible(b, m / gcd(k, m)),
            _ => false,
        },
        // floor(x / k) is a multiple of m when x is a multiple of k * m.
        Expr::FloorDiv(a, b) => match (b.as_const(), b.as_const().and_then(|k| k.checked_mul(m))) {
            (Some(k), Some(km)) if k > 0 => divisible(a, km),
            _ => false,
        },
        _ => false,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1).max(1)
}

/// The output dimensions a tile dimension derives from, for messages.
fn offset_note(t: &TileDim) -> String {
    let dims: Vec<String> = t.sources.iter().map(|d| format!("d{d}")).collect();
    format!("(over {})", dims.join(", "))
}

fn positive_const(e: &Expr) -> Result<i64, Unsupported> {
    match e.as_const() {
        Some(c) if c > 0 => Ok(c),
        _ => Err(Unsupported(format!(
            "division by a non-constant or non-positive {e:?}"
        ))),
    }
}

fn overflow() -> Unsupported {
    Unsupported("tile arithmetic overflows".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> IndexingMap {
        IndexingMap::parse(text).unwrap()
    }

    #[test]
    fn collapse_reshape_split_by_four_is_not_a_rectangle() {
        // f32[2,5] -> f32[10] read by output tile 4: merge then split by 4.
        let m = map("(d0) -> (d0 floordiv 5, d0 mod 5), domain: d0 in [0, 9]");
        let mut cs = vec![];
        tile_of_map(&m, &[4], &mut cs).unwrap();
        assert_eq!(cs.len(), 1);
        assert!(!cs[0].satisfied);
        assert_eq!(
            cs[0].merge_split,
            Some(MergeSplit {
                inner_extent: 5,
                tile: 4
            })
        );
        for (t, ok) in [(1, true), (5, true), (10, true), (2, false), (8, false)] {
            let mut cs = vec![];
            let dims = tile_of_map(&m, &[t], &mut cs).unwrap();
            assert_eq!(cs.iter().all(|c| c.satisfied), ok, "t = {t}");
            if t == 10 {
                assert_eq!((dims[0].size, dims[1].size), (2, 5));
            }
        }
    }

    #[test]
    fn expand_reshape_needs_full_inner_tile() {
        // f32[10] read as f32[2,5]: index d0 * 5 + d1.
        let m = map("(d0, d1) -> (d0 * 5 + d1), domain: d0 in [0, 1], d1 in [0, 4]");
        let mut cs = vec![];
        let dims = tile_of_map(&m, &[2, 5], &mut cs).unwrap();
        assert!(cs.iter().all(|c| c.satisfied));
        assert_eq!((dims[0].size, dims[0].stride), (10, 1));
        let mut cs = vec![];
        tile_of_map(&m, &[2, 4], &mut cs).unwrap();
        assert!(cs.iter().any(|c| !c.satisfied));
        let mut cs = vec![];
        let dims = tile_of_map(&m, &[1, 4], &mut cs).unwrap();
        assert!(cs.is_empty());
        assert_eq!(dims[0].size, 4);
    }

    #[test]
    fn transpose_and_broadcast_keep_sizes() {
        let m = map("(d0, d1, d2) -> (d2, d0), domain: d0 in [0, 9], d1 in [0, 7], d2 in [0, 127]");
        let mut cs = vec![];
        let dims = tile_of_map(&m, &[2, 4, 64], &mut cs).unwrap();
        assert_eq!(dims[0].size, 64);
        assert_eq!(dims[1].size, 2);
        assert_eq!(dims[0].offset, Expr::dim(2) * 64);
    }

    #[test]
    fn reduction_range_is_read_whole() {
        let m = map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 9], s0 in [0, 126]");
        let mut cs = vec![];
        let dims = tile_of_map(&m, &[1], &mut cs).unwrap();
        assert_eq!(dims[1].size, 127);
    }
}
