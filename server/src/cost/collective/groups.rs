//! The devices of a collective as HLO text writes them, and how XLA counts
//! them: replica groups in their three spellings (a list of lists, an iota
//! list, JAX's mesh axes), source-target pairs, the group mode a
//! collective's `channel_id` and `use_global_device_ids` select
//! (`GetCollectiveOpGroupMode`), the participants of each group
//! (`GetParticipantCountsForReplicaGroups`) and the count and size of the
//! groups (`GetReplicaGroupCountAndSize`).

/// More devices than this in one list are refused rather than expanded: no
/// machine XLA compiles for has that many, and the expansion must stay small.
const MAX_DEVICES: i64 = 1 << 20;

/// `[groups,size]<=[reshape]T(transpose)`: the devices `0..n` laid out as
/// `reshape`, transposed, flattened and cut into `groups` groups of `size`
/// (XLA's `IotaReplicaGroupList`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IotaList {
    pub groups: i64,
    pub size: i64,
    pub reshape: Vec<i64>,
    pub transpose: Vec<usize>,
    /// A mesh's own device order (`device_ids=(...)` of mesh-form groups):
    /// the device at each position of the laid-out mesh; `None` for `0..n`.
    pub device_ids: Option<Vec<i64>>,
}

/// A collective's replica groups (`CollectiveDeviceListBase`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// `{{0,1},{2,3}}`; `{}` (or no attribute): no groups, meaning all devices.
    Explicit(Vec<Vec<i64>>),
    /// `[2,4]<=[8]`, `[4,2]<=[2,4]T(1,0)`.
    Iota(IotaList),
    /// `mesh['x'=2,'y'=4] {'y'}` (JAX 0.10): the same devices as an iota list,
    /// but XLA treats it as a list of its own kind (never as an iota list when
    /// it looks a measurement up), so it is kept apart.
    Mesh(IotaList),
}

impl IotaList {
    /// The groups, expanded.
    pub fn expand(&self) -> Vec<Vec<i64>> {
        let mut flat = crate::model::iota::devices(&self.reshape, &self.transpose);
        if let Some(ids) = &self.device_ids {
            for d in &mut flat {
                *d = usize::try_from(*d)
                    .ok()
                    .and_then(|p| ids.get(p))
                    .copied()
                    .unwrap_or(*d);
            }
        }
        flat.chunks(self.size.max(1) as usize)
            .map(<[i64]>::to_vec)
            .collect()
    }

    /// Checks what XLA's parser checks: the groups hold exactly the devices
    /// laid out, and the transpose is a permutation.
    fn validate(self) -> Result<IotaList, String> {
        let mut total: i64 = 1;
        for &d in &self.reshape {
            if d <= 0 {
                return Err(format!(
                    "iota replica groups: dimension {d} is not positive"
                ));
            }
            total = total.saturating_mul(d);
        }
        if self.groups <= 0 || self.size <= 0 {
            return Err("iota replica groups: the group count and size must be positive".into());
        }
        if total > MAX_DEVICES || self.groups.saturating_mul(self.size) != total {
            return Err(format!(
                "iota replica groups: {} groups of {} do not hold the {total} devices laid out",
                self.groups, self.size
            ));
        }
        let mut seen = vec![false; self.reshape.len()];
        if self.transpose.len() != self.reshape.len()
            || self
                .transpose
                .iter()
                .any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true))
        {
            return Err("iota replica groups: the transpose is not a permutation".into());
        }
        Ok(self)
    }
}

impl DeviceList {
    /// No groups: every device takes part.
    pub fn empty() -> DeviceList {
        DeviceList::Explicit(vec![])
    }

    /// Reads the value of a `replica_groups=` attribute.
    pub fn parse(text: &str) -> Result<DeviceList, String> {
        let text = text.trim();
        if text.starts_with("mesh") || text.starts_with("maximal_mesh") {
            return parse_mesh(text).map(DeviceList::Mesh);
        }
        if text.starts_with('[') {
            return parse_iota(text).map(DeviceList::Iota);
        }
        parse_lists(text).map(DeviceList::Explicit)
    }

    /// Whether XLA holds it as an iota list (`CollectiveDeviceListVersion::kIota`).
    pub fn is_iota(&self) -> bool {
        matches!(self, DeviceList::Iota(_))
    }

    /// `replica_groups()`: the groups, expanded.
    pub fn groups(&self) -> Vec<Vec<i64>> {
        match self {
            DeviceList::Explicit(groups) => groups.clone(),
            DeviceList::Iota(iota) | DeviceList::Mesh(iota) => iota.expand(),
        }
    }

    /// The number of groups and their size, when the list says them directly.
    fn iota(&self) -> Option<&IotaList> {
        match self {
            DeviceList::Iota(iota) | DeviceList::Mesh(iota) => Some(iota),
            DeviceList::Explicit(_) => None,
        }
    }
}

impl std::fmt::Display for DeviceList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let iota = |f: &mut std::fmt::Formatter<'_>, i: &IotaList| {
            let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
            write!(f, "[{},{}]<=[{}]", i.groups, i.size, join(&i.reshape))?;
            if i.transpose.iter().enumerate().any(|(k, &p)| k != p) {
                let t: Vec<i64> = i.transpose.iter().map(|&p| p as i64).collect();
                write!(f, "T({})", join(&t))?;
            }
            Ok(())
        };
        match self {
            DeviceList::Iota(i) | DeviceList::Mesh(i) if i.device_ids.is_none() => iota(f, i),
            DeviceList::Iota(_) | DeviceList::Mesh(_) => {
                write!(f, "{}", DeviceList::Explicit(self.groups()))
            }
            DeviceList::Explicit(groups) => {
                let inner: Vec<String> = groups
                    .iter()
                    .map(|g| {
                        let ids: Vec<String> = g.iter().map(i64::to_string).collect();
                        format!("{{{}}}", ids.join(","))
                    })
                    .collect();
                write!(f, "{{{}}}", inner.join(","))
            }
        }
    }
}

/// Integers separated by commas: `2,4` (spaces allowed, nothing empty).
fn integers(text: &str, what: &str) -> Result<Vec<i64>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(vec![]);
    }
    text.split(',')
        .map(|t| {
            t.trim()
                .parse::<i64>()
                .map_err(|_| format!("{what}: `{}` is not an integer", t.trim()))
        })
        .collect()
}

/// `[g,s]<=[d0,d1,...]` with an optional `T(p0,p1,...)`.
fn parse_iota(text: &str) -> Result<IotaList, String> {
    let bad = || format!("iota replica groups: cannot read `{text}`");
    let (shape, rest) = text.split_once("<=").ok_or_else(bad)?;
    let shape = integers(
        shape
            .trim()
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or_else(bad)?,
        "iota replica groups",
    )?;
    let [groups, size] = shape[..] else {
        return Err(bad());
    };
    let rest = rest.trim();
    let close = rest.find(']').ok_or_else(bad)?;
    let reshape = integers(
        rest.strip_prefix('[').ok_or_else(bad)?[..close - 1].trim(),
        "iota replica groups",
    )?;
    let tail = rest[close + 1..].trim();
    let transpose = if tail.is_empty() {
        (0..reshape.len()).collect()
    } else {
        let perm = tail
            .strip_prefix("T(")
            .and_then(|t| t.strip_suffix(')'))
            .ok_or_else(bad)?;
        integers(perm, "iota replica groups")?
            .into_iter()
            .map(|p| usize::try_from(p).map_err(|_| bad()))
            .collect::<Result<_, _>>()?
    };
    IotaList {
        groups,
        size,
        reshape,
        transpose,
        device_ids: None,
    }
    .validate()
}

/// `{{0,1},{2,3}}` or `{}`.
fn parse_lists(text: &str) -> Result<Vec<Vec<i64>>, String> {
    let bad = || format!("replica groups: cannot read `{text}`");
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(bad)?
        .trim();
    let mut groups = vec![];
    let mut rest = inner;
    let mut devices = 0i64;
    while !rest.is_empty() {
        let body = rest.strip_prefix('{').ok_or_else(bad)?;
        let end = body.find('}').ok_or_else(bad)?;
        let group = integers(&body[..end], "replica groups")?;
        devices += group.len() as i64;
        if devices > MAX_DEVICES {
            return Err(format!("replica groups: more than {MAX_DEVICES} devices"));
        }
        groups.push(group);
        rest = body[end + 1..].trim_start();
        rest = rest.strip_prefix(',').map_or(rest, str::trim_start);
    }
    Ok(groups)
}

/// `mesh['a'=2,'b'=4] {'b'}`: the devices of a mesh grouped along the listed
/// axes, which XLA turns into an iota list
/// (`MeshAxesReplicaGroupList::ToIotaReplicaGroupList`): the mesh laid out in
/// its axes' order, the other axes moved first, the grouped ones last in the
/// order listed; `device_ids=(...)` (the mesh's own device order, as JAX's
/// compiled modules write it) names the device at each position. A grouped
/// sub-axis (`'b':(2)2`) cuts its axis into pieces first.
fn parse_mesh(text: &str) -> Result<IotaList, String> {
    let unread = |why: &str| format!("not modelled: mesh replica groups {why} (`{text}`)");
    let body = text
        .strip_prefix("mesh[")
        .ok_or_else(|| unread("of a maximal mesh"))?;
    let close = body
        .find(']')
        .ok_or_else(|| unread("without their closing `]`"))?;
    let (axes_text, mut rest) = (&body[..close], body[close + 1..].trim());
    let mut device_ids = None;
    if let Some(ids) = rest.strip_prefix(',') {
        let ids = ids
            .trim_start()
            .strip_prefix("device_ids=(")
            .ok_or_else(|| unread("with an unknown field after the axes"))?;
        let (list, after) =
            split_device_ids(ids).ok_or_else(|| unread("with unclosed device_ids"))?;
        device_ids = Some(mesh_device_ids(list).map_err(|why| unread(&why))?);
        rest = after.trim();
    }
    let mut names = vec![];
    let mut sizes = vec![];
    for axis in axes_text.split(',').filter(|a| !a.trim().is_empty()) {
        let (name, size) = axis
            .split_once('=')
            .ok_or_else(|| unread("with an axis that has no size"))?;
        names.push(name.trim().trim_matches('\'').to_string());
        sizes.push(
            size.trim()
                .parse::<i64>()
                .map_err(|_| unread("with an axis size that is not an integer"))?,
        );
    }
    let grouped_text = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| {
            unread("without the `{...}` of grouped axes (the model does not read that form yet)")
        })?;
    let mut grouped = vec![];
    for axis in grouped_text.split(',').filter(|a| !a.trim().is_empty()) {
        grouped.push(grouped_axis(axis.trim(), &names, &sizes).map_err(|why| unread(&why))?);
    }
    let (reshape, grouped) = cut_at_sub_axes(&sizes, &grouped);
    let mut transpose: Vec<usize> = (0..reshape.len())
        .filter(|k| !grouped.contains(k))
        .collect();
    transpose.extend(&grouped);
    let size: i64 = grouped.iter().map(|&k| reshape[k]).product();
    let total: i64 = sizes.iter().product();
    if device_ids
        .as_ref()
        .is_some_and(|ids: &Vec<i64>| ids.len() as i64 != total)
    {
        return Err(unread("whose device_ids do not list the mesh's devices"));
    }
    IotaList {
        groups: if size > 0 { total / size } else { 0 },
        size,
        reshape,
        transpose,
        device_ids,
    }
    .validate()
}

/// One grouped axis of mesh-form replica groups: `'b'` (the whole axis, as
/// `(1)size`) or Shardy's sub-axis `'b':(pre)size` (the `size` devices of
/// axis `b` after the first `pre`, major to minor), as (axis, pre, size).
fn grouped_axis(text: &str, names: &[String], sizes: &[i64]) -> Result<(usize, i64, i64), String> {
    let (name, sub) = match text.split_once(':') {
        Some((name, sub)) => (name.trim(), Some(sub.trim())),
        None => (text, None),
    };
    let name = name.trim_matches('\'');
    let k = names
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("naming the unknown axis '{name}'"))?;
    let Some(sub) = sub else {
        return Ok((k, 1, sizes[k]));
    };
    let bad = || format!("with the sub-axis `{text}` that does not divide its axis");
    let (pre, size) = sub
        .strip_prefix('(')
        .and_then(|s| s.split_once(')'))
        .ok_or_else(bad)?;
    let (pre, size) = (
        pre.trim().parse::<i64>().map_err(|_| bad())?,
        size.trim().parse::<i64>().map_err(|_| bad())?,
    );
    if pre <= 0 || size <= 0 || sizes[k] % pre.saturating_mul(size) != 0 {
        return Err(bad());
    }
    Ok((k, pre, size))
}

/// The mesh's axes cut where the grouped sub-axes cut them, and the position
/// of each grouped piece among the cut dimensions, in the order listed
/// (`MeshAxesReplicaGroupList::ComputeReindexedAxes`): an axis with grouped
/// pieces becomes its pieces, sorted by where they start, with the devices
/// before, between and after them as dimensions of their own (`'a'=8` grouped
/// on `'a':(2)2` is `[2,2,2]`, grouping the middle one).
fn cut_at_sub_axes(sizes: &[i64], grouped: &[(usize, i64, i64)]) -> (Vec<i64>, Vec<usize>) {
    let mut reshape = vec![];
    let mut position = vec![0usize; grouped.len()];
    for (k, &full) in sizes.iter().enumerate() {
        let mut pieces: Vec<(usize, i64, i64)> = grouped
            .iter()
            .enumerate()
            .filter(|(_, g)| g.0 == k)
            .map(|(i, g)| (i, g.1, g.2))
            .collect();
        if pieces.is_empty() {
            reshape.push(full);
            continue;
        }
        pieces.sort_by_key(|p| p.1);
        let mut before = 1i64;
        for (i, pre, size) in pieces {
            if pre > before {
                reshape.push(pre / before);
                before = pre;
            }
            position[i] = reshape.len();
            reshape.push(size);
            before = before.saturating_mul(size);
        }
        if before < full {
            reshape.push(full / before.max(1));
        }
    }
    (reshape, position)
}

/// The text of `device_ids=(...)` (after its `(`) up to its closing `)`, and
/// what follows; an iota form's `T(...)` nests one level.
fn split_device_ids(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    for (k, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some((&text[..k], &text[k + 1..])),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A mesh's devices in row-major order of its axes: `[2,4]T(1,0)` (the iota
/// form: `0..n` laid out, transposed) or an explicit `0,4,1,5,...`.
fn mesh_device_ids(text: &str) -> Result<Vec<i64>, String> {
    let text = text.trim();
    let Some(iota) = text.strip_prefix('[') else {
        return integers(text, "device_ids");
    };
    let close = iota.find(']').ok_or("device_ids: no closing `]`")?;
    let reshape = integers(&iota[..close], "device_ids")?;
    let tail = iota[close + 1..].trim();
    let transpose: Vec<usize> = if tail.is_empty() {
        (0..reshape.len()).collect()
    } else {
        let perm = tail
            .strip_prefix("T(")
            .and_then(|t| t.strip_suffix(')'))
            .ok_or("device_ids: cannot read the transpose")?;
        integers(perm, "device_ids")?
            .into_iter()
            .map(|p| usize::try_from(p).map_err(|_| "device_ids: a negative axis".to_string()))
            .collect::<Result<_, _>>()?
    };
    let total = reshape
        .iter()
        .try_fold(1i64, |t, &d| (d > 0).then(|| t.saturating_mul(d)))
        .ok_or("device_ids: a dimension is not positive")?;
    let mut seen = vec![false; reshape.len()];
    if total > MAX_DEVICES
        || transpose.len() != reshape.len()
        || transpose
            .iter()
            .any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true))
    {
        return Err("device_ids: the transpose is not a permutation of a small layout".into());
    }
    Ok(crate::model::iota::devices(&reshape, &transpose))
}

/// `source_target_pairs={{0,1},{1,2}}`.
pub fn parse_pairs(text: &str) -> Result<Vec<(i64, i64)>, String> {
    parse_lists(text.trim())?
        .into_iter()
        .map(|pair| match pair[..] {
            [s, t] => Ok((s, t)),
            _ => Err(format!(
                "source_target_pairs: `{text}` has a pair of {} ids",
                pair.len()
            )),
        })
        .collect()
}

/// How a collective's group ids name devices (`CollectiveOpGroupMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    /// Replica ids; each partition runs its own copy of every group.
    CrossReplica,
    /// Partition ids; each replica runs its own copy.
    CrossPartition,
    /// Replica ids, every partition of each replica in the group.
    CrossReplicaAndPartition,
    /// Global device ids (`replica * partitions + partition`).
    FlattenedId,
}

impl GroupMode {
    /// `GetCollectiveOpGroupMode(has_channel_id, use_global_device_ids)`:
    /// `use_global_device_ids` is `None` for the collectives that have no such
    /// attribute (all-to-all, collective-permute, collective-broadcast).
    pub fn of(
        has_channel_id: bool,
        use_global_device_ids: Option<bool>,
    ) -> Result<GroupMode, String> {
        match (has_channel_id, use_global_device_ids) {
            (false, Some(true)) => Err("use_global_device_ids=true needs a channel_id".into()),
            (false, _) => Ok(GroupMode::CrossReplica),
            (true, None) => Ok(GroupMode::CrossPartition),
            (true, Some(false)) => Ok(GroupMode::CrossReplicaAndPartition),
            (true, Some(true)) => Ok(GroupMode::FlattenedId),
        }
    }
}

/// The module's device counts (`HloModuleConfig`): `replica_count` and
/// `num_partitions` from the `HloModule` line, 1 each when not said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleConfig {
    pub replica_count: i64,
    pub num_partitions: i64,
}

impl Default for ModuleConfig {
    fn default() -> ModuleConfig {
        ModuleConfig {
            replica_count: 1,
            num_partitions: 1,
        }
    }
}

impl ModuleConfig {
    /// Reads `replica_count=` and `num_partitions=` from the header's text.
    pub fn from_header(header: &str) -> ModuleConfig {
        let number = |key: &str| -> Option<i64> {
            let at = header.find(&format!("{key}="))?;
            let digits: String = header[at + key.len() + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        };
        let defaults = ModuleConfig::default();
        ModuleConfig {
            replica_count: number("replica_count").unwrap_or(defaults.replica_count),
            num_partitions: number("num_partitions").unwrap_or(defaults.num_partitions),
        }
    }
}

/// What `GetParticipantCountsForReplicaGroups` says, summed up: how many groups
/// run (one per partition or replica copy) and how many devices each has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participants {
    /// `participant_counts.size()`.
    pub groups: i64,
    /// Each listed group's participant count (before the per-copy repetition).
    pub sizes: Vec<i64>,
}

impl Participants {
    /// `GetParticipantCountsForReplicaGroups`.
    pub fn count(
        config: ModuleConfig,
        groups: &[Vec<i64>],
        mode: GroupMode,
    ) -> Result<Participants, String> {
        let listed: Vec<i64> = if groups.is_empty() {
            match mode {
                GroupMode::FlattenedId => {
                    return Err("replica groups cannot be empty with global device ids".into())
                }
                GroupMode::CrossPartition => vec![config.num_partitions],
                _ => vec![config.replica_count],
            }
        } else {
            groups.iter().map(|g| g.len() as i64).collect()
        };
        let n = listed.len() as i64;
        Ok(match mode {
            GroupMode::CrossReplica => Participants {
                groups: n.saturating_mul(config.num_partitions),
                sizes: if config.num_partitions > 0 {
                    listed
                } else {
                    vec![]
                },
            },
            GroupMode::CrossReplicaAndPartition => Participants {
                groups: n,
                sizes: listed
                    .iter()
                    .map(|s| s.saturating_mul(config.num_partitions))
                    .collect(),
            },
            GroupMode::CrossPartition | GroupMode::FlattenedId => Participants {
                groups: n,
                sizes: listed,
            },
        })
    }

    /// `NumRanks` of `GpuHloCostAnalysis`: the largest group, at least 1.
    pub fn num_ranks(&self) -> i64 {
        self.sizes.iter().copied().max().unwrap_or(1).max(1)
    }

    /// The size every group has, if they all have one.
    fn uniform_size(&self) -> Option<i64> {
        let first = *self.sizes.first()?;
        self.sizes.iter().all(|&s| s == first).then_some(first)
    }
}

/// `GetReplicaGroupCountAndSize`: an iota list says both; otherwise they are
/// counted, and groups of different sizes give `None`.
pub fn group_count_and_size(
    devices: &DeviceList,
    config: ModuleConfig,
    mode: Result<GroupMode, String>,
) -> Result<Option<(i64, i64)>, String> {
    if let (true, Some(iota)) = (devices.is_iota(), devices.iota()) {
        return Ok(Some((iota.groups, iota.size)));
    }
    let participants = Participants::count(config, &devices.groups(), mode?)?;
    if participants.sizes.is_empty() {
        return Err("no partition runs the collective (num_partitions=0)".into());
    }
    Ok(participants
        .uniform_size()
        .map(|size| (participants.groups, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iota_lists_expand_as_xla_lays_them_out() {
        let list = DeviceList::parse("[8,2]<=[2,8]T(1,0)").unwrap();
        let groups = list.groups();
        assert_eq!(groups.len(), 8);
        assert_eq!(groups[0], vec![0, 8]);
        assert_eq!(groups[7], vec![7, 15]);
        assert_eq!(
            DeviceList::parse("[2,4]<=[8]").unwrap().groups(),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(list.to_string(), "[8,2]<=[2,8]T(1,0)");
        assert!(DeviceList::parse("[3,4]<=[8]").is_err());
        assert!(DeviceList::parse("[2,4]<=[8]T(1)").is_err());
    }

    #[test]
    fn explicit_lists_and_pairs_read_back() {
        let list = DeviceList::parse("{{0,1,2,3},{4,5,6,7}}").unwrap();
        assert_eq!(list.groups()[1], vec![4, 5, 6, 7]);
        assert_eq!(list.to_string(), "{{0,1,2,3},{4,5,6,7}}");
        assert_eq!(DeviceList::parse("{}").unwrap(), DeviceList::empty());
        assert_eq!(
            DeviceList::parse("{ {0, 1}, {2,3} }")
                .unwrap()
                .groups()
                .len(),
            2
        );
        assert_eq!(parse_pairs("{{0,1},{1,0}}").unwrap(), vec![(0, 1), (1, 0)]);
        assert!(parse_pairs("{{0,1,2}}").is_err());
        assert!(DeviceList::parse("{{0,x}}").is_err());
    }

    #[test]
    fn mesh_axes_become_the_iota_list_xla_makes_of_them() {
        let list = DeviceList::parse("mesh['axis_0'=1,'axis_1'=8] {'axis_1'}").unwrap();
        assert!(!list.is_iota());
        assert_eq!(list.groups(), vec![(0..8).collect::<Vec<i64>>()]);
        // Grouping the major axis of a 2x4 mesh: 4 groups of 2, stride 4.
        let major = DeviceList::parse("mesh['a'=2,'b'=4] {'a'}").unwrap();
        assert_eq!(major.groups()[0], vec![0, 4]);
        assert_eq!(major.to_string(), "[4,2]<=[2,4]T(1,0)");
        // JAX 0.10's compiled modules: the mesh laid out in its own device order.
        let ordered = DeviceList::parse(
            "mesh['axis_0'=4,'axis_1'=1,'axis_2'=2], device_ids=([2,4]T(1,0)) {'axis_0'}",
        )
        .unwrap();
        assert_eq!(ordered.groups(), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let listed = DeviceList::parse("mesh['a'=2,'b'=2], device_ids=(0,3,2,1) {'b'}").unwrap();
        assert_eq!(listed.groups(), vec![vec![0, 3], vec![2, 1]]);
        assert!(DeviceList::parse("mesh['a'=2,'b'=2], device_ids=(0,1) {'b'}").is_err());
        let bad = DeviceList::parse("mesh['a'=2,'b'=4] {'b':(3)2}").unwrap_err();
        assert!(bad.starts_with("not modelled"), "{bad}");
    }

    /// XLA's `MeshAxesReplicaGroupListTest.MaterializedReplicaGroupsMatchExpectedV2`
    /// (replica_group_test.cc): each sub-axis grouping of `mesh['a'=8]` equals
    /// the iota list written beside it there.
    #[test]
    fn sub_axes_group_as_xla_groups_them() {
        let cases = [
            ("{'a':(1)2}", "[4,2]<=[2,4]T(1,0)"),
            ("{'a':(1)4}", "[2,4]<=[4,2]T(1,0)"),
            ("{'a':(2)2}", "[4,2]<=[2,2,2]T(0,2,1)"),
            ("{'a':(2)4}", "[2,4]<=[8]"),
            ("{'a':(4)2}", "[4,2]<=[8]"),
            ("{'a':(1)2,'a':(4)2}", "[2,4]<=[2,2,2]T(1,0,2)"),
            ("{'a':(4)2,'a':(1)2}", "[2,4]<=[2,2,2]T(1,2,0)"),
            ("{'a'}", "[1,8]<=[8]"),
        ];
        for (axes, iota) in cases {
            let mesh = DeviceList::parse(&format!("mesh['a'=8] {axes}")).unwrap();
            let expected = DeviceList::parse(iota).unwrap();
            assert_eq!(mesh.groups(), expected.groups(), "{axes} against {iota}");
        }
        // `ReplicaGroupsCountAndSizeForSubaxes`: a sub-axis of the middle axis.
        let middle =
            DeviceList::parse("mesh['axis1'=2,'axis2'=6,'axis3'=10] {'axis2':(2)3}").unwrap();
        let groups = middle.groups();
        assert_eq!((groups.len(), groups[0].len()), (40, 3));
        // `MeshAxesToString`'s list, in a device order of its own.
        let ordered = DeviceList::parse(
            "mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)) {'a','b':(1)2,'d'}",
        )
        .unwrap();
        assert_eq!(ordered.groups()[0].len(), 8);
    }

    #[test]
    fn participants_follow_the_group_mode() {
        let config = ModuleConfig {
            replica_count: 1,
            num_partitions: 8,
        };
        let groups = vec![(0..8).collect::<Vec<i64>>()];
        // No channel id: replica groups, one copy per partition.
        let p = Participants::count(config, &groups, GroupMode::of(false, Some(false)).unwrap())
            .unwrap();
        assert_eq!((p.groups, p.num_ranks()), (8, 8));
        let list = DeviceList::Explicit(groups);
        let mode = GroupMode::of(true, Some(true));
        assert_eq!(
            group_count_and_size(&list, config, mode.clone()).unwrap(),
            Some((1, 8))
        );
        // Empty groups across partitions: all partitions in one group.
        let all = group_count_and_size(&DeviceList::empty(), config, GroupMode::of(true, None));
        assert_eq!(all.unwrap(), Some((1, 8)));
        assert!(GroupMode::of(false, Some(true)).is_err());
        let uneven = DeviceList::parse("{{0,1},{2}}").unwrap();
        assert_eq!(group_count_and_size(&uneven, config, mode).unwrap(), None);
    }

    #[test]
    fn the_header_says_the_device_counts() {
        let c = ModuleConfig::from_header("HloModule m, replica_count=2, num_partitions=8");
        assert_eq!((c.replica_count, c.num_partitions), (2, 8));
        assert_eq!(
            ModuleConfig::from_header("HloModule m"),
            ModuleConfig::default()
        );
    }
}
