//! The canonical v2 sharding of a tiling, as XLA builds it
//! (`HloSharding::PartialTile`, `HloSharding::Subgroup`): what the text says
//! is normalized before it is printed or compared, so
//! `{devices=[1,2,1]0,1 last_tile_dims={manual, replicated}}` is `{manual}`.

use super::{Kind, Subgroup, TileAssignment};

/// A tiling without subgroups (`HloSharding::Tile`).
pub fn tile(tiles: TileAssignment) -> Kind {
    Kind::Tiled {
        tiles,
        subgroups: vec![],
        replicate_on_last_tile_dim: false,
    }
}

/// `HloSharding::PartialTile`: the last dimension replicates. One tile is
/// plain replication, a last dimension of 1 is no replication, and the
/// devices of each replicated group are sorted.
pub fn partial_tile(tiles: TileAssignment) -> Kind {
    let n = tiles.num_elements();
    let group = tiles.dims.last().copied().unwrap_or(1);
    if tiles.dims.len() == 1 || group == n {
        return Kind::Replicated;
    }
    if group == 1 {
        let dims = tiles.dims[..tiles.dims.len() - 1].to_vec();
        return tile(tiles.reshape(dims));
    }
    Kind::Tiled {
        tiles: tiles.sort_groups(group as usize),
        subgroups: vec![Subgroup::Replicated],
        replicate_on_last_tile_dim: true,
    }
}

/// `HloSharding::Subgroup`: the last `types.len()` dimensions are subgroups.
/// One kind of subgroup over untiled data is that kind whole; subgroup
/// dimensions of size 1 are dropped, those of a kind merged, the kinds put in
/// order (manual, unreduced, replicated).
pub fn subgroup(tiles: TileAssignment, types: &[Subgroup]) -> Kind {
    if types.is_empty() {
        return tile(tiles);
    }
    let data = tiles.dims.len().saturating_sub(types.len());
    let data_tiles: i64 = tiles.dims[..data].iter().product();
    if data_tiles == 1 && types.iter().all(|&t| t == types[0]) {
        match types[0] {
            Subgroup::Manual => return Kind::Manual,
            Subgroup::Replicated => return Kind::Replicated,
            Subgroup::Unreduced => return Kind::Unreduced,
        }
    }
    // Which subgroup dimensions hold each kind; size-1 ones dropped.
    let mut by_kind: Vec<(Subgroup, Vec<usize>)> = vec![];
    let mut removed = vec![];
    let mut needs_merging = false;
    for (k, &kind) in types.iter().enumerate() {
        let dim = data + k;
        if tiles.dims[dim] == 1 {
            removed.push(dim);
            needs_merging = true;
            continue;
        }
        match by_kind.iter_mut().find(|(t, _)| *t == kind) {
            Some((_, dims)) => {
                dims.push(dim);
                needs_merging = true;
            }
            None => by_kind.push((kind, vec![dim])),
        }
    }
    needs_merging |= by_kind.len() > 1;
    if !needs_merging {
        return create(tiles, types.to_vec());
    }
    by_kind.sort_by_key(|(kind, _)| *kind);
    let mut perm: Vec<usize> = (0..data).collect();
    let mut merged: Vec<i64> = tiles.dims[..data].to_vec();
    let mut kinds = vec![];
    for (kind, dims) in &by_kind {
        perm.extend(dims);
        merged.push(dims.iter().map(|&d| tiles.dims[d]).product());
        kinds.push(*kind);
    }
    perm.extend(&removed);
    let moved = tiles.transpose(&perm).reshape(merged);
    create(moved, kinds)
}

/// `create_sharding` inside `HloSharding::Subgroup`.
fn create(tiles: TileAssignment, types: Vec<Subgroup>) -> Kind {
    if types == [Subgroup::Replicated] {
        return partial_tile(tiles);
    }
    if types == [Subgroup::Manual] && tiles.dims.last() == Some(&tiles.num_elements()) {
        return Kind::Manual;
    }
    if types.last() == Some(&Subgroup::Replicated) {
        // Sorted as a partial tile, then given its subgroups.
        let tiles = match partial_tile(tiles.clone()) {
            Kind::Tiled { tiles, .. } => tiles,
            _ => tiles,
        };
        return Kind::Tiled {
            tiles,
            subgroups: types,
            replicate_on_last_tile_dim: false,
        };
    }
    Kind::Tiled {
        tiles,
        subgroups: types,
        replicate_on_last_tile_dim: false,
    }
}

/// The devices of each manual group, and the sharding every group applies
/// among its own devices, numbered from 0 in group order
/// (`hlo_sharding_util::GetManualSubgroupSharding`): what a `shard_map` body
/// sees. `None` without a manual subgroup.
pub fn manual_groups(
    tiles: &TileAssignment,
    subgroups: &[Subgroup],
) -> Option<(TileAssignment, Kind)> {
    let data = tiles.dims.len().checked_sub(subgroups.len())?;
    let manual = data + subgroups.iter().position(|&s| s == Subgroup::Manual)?;
    let mut perm = vec![manual];
    perm.extend((0..tiles.dims.len()).filter(|&d| d != manual));
    let groups = tiles.dims[manual];
    let per_group = tiles.num_elements() / groups.max(1);
    let grouped = tiles.transpose(&perm).reshape(vec![groups, per_group]);
    let inner_dims: Vec<i64> = perm[1..].iter().map(|&d| tiles.dims[d]).collect();
    let inner = TileAssignment {
        dims: inner_dims,
        devices: (0..per_group).collect(),
        iota: Some(super::Iota::identity(per_group)),
    };
    let rest: Vec<Subgroup> = subgroups
        .iter()
        .copied()
        .filter(|&s| s != Subgroup::Manual)
        .collect();
    Some((grouped, subgroup(inner, &rest)))
}
