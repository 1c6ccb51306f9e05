//! XLA's default collective performance table
//! (`xla/service/gpu/model/default_collective_perf_table.txtpb`): the network
//! throughput measured for each collective, device list and size on each GPU,
//! kept in `server/data/collective_perf_table.txt` in a compact form of our own
//! (its README says where it comes from and how it reads). It is compiled in
//! and parsed on first use only: a module without collectives never reads it.
//!
//! Form: `profile NAME` starts a GPU's measurements (`sm_90`, `sm_100_B200`,
//! ...); `group ID OPCODE TYPE DEVICES` names what a run of measurements is of
//! (DEVICES: an iota replica-group list, or a collective-permute's
//! source-target pairs); `ID ELEMENTS THROUGHPUT` is one measurement: the
//! output's element count and the bytes per second measured, in XLA's order
//! (the interpolators keep the first, or the last, of equal points).

use std::sync::{Arc, OnceLock};

use super::groups::{self, DeviceList};
use super::op::Op;
use crate::model::PrimitiveType;

static TEXT: &str = include_str!("../../../data/collective_perf_table.txt");

/// What a run of measurements is of.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub op: Op,
    pub element: PrimitiveType,
    /// The replica groups (empty for a collective-permute).
    pub devices: DeviceList,
    /// A collective-permute's pairs.
    pub pairs: Vec<(i64, i64)>,
}

/// One measurement (`HloInstructionProfile`).
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub group: Arc<Group>,
    /// Elements of the collective's (one-dimensional) output.
    pub elements: i64,
    /// `network_throughput_bytes_per_sec` (0 where XLA's table has none).
    pub throughput: i64,
}

/// One GPU's measurements (`HloInstructionProfileList`).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: String,
    pub measurements: Vec<Measurement>,
}

/// Every GPU's measurements.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerfTable {
    pub profiles: Vec<Profile>,
}

impl PerfTable {
    /// XLA's table, parsed once.
    pub fn default_table() -> Result<&'static PerfTable, String> {
        static TABLE: OnceLock<Result<PerfTable, String>> = OnceLock::new();
        TABLE
            .get_or_init(|| PerfTable::parse(TEXT))
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// The GPUs measured, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.profiles.iter().map(|p| p.name.as_str()).collect()
    }

    /// Reads the table's form (see the module documentation).
    pub fn parse(text: &str) -> Result<PerfTable, String> {
        let mut table = PerfTable::default();
        let mut groups: Vec<Arc<Group>> = vec![];
        for (n, line) in text.lines().enumerate() {
            let at = |why: String| format!("collective perf table, line {}: {why}", n + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.splitn(5, ' ').collect();
            match words[..] {
                ["profile", name] => {
                    groups.clear();
                    table.profiles.push(Profile {
                        name: name.to_string(),
                        measurements: vec![],
                    });
                }
                ["group", id, op, element, devices] => {
                    if id.parse::<usize>().ok() != Some(groups.len()) {
                        return Err(at(format!("group {id} is out of order")));
                    }
                    groups.push(Arc::new(group(op, element, devices).map_err(at)?));
                }
                [id, elements, throughput] => {
                    let number = |w: &str| {
                        w.parse::<i64>()
                            .map_err(|_| at(format!("`{w}` is not a number")))
                    };
                    let group = groups
                        .get(number(id)? as usize)
                        .ok_or_else(|| at(format!("no group {id}")))?
                        .clone();
                    let profile = table
                        .profiles
                        .last_mut()
                        .ok_or_else(|| at("a measurement before any profile".into()))?;
                    profile.measurements.push(Measurement {
                        group,
                        elements: number(elements)?,
                        throughput: number(throughput)?,
                    });
                }
                _ => return Err(at(format!("cannot read `{line}`"))),
            }
        }
        Ok(table)
    }
}

fn group(op: &str, element: &str, devices: &str) -> Result<Group, String> {
    let op = Op::from_name(op).ok_or_else(|| format!("`{op}` is not a collective"))?;
    let element = PrimitiveType::from_name(element);
    if op.is_permute() {
        return Ok(Group {
            op,
            element,
            devices: DeviceList::empty(),
            pairs: groups::parse_pairs(devices)?,
        });
    }
    Ok(Group {
        op,
        element,
        devices: DeviceList::parse(devices)?,
        pairs: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xla_s_table_reads_whole() {
        let table = PerfTable::default_table().unwrap();
        assert_eq!(
            table.names(),
            ["sm_100_B200", "sm_90", "sm_100_GB200", "sm_103", "gfx950"]
        );
        let counts: Vec<usize> = table
            .profiles
            .iter()
            .map(|p| p.measurements.len())
            .collect();
        assert_eq!(counts, [330, 330, 1148, 1148, 441]);
        let sm90 = table.profile("sm_90").unwrap();
        let ar = sm90
            .measurements
            .iter()
            .find(|m| {
                m.group.op == Op::AllReduce
                    && m.elements == 256
                    && m.group.devices.to_string() == "[1,8]<=[8]"
            })
            .unwrap();
        assert_eq!(ar.throughput, 20_765_736);
    }

    #[test]
    fn bad_lines_say_where() {
        let e =
            PerfTable::parse("profile x\ngroup 0 all-reduce f32 [1,8]<=[8]\n0 12 x\n").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        assert!(PerfTable::parse("0 1 2\n").is_err());
        assert!(PerfTable::parse("profile x\ngroup 1 all-reduce f32 [1,8]<=[8]\n").is_err());
    }
}
