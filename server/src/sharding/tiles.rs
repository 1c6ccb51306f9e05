//! A sharding laid over an array shape: the piece of the array each device
//! holds. XLA's rule (`HloSharding::TileOffsetForDevice`,
//! `TileLimitForDevice`, `TileShape`): along a dimension of size `d` cut into
//! `n` tiles, every tile is `ceil(d / n)` long, tile `i` starts at
//! `min(i * tile, d)` and ends at `min((i + 1) * tile, d)`, so when `n` does
//! not divide `d` the last tiles are clipped (or empty) and the partitioned
//! program pads them to the full tile shape.

use super::{Kind, Leaf, Subgroup};

/// One distinct piece of the array and the devices that hold it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Its index along each data dimension of the tiling.
    pub index: Vec<i64>,
    /// First element and one past the last, per dimension, in the global
    /// index space.
    pub start: Vec<i64>,
    pub limit: Vec<i64>,
    /// The devices that hold this piece (in tile-assignment order): more than
    /// one when it is replicated, or split into partial sums or manual groups.
    pub devices: Vec<i64>,
}

/// A sharding over a shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeTiles {
    pub global: Vec<i64>,
    /// Every device's buffer: the tile shape, the last tiles padded to it.
    pub shard: Vec<i64>,
    /// Tiles per data dimension (1 where the dimension is not split).
    pub splits: Vec<i64>,
    pub tiles: Vec<Tile>,
    /// How many devices hold each tile, and how: replicated copies, partial
    /// sums (unreduced), manual groups.
    pub replicated: i64,
    pub unreduced: i64,
    pub manual: i64,
}

/// `ceil(d / n)`, 0 when `n` is not positive.
fn ceil_div(d: i64, n: i64) -> i64 {
    if n <= 0 {
        0
    } else {
        d / n + i64::from(d % n != 0)
    }
}

impl Leaf {
    /// The index in the tiling of `device` (`TileIndexForDevice`, subgroup
    /// dimensions included); `None` when it holds no tile.
    pub fn tile_index_for_device(&self, device: i64) -> Option<Vec<i64>> {
        let (tiles, _, _) = self.tiling()?;
        let flat = tiles.devices.iter().position(|&d| d == device)?;
        Some(tiles.index_of(flat))
    }

    /// `TileOffsetForDevice` and `TileLimitForDevice` of `device` on an
    /// array of `dims`: the whole array unless tiled; `None` when tiled and
    /// the device holds no tile.
    pub fn tile_for_device(&self, dims: &[i64], device: i64) -> Option<(Vec<i64>, Vec<i64>)> {
        if let Kind::Maximal(d) = self.kind {
            if d != device {
                return None;
            }
        }
        let Some((tiles, _, _)) = self.tiling() else {
            return Some((vec![0; dims.len()], dims.to_vec()));
        };
        let index = self.tile_index_for_device(device)?;
        let data = self.data_rank()?;
        let (start, limit) = bounds(dims, &tiles.dims[..data], &index[..data]);
        Some((start, limit))
    }

    /// `TileShape(shape)`: the tile every device's buffer holds.
    pub fn tile_shape(&self, dims: &[i64]) -> Vec<i64> {
        match (self.tiling(), self.data_rank()) {
            (Some((tiles, _, _)), Some(data)) if data == dims.len() => dims
                .iter()
                .zip(&tiles.dims[..data])
                .map(|(&d, &n)| ceil_div(d, n))
                .collect(),
            _ => dims.to_vec(),
        }
    }

    /// The tiles of an array of `dims`. `num_devices` names the devices of an
    /// untiled sharding (replicated: all of them hold the whole array);
    /// without it their list is empty. Errors when a tiling does not have one
    /// dimension per array dimension.
    pub fn tiles(&self, dims: &[i64], num_devices: Option<i64>) -> Result<ShapeTiles, String> {
        let whole = |devices: Vec<i64>, replicated: i64, unreduced: i64, manual: i64| ShapeTiles {
            global: dims.to_vec(),
            shard: dims.to_vec(),
            splits: vec![1; dims.len()],
            tiles: vec![Tile {
                index: vec![0; dims.len()],
                start: vec![0; dims.len()],
                limit: dims.to_vec(),
                devices,
            }],
            replicated,
            unreduced,
            manual,
        };
        let all: Vec<i64> = (0..num_devices.unwrap_or(0).max(0)).collect();
        let n = all.len() as i64;
        let (tiles, _, _) = match &self.kind {
            Kind::Maximal(d) => return Ok(whole(vec![*d], 1, 1, 1)),
            Kind::Replicated | Kind::Unknown => return Ok(whole(all, n.max(1), 1, 1)),
            Kind::Unreduced => return Ok(whole(all, 1, n.max(1), 1)),
            Kind::Manual => return Ok(whole(all, 1, 1, n.max(1))),
            Kind::Tiled { .. } => self.tiling().ok_or("no tiling")?,
        };
        let data = self.data_rank().unwrap_or(0);
        if data != dims.len() {
            return Err(format!(
                "the sharding tiles {data} dimensions, the array has {}",
                dims.len()
            ));
        }
        let splits = tiles.dims[..data].to_vec();
        let mut out: Vec<Tile> = vec![];
        let per_tile = (tiles.num_elements() / self.num_tiles().max(1)).max(1) as usize;
        out.reserve(self.num_tiles().max(0) as usize);
        // Row-major order of the tiling puts a tile's devices side by side.
        for (flat, &device) in tiles.devices.iter().enumerate() {
            let index = tiles.index_of(flat);
            let data_index = index[..data].to_vec();
            if flat % per_tile == 0 {
                let (start, limit) = bounds(dims, &splits, &data_index);
                out.push(Tile {
                    index: data_index,
                    start,
                    limit,
                    devices: vec![],
                });
            }
            if let Some(tile) = out.last_mut() {
                tile.devices.push(device);
            }
        }
        Ok(ShapeTiles {
            global: dims.to_vec(),
            shard: self.tile_shape(dims),
            splits,
            tiles: out,
            replicated: self.group_size(Subgroup::Replicated),
            unreduced: self.group_size(Subgroup::Unreduced),
            manual: self.group_size(Subgroup::Manual),
        })
    }

    /// The global shape of an array whose per-device buffer is `shard` (after
    /// XLA's partitioner): each dimension times its tiles. When the original
    /// did not divide, it was smaller by up to a tile less one: the
    /// partitioned text does not say.
    pub fn global_of_shard(&self, shard: &[i64]) -> Vec<i64> {
        match (self.tiling(), self.data_rank()) {
            (Some((tiles, _, _)), Some(data)) if data == shard.len() => shard
                .iter()
                .zip(&tiles.dims[..data])
                .map(|(&s, &n)| s.saturating_mul(n))
                .collect(),
            _ => shard.to_vec(),
        }
    }
}

/// XLA's offsets and limits of the tile at `index` of `splits`.
fn bounds(dims: &[i64], splits: &[i64], index: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut start = vec![];
    let mut limit = vec![];
    for ((&d, &n), &i) in dims.iter().zip(splits).zip(index) {
        let tile = ceil_div(d, n);
        start.push(i.saturating_mul(tile).min(d));
        limit.push(i.saturating_add(1).saturating_mul(tile).min(d));
    }
    (start, limit)
}
