//! The collective a change of sharding needs, as XLA's SPMD partitioner
//! reshards (`PartitionedHlo::ReshardNoCache`): a dimension that was split and
//! is wanted whole is all-gathered over its pieces; a piece that moves from one
//! dimension to another is an all-to-all (`ReshardWithAllToAll`); the same
//! number of tiles on other devices, or a finer split over other pieces, is a
//! local slice followed by a collective-permute (`ReshardWithCollectivePermute`);
//! a finer split over pieces that held copies is a local slice alone
//! (`ReshardFromPartialReplicateWithDynamicSlice`), no collective.

use super::layout::{size, Layout, Piece};
use crate::cost::collective::op::Op;

/// One collective a reshard needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Need {
    pub op: Op,
    pub pieces: Vec<Piece>,
    /// The dimension it gathers, or sends away.
    pub dim: usize,
    /// The dimension an all-to-all moves the split to.
    pub to_dim: Option<usize>,
}

/// The collectives that turn `from` into `to` (both over the same devices and
/// array), in the order the partitioner emits them (the last dimension first).
pub fn reshard(from: &Layout, to: &Layout) -> Vec<Need> {
    let mut out = vec![];
    for i in (0..from.dims.len().min(to.dims.len())).rev() {
        let (f, t) = (&from.dims[i], &to.dims[i]);
        if f == t {
            continue;
        }
        let removed: Vec<Piece> = f.iter().filter(|p| !t.contains(p)).copied().collect();
        let added: Vec<Piece> = t.iter().filter(|p| !f.contains(p)).copied().collect();
        if removed.is_empty() {
            if added.is_empty() {
                // The same pieces in another order: the tiles change devices.
                out.push(Need {
                    op: Op::CollectivePermute,
                    pieces: f.clone(),
                    dim: i,
                    to_dim: None,
                });
            }
            // A finer split over pieces that held copies: a local slice; one
            // over pieces of another dimension is that dimension's all-to-all.
            continue;
        }
        // Pieces that move to another dimension: all-to-all, one per target.
        for j in 0..to.dims.len() {
            let moved: Vec<Piece> = removed
                .iter()
                .filter(|p| j != i && to.dims[j].contains(p))
                .copied()
                .collect();
            if !moved.is_empty() {
                out.push(Need {
                    op: Op::AllToAll,
                    pieces: moved,
                    dim: i,
                    to_dim: Some(j),
                });
            }
        }
        let freed: Vec<Piece> = removed
            .iter()
            .filter(|p| to.splits(p).is_none())
            .copied()
            .collect();
        if freed.is_empty() {
            continue;
        }
        let from_copies = added.iter().all(|p| from.splits(p).is_none());
        if !added.is_empty() && from_copies && size(t) >= size(f) {
            // Each device slices the finer tile out of its own, then the tiles
            // move to the devices that hold them now.
            let mut pieces = freed.clone();
            pieces.extend(&added);
            out.push(Need {
                op: Op::CollectivePermute,
                pieces,
                dim: i,
                to_dim: None,
            });
        } else {
            out.push(Need {
                op: Op::AllGather,
                pieces: freed,
                dim: i,
                to_dim: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::layout::split;
    use super::*;

    /// A 2x4 mesh: x is stride 4, y stride 1.
    fn x() -> Vec<Piece> {
        split(4, 2)
    }
    fn y() -> Vec<Piece> {
        split(1, 4)
    }

    fn layout(dims: Vec<Vec<Piece>>) -> Layout {
        let used = dims.concat();
        let replicated = [x(), y()]
            .concat()
            .into_iter()
            .filter(|p| !used.contains(p))
            .collect();
        Layout { dims, replicated }
    }

    #[test]
    fn each_change_of_split_needs_its_collective() {
        let rows_y = layout(vec![y(), vec![]]);
        let cols_y = layout(vec![vec![], y()]);
        let whole = layout(vec![vec![], vec![]]);
        let ops = |from: &Layout, to: &Layout| -> Vec<Op> {
            reshard(from, to).iter().map(|n| n.op).collect()
        };
        assert_eq!(ops(&rows_y, &cols_y), vec![Op::AllToAll]);
        assert_eq!(ops(&rows_y, &whole), vec![Op::AllGather]);
        assert_eq!(ops(&whole, &rows_y), vec![]);
        let rows_x = layout(vec![x(), vec![]]);
        assert_eq!(ops(&rows_x, &rows_y), vec![Op::CollectivePermute]);
        let both = layout(vec![x(), y()]);
        assert_eq!(ops(&both, &whole), vec![Op::AllGather, Op::AllGather]);
    }
}
