//! A picture of what one warp (or one tile) reads of a tensor: the plane of its
//! two physically most minor dimensions (rows: the second most minor, columns:
//! the most minor), downsampled to at most [`MAX_ROWS`] x [`MAX_COLUMNS`] cells,
//! each drawn by how much of it is read. A strided read shows as a column, a
//! coalesced one as a row. Elements of more major dimensions fold onto the
//! plane (offsets modulo the plane's size).

use super::launch::linearize;
use super::tiled::TileRead;
use crate::algebra::Expr;
use crate::analysis::ArrayShape;

pub const MAX_ROWS: i64 = 16;
pub const MAX_COLUMNS: i64 = 32;
/// Tile elements enumerated for a picture at most.
pub const MAX_TILE_ELEMENTS: i64 = 1 << 16;

/// Cell glyphs by the fraction of the cell read: none, some, a quarter, half, all.
pub const NONE: char = '·';
pub const SOME: char = '░';
pub const QUARTER: char = '▒';
pub const HALF: char = '▓';
pub const ALL: char = '█';

/// The drawn plane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Extents of the plane: rows and columns (elements).
    pub plane: (i64, i64),
    /// Elements per cell: rows and columns.
    pub cell: (i64, i64),
    /// `(read, total)` elements of every cell, row by row.
    pub counts: Vec<Vec<(i64, i64)>>,
    /// Distinct planes the read touches (more than 1: folded).
    pub planes_touched: usize,
}

/// The glyph for `read` of `total` elements.
pub fn glyph(read: i64, total: i64) -> char {
    if read <= 0 || total <= 0 {
        NONE
    } else if read >= total {
        ALL
    } else if read * 2 >= total {
        HALF
    } else if read * 4 >= total {
        QUARTER
    } else {
        SOME
    }
}

/// The plane of `shape`: (rows, columns) = extents of the second most minor and
/// most minor physical dimensions (1 row for a vector).
pub fn plane(shape: &ArrayShape) -> (i64, i64) {
    let physical = shape.physical_dims();
    let n = physical.len();
    match n {
        0 => (1, 1),
        1 => (1, physical[0].max(1)),
        _ => (physical[n - 2].max(1), physical[n - 1].max(1)),
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// Draws the linear physical `offsets` read of `shape`.
pub fn draw(shape: &ArrayShape, offsets: &[i64]) -> Picture {
    let (rows, cols) = plane(shape);
    let cell = (ceil_div(rows, MAX_ROWS), ceil_div(cols, MAX_COLUMNS));
    let (grid_rows, grid_cols) = (ceil_div(rows, cell.0), ceil_div(cols, cell.1));
    let mut counts: Vec<Vec<(i64, i64)>> = (0..grid_rows)
        .map(|r| {
            (0..grid_cols)
                .map(|c| {
                    let h = (rows - r * cell.0).min(cell.0);
                    let w = (cols - c * cell.1).min(cell.1);
                    (0, h * w)
                })
                .collect()
        })
        .collect();
    let size = rows.saturating_mul(cols);
    let mut seen = std::collections::BTreeSet::new();
    let mut planes = std::collections::BTreeSet::new();
    for &o in offsets {
        let in_plane = o.rem_euclid(size);
        planes.insert(o.div_euclid(size));
        if !seen.insert(in_plane) {
            continue;
        }
        let (r, c) = (in_plane / cols, in_plane % cols);
        counts[(r / cell.0) as usize][(c / cell.1) as usize].0 += 1;
    }
    Picture {
        plane: (rows, cols),
        cell,
        counts,
        planes_touched: planes.len(),
    }
}

impl Picture {
    /// The glyph rows.
    pub fn lines(&self) -> Vec<String> {
        self.counts
            .iter()
            .map(|row| row.iter().map(|&(r, t)| glyph(r, t)).collect())
            .collect()
    }

    /// `200 x 100 elements, each cell 13 x 4` (and folded planes).
    pub fn caption(&self) -> String {
        let mut s = format!(
            "{} x {} elements (2nd most minor x most minor dimension)",
            self.plane.0, self.plane.1
        );
        if self.cell != (1, 1) {
            s.push_str(&format!(", each cell {} x {}", self.cell.0, self.cell.1));
        }
        if self.planes_touched > 1 {
            s.push_str(&format!(", {} planes folded onto one", self.planes_touched));
        }
        s
    }

    /// The picture as a fenced block for markdown.
    pub fn markdown(&self) -> String {
        format!("```text\n{}\n```", self.lines().join("\n"))
    }
}

/// The linear physical offsets the first tile of `read` covers (masked
/// elements outside the tensor excluded), up to [`MAX_TILE_ELEMENTS`].
pub fn tile_offsets(read: &TileRead) -> Vec<i64> {
    let rank = read.shape.rank();
    let total = read
        .sizes
        .iter()
        .try_fold(1i64, |acc, &s| acc.checked_mul(s.max(0)));
    let Some(total) = total.filter(|&t| t <= MAX_TILE_ELEMENTS) else {
        return vec![];
    };
    let mut out = Vec::with_capacity(total as usize);
    let mut k = vec![0i64; rank];
    'outer: loop {
        let index: Vec<i64> = (0..rank)
            .map(|d| read.origin[d].saturating_add(k[d].saturating_mul(read.strides[d])))
            .collect();
        if index
            .iter()
            .zip(&read.shape.dims)
            .all(|(&i, &n)| (0..n).contains(&i))
        {
            let exprs: Vec<Expr> = index.iter().map(|&i| Expr::constant(i)).collect();
            if let Some(o) = linearize(&read.shape, &exprs).evaluate(&[], &[], &[]) {
                out.push(o);
            }
        }
        for d in (0..rank).rev() {
            k[d] += 1;
            if k[d] < read.sizes[d] {
                continue 'outer;
            }
            k[d] = 0;
        }
        break;
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_read_is_a_column() {
        // p1 f32[100,200]{0,1}: a warp reads thread_x * 100.
        let s = ArrayShape::with_layout(vec![100, 200], vec![0, 1]);
        let offsets: Vec<i64> = (0..32).map(|t| t * 100).collect();
        let p = draw(&s, &offsets);
        assert_eq!(p.plane, (200, 100));
        assert_eq!(p.cell, (13, 4));
        let lines = p.lines();
        assert_eq!(lines.len(), 16);
        assert!(lines.iter().all(|l| l.chars().count() == 25));
        // Rows 0-31 of column 0: cells (0..2, 0) read 13, 13, 6 of 52 elements.
        assert_eq!(lines[0].chars().next(), Some(QUARTER));
        assert_eq!(lines[2].chars().next(), Some(SOME));
        assert_eq!(lines[3].chars().next(), Some(NONE));
        assert!(lines[0].chars().skip(1).all(|c| c == NONE));
    }
}
