//! An iteration space of extents `N_i` tiled by sizes `t_i`.
//!
//! Tiling splits every dimension `d` of extent `N` into a tile index `T` (extent
//! `ceil(N / t)`) and an offset inside the tile `O` (extent `t`), with
//! `d = T * t + O`. When `t` does not divide `N` the split is *indivisible*: the
//! last tile runs past the end of the dimension and the positions past it are
//! *holes* (the nvFuser seed, "Divisibility of Split"). Generated code iterates
//! over holes too, so every indivisible split needs the guarding predicate
//! `d < N` (the lower bound `0 <= d` holds by construction).
//!
//! This module is the arithmetic of that picture, shared by the HLO tiling
//! analysis (`output_tiles` of Triton fusions) and by MLIR `tile_sizes`.
//! All arithmetic is checked: an extent or tile size that overflows `i64` is an
//! error, never a wrap-around.

use crate::algebra::{Expr, IndexingMap, Interval, Variable};
use std::fmt;

/// Why a tiling could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A tile size below 1.
    NonPositiveTile { dim: usize, tile: i64 },
    /// A negative extent (dynamic or invalid shapes are not tiled).
    NegativeExtent { dim: usize, extent: i64 },
    /// `extents` and `tiles` have different lengths.
    RankMismatch { extents: usize, tiles: usize },
    /// Tile count times tile size, or a product of extents, overflows `i64`.
    Overflow { dim: usize },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::NonPositiveTile { dim, tile } => {
                write!(f, "tile size {tile} of dimension {dim} must be at least 1")
            }
            SplitError::NegativeExtent { dim, extent } => {
                write!(f, "dimension {dim} has a negative extent {extent}")
            }
            SplitError::RankMismatch { extents, tiles } => {
                write!(f, "{tiles} tile sizes for a rank-{extents} iteration space")
            }
            SplitError::Overflow { dim } => {
                write!(f, "the tiling of dimension {dim} overflows 64-bit integers")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// One dimension of extent `extent` split by tile size `tile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Split {
    pub extent: i64,
    pub tile: i64,
}

impl Split {
    /// Checks `tile >= 1`, `extent >= 0` and that the padded extent
    /// (`tile_count * tile`) fits in `i64`. `dim` only labels the error.
    pub fn new(dim: usize, extent: i64, tile: i64) -> Result<Split, SplitError> {
        if tile < 1 {
            return Err(SplitError::NonPositiveTile { dim, tile });
        }
        if extent < 0 {
            return Err(SplitError::NegativeExtent { dim, extent });
        }
        let split = Split { extent, tile };
        split
            .tile_count()
            .checked_mul(tile)
            .ok_or(SplitError::Overflow { dim })?;
        Ok(split)
    }

    /// Number of tiles: `ceil(extent / tile)` (0 for an empty dimension).
    pub fn tile_count(&self) -> i64 {
        // extent >= 0 and tile >= 1: no overflow in this form.
        self.extent / self.tile + i64::from(self.extent % self.tile != 0)
    }

    /// Whether the tile size divides the extent (no holes).
    pub fn is_divisible(&self) -> bool {
        self.extent % self.tile == 0
    }

    /// Positions of the last tile past the end of the dimension.
    pub fn holes(&self) -> i64 {
        self.padded_extent() - self.extent
    }

    /// `tile_count * tile`: the extent the generated loops iterate over.
    pub fn padded_extent(&self) -> i64 {
        // Checked in `new`.
        self.tile_count() * self.tile
    }

    /// Valid (non-hole) positions in the last tile; `tile` when divisible.
    pub fn last_tile_valid(&self) -> i64 {
        self.tile - self.holes()
    }

    /// The tile size clamped to the extent: a tile larger than the dimension
    /// still reads at most `extent` valid elements.
    pub fn effective_tile(&self) -> i64 {
        self.tile.min(self.extent)
    }

    /// The predicate guarding the holes, `None` when the split is divisible.
    pub fn predicate(&self, dim: usize) -> Option<Predicate> {
        (!self.is_divisible()).then_some(Predicate {
            dim,
            bound: self.extent,
        })
    }

    /// Whether position `offset` of tile `tile_index` is a hole.
    pub fn is_hole(&self, tile_index: i64, offset: i64) -> bool {
        tile_index * self.tile + offset >= self.extent
    }
}

/// `d{dim} < bound`: the guard of an indivisible split of dimension `dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Predicate {
    pub dim: usize,
    pub bound: i64,
}

impl Predicate {
    /// The predicate with the dimension spelled `name` (`d1 < 6500`).
    pub fn render(&self, name: &str) -> String {
        format!("{name} < {}", self.bound)
    }

    /// Whether index value `value` satisfies the predicate.
    pub fn holds(&self, value: i64) -> bool {
        value < self.bound
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "d{} < {}", self.dim, self.bound)
    }
}

/// An iteration space of extents `N_i` tiled by sizes `t_i`, one [`Split`] per
/// dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TiledSpace {
    pub splits: Vec<Split>,
}

impl TiledSpace {
    /// Tiles `extents` by `tiles` (same rank). Every product the accessors
    /// compute (tile counts, padded sizes) is checked here once.
    pub fn new(extents: &[i64], tiles: &[i64]) -> Result<TiledSpace, SplitError> {
        if extents.len() != tiles.len() {
            return Err(SplitError::RankMismatch {
                extents: extents.len(),
                tiles: tiles.len(),
            });
        }
        let splits = extents
            .iter()
            .zip(tiles)
            .enumerate()
            .map(|(dim, (&n, &t))| Split::new(dim, n, t))
            .collect::<Result<Vec<_>, _>>()?;
        let space = TiledSpace { splits };
        for (dim, _) in space.splits.iter().enumerate() {
            let partial = &space.splits[..=dim];
            checked_product(partial.iter().map(Split::padded_extent))
                .and_then(|_| checked_product(partial.iter().map(|s| s.extent)))
                .ok_or(SplitError::Overflow { dim })?;
        }
        Ok(space)
    }

    pub fn rank(&self) -> usize {
        self.splits.len()
    }

    pub fn extents(&self) -> Vec<i64> {
        self.splits.iter().map(|s| s.extent).collect()
    }

    pub fn tiles(&self) -> Vec<i64> {
        self.splits.iter().map(|s| s.tile).collect()
    }

    /// Tiles per dimension.
    pub fn tile_counts(&self) -> Vec<i64> {
        self.splits.iter().map(Split::tile_count).collect()
    }

    /// Total number of tiles (the launch grid size).
    pub fn total_tiles(&self) -> i64 {
        checked_product(self.splits.iter().map(Split::tile_count)).unwrap_or(i64::MAX)
    }

    /// Elements the tiles cover, holes included.
    pub fn padded_elements(&self) -> i64 {
        checked_product(self.splits.iter().map(Split::padded_extent)).unwrap_or(i64::MAX)
    }

    /// Valid elements (the product of the extents).
    pub fn elements(&self) -> i64 {
        checked_product(self.splits.iter().map(|s| s.extent)).unwrap_or(i64::MAX)
    }

    /// Hole elements over the whole space: a position is a hole when any of its
    /// dimensions is past its extent.
    pub fn hole_elements(&self) -> i64 {
        self.padded_elements() - self.elements()
    }

    /// The dimensions whose split is indivisible.
    pub fn indivisible_dims(&self) -> Vec<usize> {
        (0..self.rank())
            .filter(|&d| !self.splits[d].is_divisible())
            .collect()
    }

    /// The guarding predicates, one per indivisible dimension. For a plain tiled
    /// space this set is already minimal: each guards holes only its own
    /// dimension has (see [`super::predicates`] for spaces transformed further).
    pub fn predicates(&self) -> Vec<Predicate> {
        if self.elements() == 0 {
            // No tiles at all: nothing runs, nothing to guard.
            return vec![];
        }
        self.splits
            .iter()
            .enumerate()
            .filter_map(|(d, s)| s.predicate(d))
            .collect()
    }

    /// Whether the element at offsets `offset` of tile `tile_index` is a hole.
    pub fn is_hole(&self, tile_index: &[i64], offset: &[i64]) -> bool {
        self.splits
            .iter()
            .zip(tile_index.iter().zip(offset))
            .any(|(s, (&t, &o))| s.is_hole(t, o))
    }

    /// The tiling as an indexing map `(tile ids)[offsets] -> (element index)`:
    /// dimension `d_i` is the tile index (extent `tile_count_i`), range variable
    /// `s_i` the offset in the tile (extent `t_i`), result `d_i * t_i + s_i`, and
    /// one constraint `d_i * t_i + s_i in [0, N_i - 1]` per indivisible split:
    /// the predicates as a map domain, so composing it with an operand's map
    /// carries them along.
    pub fn to_indexing_map(&self) -> IndexingMap {
        let dims = self
            .splits
            .iter()
            .map(|s| Variable::new(0, s.tile_count() - 1))
            .collect();
        let ranges = self
            .splits
            .iter()
            .map(|s| Variable::new(0, s.tile - 1))
            .collect();
        let results: Vec<Expr> = (0..self.rank()).map(|i| self.element_index(i)).collect();
        let constraints = self
            .indivisible_dims()
            .into_iter()
            .map(|i| {
                (
                    results[i].clone(),
                    Interval::new(0, self.splits[i].extent - 1),
                )
            })
            .collect();
        IndexingMap::new(dims, ranges, vec![], results, constraints)
    }

    /// `d_i * t_i + s_i`: the element index of dimension `i` from the tile index
    /// (dimension variable `i`) and the offset in the tile (range variable `i`).
    pub fn element_index(&self, i: usize) -> Expr {
        Expr::dim(i) * self.splits[i].tile + Expr::range(i)
    }

    /// `4x128`: the tile sizes as XLA and the hover print them.
    pub fn tiles_label(&self) -> String {
        join_sizes(&self.tiles())
    }
}

/// `4x128` (`scalar` for rank 0).
pub fn join_sizes(sizes: &[i64]) -> String {
    if sizes.is_empty() {
        return "scalar".to_string();
    }
    sizes
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

fn checked_product(values: impl Iterator<Item = i64>) -> Option<i64> {
    values.into_iter().try_fold(1i64, i64::checked_mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_split_by_four_has_two_tiles_two_holes_and_guard() {
        let s = Split::new(0, 6, 4).unwrap();
        assert_eq!(s.tile_count(), 2);
        assert_eq!(s.holes(), 2);
        assert_eq!(s.last_tile_valid(), 2);
        assert!(!s.is_divisible());
        assert_eq!(s.predicate(0).unwrap().to_string(), "d0 < 6");
        assert_eq!(s.predicate(1).unwrap().render("d1"), "d1 < 6");
    }

    #[test]
    fn divisible_split_needs_no_predicate() {
        let s = Split::new(0, 8, 4).unwrap();
        assert_eq!((s.tile_count(), s.holes()), (2, 0));
        assert_eq!(s.predicate(0), None);
    }

    #[test]
    fn tile_larger_than_extent_is_one_tile_with_holes() {
        let s = Split::new(0, 3, 16).unwrap();
        assert_eq!((s.tile_count(), s.holes(), s.effective_tile()), (1, 13, 3));
        let empty = Split::new(0, 0, 4).unwrap();
        assert_eq!((empty.tile_count(), empty.holes()), (0, 0));
    }

    #[test]
    fn bad_sizes_are_errors_not_panics() {
        assert_eq!(
            Split::new(2, 6, 0),
            Err(SplitError::NonPositiveTile { dim: 2, tile: 0 })
        );
        assert!(matches!(
            Split::new(0, -1, 4),
            Err(SplitError::NegativeExtent { .. })
        ));
        assert!(matches!(
            Split::new(0, i64::MAX, 2),
            Err(SplitError::Overflow { .. })
        ));
        assert!(matches!(
            TiledSpace::new(&[1 << 40, 1 << 40], &[1, 1]),
            Err(SplitError::Overflow { dim: 1 })
        ));
        assert!(matches!(
            TiledSpace::new(&[4], &[1, 1]),
            Err(SplitError::RankMismatch { .. })
        ));
    }

    #[test]
    fn tiled_space_counts() {
        let t = TiledSpace::new(&[6, 8, 5], &[4, 4, 5]).unwrap();
        assert_eq!(t.tile_counts(), vec![2, 2, 1]);
        assert_eq!(t.total_tiles(), 4);
        assert_eq!(t.padded_elements(), 8 * 8 * 5);
        assert_eq!(t.hole_elements(), 8 * 8 * 5 - 6 * 8 * 5);
        assert_eq!(t.predicates(), vec![Predicate { dim: 0, bound: 6 }]);
        assert_eq!(t.tiles_label(), "4x4x5");
    }

    /// Brute force: enumerate every tile and every offset of small spaces; the
    /// holes are exactly the positions outside the extents, the predicates
    /// exclude exactly them, each predicate excludes some hole no other does,
    /// and the indexing map agrees with the arithmetic.
    #[test]
    fn brute_force_holes_and_predicates() {
        for n0 in 0..=7 {
            for t0 in 1..=5 {
                for n1 in 1..=5 {
                    for t1 in 1..=4 {
                        check_space(&[n0, n1], &[t0, t1]);
                    }
                }
            }
        }
    }

    fn check_space(extents: &[i64], tiles: &[i64]) {
        let space = TiledSpace::new(extents, tiles).unwrap();
        let map = space.to_indexing_map();
        let preds = space.predicates();
        let mut holes = 0;
        let mut valid = std::collections::BTreeSet::new();
        let mut needed = vec![false; preds.len()];
        let counts = space.tile_counts();
        for t0 in 0..counts[0] {
            for t1 in 0..counts[1] {
                for o0 in 0..tiles[0] {
                    for o1 in 0..tiles[1] {
                        let idx = [t0 * tiles[0] + o0, t1 * tiles[1] + o1];
                        let hole = idx[0] >= extents[0] || idx[1] >= extents[1];
                        assert_eq!(space.is_hole(&[t0, t1], &[o0, o1]), hole);
                        let pass: Vec<bool> = preds.iter().map(|p| p.holds(idx[p.dim])).collect();
                        assert_eq!(pass.iter().all(|&b| b), !hole, "{extents:?}/{tiles:?}");
                        if pass.iter().filter(|&&b| !b).count() == 1 {
                            needed[pass.iter().position(|&b| !b).unwrap()] = true;
                        }
                        assert_eq!(map.contains_point(&[t0, t1], &[o0, o1], &[]), !hole);
                        if hole {
                            holes += 1;
                        } else {
                            assert_eq!(map.evaluate(&[t0, t1], &[o0, o1]).unwrap(), idx);
                            assert!(valid.insert(idx), "element visited twice");
                        }
                    }
                }
            }
        }
        assert_eq!(holes, space.hole_elements(), "{extents:?}/{tiles:?}");
        assert_eq!(valid.len() as i64, space.elements(), "every element once");
        assert!(needed.iter().all(|&b| b), "a redundant predicate");
    }
}
