//! XLA's `CollectiveInterpolator` (`xla/service/gpu/model/collective_interpolator.cc`):
//! the time of a collective inside one node from measured network throughput.
//! A collective whose opcode, exact device list and (for reductions) element
//! type were measured is looked up among those measurements by its bytes; any
//! other by its bytes and devices per group among the measurements of its
//! opcode and communication type. A collective-permute is looked up by how its
//! pairs run ([`PermuteType`]).
//!
//! XLA's own table is read with grid interpolators (the bytes rounded to the
//! nearer power of two within 1 KiB..1 GiB, the devices within 2..8); a table
//! given as measurements ([`CollectiveInterpolator::from_measurements`], as
//! XLA's tests do) with nearest-neighbour ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::communication::{communication_type, CommunicationType, PermuteType};
use super::groups::{DeviceList, IotaList};
use super::op::{CollectiveOp, Op};
use super::perf_table::{Measurement, PerfTable};
use crate::cost::interpolator::{Axis, Complement, NearestNeighbour};
use crate::cost::Duration;
use crate::model::PrimitiveType;

/// `kMinDefaultTransferSizeBytes`, `kMaxDefaultTransferSizeBytes`.
const BYTES: Axis = Axis {
    multiple_of: None,
    power_of_two: true,
    min: 1 << 10,
    max: 1 << 30,
};
/// `kMinDefaultNumberOfParticipatingDevices`, `kMaxDefault...`.
const DEVICES: Axis = Axis {
    multiple_of: None,
    power_of_two: true,
    min: 2,
    max: 8,
};

/// What a collective measured exactly is keyed by besides its opcode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Params {
    Devices(Vec<Vec<i64>>),
    Permute(PermuteType),
}

/// `ExactInterpolatorKey`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ExactKey {
    op: Op,
    params: Params,
    element: Option<PrimitiveType>,
}

/// `FallbackInterpolatorKey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct FallbackKey {
    op: Op,
    communication: CommunicationType,
}

/// An interpolator of either kind.
#[derive(Clone, Debug)]
enum Lookup<const N: usize> {
    Nearest(NearestNeighbour<N>),
    Grid(Complement<N>),
}

impl<const N: usize> Lookup<N> {
    fn add(&mut self, point: [i64; N], value: i64) {
        match self {
            Lookup::Nearest(i) => i.add(point, value),
            Lookup::Grid(i) => i.add(point, value),
        }
    }

    fn eval(&self, point: [i64; N]) -> Option<i64> {
        match self {
            Lookup::Nearest(i) => i.eval(&point),
            Lookup::Grid(i) => i.eval(&point),
        }
    }
}

/// Which of XLA's two constructions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Construction {
    /// `Create(num_devices_per_host, device_info)`: the default table.
    DefaultTable,
    /// `Create(num_devices_per_host, profiles, device_info)`.
    Measurements,
}

/// Which interpolation answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// The opcode and devices (or permute type) were measured.
    Exact,
    /// Measurements of the opcode and communication type.
    Fallback(CommunicationType),
}

/// `CollectiveInterpolator`.
#[derive(Clone, Debug)]
pub struct CollectiveInterpolator {
    exact: HashMap<ExactKey, Lookup<1>>,
    fallback: HashMap<FallbackKey, Lookup<2>>,
    devices_per_host: i64,
}

/// `InterpolationSpecification` of one measurement: what it is keyed by.
struct Spec {
    exact: ExactKey,
    fallback: Option<(FallbackKey, i64)>,
    bytes: i64,
}

/// A canonical list's groups: an iota list's own, otherwise `count` groups of
/// `size` consecutive devices (`CanonicalDeviceList`).
fn canonical_groups(op: &CollectiveOp) -> Option<Vec<Vec<i64>>> {
    if op.devices.is_iota() {
        return Some(op.devices.groups());
    }
    let (count, size) = op.count_and_size().ok().flatten()?;
    (count > 0 && size > 0 && count.saturating_mul(size) <= 1 << 20).then(|| {
        IotaList {
            groups: count,
            size,
            reshape: vec![count * size],
            transpose: vec![0],
            device_ids: None,
        }
        .expand()
    })
}

impl CollectiveInterpolator {
    /// The interpolator of XLA's default table for the GPU whose profile is
    /// `profile` (`sm_90`, `sm_100_B200`, ...), with nodes of
    /// `devices_per_host` GPUs. Built once per pair and shared.
    pub fn default_for(
        profile: &str,
        devices_per_host: i64,
    ) -> Result<Arc<CollectiveInterpolator>, String> {
        type Cache = HashMap<(String, i64), Result<Arc<CollectiveInterpolator>, String>>;
        static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .get_or_insert_with(HashMap::new)
            .entry((profile.to_string(), devices_per_host))
            .or_insert_with(|| {
                let table = PerfTable::default_table()?;
                let measured = table.profile(profile).ok_or_else(|| {
                    format!(
                        "XLA's collective performance table has no measurements for {profile} (it has {})",
                        table.names().join(", ")
                    )
                })?;
                CollectiveInterpolator::build(&measured.measurements, devices_per_host, Construction::DefaultTable)
                    .map(Arc::new)
                    .map_err(|e| format!("XLA's measurements for {profile} cannot be read with {devices_per_host} GPUs per node: {e}"))
            })
            .clone()
    }

    /// An interpolator over `measurements` given by the user (nearest
    /// neighbours, as XLA builds one from a performance table file).
    pub fn from_measurements(
        measurements: &[Measurement],
        devices_per_host: i64,
    ) -> Result<CollectiveInterpolator, String> {
        CollectiveInterpolator::build(measurements, devices_per_host, Construction::Measurements)
    }

    fn build(
        measurements: &[Measurement],
        devices_per_host: i64,
        how: Construction,
    ) -> Result<CollectiveInterpolator, String> {
        let mut interpolator = CollectiveInterpolator {
            exact: HashMap::new(),
            fallback: HashMap::new(),
            devices_per_host,
        };
        for m in measurements {
            let spec = spec(m, devices_per_host, how)?;
            interpolator
                .exact
                .entry(spec.exact)
                .or_insert_with(|| match how {
                    Construction::DefaultTable => Lookup::Grid(Complement::new([BYTES])),
                    Construction::Measurements => Lookup::Nearest(NearestNeighbour::default()),
                })
                .add([spec.bytes], m.throughput);
            if let Some((key, devices)) = spec.fallback {
                interpolator
                    .fallback
                    .entry(key)
                    .or_insert_with(|| match how {
                        Construction::DefaultTable => {
                            Lookup::Grid(Complement::new([BYTES, DEVICES]))
                        }
                        Construction::Measurements => Lookup::Nearest(NearestNeighbour::default()),
                    })
                    .add([spec.bytes, devices], m.throughput);
            }
        }
        Ok(interpolator)
    }

    /// `EstimatedRuntime`: the bytes over the throughput looked up.
    pub fn estimated_runtime(&self, op: &CollectiveOp) -> Result<(Duration, Match), String> {
        let bytes = op.bytes_transferred;
        let time = |throughput: Option<i64>, at: &str| match throughput {
            Some(t) if t > 0 => Ok(Duration::from_secs_f64(bytes as f64 / t as f64)),
            Some(_) => Err(format!("XLA's table has no throughput for {at}")),
            None => Err(format!(
                "XLA's table has no measurement near {bytes} bytes for {at}"
            )),
        };
        if op.op.is_permute() {
            let kind = PermuteType::of(&op.pairs, op.config.num_partitions);
            let key = ExactKey {
                op: Op::CollectivePermute,
                params: Params::Permute(kind),
                element: None,
            };
            let at = format!("a collective-permute {}", kind.name());
            let lookup = self
                .exact
                .get(&key)
                .ok_or_else(|| format!("XLA's table has no measurements of {at}"))?;
            return Ok((time(lookup.eval([bytes]), &at)?, Match::Exact));
        }
        if let Some(groups) = canonical_groups(op) {
            let key = ExactKey {
                op: op.op,
                params: Params::Devices(groups),
                element: op
                    .op
                    .requires_accumulation()
                    .then(|| op.element.clone())
                    .flatten(),
            };
            if let Some(lookup) = self.exact.get(&key) {
                let at = format!("{} over {}", op.op.name(), op.devices);
                return Ok((time(lookup.eval([bytes]), &at)?, Match::Exact));
            }
        }
        let communication = communication_type(
            self.devices_per_host,
            &op.devices.groups(),
            op.config.replica_count,
        )?;
        let (_, size) = op
            .count_and_size()?
            .ok_or_else(|| "the replica groups differ in size".to_string())?;
        let key = FallbackKey {
            op: op.op.synchronous(),
            communication,
        };
        let at = format!(
            "{} ({}) over groups of {size}",
            key.op.name(),
            communication.name()
        );
        let lookup = self
            .fallback
            .get(&key)
            .ok_or_else(|| format!("XLA's table has no measurements of {at}"))?;
        Ok((
            time(lookup.eval([bytes, size]), &at)?,
            Match::Fallback(communication),
        ))
    }
}

/// `Spec` of one measurement: its collective rebuilt as XLA does, and the
/// keys it is filed under.
fn spec(m: &Measurement, devices_per_host: i64, how: Construction) -> Result<Spec, String> {
    let g = &m.group;
    let op = CollectiveOp::measured(
        g.op,
        g.element.clone(),
        m.elements,
        g.devices.clone(),
        g.pairs.clone(),
    )?;
    if g.op.is_permute() {
        let kind = PermuteType::of(&g.pairs, devices_per_host);
        return Ok(Spec {
            exact: ExactKey {
                op: Op::CollectivePermute,
                params: Params::Permute(kind),
                element: None,
            },
            fallback: None,
            bytes: op.bytes_transferred,
        });
    }
    let groups = op.devices.groups();
    let communication = communication_type(devices_per_host, &groups, op.config.replica_count)?;
    let per_group = match &g.devices {
        DeviceList::Iota(i) => i.size,
        DeviceList::Explicit(list) => list.first().map_or(0, |l| l.len() as i64),
        DeviceList::Mesh(_) => return Err("a measurement over mesh axes".into()),
    };
    let element = match how {
        Construction::DefaultTable => g.op.requires_accumulation().then(|| g.element.clone()),
        Construction::Measurements => Some(g.element.clone()),
    };
    Ok(Spec {
        exact: ExactKey {
            op: g.op,
            params: Params::Devices(groups),
            element,
        },
        fallback: Some((
            FallbackKey {
                op: g.op,
                communication,
            },
            per_group,
        )),
        bytes: op.bytes_transferred,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::collective::groups::ModuleConfig;

    fn all_reduce(elements: i64, groups: &str) -> CollectiveOp {
        let mut op = CollectiveOp::measured(
            Op::AllReduce,
            PrimitiveType::F32,
            elements,
            DeviceList::parse(groups).unwrap(),
            vec![],
        )
        .unwrap();
        op.config = ModuleConfig {
            replica_count: 1,
            num_partitions: 8,
        };
        op
    }

    #[test]
    fn xla_s_h100_measurement_answers_exactly() {
        let i = CollectiveInterpolator::default_for("sm_90", 8).unwrap();
        let (t, how) = i.estimated_runtime(&all_reduce(256, "[1,8]<=[8]")).unwrap();
        assert_eq!(how, Match::Exact);
        assert_eq!(t, Duration::from_nanos(49_312));
        assert!(CollectiveInterpolator::default_for("sm_86", 8)
            .unwrap_err()
            .contains("sm_86"));
    }

    #[test]
    fn an_unmeasured_type_falls_back_to_its_communication() {
        let i = CollectiveInterpolator::default_for("sm_90", 8).unwrap();
        let mut op = all_reduce(1 << 20, "[1,8]<=[8]");
        op.element = Some(PrimitiveType::Bf16);
        let (t, how) = i.estimated_runtime(&op).unwrap();
        assert_eq!(how, Match::Fallback(CommunicationType::SinglePartition));
        assert!(t > Duration::ZERO);
    }
}
