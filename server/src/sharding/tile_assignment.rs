//! Which device holds which tile: XLA's `TileAssignment`, an array of device
//! ids whose shape is the tiling, written either as an explicit list
//! (`[2,2]0,3,2,1`) or as a transposed iota (`[4,2]<=[2,4]T(1,0)`: the devices
//! `0..8` laid out as `[2,4]`, transposed, read in row-major order).
//!
//! The devices are always kept expanded (the arrays are small: one entry per
//! device); the iota form is kept beside them because XLA prints it, in its
//! canonical form (`IotaTileAssignment::Create`, `CanonicalizeIotaDims`).

/// More devices than this are refused rather than expanded.
pub const MAX_DEVICES: i64 = 1 << 20;

/// `<=[reshape]T(perm)`: the devices `0..n` laid out as `reshape`, then
/// transposed by `perm` (XLA's `IotaTileAssignment` without its `dims`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iota {
    pub reshape: Vec<i64>,
    pub perm: Vec<usize>,
}

/// A tile assignment: `dims` (the number of tiles along each dimension of the
/// tiling, subgroup dimensions included) and the device of every tile in
/// row-major order.
#[derive(Clone, Debug)]
pub struct TileAssignment {
    pub dims: Vec<i64>,
    pub devices: Vec<i64>,
    /// The canonical iota form when the assignment was written (or derived) as
    /// one; `None` for an explicit list, which XLA keeps and prints as a list.
    pub iota: Option<Iota>,
}

/// Equality is on the devices, as XLA's `TileAssignment::operator==`: an
/// explicit list equal to an iota compares equal.
impl PartialEq for TileAssignment {
    fn eq(&self, other: &TileAssignment) -> bool {
        self.dims == other.dims && self.devices == other.devices
    }
}

impl Eq for TileAssignment {}

/// Checked product of sizes, refused beyond [`MAX_DEVICES`].
pub fn product(dims: &[i64]) -> Result<i64, String> {
    let mut total: i64 = 1;
    for &d in dims {
        if d < 0 {
            return Err(format!("dimension {d} is negative"));
        }
        total = total.saturating_mul(d);
        if total > MAX_DEVICES {
            return Err(format!("more than {MAX_DEVICES} devices"));
        }
    }
    Ok(total)
}

impl Iota {
    /// The identity layout of `n` devices.
    pub fn identity(n: i64) -> Iota {
        Iota {
            reshape: vec![n],
            perm: vec![0],
        }
    }

    /// Checks the permutation and the sizes, then canonicalizes.
    pub fn new(reshape: Vec<i64>, perm: Vec<usize>) -> Result<Iota, String> {
        if reshape.len() != perm.len() {
            return Err(format!(
                "the transpose T(...) has {} entries for {} reshape dimensions",
                perm.len(),
                reshape.len()
            ));
        }
        let mut seen = vec![false; perm.len()];
        for &p in &perm {
            if p >= seen.len() || std::mem::replace(&mut seen[p], true) {
                return Err("the transpose T(...) is not a permutation".into());
            }
        }
        if reshape.iter().any(|&d| d <= 0) {
            return Err("an iota dimension is not positive".into());
        }
        product(&reshape)?;
        Ok(Iota { reshape, perm }.canonical())
    }

    /// The number of devices laid out.
    pub fn len(&self) -> i64 {
        self.reshape.iter().product()
    }

    /// Whether it lays out no devices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The devices in row-major order of the transposed layout.
    pub fn expand(&self) -> Vec<i64> {
        crate::model::iota::devices(&self.reshape, &self.perm)
    }

    /// XLA's `CanonicalizeIotaDims`: size-1 dimensions dropped, runs of
    /// dimensions that stay adjacent and in order after the transpose merged,
    /// until nothing changes; nothing left is `[1]`.
    fn canonical(mut self) -> Iota {
        loop {
            // Drop the size-1 dimensions, renumbering the permutation.
            let kept: Vec<usize> = (0..self.reshape.len())
                .filter(|&d| self.reshape[d] != 1)
                .collect();
            let renumber = |d: usize| kept.iter().position(|&k| k == d);
            self.perm = self.perm.iter().filter_map(|&p| renumber(p)).collect();
            self.reshape = kept.iter().map(|&d| self.reshape[d]).collect();
            // Merge the first adjacent pair `perm[i], perm[i]+1`.
            let pair = (1..self.perm.len()).find(|&i| self.perm[i] == self.perm[i - 1] + 1);
            let Some(i) = pair else { break };
            let (major, minor) = (self.perm[i - 1], self.perm[i]);
            self.reshape[major] *= self.reshape[minor];
            self.reshape[minor] = 1;
        }
        if self.reshape.is_empty() {
            return Iota::identity(1);
        }
        self
    }

    /// The canonical iota that lays the devices out in this order, if one
    /// does: read from the innermost axis out, each axis a run of constant
    /// stride, then checked against the whole list. The canonical form of a
    /// device order is unique, so this is what XLA's own transforms of an
    /// iota assignment (`IotaTileAssignment::Transpose`) produce when they
    /// stay an iota.
    pub fn of_devices(devices: &[i64]) -> Option<Iota> {
        let n = devices.len() as i64;
        if n == 0 || devices[0] != 0 {
            return None;
        }
        // (size, stride) from the innermost axis out.
        let mut axes: Vec<(i64, i64)> = vec![];
        let mut block: i64 = 1;
        while block < n {
            let stride = devices[block as usize];
            let mut size = 1;
            while size * block < n && devices[(size * block) as usize] == size * stride {
                size += 1;
            }
            if size == 1 || n % (size * block) != 0 {
                return None;
            }
            axes.push((size, stride));
            block *= size;
        }
        // The strides must be those of a row-major layout of the sizes.
        let mut by_stride: Vec<usize> = (0..axes.len()).collect();
        by_stride.sort_by_key(|&k| axes[k].1);
        let mut expected = 1;
        for &k in &by_stride {
            if axes[k].1 != expected {
                return None;
            }
            expected *= axes[k].0;
        }
        // Reshape: sizes by stride, major first; perm: each output axis
        // (major first) to its place in the reshape.
        let major_first: Vec<usize> = by_stride.iter().rev().copied().collect();
        let reshape: Vec<i64> = major_first.iter().map(|&k| axes[k].0).collect();
        let perm: Vec<usize> = (0..axes.len())
            .rev()
            .map(|k| major_first.iter().position(|&m| m == k).unwrap_or(0))
            .collect();
        let iota = Iota { reshape, perm }.canonical();
        (iota.expand() == devices).then_some(iota)
    }
}

impl TileAssignment {
    /// `[dims]<=[reshape]T(perm)`.
    pub fn from_iota(dims: Vec<i64>, iota: Iota) -> Result<TileAssignment, String> {
        let n = product(&dims)?;
        if n != iota.len() {
            return Err(format!(
                "the tiling has {n} tiles but the iota lays out {} devices",
                iota.len()
            ));
        }
        Ok(TileAssignment {
            dims,
            devices: iota.expand(),
            iota: Some(iota),
        })
    }

    /// `[dims]d0,d1,...`.
    pub fn from_list(dims: Vec<i64>, devices: Vec<i64>) -> Result<TileAssignment, String> {
        let n = product(&dims)?;
        if n != devices.len() as i64 {
            return Err(format!(
                "the tiling has {n} tiles but {} devices are listed",
                devices.len()
            ));
        }
        Ok(TileAssignment {
            dims,
            devices,
            iota: None,
        })
    }

    /// The same devices under a new shape; an iota stays an iota.
    pub fn reshape(&self, dims: Vec<i64>) -> TileAssignment {
        TileAssignment {
            dims,
            devices: self.devices.clone(),
            iota: self.iota.clone(),
        }
    }

    /// Devices in a new order: an iota assignment stays an iota when the new
    /// order is one (XLA's transforms keep the iota form where they can).
    fn with_devices(&self, dims: Vec<i64>, devices: Vec<i64>) -> TileAssignment {
        let iota = if self.iota.is_some() {
            Iota::of_devices(&devices)
        } else {
            None
        };
        TileAssignment {
            dims,
            devices,
            iota,
        }
    }

    /// The number of devices.
    pub fn num_elements(&self) -> i64 {
        self.devices.len() as i64
    }

    /// Row-major strides of `dims`.
    fn strides(dims: &[i64]) -> Vec<i64> {
        let mut strides = vec![1i64; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1];
        }
        strides
    }

    /// The index in the tiling of the tile at row-major position `flat`.
    pub fn index_of(&self, flat: usize) -> Vec<i64> {
        let strides = Self::strides(&self.dims);
        let mut rest = flat as i64;
        strides
            .iter()
            .map(|&s| {
                let i = rest / s.max(1);
                rest %= s.max(1);
                i
            })
            .collect()
    }

    /// The device at an index of the tiling.
    pub fn at(&self, index: &[i64]) -> Option<i64> {
        let strides = Self::strides(&self.dims);
        let flat: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
        self.devices.get(usize::try_from(flat).ok()?).copied()
    }

    /// The tiling with its dimensions permuted: dimension `k` of the result is
    /// dimension `perm[k]` of this one (`TileAssignment::Transpose`).
    pub fn transpose(&self, perm: &[usize]) -> TileAssignment {
        let dims: Vec<i64> = perm.iter().map(|&p| self.dims[p]).collect();
        let n = self.devices.len();
        let mut devices = Vec::with_capacity(n);
        let out = TileAssignment {
            dims: dims.clone(),
            devices: vec![],
            iota: None,
        };
        for flat in 0..n {
            let index = out.index_of(flat);
            let mut source = vec![0i64; perm.len()];
            for (k, &p) in perm.iter().enumerate() {
                source[p] = index[k];
            }
            devices.push(self.at(&source).unwrap_or(-1));
        }
        self.with_devices(dims, devices)
    }

    /// Each consecutive group of `group` devices sorted (how XLA keeps the
    /// replicated devices of a tile in order, `HloSharding::PartialTile`).
    pub fn sort_groups(&self, group: usize) -> TileAssignment {
        let mut devices = self.devices.clone();
        for chunk in devices.chunks_mut(group.max(1)) {
            chunk.sort_unstable();
        }
        if self.iota.is_some() && devices == self.devices {
            return self.clone();
        }
        self.with_devices(self.dims.clone(), devices)
    }

    /// `[dims]<=[reshape]T(perm)` or `[dims]d0,d1,...` (`TileAssignment::Print`
    /// without its `devices=`).
    pub fn text(&self) -> String {
        let dims = join(&self.dims);
        match &self.iota {
            Some(iota) => format!("[{dims}]<={}", iota_text(iota)),
            None => format!("[{dims}]{}", join(&self.devices)),
        }
    }
}

/// One axis of the smallest mesh a tile assignment is a view of: a piece of
/// a reshape dimension of its iota that falls inside one tiling dimension
/// (XLA's `SubDimInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubDim {
    /// The tiling dimension it splits.
    pub tile_dim: usize,
    /// Its place among that dimension's pieces, counted from the minor end.
    pub tile_sub_dim: usize,
    /// The reshape dimension of the iota it comes from.
    pub reshape_dim: usize,
    pub size: i64,
}

impl TileAssignment {
    /// The axes of the smallest mesh this assignment is a view of, in mesh
    /// order (XLA's `AnalyzeTileAssignment`): the transposed iota's
    /// dimensions and the tiling's, walked together from the major end and
    /// cut wherever either has a boundary. `None` when the devices are not an
    /// iota or a boundary does not divide.
    pub fn sub_dims(&self) -> Option<Vec<SubDim>> {
        let iota = self
            .iota
            .clone()
            .or_else(|| Iota::of_devices(&self.devices))?;
        let mut queue: std::collections::VecDeque<(usize, i64)> =
            iota.perm.iter().map(|&p| (p, iota.reshape[p])).collect();
        // (reshape dim, tile dim, size) in walk order.
        let mut walk: Vec<(usize, usize, i64)> = vec![];
        for (tile_dim, &n) in self.dims.iter().enumerate() {
            let mut need = n;
            while need > 1 {
                let (dim, size) = queue.front_mut()?;
                if *size <= need {
                    if need % *size != 0 {
                        return None;
                    }
                    walk.push((*dim, tile_dim, *size));
                    need /= *size;
                    queue.pop_front();
                } else {
                    if *size % need != 0 {
                        return None;
                    }
                    walk.push((*dim, tile_dim, need));
                    *size /= need;
                    need = 1;
                }
            }
        }
        if queue.iter().any(|&(_, size)| size > 1) {
            return None;
        }
        let mut order: Vec<usize> = (0..walk.len()).collect();
        order.sort_by_key(|&k| walk[k].0);
        Some(
            order
                .into_iter()
                .map(|k| {
                    let (reshape_dim, tile_dim, size) = walk[k];
                    let minor = walk[k + 1..].iter().filter(|w| w.1 == tile_dim).count();
                    SubDim {
                        tile_dim,
                        tile_sub_dim: minor,
                        reshape_dim,
                        size,
                    }
                })
                .collect(),
        )
    }
}

/// `[reshape]` and, unless the identity, `T(perm)`.
pub fn iota_text(iota: &Iota) -> String {
    let mut out = format!("[{}]", join(&iota.reshape));
    if iota.perm.iter().enumerate().any(|(k, &p)| k != p) {
        let perm: Vec<i64> = iota.perm.iter().map(|&p| p as i64).collect();
        out.push_str(&format!("T({})", join(&perm)));
    }
    out
}

/// Integers joined by commas.
pub fn join(values: &[i64]) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(reshape: &[i64], perm: &[usize]) -> Iota {
        Iota::new(reshape.to_vec(), perm.to_vec()).unwrap()
    }

    #[test]
    fn iota_dims_canonicalize_as_xla_does() {
        assert_eq!(iota_text(&iota(&[3, 4, 5], &[0, 1, 2])), "[60]");
        assert_eq!(iota_text(&iota(&[3, 4, 5], &[1, 2, 0])), "[3,20]T(1,0)");
        assert_eq!(iota_text(&iota(&[3, 4, 5], &[2, 0, 1])), "[12,5]T(1,0)");
        assert_eq!(iota_text(&iota(&[3, 4, 5], &[2, 1, 0])), "[3,4,5]T(2,1,0)");
        assert_eq!(
            iota_text(&iota(&[1, 3, 1, 4, 1, 5], &[4, 3, 2, 5, 1, 0])),
            "[3,20]T(1,0)"
        );
    }

    #[test]
    fn a_device_order_gives_back_its_iota() {
        for (reshape, perm) in [
            (vec![2, 4], vec![1, 0]),
            (vec![3, 4, 5], vec![2, 1, 0]),
            (vec![2, 2, 2], vec![2, 0, 1]),
            (vec![7, 10, 3], vec![2, 1, 0]),
        ] {
            let i = iota(&reshape, &perm);
            assert_eq!(Iota::of_devices(&i.expand()), Some(i));
        }
        assert_eq!(Iota::of_devices(&[0, 3, 2, 1]), None);
        assert_eq!(Iota::of_devices(&[0]), Some(Iota::identity(1)));
    }
}
