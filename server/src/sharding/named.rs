//! The named sharding over a mesh that JAX and Shardy write
//! (`{mesh['x'=2,'y'=4], [{'x'}, {'y'}]}`: dimension 0 split over axis `x`,
//! dimension 1 over `y`), and its tile-assignment form
//! (`HloSharding::V3ToV2Sharding`): the mesh, cut where sub-axes
//! (`'y':(2)2`) cut it, transposed so the axes of each data dimension come
//! first, then the manual and unreduced axes, then every axis not named
//! (replicated).

use super::tile_assignment::{iota_text, join, Iota, TileAssignment};
use super::{build, Kind, Leaf, Subgroup};

/// `'y'` or the sub-axis `'y':(pre)size` (the `size` devices of axis `y`
/// after the first `pre`, major to minor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisRef {
    pub axis: usize,
    pub sub: Option<(i64, i64)>,
}

/// How the mesh's devices are numbered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceIds {
    /// `0..n` in mesh order (nothing written).
    Iota,
    /// `device_ids=([4,2]T(1,0))`.
    Reshaped(Iota),
    /// `device_ids=(0,2,1,3)`.
    List(Vec<i64>),
}

/// `mesh['x'=2,'y'=4]` or `maximal_mesh[device_id=5]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub axes: Vec<(String, i64)>,
    pub device_ids: DeviceIds,
    /// `maximal_mesh[device_id=N]`: a single device.
    pub maximal: Option<i64>,
}

/// One data dimension: the axes it is split over, major first; open (`?`)
/// when propagation may add more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimSharding {
    pub axes: Vec<AxisRef>,
    pub closed: bool,
}

/// What follows the mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// `[{...}, ...]`, with the subgroup axes.
    Dims(Vec<DimSharding>),
    /// `replicated`, `unreduced`, `manual` written whole.
    Whole(Subgroup),
    /// Nothing (a maximal mesh).
    None,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedSharding {
    pub mesh: Mesh,
    pub body: Body,
    pub replicated: Vec<AxisRef>,
    pub unreduced: Vec<AxisRef>,
    pub manual: Vec<AxisRef>,
    /// `metadata={...}` as written.
    pub metadata: Option<String>,
}

impl Mesh {
    /// The number of devices.
    pub fn len(&self) -> i64 {
        self.axes.iter().map(|(_, s)| *s).product()
    }

    /// Whether it has no devices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device assignment laid out as the mesh.
    pub fn devices(&self) -> TileAssignment {
        let dims: Vec<i64> = self.axes.iter().map(|(_, s)| *s).collect();
        let n = self.len();
        match &self.device_ids {
            DeviceIds::Iota => TileAssignment {
                dims,
                devices: (0..n).collect(),
                iota: Some(Iota::identity(n)),
            },
            DeviceIds::Reshaped(iota) => TileAssignment {
                dims,
                devices: iota.expand(),
                iota: Some(iota.clone()),
            },
            DeviceIds::List(list) => TileAssignment {
                dims,
                devices: list.clone(),
                iota: None,
            },
        }
    }

    /// `Mesh::ToString`.
    pub fn text(&self) -> String {
        if let Some(d) = self.maximal {
            return format!("maximal_mesh[device_id={d}]");
        }
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(name, size)| format!("'{name}'={size}"))
            .collect();
        let ids = match &self.device_ids {
            DeviceIds::Iota => String::new(),
            DeviceIds::Reshaped(iota) => format!(", device_ids=({})", iota_text(iota)),
            DeviceIds::List(list) => format!(", device_ids=({})", join(list)),
        };
        format!("mesh[{}]{ids}", axes.join(","))
    }
}

impl AxisRef {
    /// How many devices it spans.
    pub fn size(&self, mesh: &Mesh) -> i64 {
        match self.sub {
            Some((_, size)) => size,
            None => mesh.axes.get(self.axis).map_or(1, |a| a.1),
        }
    }

    /// `'name'` or `'name':(pre)size`.
    pub fn text(&self, mesh: &Mesh) -> String {
        let name = mesh.axes.get(self.axis).map_or("?", |a| a.0.as_str());
        match self.sub {
            Some((pre, size)) => format!("'{name}':({pre}){size}"),
            None => format!("'{name}'"),
        }
    }

    /// The piece of its axis as `(pre, size)`.
    fn piece(&self, mesh: &Mesh) -> (i64, i64) {
        self.sub.unwrap_or((1, self.size(mesh)))
    }
}

impl NamedSharding {
    fn axes_text(&self, axes: &[AxisRef]) -> String {
        let parts: Vec<String> = axes.iter().map(|a| a.text(&self.mesh)).collect();
        parts.join(", ")
    }

    /// `NamedSharding::ToString`, as jaxlib 0.10 prints it (the mesh is
    /// printed for whole replicated/unreduced/manual shardings too).
    pub fn to_text(&self, include_metadata: bool) -> String {
        let mut out = format!("{{{}", self.mesh.text());
        match &self.body {
            Body::Whole(kind) => out.push_str(&format!(", {}", kind.name())),
            Body::None => {}
            Body::Dims(dims) => {
                let dims: Vec<String> = dims
                    .iter()
                    .map(|d| {
                        let mut s = self.axes_text(&d.axes);
                        if !d.closed {
                            s.push_str(if d.axes.is_empty() { "?" } else { ", ?" });
                        }
                        format!("{{{s}}}")
                    })
                    .collect();
                out.push_str(&format!(", [{}]", dims.join(", ")));
                for (name, axes) in [
                    ("replicated", &self.replicated),
                    ("unreduced", &self.unreduced),
                    ("manual", &self.manual),
                ] {
                    if !axes.is_empty() {
                        out.push_str(&format!(", {name}={{{}}}", self.axes_text(axes)));
                    }
                }
            }
        }
        if let (true, Some(metadata)) = (include_metadata, &self.metadata) {
            out.push_str(&format!(", metadata={metadata}"));
        }
        out.push('}');
        out
    }

    /// The dimension shardings (none for a whole or maximal one).
    fn dims(&self) -> &[DimSharding] {
        match &self.body {
            Body::Dims(dims) => dims,
            _ => &[],
        }
    }

    /// Every axis piece the sharding names, its axis cut at every boundary
    /// any piece of it has (`GetOrderedAxisRefs`), in mesh order.
    fn ordered_pieces(&self) -> Vec<AxisRef> {
        let mesh = &self.mesh;
        let mut cuts: Vec<Vec<i64>> = mesh.axes.iter().map(|(_, s)| vec![1, *s]).collect();
        let named = self
            .dims()
            .iter()
            .flat_map(|d| d.axes.iter())
            .chain(&self.replicated)
            .chain(&self.unreduced)
            .chain(&self.manual);
        for axis in named {
            if let (Some((pre, size)), Some(c)) = (axis.sub, cuts.get_mut(axis.axis)) {
                c.push(pre);
                c.push(pre.saturating_mul(size));
            }
        }
        let mut pieces = vec![];
        for (axis, mut c) in cuts.into_iter().enumerate() {
            c.sort_unstable();
            c.dedup();
            if c.len() <= 2 {
                pieces.push(AxisRef { axis, sub: None });
                continue;
            }
            for w in c.windows(2) {
                pieces.push(AxisRef {
                    axis,
                    sub: Some((w[0], w[1] / w[0].max(1))),
                });
            }
        }
        pieces
    }

    /// Whether two references name the same piece of the mesh.
    fn same(&self, a: &AxisRef, b: &AxisRef) -> bool {
        a.axis == b.axis && a.piece(&self.mesh) == b.piece(&self.mesh)
    }

    /// `HloSharding::V3ToV2Sharding`.
    pub fn to_v2(&self) -> Leaf {
        let mut leaf = Leaf::of(self.v2_kind());
        leaf.metadata = self.metadata.clone();
        leaf
    }

    fn v2_kind(&self) -> Kind {
        if let Some(d) = self.mesh.maximal {
            return Kind::Maximal(d);
        }
        match self.body {
            Body::Whole(Subgroup::Replicated) | Body::None => return Kind::Replicated,
            Body::Whole(Subgroup::Unreduced) => return Kind::Unreduced,
            Body::Whole(Subgroup::Manual) => return Kind::Manual,
            Body::Dims(_) => {}
        }
        let mesh = &self.mesh;
        let mut tile_dims = vec![];
        // The position in the transposed mesh of each piece named.
        let mut placed: Vec<AxisRef> = vec![];
        for dim in self.dims() {
            tile_dims.push(dim.axes.iter().map(|a| a.size(mesh)).product::<i64>());
            placed.extend(dim.axes.iter().cloned());
        }
        let mut types = vec![];
        for (axes, kind) in [
            (&self.manual, Subgroup::Manual),
            (&self.unreduced, Subgroup::Unreduced),
        ] {
            if !axes.is_empty() {
                types.push(kind);
                tile_dims.push(axes.iter().map(|a| a.size(mesh)).product());
                placed.extend(axes.iter().cloned());
            }
        }
        let pieces = self.ordered_pieces();
        let mut perm = vec![0usize; pieces.len()];
        let mut next_replicated = placed.len();
        let mut replicated: i64 = 1;
        let mut reshape = vec![];
        for (i, piece) in pieces.iter().enumerate() {
            reshape.push(piece.size(mesh));
            match placed.iter().position(|p| self.same(p, piece)) {
                Some(at) if at < perm.len() => perm[at] = i,
                _ => {
                    if let Some(slot) = perm.get_mut(next_replicated) {
                        *slot = i;
                    }
                    next_replicated += 1;
                    replicated *= piece.size(mesh);
                }
            }
        }
        if replicated > 1 {
            tile_dims.push(replicated);
            types.push(Subgroup::Replicated);
        }
        let mut seen = vec![false; perm.len()];
        let permutes = perm.iter().all(|&p| !std::mem::replace(&mut seen[p], true));
        if !permutes || tile_dims.iter().product::<i64>() != mesh.len() {
            // Pieces that overlap or do not tile their axis: the parser
            // reports them; nothing device-wise can be said.
            return Kind::Unknown;
        }
        let tiles = mesh
            .devices()
            .reshape(reshape)
            .transpose(&perm)
            .reshape(tile_dims);
        build::subgroup(tiles, &types)
    }
}

impl NamedSharding {
    /// The named form of a v2 sharding over its smallest mesh, axes named
    /// `axis_0`, `axis_1`, ... (XLA's `HloSharding::ToNamedSharding`);
    /// replicated axes are left implicit. `None` for manual, unknown and
    /// unreduced shardings, which XLA does not convert.
    pub fn from_v2(leaf: &Leaf) -> Option<NamedSharding> {
        let mut named = NamedSharding {
            mesh: Mesh {
                axes: vec![],
                device_ids: DeviceIds::Iota,
                maximal: None,
            },
            body: Body::Whole(Subgroup::Replicated),
            replicated: vec![],
            unreduced: vec![],
            manual: vec![],
            metadata: leaf.metadata.clone(),
        };
        let (tiles, subgroups, _) = match &leaf.kind {
            Kind::Replicated => return Some(named),
            Kind::Maximal(d) => {
                named.mesh.maximal = Some(*d);
                named.body = Body::None;
                return Some(named);
            }
            Kind::Tiled { .. } => leaf.tiling()?,
            _ => return None,
        };
        let rank = leaf.data_rank()?;
        let sub_dims = match tiles.sub_dims() {
            Some(sub_dims) => sub_dims,
            None => {
                // Not an iota: one axis per tiling dimension over the devices as listed.
                named.mesh.device_ids = DeviceIds::List(tiles.devices.clone());
                (0..tiles.dims.len())
                    .map(|d| super::tile_assignment::SubDim {
                        tile_dim: d,
                        tile_sub_dim: 0,
                        reshape_dim: d,
                        size: tiles.dims[d],
                    })
                    .collect()
            }
        };
        named.mesh.axes = sub_dims
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("axis_{i}"), s.size))
            .collect();
        let mut dims = vec![
            DimSharding {
                axes: vec![],
                closed: true,
            };
            rank
        ];
        for tile_dim in 0..tiles.dims.len() {
            // This dimension's axes, major first.
            let mut axes: Vec<(usize, usize)> = sub_dims
                .iter()
                .enumerate()
                .filter(|(_, s)| s.tile_dim == tile_dim)
                .map(|(axis, s)| (s.tile_sub_dim, axis))
                .collect();
            axes.sort_by_key(|a| std::cmp::Reverse(a.0));
            let refs: Vec<AxisRef> = axes
                .into_iter()
                .map(|(_, axis)| AxisRef { axis, sub: None })
                .collect();
            if tile_dim < rank {
                dims[tile_dim].axes = refs;
                continue;
            }
            match subgroups.get(tile_dim - rank) {
                Some(Subgroup::Manual) => named.manual.extend(refs),
                Some(Subgroup::Unreduced) => named.unreduced.extend(refs),
                _ => {}
            }
        }
        named.body = Body::Dims(dims);
        Some(named)
    }
}
