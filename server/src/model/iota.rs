//! XLA's iota device layouts, as HLO text writes them in tile assignments
//! (`devices=[2,4]<=[4,2]T(1,0)`) and replica groups (`[2,4]<=[8]`): the devices
//! `0..n` laid out row-major as `reshape`, then transposed (`IotaTileAssignment`).
//! One expansion for the sharding reader and the collectives' replica groups.

/// The devices of `<=[reshape]T(transpose)` in row-major order of the transposed
/// layout. `transpose` must be a permutation of `reshape`'s axes (callers check it,
/// as XLA's parser does), and the product of `reshape` small enough to list.
pub fn devices(reshape: &[i64], transpose: &[usize]) -> Vec<i64> {
    let rank = reshape.len();
    // The original (row-major) layout's stride of each axis; the transposed layout
    // walks them in `transpose`'s order.
    let mut strides = vec![1i64; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * reshape[d + 1];
    }
    let sizes: Vec<i64> = transpose.iter().map(|&p| reshape[p]).collect();
    let walk: Vec<i64> = transpose.iter().map(|&p| strides[p]).collect();
    let total: i64 = reshape.iter().product();
    let mut index = vec![0i64; rank];
    let mut out = Vec::with_capacity(total.max(0) as usize);
    for _ in 0..total {
        out.push(index.iter().zip(&walk).map(|(i, s)| i * s).sum());
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < sizes[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::devices;

    #[test]
    fn a_transposed_layout_walks_the_columns() {
        assert_eq!(devices(&[8], &[0]), (0..8).collect::<Vec<_>>());
        // XLA's example: [2,4]T(1,0) lists 0,4,1,5,2,6,3,7.
        assert_eq!(devices(&[2, 4], &[1, 0]), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(
            devices(&[2, 2, 2], &[2, 0, 1]),
            vec![0, 2, 4, 6, 1, 3, 5, 7]
        );
    }
}
