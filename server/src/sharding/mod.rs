//! What a `sharding={...}` attribute means, device by device: XLA's
//! `HloSharding` read from its text (`parse`), in the canonical form XLA builds
//! (`build`: `HloSharding::PartialTile`, `HloSharding::Subgroup`), printed back
//! as XLA's `ToString` prints it, and laid over an array shape (`tiles`: the
//! tile of every device, XLA's `TileOffsetForDevice` / `TileLimitForDevice`).
//!
//! Two spellings exist: the tile-assignment form XLA's partitioner reads
//! (`{devices=[2,4]<=[8] last_tile_dim_replicate}`, called v2 here as in XLA)
//! and the named form over a mesh that JAX/Shardy write
//! (`{mesh['x'=2,'y'=4], [{'x'}, {'y'}]}`, v3), which `named` turns into the
//! first (`HloSharding::V3ToV2Sharding`). Everything device-wise is computed on
//! the v2 form.
//!
//! Reading never panics: bad text gives a [`ParseError`] with its byte offset.

mod build;
pub mod collective;
mod describe;
pub mod grid;
pub mod mesh;
pub mod module;
pub mod named;
mod parse;
pub mod predict;
pub mod tile_assignment;
pub mod tiles;

pub use describe::{describe, Written};
pub use module::{
    layouts, per_device, replica_groups, sharded_instructions, written_shapes, ElementLayout,
    ReplicaGroups, Sharded,
};
pub use named::NamedSharding;
pub use parse::{parse, ParseError};
pub use tile_assignment::{Iota, TileAssignment};
pub use tiles::{ShapeTiles, Tile};

/// The kind of a trailing subgroup dimension of a tiling (`last_tile_dims=`),
/// in XLA's canonical order (`kOrderedTypes`: manual, unreduced, replicated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subgroup {
    Manual,
    Unreduced,
    Replicated,
}

impl Subgroup {
    /// As `last_tile_dims={...}` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Subgroup::Manual => "manual",
            Subgroup::Unreduced => "unreduced",
            Subgroup::Replicated => "replicated",
        }
    }

    /// As XLA's `OpSharding::Type` is named.
    pub fn type_name(self) -> &'static str {
        match self {
            Subgroup::Manual => "MANUAL",
            Subgroup::Unreduced => "UNREDUCED",
            Subgroup::Replicated => "REPLICATED",
        }
    }
}

/// What a v2 leaf sharding says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `{replicated}`: every device holds the whole array.
    Replicated,
    /// `{manual}`: the program already works per device (inside a
    /// `shard_map`); the partitioner leaves it alone.
    Manual,
    /// `{unknown}`: to be decided by propagation.
    Unknown,
    /// `{unreduced}`: every device holds a partial sum of the whole array.
    Unreduced,
    /// `{maximal device=N}`: one device holds it all.
    Maximal(i64),
    /// `{devices=[...]...}`: the array cut into tiles. The last dimensions of
    /// `tiles` are subgroups when `subgroups` is not empty: the devices along
    /// them hold the same tile (replicated), partial sums of it (unreduced), or
    /// run manually. `replicate_on_last_tile_dim` is XLA's flag for a single
    /// replicated subgroup (`last_tile_dim_replicate`); then `subgroups` is
    /// `[Replicated]` too.
    Tiled {
        tiles: TileAssignment,
        subgroups: Vec<Subgroup>,
        replicate_on_last_tile_dim: bool,
    },
}

/// `shard_as N` / `shard_like N`: the sharding is tied to others of group N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardGroup {
    pub id: i64,
    /// `shard_as` (the same sharding) rather than `shard_like` (a hint).
    pub shard_as: bool,
}

/// A sharding that is not a tuple, in XLA's tile-assignment (v2) form.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub kind: Kind,
    pub shard_group: Option<ShardGroup>,
    /// The text of `metadata={...}` as written (printed back verbatim).
    pub metadata: Option<String>,
}

/// Equality as XLA's `HloSharding::operator==` (metadata ignored).
impl PartialEq for Leaf {
    fn eq(&self, other: &Leaf) -> bool {
        self.kind == other.kind && self.shard_group == other.shard_group
    }
}

/// A parsed sharding.
#[derive(Clone, Debug, PartialEq)]
pub enum Sharding {
    Leaf(Leaf),
    /// The named form over a mesh, kept as written (it prints as written);
    /// device-wise questions go through [`Sharding::v2`].
    Named(Box<NamedSharding>),
    /// One sharding per element of a tuple-shaped value.
    Tuple(Vec<Sharding>),
}

impl Sharding {
    /// The v2 form of a leaf (a named sharding converted as XLA's
    /// `V3ToV2Sharding`); `None` for a tuple.
    pub fn v2(&self) -> Option<Leaf> {
        match self {
            Sharding::Leaf(leaf) => Some(leaf.clone()),
            Sharding::Named(named) => Some(named.to_v2()),
            Sharding::Tuple(_) => None,
        }
    }

    /// The sharding of tuple element `index` (a leaf applies to every element).
    pub fn element(&self, index: usize) -> Option<&Sharding> {
        match self {
            Sharding::Tuple(elements) => elements.get(index),
            _ => Some(self),
        }
    }

    /// XLA's `ToString(include_metadata)`.
    pub fn to_text(&self, include_metadata: bool) -> String {
        match self {
            Sharding::Leaf(leaf) => leaf.to_text(include_metadata),
            Sharding::Named(named) => named.to_text(include_metadata),
            Sharding::Tuple(elements) => {
                let mut out = String::from("{");
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 && i % 5 == 0 {
                        out.push_str(&format!(", /*index={i}*/"));
                    } else if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&element.to_text(include_metadata));
                }
                out.push('}');
                out
            }
        }
    }
}

impl std::fmt::Display for Sharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text(false))
    }
}

impl Leaf {
    /// A leaf with nothing but its kind.
    pub fn of(kind: Kind) -> Leaf {
        Leaf {
            kind,
            shard_group: None,
            metadata: None,
        }
    }

    pub fn is_replicated(&self) -> bool {
        self.kind == Kind::Replicated
    }

    pub fn is_manual(&self) -> bool {
        self.kind == Kind::Manual
    }

    pub fn is_unknown(&self) -> bool {
        self.kind == Kind::Unknown
    }

    pub fn is_unreduced(&self) -> bool {
        self.kind == Kind::Unreduced
    }

    /// Held whole by every device, by one, or not tiled by the partitioner
    /// (what jaxlib's `is_tile_maximal` answers).
    pub fn is_tile_maximal(&self) -> bool {
        matches!(
            self.kind,
            Kind::Replicated | Kind::Maximal(_) | Kind::Manual | Kind::Unknown
        )
    }

    pub fn is_tiled(&self) -> bool {
        matches!(self.kind, Kind::Tiled { .. })
    }

    /// `{maximal device=N}`'s device.
    pub fn unique_device(&self) -> Option<i64> {
        match self.kind {
            Kind::Maximal(d) => Some(d),
            _ => None,
        }
    }

    /// The tiling, its subgroups and XLA's replicate flag, when tiled.
    pub fn tiling(&self) -> Option<(&TileAssignment, &[Subgroup], bool)> {
        match &self.kind {
            Kind::Tiled {
                tiles,
                subgroups,
                replicate_on_last_tile_dim,
            } => Some((tiles, subgroups, *replicate_on_last_tile_dim)),
            _ => None,
        }
    }

    /// How many dimensions of the tiling are the data's (`TiledDataRank`).
    pub fn data_rank(&self) -> Option<usize> {
        let (tiles, subgroups, _) = self.tiling()?;
        Some(tiles.dims.len().saturating_sub(subgroups.len()))
    }

    /// The number of distinct tiles of the data (`NumTiles`).
    pub fn num_tiles(&self) -> i64 {
        match self.tiling() {
            Some((tiles, _, _)) => tiles.dims[..self.data_rank().unwrap_or(0)].iter().product(),
            None => 1,
        }
    }

    /// The product of the subgroup dimensions of one kind (1 when none).
    pub fn group_size(&self, kind: Subgroup) -> i64 {
        let Some((tiles, subgroups, _)) = self.tiling() else {
            return 1;
        };
        let data = tiles.dims.len() - subgroups.len();
        subgroups
            .iter()
            .enumerate()
            .filter(|(_, &s)| s == kind)
            .map(|(k, _)| tiles.dims[data + k])
            .product()
    }

    /// Whether `device` holds any of the data (`UsesDevice`).
    pub fn uses_device(&self, device: i64) -> bool {
        match &self.kind {
            Kind::Maximal(d) => *d == device,
            Kind::Tiled { tiles, .. } => tiles.devices.contains(&device),
            _ => true,
        }
    }

    /// XLA's `ToString(include_metadata)` of a v2 leaf.
    pub fn to_text(&self, include_metadata: bool) -> String {
        let mut out = String::from("{");
        match &self.kind {
            Kind::Replicated => out.push_str("replicated"),
            Kind::Manual => out.push_str("manual"),
            Kind::Unknown => out.push_str("unknown"),
            Kind::Unreduced => out.push_str("unreduced"),
            Kind::Maximal(d) => out.push_str(&format!("maximal device={d}")),
            Kind::Tiled {
                tiles,
                subgroups,
                replicate_on_last_tile_dim,
            } => {
                out.push_str("devices=");
                out.push_str(&tiles.text());
                if *replicate_on_last_tile_dim {
                    out.push_str(" last_tile_dim_replicate");
                } else if !subgroups.is_empty() {
                    let names: Vec<&str> = subgroups.iter().map(|s| s.name()).collect();
                    out.push_str(&format!(" last_tile_dims={{{}}}", names.join(", ")));
                }
            }
        }
        if let Some(group) = &self.shard_group {
            let how = if group.shard_as {
                "shard_as"
            } else {
                "shard_like"
            };
            out.push_str(&format!(" {how} {}", group.id));
        }
        if let (true, Some(metadata)) = (include_metadata, &self.metadata) {
            out.push_str(&format!(" metadata={metadata}"));
        }
        out.push('}');
        out
    }

    /// XLA's `Validate(shape, num_devices)` for an array of `rank`
    /// dimensions: every device below `num_devices`, none twice, all of them
    /// used, and one tiling dimension per array dimension.
    pub fn validate(&self, rank: usize, num_devices: i64) -> Result<(), String> {
        match &self.kind {
            Kind::Maximal(d) if *d < 0 || *d >= num_devices => {
                Err(format!("device {d} is not below the {num_devices} devices"))
            }
            Kind::Tiled { tiles, .. } => {
                if self.data_rank() != Some(rank) {
                    return Err(format!(
                        "the tiling has {} data dimensions, the array {rank}",
                        self.data_rank().unwrap_or(0)
                    ));
                }
                let mut seen = vec![false; num_devices.max(0) as usize];
                for &d in &tiles.devices {
                    let Some(slot) = usize::try_from(d).ok().and_then(|d| seen.get_mut(d)) else {
                        return Err(format!("device {d} is not below the {num_devices} devices"));
                    };
                    if std::mem::replace(slot, true) {
                        return Err(format!("device {d} appears twice"));
                    }
                }
                if seen.iter().any(|s| !s) {
                    return Err(format!(
                        "the tiling uses {} of the {num_devices} devices",
                        tiles.devices.len()
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `hlo_sharding_util::TransposeSharding`: the sharding of the array
    /// transposed so that its dimension `k` is dimension `perm[k]` of this
    /// one; untiled shardings are unchanged. `None` when `perm` does not
    /// permute the data dimensions.
    pub fn transpose(&self, perm: &[usize]) -> Option<Leaf> {
        let Kind::Tiled {
            tiles,
            subgroups,
            replicate_on_last_tile_dim,
        } = &self.kind
        else {
            return Some(self.clone());
        };
        let data = self.data_rank()?;
        let mut seen = vec![false; data];
        if perm.len() != data
            || perm
                .iter()
                .any(|&p| p >= data || std::mem::replace(&mut seen[p], true))
        {
            return None;
        }
        let full: Vec<usize> = perm.iter().copied().chain(data..tiles.dims.len()).collect();
        Some(Leaf {
            kind: Kind::Tiled {
                tiles: tiles.transpose(&full),
                subgroups: subgroups.clone(),
                replicate_on_last_tile_dim: *replicate_on_last_tile_dim,
            },
            shard_group: self.shard_group.clone(),
            metadata: self.metadata.clone(),
        })
    }

    /// The devices of each manual group (one row each) and the sharding each
    /// group applies among its own devices, numbered from 0: what the body of
    /// a `shard_map` sees (`hlo_sharding_util::GetManualSubgroupSharding`).
    /// `None` without a manual subgroup.
    pub fn manual_groups(&self) -> Option<(TileAssignment, Leaf)> {
        let (tiles, subgroups, _) = self.tiling()?;
        let (groups, kind) = build::manual_groups(tiles, subgroups)?;
        Some((groups, Leaf::of(kind)))
    }
}
