//! Splitting one loop of extent `N` into tiles of size `T` (minimal local version;
//! the project-wide split/predicate analysis lives in `crate::tiling` once it
//! lands, see ARCHITECTURE.md).
//!
//! The tiled loop is `(tile, intra) -> tile * T + intra` with `tile` in
//! `[0, ceil(N / T) - 1]` and `intra` in `[0, T - 1]`. When `T` does not divide
//! `N`, the last tile runs past the end: `ceil(N / T) * T - N` iterations are
//! holes, and the predicate `tile * T + intra < N` (equivalently, on the last tile
//! only, `intra < N mod T`) must guard them. In a reduction loop the holes must
//! contribute the combiner's identity (0 for add, -inf for max, ...).

use crate::algebra::{Expr, IndexingMap, Interval, Variable};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSplit {
    pub extent: i64,
    pub tile: i64,
    /// `ceil(extent / tile)`.
    pub tiles: i64,
    /// Iterations past the end: `tiles * tile - extent` (0 when `tile` divides `extent`).
    pub holes: i64,
    pub reduction: bool,
    /// `(tile, intra) -> (tile * T + intra)`, with the predicate as a constraint
    /// when there are holes.
    pub map: IndexingMap,
}

impl LoopSplit {
    pub fn divisible(&self) -> bool {
        self.holes == 0
    }

    /// The minimal guard, in terms of the tile index `t` and the index `i` in the tile.
    pub fn predicate(&self) -> Option<String> {
        (!self.divisible()).then(|| {
            format!(
                "t * {} + i < {} (only the last tile, t = {}, is partial: i < {})",
                self.tile,
                self.extent,
                self.tiles - 1,
                self.extent - (self.tiles - 1) * self.tile
            )
        })
    }
}

/// Splits a loop of `extent` by `tile`; `None` for a non-positive tile or overflow.
pub fn split_loop(extent: i64, tile: i64, reduction: bool) -> Option<LoopSplit> {
    if tile <= 0 || extent < 0 {
        return None;
    }
    let tiles = extent.checked_add(tile - 1)? / tile;
    let padded = tiles.checked_mul(tile)?;
    let holes = padded - extent;
    let mut map = IndexingMap::new(
        vec![
            Variable::new(0, (tiles - 1).max(0)),
            Variable::new(0, tile - 1),
        ],
        vec![],
        vec![],
        vec![Expr::dim(0) * tile + Expr::dim(1)],
        vec![],
    );
    if holes > 0 {
        map.add_constraint(
            Expr::dim(0) * tile + Expr::dim(1),
            Interval::new(0, extent - 1),
        );
    }
    Some(LoopSplit {
        extent,
        tile,
        tiles,
        holes,
        reduction,
        map,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: enumerate (tile, intra), count valid points and holes, and check
    /// the map's predicate admits exactly the in-bounds ones, each index once.
    #[test]
    fn split_matches_enumeration() {
        for extent in 0..40i64 {
            for tile in 1..12i64 {
                let s = split_loop(extent, tile, false).unwrap();
                let mut seen = vec![0; extent as usize];
                let mut holes = 0;
                for t in 0..s.tiles {
                    for i in 0..tile {
                        let x = t * tile + i;
                        let inside = s.map.contains_point(&[t, i], &[], &[]);
                        assert_eq!(inside, x < extent, "N={extent} T={tile} t={t} i={i}");
                        if x < extent {
                            seen[x as usize] += 1;
                            assert_eq!(s.map.evaluate(&[t, i], &[]), Some(vec![x]));
                        } else {
                            holes += 1;
                        }
                    }
                }
                assert!(seen.iter().all(|&c| c == 1));
                assert_eq!(holes, s.holes, "N={extent} T={tile}");
                assert_eq!(s.divisible(), extent % tile == 0);
                assert_eq!(s.predicate().is_some(), extent % tile != 0);
            }
        }
        assert!(split_loop(10, 0, false).is_none());
        assert!(split_loop(i64::MAX, 7, false).is_none());
    }
}
