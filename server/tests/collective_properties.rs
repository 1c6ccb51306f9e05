//! Properties of the collective cost model (`hlo_lsp::cost::collective`) that
//! hold whatever the numbers: XLA's interpolator answers each measurement of
//! its table exactly, the SoL model's times grow with the bytes at a fixed
//! node count (XLA's measured times do not always: below a few KiB they are
//! latency and noise, 4 KiB all-gathers beat 2 KiB ones), a nearest-neighbour
//! interpolator returns its own points; and on a real module (the llama3
//! sample, 8 partitions on an H100) every collective gets a time.

use std::collections::HashMap;

use hlo_lsp::cost::collective::communication::PermuteType;
use hlo_lsp::cost::collective::groups::{DeviceList, ModuleConfig};
use hlo_lsp::cost::collective::interpolation::CollectiveInterpolator;
use hlo_lsp::cost::collective::op::CollectiveOp;
use hlo_lsp::cost::collective::perf_table::PerfTable;
use hlo_lsp::cost::collective::sol_model::{CollectiveType, SolModel};
use hlo_lsp::cost::collective::{self, Estimator, Part, SolConfig, SolParameters};
use hlo_lsp::cost::interpolator::NearestNeighbour;
use hlo_lsp::cost::Duration;
use hlo_lsp::device::Device;
use hlo_lsp::model;
use proptest::prelude::*;

/// The measured collective as XLA rebuilds it, in a module of 8 partitions
/// (a permute's pairs are then read inside one node, as they were measured).
fn measured(m: &hlo_lsp::cost::collective::perf_table::Measurement) -> CollectiveOp {
    let g = &m.group;
    let mut op = CollectiveOp::measured(
        g.op,
        g.element.clone(),
        m.elements,
        g.devices.clone(),
        g.pairs.clone(),
    )
    .expect("a measurement of XLA's table");
    op.config = ModuleConfig {
        replica_count: 1,
        num_partitions: 8,
    };
    op
}

/// A key under which XLA files a measurement exactly: the opcode, the
/// element type, and the expanded groups or how the permute runs.
fn key(op: &CollectiveOp) -> String {
    let how = if op.op.is_permute() {
        format!("{:?}", PermuteType::of(&op.pairs, 8))
    } else {
        format!("{:?}", op.devices.groups())
    };
    format!("{} {:?} {how}", op.op.name(), op.element)
}

#[test]
fn the_default_table_answers_its_own_measurements() {
    let table = PerfTable::default_table().unwrap();
    let mut checked = 0;
    for name in ["sm_90", "sm_100_B200", "gfx950"] {
        let profile = table.profile(name).unwrap();
        let interpolator = CollectiveInterpolator::default_for(name, 8).unwrap();
        // The grid keeps the last measurement of a point.
        let mut last: HashMap<(String, i64), i64> = HashMap::new();
        for m in &profile.measurements {
            let op = measured(m);
            last.insert((key(&op), op.bytes_transferred), m.throughput);
        }
        for m in &profile.measurements {
            let op = measured(m);
            let bytes = op.bytes_transferred;
            let on_grid = bytes.count_ones() == 1 && (1 << 10..=1 << 30).contains(&bytes);
            if !on_grid {
                continue;
            }
            let throughput = last[&(key(&op), bytes)];
            let (time, _) = interpolator
                .estimated_runtime(&op)
                .unwrap_or_else(|e| panic!("{name} {}: {e}", key(&op)));
            assert_eq!(
                time,
                Duration::from_secs_f64(bytes as f64 / throughput as f64),
                "{name} {} at {bytes} bytes",
                key(&op)
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

fn sol() -> SolModel {
    SolModel::new(SolParameters::defaults_for_name("NVIDIA H100 80GB HBM3"))
}

proptest! {
    #[test]
    fn sol_times_grow_with_the_bytes(a in 0i64..1 << 34, b in 0i64..1 << 34, nodes in 1i64..16) {
        let (small, large) = (a.min(b), a.max(b));
        let m = sol();
        for kind in [CollectiveType::AllGather, CollectiveType::AllReduce, CollectiveType::ReduceScatter] {
            let t = |bytes| m.ring_latency(bytes, nodes, kind, 1).unwrap();
            prop_assert!(t(small) <= t(large), "{kind:?} over {nodes} nodes");
        }
        // A send/receive is between two GPUs of two nodes.
        let t = |bytes| m.ring_latency(bytes, 2, CollectiveType::SendRecv, 1).unwrap();
        prop_assert!(t(small) <= t(large));
        let t = |bytes| m.all_to_all_latency(bytes, nodes, 1).unwrap();
        prop_assert!(t(small) <= t(large));
    }

    #[test]
    fn a_nearest_neighbour_returns_its_own_points(points in proptest::collection::btree_map((0i64..1 << 30, 1i64..64), 1i64..1 << 40, 1..40)) {
        let mut nn = NearestNeighbour::<2>::default();
        for (&(bytes, devices), &value) in &points {
            nn.add([bytes, devices], value);
        }
        for (&(bytes, devices), &value) in &points {
            prop_assert_eq!(nn.eval(&[bytes, devices]), Some(value));
        }
    }

    #[test]
    fn replica_groups_read_back_as_written(groups in 1i64..8, size in 1i64..8) {
        let text = format!("[{groups},{size}]<=[{}]", groups * size);
        let list = DeviceList::parse(&text).unwrap();
        prop_assert_eq!(list.to_string(), text);
        let explicit = DeviceList::parse(&DeviceList::Explicit(list.groups()).to_string()).unwrap();
        prop_assert_eq!(explicit.groups(), list.groups());
    }
}

/// Issue 43: on the llama3 sample (8 partitions, `replica_groups=[1,8]<=[8]`)
/// every collective costs a positive time on an H100, from XLA's
/// measurements, `all-reduce.18` (1 GB) and `all-reduce.48` (one float) too.
#[test]
fn every_collective_of_the_llama3_sample_gets_a_time() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/samples/xla/xla__tools__benchmarks__hlo__hlo_llama3_8b_bf16_activation_offloading_1x8.hlo"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let device = Device::h100();
    let estimator = Estimator::new(module, &device, &SolConfig::default());
    let mut times = HashMap::new();
    for computation in module.computations() {
        for instr in &computation.model().instructions {
            if let Some(cost) = estimator.collective(computation, instr) {
                let time = cost
                    .time
                    .clone()
                    .unwrap_or_else(|why| panic!("{}: {why}", cost.name));
                assert_eq!(cost.part, Part::Whole);
                assert!(time > Duration::ZERO, "{}: {time}", cost.name);
                assert_eq!(
                    (cost.devices, cost.nodes),
                    (Some(8), Some(1)),
                    "{}",
                    cost.name
                );
                times.insert(cost.name.clone(), time);
            }
        }
    }
    assert_eq!(times.len(), 66);
    // The one-call form agrees.
    let entry = module.entry_computation().unwrap();
    for computation in module.computations() {
        if let Some(instr) = computation.model().instruction_by_name("all-reduce.18") {
            let cost =
                collective::estimate(module, computation, instr, &device, &SolConfig::default())
                    .unwrap();
            assert_eq!(cost.time, Ok(times["all-reduce.18"]));
            assert_eq!(cost.bytes, 4096 * 128_256 * 2);
        }
    }
    assert!(
        times["all-reduce.18"] > Duration::from_micros(1000),
        "{}",
        times["all-reduce.18"]
    );
    assert!(
        times["all-reduce.48"] < Duration::from_micros(1),
        "{}",
        times["all-reduce.48"]
    );
    let _ = entry;
}
