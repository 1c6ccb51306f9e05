//! The device mesh a module is sharded over, and which of its axes a group of
//! devices spans. JAX builds every sharding of a program over one mesh (a
//! `jax.sharding.Mesh`, `2x4` for 8 devices); the text keeps it in several
//! places: Shardy's `xla.sdy.meshes` frontend attribute on the module
//! (`#sdy.mesh<["x"=2, "y"=4]>`, with the axis names), the mesh form of replica
//! groups (`mesh['axis_0'=2,'axis_1'=4] {'axis_1'}`), and the iota form of tile
//! assignments (`<=[2,4]T(1,0)`: the devices laid out as the mesh, transposed).
//! Devices are numbered row-major over the mesh (JAX's default device order,
//! and what every iota form means).

use crate::model::Module;

use super::Sharding;
use crate::cost::collective::groups::DeviceList;

/// A mesh: axis names and sizes, devices numbered row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub axes: Vec<(String, i64)>,
    /// The device at each position, row-major over the axes, when the mesh
    /// has its own order (`device_ids=`); `None` for `0..n`.
    pub devices: Option<Vec<i64>>,
    /// Where the mesh was read, for a report: "xla.sdy.meshes", "replica groups",
    /// "tile assignments".
    pub source: &'static str,
}

impl Mesh {
    /// `2x4`.
    pub fn shape_text(&self) -> String {
        let sizes: Vec<String> = self.axes.iter().map(|(_, n)| n.to_string()).collect();
        sizes.join("x")
    }

    pub fn num_devices(&self) -> i64 {
        self.axes.iter().map(|(_, n)| *n).product()
    }

    /// The position of `device` along each axis.
    pub fn coordinates(&self, device: i64) -> Vec<i64> {
        let mut rest = match &self.devices {
            Some(ids) => ids
                .iter()
                .position(|&d| d == device)
                .map_or(device, |p| p as i64),
            None => device,
        };
        let mut out = vec![0; self.axes.len()];
        for (k, (_, n)) in self.axes.iter().enumerate().rev() {
            out[k] = rest % n.max(&1);
            rest /= n.max(&1);
        }
        out
    }

    /// The axes along which every group runs: each group holds the devices that
    /// agree on the other axes (and all of them), and every group spans the same
    /// axes. `None` when the groups do not follow the mesh (a part of an axis,
    /// devices beyond it). The axes are in mesh order.
    pub fn axes_of_groups(&self, groups: &[Vec<i64>]) -> Option<Vec<usize>> {
        let total = self.num_devices();
        let mut spanned: Option<Vec<usize>> = None;
        for group in groups {
            if group.iter().any(|&d| d < 0 || d >= total) {
                return None;
            }
            let coords: Vec<Vec<i64>> = group.iter().map(|&d| self.coordinates(d)).collect();
            let first = coords.first()?;
            let varying: Vec<usize> = (0..self.axes.len())
                .filter(|&k| coords.iter().any(|c| c[k] != first[k]))
                .collect();
            let size: i64 = varying.iter().map(|&k| self.axes[k].1).product();
            let mut distinct = group.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if size != group.len() as i64 || distinct.len() != group.len() {
                return None;
            }
            match &spanned {
                Some(axes) if *axes != varying => return None,
                _ => spanned = Some(varying),
            }
        }
        spanned
    }

    /// `axis 1 ('y')`; an axis JAX named `axis_N` is said by number only.
    pub fn axis_text(&self, k: usize) -> String {
        match self.axes.get(k) {
            Some((name, _)) if *name != format!("axis_{k}") => format!("axis {k} ('{name}')"),
            _ => format!("axis {k}"),
        }
    }

    /// `the 2x4 mesh`, or `the 8-device mesh` for a mesh of one axis.
    pub fn name_text(&self) -> String {
        match self.axes[..] {
            [(_, n)] => format!("the {n}-device mesh"),
            _ => format!("the {} mesh", self.shape_text()),
        }
    }

    /// The pieces of axes every group runs along when they are not whole axes:
    /// per varying axis `(axis, pre, size)`, Shardy's sub-axis `'d':(pre)size`
    /// (the `size` positions of the axis after the first `pre` in major-to-minor
    /// order, that is with stride `axis size / (pre × size)`). `None` when a
    /// group's positions along an axis are not evenly spaced, or the groups
    /// differ.
    pub fn sub_axes_of_groups(&self, groups: &[Vec<i64>]) -> Option<Vec<(usize, i64, i64)>> {
        let total = self.num_devices();
        let mut spanned: Option<Vec<(usize, i64, i64)>> = None;
        for group in groups {
            if group.iter().any(|&d| d < 0 || d >= total) {
                return None;
            }
            let coords: Vec<Vec<i64>> = group.iter().map(|&d| self.coordinates(d)).collect();
            let mut pieces = vec![];
            let mut count = 1i64;
            for (k, &(_, full)) in self.axes.iter().enumerate() {
                let mut values: Vec<i64> = coords.iter().map(|c| c[k]).collect();
                values.sort_unstable();
                values.dedup();
                let [first, second, ..] = values[..] else {
                    continue;
                };
                let stride = second - first;
                let size = values.len() as i64;
                let even = values
                    .iter()
                    .enumerate()
                    .all(|(i, &v)| v == first + i as i64 * stride);
                if !even || full % (stride * size) != 0 {
                    return None;
                }
                count *= size;
                pieces.push((k, full / (stride * size), size));
            }
            if count != group.len() as i64 {
                return None;
            }
            match &spanned {
                Some(p) if *p != pieces => return None,
                _ => spanned = Some(pieces),
            }
        }
        spanned
    }

    /// `sub-axis 'd':(2)4 of the 8-device mesh`; a whole axis is named as
    /// [`Mesh::axis_text`] names it.
    pub fn sub_axes_text(&self, pieces: &[(usize, i64, i64)]) -> String {
        let words: Vec<String> = pieces
            .iter()
            .map(|&(k, pre, size)| {
                let (name, full) = &self.axes[k];
                if pre == 1 && size == *full {
                    self.axis_text(k)
                } else {
                    format!("sub-axis '{name}':({pre}){size}")
                }
            })
            .collect();
        format!("{} of {}", words.join(" and "), self.name_text())
    }

    /// `axis 1 ('y') of the 2x4 mesh`, `axes 0 and 1 of the 2x4 mesh (all 8
    /// devices)`, or `no mesh axis (each device alone)`.
    pub fn axes_text(&self, axes: &[usize]) -> String {
        let mesh = self.name_text();
        match axes {
            [] => "no mesh axis (each device alone)".into(),
            [k] => format!("{} of {mesh}", self.axis_text(*k)),
            _ => {
                let names: Vec<String> = axes
                    .iter()
                    .map(|&k| self.axis_text(k).replacen("axis ", "", 1))
                    .collect();
                let all = if axes.len() == self.axes.len() {
                    format!(" (all {} devices)", self.num_devices())
                } else {
                    String::new()
                };
                format!("axes {} of {mesh}{all}", names.join(" and "))
            }
        }
    }
}

/// `["x"=2, "y"=4]` or `['axis_0'=2,'axis_1'=4]` (the text from the `[`): the
/// axes, or `None` when the list is not of that form.
fn axis_list(text: &str) -> Option<Vec<(String, i64)>> {
    let body = text.strip_prefix('[')?;
    let body = &body[..body.find(']')?];
    let mut axes = vec![];
    for axis in body.split(',').filter(|a| !a.trim().is_empty()) {
        let (name, size) = axis.split_once('=')?;
        let name = name.trim().trim_matches(|c| c == '\'' || c == '"');
        let size = size.trim().parse::<i64>().ok().filter(|&n| n > 0)?;
        axes.push((name.to_string(), size));
    }
    (!axes.is_empty()).then_some(axes)
}

/// The first `#sdy.mesh<[...]>` of the module's `xla.sdy.meshes` attribute,
/// unless it lists its own device order (`device_ids=`).
fn sdy_mesh(header: &str) -> Option<Vec<(String, i64)>> {
    let at = header.find("xla.sdy.meshes")?;
    let rest = &header[at..];
    let mesh = &rest[rest.find("#sdy.mesh<")? + "#sdy.mesh<".len()..];
    let end = mesh.find('>')?;
    if mesh[..end].contains("device_ids") {
        return None;
    }
    axis_list(mesh)
}

/// A mesh's axes: names and sizes.
type Axes = Vec<(String, i64)>;

/// The mesh of the first replica groups written in mesh form, with its
/// device order when it lists one (`device_ids=`).
fn replica_group_mesh(module: &Module) -> Option<(Axes, Option<Vec<i64>>)> {
    module.computations().find_map(|c| {
        c.model().instructions.iter().find_map(|i| {
            let text = c.src(i.attribute("replica_groups")?.value_range).trim();
            let written = axis_list(text.strip_prefix("mesh")?)?;
            // XLA's compiled groups write axes of one device (`'axis_1'=1`):
            // they split nothing, and a mesh named `8x1` reads as two axes.
            let mut axes: Vec<(String, i64)> =
                written.iter().filter(|(_, n)| *n > 1).cloned().collect();
            if axes.is_empty() {
                axes = written.clone();
            }
            if !text.contains("device_ids") {
                return Some((axes, None));
            }
            // The devices of the mesh's positions: the groups along every axis.
            let all: Vec<String> = written.iter().map(|(n, _)| format!("'{n}'")).collect();
            let close = text.rfind('{')?;
            let every = format!("{} {{{}}}", &text[..close].trim_end(), all.join(","));
            let devices = DeviceList::parse(&every).ok()?.groups().concat();
            Some((axes, Some(devices)))
        })
    })
}

/// The longest iota layout of a tile assignment that lays out all `devices`
/// (the tiles' dimensions when the devices are in order).
fn tile_assignment_mesh(module: &Module, devices: i64) -> Option<Vec<(String, i64)>> {
    let mut best: Option<Vec<i64>> = None;
    for s in super::sharded_instructions(module) {
        let Ok(sharding) = &s.sharding else { continue };
        let mut leaves = vec![];
        collect_leaves(sharding, &mut leaves);
        for leaf in leaves {
            let Some((tiles, _, _)) = leaf.tiling() else {
                continue;
            };
            let Some(iota) = &tiles.iota else { continue };
            // `<=[8]` over `[2,4]` tiles is the 2x4 mesh in order: the tiles' own
            // dimensions (but those of one tile) say its axes.
            let in_order = iota.reshape.len() == 1;
            let layout: Vec<i64> = if in_order {
                tiles.dims.iter().copied().filter(|&n| n > 1).collect()
            } else {
                iota.reshape.clone()
            };
            let product: i64 = layout.iter().product();
            if product == devices && best.as_ref().is_none_or(|b| b.len() < layout.len()) {
                best = Some(layout);
            }
        }
    }
    // A single axis of all the devices is a mesh too (`<=[8]` over `[8,1]`
    // tiles: JAX's one-axis `Mesh(devices, ('d',))`).
    let sizes = best.filter(|b| !b.is_empty())?;
    Some(
        sizes
            .into_iter()
            .enumerate()
            .map(|(k, n)| (format!("axis_{k}"), n))
            .collect(),
    )
}

fn collect_leaves(sharding: &Sharding, out: &mut Vec<super::Leaf>) {
    match sharding {
        Sharding::Tuple(elements) => elements.iter().for_each(|e| collect_leaves(e, out)),
        other => out.extend(other.v2()),
    }
}

/// The mesh of `module`: Shardy's named mesh, else the mesh of mesh-form
/// replica groups written in device order, else the longest iota layout of
/// its tile assignments over all its devices, else the mesh of replica groups
/// with their own device order (`device_ids=`: the compiled module's view of
/// the mesh, reshaped). `None` when nothing says more than a list of devices.
pub fn of_module(module: &Module) -> Option<Mesh> {
    if let Some(axes) = module.header_text().and_then(sdy_mesh) {
        return Some(Mesh {
            axes,
            devices: None,
            source: "xla.sdy.meshes",
        });
    }
    let from_groups = replica_group_mesh(module);
    if let Some((axes, None)) = &from_groups {
        return Some(Mesh {
            axes: axes.clone(),
            devices: None,
            source: "replica groups",
        });
    }
    let devices = match module.num_partitions() {
        n if n > 1 => n,
        _ => largest_device(module) + 1,
    };
    if let Some(axes) = tile_assignment_mesh(module, devices) {
        return Some(Mesh {
            axes,
            devices: None,
            source: "tile assignments",
        });
    }
    from_groups.map(|(axes, devices)| Mesh {
        axes,
        devices,
        source: "replica groups",
    })
}

/// The highest device a tile assignment names (0 without one).
fn largest_device(module: &Module) -> i64 {
    super::sharded_instructions(module)
        .iter()
        .filter_map(|s| s.sharding.as_ref().ok())
        .flat_map(|s| {
            let mut leaves = vec![];
            collect_leaves(s, &mut leaves);
            leaves
        })
        .filter_map(|l| l.tiling().map(|t| t.0.devices.iter().copied().max()))
        .flatten()
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(axes: &[(&str, i64)]) -> Mesh {
        Mesh {
            axes: axes.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            devices: None,
            source: "test",
        }
    }

    #[test]
    fn groups_of_consecutive_devices_run_along_the_last_axis() {
        let m = mesh(&[("x", 2), ("y", 4)]);
        assert_eq!(
            m.axes_of_groups(&[vec![0, 1, 2, 3], vec![4, 5, 6, 7]]),
            Some(vec![1])
        );
        assert_eq!(
            m.axes_of_groups(&[vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]),
            Some(vec![0])
        );
        assert_eq!(m.axes_of_groups(&[(0..8).collect()]), Some(vec![0, 1]));
        // Half an axis follows no axis.
        assert_eq!(m.axes_of_groups(&[vec![0, 1], vec![2, 3]]), None);
        assert_eq!(m.axes_text(&[1]), "axis 1 ('y') of the 2x4 mesh");
        assert_eq!(
            m.axes_text(&[0, 1]),
            "axes 0 ('x') and 1 ('y') of the 2x4 mesh (all 8 devices)"
        );
    }

    #[test]
    fn groups_along_a_piece_of_an_axis_name_the_sub_axis() {
        let m = mesh(&[("d", 8)]);
        assert_eq!(m.axes_text(&[0]), "axis 0 ('d') of the 8-device mesh");
        // The last 4 positions of 8, major to minor: 'd':(2)4.
        let groups = [vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
        assert_eq!(m.axes_of_groups(&groups), None);
        let pieces = m.sub_axes_of_groups(&groups).unwrap();
        assert_eq!(pieces, vec![(0, 2, 4)]);
        assert_eq!(
            m.sub_axes_text(&pieces),
            "sub-axis 'd':(2)4 of the 8-device mesh"
        );
        // Stride 4: the first 2 positions, 'd':(1)2.
        let pieces = m.sub_axes_of_groups(&[vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
        assert_eq!(pieces, Some(vec![(0, 1, 2)]));
        assert_eq!(m.sub_axes_of_groups(&[vec![0, 1, 4], vec![2, 3, 5]]), None);
    }

    #[test]
    fn both_spellings_of_an_axis_list_are_read() {
        assert_eq!(
            axis_list("[\"x\"=2, \"y\"=4]>"),
            Some(vec![("x".into(), 2), ("y".into(), 4)])
        );
        assert_eq!(
            axis_list("['axis_0'=2,'axis_1'=4] {'axis_1'}"),
            Some(vec![("axis_0".into(), 2), ("axis_1".into(), 4)])
        );
        assert_eq!(axis_list("[x]"), None);
        assert_eq!(axis_list("['d'=8] {'d':(2)4}"), Some(vec![("d".into(), 8)]));
        let header = "HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2, \"y\"=4]>}}";
        assert_eq!(sdy_mesh(header).map(|a| a.len()), Some(2));
    }
}
