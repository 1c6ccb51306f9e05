//! The picture ([`super::picture`]) as SVG, for the VS Code fusion-maps panel
//! (a markdown preview: the image is a `data:` URI): one square per cell,
//! filled by the fraction of it the warp (or tile) reads, and the DRAM-to-L2
//! transaction boundaries as red ticks along each row of cells, so that a read
//! that uses a sliver of every transaction shows at a glance.

use base64::Engine as _;

use super::picture::Picture;

/// Pixels per cell.
pub const CELL: i64 = 12;
/// Boundaries are drawn only when they are at least this many pixels apart.
pub const MIN_BOUNDARY_GAP: f64 = 3.0;

/// Column positions (in elements, within the plane's `cols`) where a
/// transaction of `transaction_elements` starts, for the row of elements `row`
/// (offsets are linear in the plane: row * cols + column).
pub fn boundaries(row: i64, cols: i64, transaction_elements: i64) -> Vec<i64> {
    if transaction_elements <= 0 || cols <= 0 {
        return vec![];
    }
    let start = row.saturating_mul(cols);
    let first =
        (transaction_elements - start.rem_euclid(transaction_elements)) % transaction_elements;
    (0..)
        .map(|k| first + k * transaction_elements)
        .take_while(|&c| c < cols)
        .filter(|&c| c > 0)
        .collect()
}

/// The SVG of `picture` for elements of `bits` bits and `transaction_bytes`
/// transactions.
pub fn svg(picture: &Picture, bits: i64, transaction_bytes: i64) -> String {
    let rows = picture.counts.len() as i64;
    let cols = picture.counts.first().map_or(0, |r| r.len() as i64);
    let (w, h) = (cols * CELL, rows * CELL);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">"
    );
    s.push_str(&format!(
        "<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>"
    ));
    for (r, row) in picture.counts.iter().enumerate() {
        for (c, &(read, total)) in row.iter().enumerate() {
            let opacity = if total > 0 {
                read as f64 / total as f64
            } else {
                0.0
            };
            s.push_str(&format!(
                "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"#1f6feb\" fill-opacity=\"{opacity:.3}\" stroke=\"#d0d7de\" stroke-width=\"0.5\"/>",
                c as i64 * CELL,
                r as i64 * CELL
            ));
        }
    }
    let transaction_elements = (transaction_bytes * 8) / bits.max(1);
    let px_per_element = CELL as f64 / picture.cell.1.max(1) as f64;
    if transaction_elements as f64 * px_per_element >= MIN_BOUNDARY_GAP {
        for r in 0..rows {
            let element_row = r * picture.cell.0;
            for b in boundaries(element_row, picture.plane.1, transaction_elements) {
                let x = b as f64 * px_per_element;
                s.push_str(&format!(
                    "<line class=\"transaction\" x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#cf222e\" stroke-width=\"1\"/>",
                    r * CELL,
                    (r + 1) * CELL
                ));
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// A markdown image of the SVG (`data:` URI, base64).
pub fn markdown_image(alt: &str, svg: &str) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    format!("![{alt}](data:image/svg+xml;base64,{data})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ArrayShape;
    use crate::coalescing::picture::draw;

    #[test]
    fn cells_and_transaction_boundaries() {
        // f32[4,64]: 16 elements per 64-byte transaction, 3 boundaries per row.
        let shape = ArrayShape::new(vec![4, 64]);
        let p = draw(&shape, &(0..32).collect::<Vec<_>>());
        let s = svg(&p, 32, 64);
        assert_eq!(s.matches("class=\"cell\"").count(), 4 * 32);
        assert_eq!(s.matches("class=\"transaction\"").count(), 4 * 3);
        // 32 read elements of 2 per cell: 16 full cells.
        assert_eq!(s.matches("fill-opacity=\"1.000\"").count(), 16);
        assert_eq!(boundaries(1, 24, 16), vec![8]);
        assert_eq!(boundaries(0, 24, 16), vec![16]);
        let md = markdown_image("warp", &s);
        let data = md.split("base64,").nth(1).unwrap().trim_end_matches(')');
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), s);
    }
}
