//! A sharding as the partitioner moves it: which factors of the device
//! numbering split each dimension, and which hold copies. XLA's iota tile
//! assignments (`<=[2,4]T(1,0)`) and JAX's meshes number the devices in mixed
//! radix; each mesh axis (or Shardy sub-axis) is one digit of that number, a
//! [`Piece`]: the devices that differ only in that digit. Cut into pieces of
//! prime size, two shardings over the same devices compare piece by piece,
//! and a collective's device groups are the devices that differ only in its
//! pieces (what `GetPartitionGroupsForReplication` builds from a sharding).

use crate::sharding::{Leaf, Subgroup};

/// One digit of the device number: `size` values, `stride` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece {
    pub stride: i64,
    pub size: i64,
}

/// The pieces of each data dimension (major first) and the pieces along
/// which the devices hold the same data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub dims: Vec<Vec<Piece>>,
    pub replicated: Vec<Piece>,
}

/// More devices than this are not laid out (the groups are expanded).
const MAX_DEVICES: i64 = 1 << 16;

/// The prime factors of `n`, largest first (the major digit first).
fn factors(mut n: i64) -> Vec<i64> {
    let mut out = vec![];
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            out.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        out.push(n);
    }
    out.reverse();
    out
}

/// `(stride, size)` cut into prime pieces, major first.
pub fn split(stride: i64, size: i64) -> Vec<Piece> {
    let mut out = vec![];
    let mut below = size;
    for f in factors(size) {
        below /= f;
        out.push(Piece {
            stride: stride * below,
            size: f,
        });
    }
    out
}

/// The product of the pieces' sizes.
pub fn size(pieces: &[Piece]) -> i64 {
    pieces.iter().map(|p| p.size).product()
}

impl Layout {
    /// Every device holds the whole array of `rank` dimensions.
    pub fn replicated(rank: usize, devices: i64) -> Layout {
        Layout {
            dims: vec![vec![]; rank],
            replicated: split(1, devices.max(1)),
        }
    }

    /// The layout of a v2 sharding over `rank` dimensions, when its devices
    /// follow a mixed radix (every iota tile assignment does) and its
    /// subgroups only replicate. `None` for a maximal, manual or unreduced
    /// sharding, or a device list in no such order.
    pub fn of(leaf: &Leaf, rank: usize, devices: i64) -> Option<Layout> {
        if leaf.is_replicated() {
            return Some(Layout::replicated(rank, devices));
        }
        let (tiles, subgroups, _) = leaf.tiling()?;
        if subgroups.iter().any(|&s| s != Subgroup::Replicated)
            || leaf.data_rank() != Some(rank)
            || tiles.devices.len() as i64 != devices
            || devices > MAX_DEVICES
            || tiles.devices.first() != Some(&0)
        {
            return None;
        }
        // The stride of each digit: the device one step along it from tile 0.
        let mut per_dim: Vec<Vec<Piece>> = vec![];
        let mut digits: Vec<(usize, i64, Piece)> = vec![]; // (tile dim, block, piece)
        for (j, &n) in tiles.dims.iter().enumerate() {
            let step: i64 = tiles.dims[j + 1..].iter().product();
            let mut pieces = vec![];
            let mut block = n;
            for f in factors(n) {
                block /= f;
                let at = usize::try_from(block * step).ok()?;
                let stride = *tiles.devices.get(at)?;
                if stride <= 0 {
                    return None;
                }
                let piece = Piece { stride, size: f };
                pieces.push(piece);
                digits.push((j, block, piece));
            }
            per_dim.push(pieces);
        }
        // Every tile's device must be the sum of its digits' strides.
        for (flat, &device) in tiles.devices.iter().enumerate() {
            let index = tiles.index_of(flat);
            let mut expected = 0;
            for &(j, block, piece) in &digits {
                expected += (index[j] / block) % piece.size * piece.stride;
            }
            if expected != device {
                return None;
            }
        }
        let replicated = per_dim[rank..].concat();
        per_dim.truncate(rank);
        Some(Layout {
            dims: per_dim,
            replicated,
        })
    }

    /// The layout once `need` has run: a gather makes its dimension whole
    /// along its pieces, an all-to-all moves them to its other dimension.
    pub fn after(&self, need: &super::Need) -> Layout {
        use crate::cost::collective::op::Op;
        let mut out = self.clone();
        let take = |d: &mut Vec<Piece>| d.retain(|p| !need.pieces.contains(p));
        match need.op {
            Op::AllGather => {
                if let Some(d) = out.dims.get_mut(need.dim) {
                    take(d);
                }
                out.replicated.extend(&need.pieces);
            }
            Op::AllToAll => {
                if let Some(d) = out.dims.get_mut(need.dim) {
                    take(d);
                }
                if let Some(d) = need.to_dim.and_then(|j| out.dims.get_mut(j)) {
                    d.extend(&need.pieces);
                }
            }
            _ => {}
        }
        out
    }

    /// All the pieces the layout uses.
    pub fn pieces(&self) -> Vec<Piece> {
        let mut all = self.dims.concat();
        all.extend(&self.replicated);
        all
    }

    /// Whether `piece` splits some dimension.
    pub fn splits(&self, piece: &Piece) -> Option<usize> {
        self.dims.iter().position(|d| d.contains(piece))
    }

    /// How many parts of each dimension a device holds one of.
    pub fn ways(&self) -> Vec<i64> {
        self.dims.iter().map(|d| size(d)).collect()
    }

    /// The bytes one device holds of an array of `dims` with elements of
    /// `bits` (a dimension that does not divide is padded, as XLA pads it).
    pub fn shard_bytes(&self, dims: &[i64], bits: i64) -> i64 {
        let elements: i64 = dims
            .iter()
            .zip(self.ways())
            .map(|(&d, w)| (d + w - 1) / w.max(1))
            .product();
        (elements * bits + 7) / 8
    }
}

/// The groups of devices that differ only in the digits of `pieces`, each
/// listed with the major piece first; `devices` in all.
pub fn groups(pieces: &[Piece], devices: i64) -> Vec<Vec<i64>> {
    let digit = |d: i64, p: &Piece| (d / p.stride) % p.size;
    let n = size(pieces);
    let mut out = vec![];
    for base in 0..devices.min(MAX_DEVICES) {
        if pieces.iter().any(|p| digit(base, p) != 0) {
            continue;
        }
        let mut group = Vec::with_capacity(n as usize);
        for k in 0..n {
            let mut rest = k;
            let mut device = base;
            for p in pieces.iter().rev() {
                device += (rest % p.size) * p.stride;
                rest /= p.size;
            }
            group.push(device);
        }
        out.push(group);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::parse;

    fn layout(text: &str, rank: usize) -> Layout {
        let leaf = parse(text).unwrap().v2().unwrap();
        Layout::of(&leaf, rank, 8).unwrap()
    }

    #[test]
    fn iota_tilings_become_pieces_of_the_device_number() {
        // Rows over y of a 2x4 mesh (y is stride 1, size 4), copies over x.
        let rows_y = layout("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}", 2);
        assert_eq!(rows_y.dims[0], split(1, 4));
        assert_eq!(rows_y.replicated, split(4, 2));
        assert_eq!(groups(&rows_y.dims[0], 8)[1], vec![4, 5, 6, 7]);
        // Rows over x: stride 4.
        let rows_x = layout("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", 2);
        assert_eq!(rows_x.dims[0], split(4, 2));
        assert_eq!(groups(&rows_x.dims[0], 8)[0], vec![0, 4]);
        assert_eq!(layout("{replicated}", 2).replicated.len(), 3);
        // A list in no mixed-radix order is refused.
        let odd = parse("{devices=[4]0,3,1,2}").unwrap().v2().unwrap();
        assert_eq!(Layout::of(&odd, 1, 4), None);
    }
}
