//! How much of a tile a read fetches contiguously, and what that makes of the
//! DRAM-to-L2 transactions it needs: XLA's rule for tiled (Triton) reads
//! (`IsTiledReadCoalescedHeuristic`). Plain arithmetic on a shape's layout, used by
//! the coalescing analysis and by tiling to rank candidate tilings.

use super::ArrayShape;

/// Elements read contiguously: from the most minor dimension up, while the tile
/// is not strided, times the tile's extent (clamped to the dimension: masked
/// elements are not read), stopping after a dimension the tile covers partly.
pub fn contiguous_elements(shape: &ArrayShape, sizes: &[i64], strides: &[i64]) -> i64 {
    let mut n = 1i64;
    for d in shape.layout() {
        let (size, stride, dim) = (sizes[d], strides[d], shape.dims[d]);
        if size > 1 && stride != 1 {
            break;
        }
        n = n.saturating_mul(size.min(dim).max(0));
        if size < dim {
            break;
        }
    }
    n
}

/// XLA's verdict and utilization for `contiguous_bytes`.
pub fn judge_bytes(contiguous_bytes: i64, transaction: i64) -> (bool, f64) {
    if contiguous_bytes <= 0 {
        return (false, 0.0);
    }
    let transaction = transaction.max(1);
    let transactions =
        contiguous_bytes / transaction + i64::from(contiguous_bytes % transaction != 0);
    let transferred = transaction.saturating_mul(transactions);
    (
        contiguous_bytes >= transaction,
        contiguous_bytes as f64 / transferred as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xla_contiguity_rule() {
        let s = ArrayShape::new(vec![256, 512]);
        assert_eq!(contiguous_elements(&s, &[16, 16], &[1, 1]), 16);
        assert_eq!(contiguous_elements(&s, &[4, 512], &[1, 1]), 2048);
        // Masked: a tile wider than the dimension reads only the dimension.
        let t = ArrayShape::new(vec![2048, 12]);
        assert_eq!(contiguous_elements(&t, &[4, 16], &[1, 1]), 48);
        assert_eq!(contiguous_elements(&t, &[1024, 1], &[1, 1]), 1);
        // Strided minor dimension.
        assert_eq!(contiguous_elements(&s, &[16, 16], &[1, 2]), 1);
        assert_eq!(judge_bytes(96, 64), (true, 0.75));
        assert_eq!(judge_bytes(16, 64), (false, 0.25));
    }
}
