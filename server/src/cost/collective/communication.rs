//! Where a collective's traffic goes, as XLA's collective cost models sort it
//! (`xla/backends/gpu/transforms/collectives/collective_ops_utils.cc`): inside
//! one partition (a node of `gpus_per_node` GPUs on NVLink), across nodes with
//! every GPU of each node taking part ("world level", rail aligned), or across
//! nodes with some; and for a collective-permute, whether pairs cross nodes and
//! whether devices both send and receive.

use std::collections::{HashMap, HashSet};

/// `GPUCommunicationType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommunicationType {
    /// Every group inside one partition (node).
    SinglePartition,
    /// Groups span nodes, and every GPU of each node they touch is in them.
    MultiHostWorldLevel,
    /// Groups span nodes with some of each node's GPUs.
    MultiHostNonWorldLevel,
}

impl CommunicationType {
    pub fn name(self) -> &'static str {
        match self {
            CommunicationType::SinglePartition => "single partition",
            CommunicationType::MultiHostWorldLevel => "multi-host, world level",
            CommunicationType::MultiHostNonWorldLevel => "multi-host, non-world level",
        }
    }
}

/// `CommunicationType(num_devices_per_partition, collective)` for a collective
/// with replica groups: each group's participants counted per partition
/// (`CommunicationContext`); groups whose counts differ are an error, as in
/// XLA ("non homogenous replica group").
pub fn communication_type(
    devices_per_partition: i64,
    groups: &[Vec<i64>],
    replica_count: i64,
) -> Result<CommunicationType, String> {
    if devices_per_partition <= 0 {
        return Err(format!(
            "{devices_per_partition} devices per partition: the partitions cannot be told apart"
        ));
    }
    let mut first: Option<HashMap<i64, usize>> = None;
    for group in groups {
        let mut counts: HashMap<i64, usize> = HashMap::new();
        for &rank in group {
            *counts
                .entry(rank.div_euclid(devices_per_partition))
                .or_default() += 1;
        }
        match &first {
            Some(f) if !same_counts(f, &counts) => {
                return Err(
                    "the replica groups are not alike (non homogenous replica group)".into(),
                )
            }
            Some(_) => {}
            None => first = Some(counts),
        }
    }
    let counts = first.unwrap_or_default();
    let single_host = counts.len() == 1
        || (replica_count > 0 && counts.is_empty() && replica_count <= devices_per_partition);
    if single_host {
        return Ok(CommunicationType::SinglePartition);
    }
    let world = counts.is_empty() || counts.values().all(|&c| c as i64 == devices_per_partition);
    Ok(if world {
        CommunicationType::MultiHostWorldLevel
    } else {
        CommunicationType::MultiHostNonWorldLevel
    })
}

/// `SameParticipantCounts`: the same multiset of per-partition counts.
fn same_counts(a: &HashMap<i64, usize>, b: &HashMap<i64, usize>) -> bool {
    let sorted = |m: &HashMap<i64, usize>| {
        let mut v: Vec<usize> = m.values().copied().collect();
        v.sort_unstable();
        v
    };
    sorted(a) == sorted(b)
}

/// `CollectivePermuteCostModelType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PermuteType {
    /// No pairs.
    Unknown,
    IntraPartitionOneWay,
    IntraPartitionTwoWayAllMutual,
    IntraPartitionTwoWayHasNonMutual,
    InterPartitionOneWay,
    InterPartitionTwoWayAllMutual,
    InterPartitionTwoWayHasNonMutual,
}

impl PermuteType {
    /// `GetCollectivePermuteCostModelType`: a pair crossing partitions makes
    /// it inter-partition; a device that both sends and receives makes it
    /// two-way; every pair answered by its reverse makes it all mutual.
    pub fn of(pairs: &[(i64, i64)], devices_per_partition: i64) -> PermuteType {
        if pairs.is_empty() || devices_per_partition <= 0 {
            return PermuteType::Unknown;
        }
        let set: HashSet<(i64, i64)> = pairs.iter().copied().collect();
        let sources: HashSet<i64> = pairs.iter().map(|p| p.0).collect();
        let targets: HashSet<i64> = pairs.iter().map(|p| p.1).collect();
        let inter = pairs.iter().any(|&(s, t)| {
            s.div_euclid(devices_per_partition) != t.div_euclid(devices_per_partition)
        });
        let mutual = pairs.iter().all(|&(s, t)| set.contains(&(t, s)));
        let two_way = sources.iter().any(|s| targets.contains(s));
        match (inter, two_way, mutual) {
            (true, true, true) => PermuteType::InterPartitionTwoWayAllMutual,
            (true, true, false) => PermuteType::InterPartitionTwoWayHasNonMutual,
            (true, false, _) => PermuteType::InterPartitionOneWay,
            (false, true, true) => PermuteType::IntraPartitionTwoWayAllMutual,
            (false, true, false) => PermuteType::IntraPartitionTwoWayHasNonMutual,
            (false, false, _) => PermuteType::IntraPartitionOneWay,
        }
    }

    pub fn is_intra_partition(self) -> bool {
        matches!(
            self,
            PermuteType::IntraPartitionOneWay
                | PermuteType::IntraPartitionTwoWayAllMutual
                | PermuteType::IntraPartitionTwoWayHasNonMutual
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            PermuteType::Unknown => "no pairs",
            PermuteType::IntraPartitionOneWay => "one way, inside a node",
            PermuteType::IntraPartitionTwoWayAllMutual => "two way, all mutual, inside a node",
            PermuteType::IntraPartitionTwoWayHasNonMutual => "two way (a ring), inside a node",
            PermuteType::InterPartitionOneWay => "one way, across nodes",
            PermuteType::InterPartitionTwoWayAllMutual => "two way, all mutual, across nodes",
            PermuteType::InterPartitionTwoWayHasNonMutual => "two way (a ring), across nodes",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(list: &str) -> Vec<Vec<i64>> {
        super::super::groups::DeviceList::parse(list)
            .unwrap()
            .groups()
    }

    #[test]
    fn groups_inside_one_node_are_single_partition() {
        let t = |list: &str| communication_type(8, &groups(list), 1).unwrap();
        assert_eq!(t("[1,8]<=[8]"), CommunicationType::SinglePartition);
        assert_eq!(t("[2,8]<=[16]"), CommunicationType::SinglePartition);
        assert_eq!(t("[1,16]<=[16]"), CommunicationType::MultiHostWorldLevel);
        assert_eq!(
            t("[8,2]<=[2,8]T(1,0)"),
            CommunicationType::MultiHostNonWorldLevel
        );
        assert!(communication_type(8, &groups("{{0,1},{2,10}}"), 1).is_err());
        // No groups: one replica fits in a node.
        assert_eq!(
            communication_type(8, &[], 1).unwrap(),
            CommunicationType::SinglePartition
        );
    }

    #[test]
    fn permutes_are_sorted_by_direction_and_reach() {
        use PermuteType::*;
        let ring = [(0, 3), (1, 0), (2, 1), (3, 2)];
        assert_eq!(PermuteType::of(&ring, 8), IntraPartitionTwoWayHasNonMutual);
        assert_eq!(
            PermuteType::of(&[(0, 1), (1, 0)], 8),
            IntraPartitionTwoWayAllMutual
        );
        assert_eq!(PermuteType::of(&[(0, 2), (1, 3)], 8), IntraPartitionOneWay);
        assert_eq!(
            PermuteType::of(&[(0, 8), (8, 0)], 8),
            InterPartitionTwoWayAllMutual
        );
        assert_eq!(PermuteType::of(&[(0, 8)], 8), InterPartitionOneWay);
        assert_eq!(PermuteType::of(&[], 8), Unknown);
    }
}
