//! Which devices hold each tile, drawn as `jax.debug.visualize_array_sharding`
//! draws it: one box per tile laid out as the array (rows along the first of
//! the two dimensions drawn, columns along the second), each labelled with the
//! devices holding it. A vector is one row; an array of rank three or more is
//! drawn over its last two dimensions, for the tiles at index 0 of the others.
//! Large tilings are cut to [`MAX_CELLS`] boxes a side.

use super::ShapeTiles;

/// Boxes drawn along a side; more are counted, not drawn.
pub const MAX_CELLS: usize = 8;
/// Characters of a box's label; a longer device list ends in `…`.
const MAX_LABEL: usize = 15;

/// The grid, a few lines of text (box-drawing characters), or `None` when there
/// is one tile only (the words say it) or the array is a scalar.
pub fn draw(tiles: &ShapeTiles) -> Option<String> {
    let rank = tiles.splits.len();
    if rank == 0 || tiles.tiles.len() <= 1 {
        return None;
    }
    let (row_dim, col_dim) = if rank == 1 {
        (None, 0)
    } else {
        (Some(rank - 2), rank - 1)
    };
    let rows = row_dim.map_or(1, |d| tiles.splits[d]) as usize;
    let cols = tiles.splits[col_dim] as usize;
    let (shown_rows, shown_cols) = (rows.min(MAX_CELLS), cols.min(MAX_CELLS));
    let mut labels = vec![vec![String::new(); shown_cols]; shown_rows];
    for tile in &tiles.tiles {
        let others_first = tile
            .index
            .iter()
            .enumerate()
            .all(|(d, &i)| Some(d) == row_dim || d == col_dim || i == 0);
        let r = row_dim.map_or(0, |d| tile.index[d]) as usize;
        let c = tile.index[col_dim] as usize;
        if others_first && r < shown_rows && c < shown_cols {
            labels[r][c] = label(&tile.devices);
        }
    }
    let width = labels
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        + 2;
    let more_cols = cols > shown_cols;
    let line = |left: char, mid: char, right: char| {
        let mut s = String::from(left);
        for c in 0..shown_cols {
            s.push_str(&"─".repeat(width));
            s.push(if c + 1 == shown_cols { right } else { mid });
        }
        s
    };
    let mut out = vec![line('┌', '┬', '┐')];
    for (r, row) in labels.iter().enumerate() {
        let mut s = String::from("│");
        for l in row {
            let pad = width - l.chars().count();
            s.push_str(&format!(
                "{}{l}{}│",
                " ".repeat(pad / 2),
                " ".repeat(pad - pad / 2)
            ));
        }
        if more_cols && r == 0 {
            s.push_str(&format!(" … {} more columns", cols - shown_cols));
        }
        out.push(s);
        out.push(if r + 1 == shown_rows {
            line('└', '┴', '┘')
        } else {
            line('├', '┼', '┤')
        });
    }
    if rows > shown_rows {
        out.push(format!("… {} more rows", rows - shown_rows));
    }
    let mut caption = match row_dim {
        Some(d) => format!("rows: dim {d}, columns: dim {col_dim}"),
        None => "columns: dim 0".to_string(),
    };
    if rank > 2 {
        caption.push_str(&format!(
            " (the tiles at index 0 of dims {})",
            (0..rank - 2)
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.push(caption);
    Some(out.join("\n"))
}

/// `0,4`, cut to [`MAX_LABEL`] characters.
fn label(devices: &[i64]) -> String {
    let text: Vec<String> = devices.iter().map(i64::to_string).collect();
    let text = text.join(",");
    if text.chars().count() <= MAX_LABEL {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_LABEL - 1).collect();
    if let Some(comma) = cut.rfind(',') {
        cut.truncate(comma + 1);
    }
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::parse;

    fn grid(sharding: &str, dims: &[i64]) -> Option<String> {
        let leaf = parse(sharding).unwrap().v2().unwrap();
        draw(&leaf.tiles(dims, Some(8)).unwrap())
    }

    #[test]
    fn a_matrix_split_along_columns_shows_one_row_of_boxes() {
        let g = grid(
            "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
            &[64, 128],
        )
        .unwrap();
        assert_eq!(
            g,
            "┌─────┬─────┬─────┬─────┐\n│ 0,4 │ 1,5 │ 2,6 │ 3,7 │\n└─────┴─────┴─────┴─────┘\nrows: dim 0, columns: dim 1"
        );
    }

    #[test]
    fn rows_and_columns_follow_the_tile_assignment() {
        let g = grid("{devices=[2,4]<=[8]}", &[16, 16]).unwrap();
        let lines: Vec<&str> = g.lines().collect();
        assert_eq!(lines[1], "│ 0 │ 1 │ 2 │ 3 │");
        assert_eq!(lines[3], "│ 4 │ 5 │ 6 │ 7 │");
    }

    #[test]
    fn one_tile_is_not_drawn_and_long_labels_are_cut() {
        assert_eq!(grid("{replicated}", &[4, 4]), None);
        assert_eq!(label(&(0..16).collect::<Vec<_>>()), "0,1,2,3,4,5,6,…");
    }
}
