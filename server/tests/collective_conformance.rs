//! XLA's collective cost tests (`sol_latency_estimator_test.cc`,
//! `sol_gpu_cost_model_test.cc`, `collective_interpolator_test.cc`,
//! `analytical_latency_estimator_test.cc`; 69 records in
//! `tests/data/conformance/xla/collective_cost.jsonl`) against
//! `hlo_lsp::cost::collective`. Each record runs as its XLA test does and is
//! compared as its `compare` says: times truncated to whole microseconds
//! (`absl::Trunc`, or `NodeCost` cast to `int64`), exact `absl::Duration`
//! equality, or `EXPECT_NEAR` in seconds. NodeCost and GetLatencyBetween build
//! their own estimator, whose parameters come from `GetConfig(module, device)`
//! (not the fixture's `sol_flags`). The number that pass may only go up:
//! `PASSING` is a floor, and every record that fails is printed with why.

use std::sync::Arc;

use hlo_lsp::cost::collective::interpolation::CollectiveInterpolator;
use hlo_lsp::cost::collective::node_cost::Dummy;
use hlo_lsp::cost::collective::op::{CollectiveOp, Op};
use hlo_lsp::cost::collective::perf_table::{Group, Measurement};
use hlo_lsp::cost::collective::sol_model::{CollectiveType, SolModel};
use hlo_lsp::cost::collective::{
    groups::DeviceList, groups::ModuleConfig, Estimator, Interpolation, SolConfig, SolParameters,
};
use hlo_lsp::cost::Duration;
use hlo_lsp::device::{ComputeCapability, Device};
use hlo_lsp::model::{self, ComputationRef, Instruction, PrimitiveType};
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 68;

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("collective_cost.jsonl")
}

fn check(ok: bool, what: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what)
    }
}

/// `TestGpuDeviceInfo::RTXA6000DeviceInfo(se::CudaComputeCapability(9, 0))`,
/// or the B200 the record names.
fn device(record: &Value) -> Device {
    let description = record["device"].as_str().unwrap_or("");
    if description.contains("B200") {
        return Device::b200();
    }
    let mut d = Device::a6000();
    if description.contains("CudaComputeCapability(9, 0)") {
        d.set_compute_capability(ComputeCapability::Cuda { major: 9, minor: 0 });
    }
    d
}

/// `absl::Microseconds(n)` for a `sol_flags` / `config` object.
fn parameters(flags: &Value) -> SolParameters {
    let us = |k: &str| Duration::from_micros(flags[k].as_i64().unwrap());
    SolParameters {
        nccl_op_launch_time: us("nccl_op_launch_time_us"),
        nic_speed_gbps: flags["nic_speed_gbps"].as_f64().unwrap(),
        chunk_prep_time: us("chunk_prep_time_us"),
        rtt: us("rtt_us"),
        gpus_per_node: flags["gpus_per_node"].as_i64().unwrap(),
        chunk_size_bytes: flags["chunk_size_bytes"].as_i64().unwrap(),
        partition_size: flags["partition_size"].as_i64().unwrap_or(0),
        nvlink_bw_per_lane_gbps: flags["nvlink_bw_per_lane_gbps"].as_f64().unwrap_or(0.0),
        nvlink_barrier_latency: Duration::from_nanos_f64(
            flags["nvlink_barrier_latency_us"].as_f64().unwrap_or(0.0) * 1e3,
        ),
    }
}

/// `HloOpcode::kAllGatherStart` → `all-gather-start`.
fn opcode_name(cpp: &str) -> String {
    let name = cpp.trim_start_matches("HloOpcode::k");
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

struct Case {
    file: model::HloFile,
}

impl Case {
    fn new(text: &str) -> Case {
        Case {
            file: model::parse_hlo(text),
        }
    }

    fn module(&self) -> &model::Module {
        &self.file.modules[0]
    }

    fn entry(&self) -> ComputationRef<'_> {
        self.module().entry_computation().unwrap()
    }

    /// `hlo_query::FindInstruction(entry, opcode)`, or the instruction named.
    fn target(&self, record: &Value) -> &Instruction {
        let entry = self.entry().model();
        match record["fixture_info"]["opcode_to_find"].as_str() {
            Some(op) => {
                let name = opcode_name(op);
                entry
                    .instructions
                    .iter()
                    .find(|i| i.opcode.name() == name)
                    .unwrap_or_else(|| panic!("no {name}"))
            }
            None => {
                let name = record["target"].as_str().unwrap();
                entry
                    .instruction_by_name(name)
                    .unwrap_or_else(|| panic!("no {name}"))
            }
        }
    }
}

/// Truncated to whole microseconds, equal to `expected.latency_us`.
fn whole_micros(actual: f64, record: &Value) -> Result<(), String> {
    let expected = record["expected"]["latency_us"].as_i64().unwrap();
    let got = actual as i64;
    check(
        got == expected,
        format!("{actual} µs truncates to {got}, expected {expected}"),
    )
}

/// `SolLatencyEstimatorTest` and `TritonAllReduceSchedulerTest`.
fn sol_estimator(record: &Value) -> Result<(), String> {
    let mut text = record["hlo"].as_str().unwrap().to_string();
    let fixture = &record["fixture_info"];
    let triton = fixture["fixture"] == "TritonAllReduceSchedulerTest";
    if fixture["kernel_strategy_annotation"]
        .as_str()
        .is_some_and(|a| a.contains("TRITON_ONE_SHOT"))
    {
        // The fixture sets the annotation in C++ after parsing; here in the text.
        let sync = fixture["is_sync"].as_bool().unwrap_or(false);
        text = text.replacen(
            "to_apply=add\n",
            &format!(
                "to_apply=add, backend_config={{\"collective_backend_config\":{{\"is_sync\":{sync},\"kernel_strategy\":\"KERNEL_STRATEGY_TRITON_ONE_SHOT\"}}}}\n"
            ),
            1,
        );
    }
    let case = Case::new(&text);
    let module = case.module();
    let d = device(record);
    let instr = case.target(record);
    let entry = case.entry();
    let function = record["function"].as_str().unwrap();
    let mut estimator = if function.ends_with("ComputeCollectiveTime") {
        Estimator::with_parameters(module, &d, parameters(&fixture["sol_flags"]))
    } else {
        Estimator::new(module, &d, &SolConfig::default())
    };
    if triton {
        // `device_interconnect_info.active_links = 18`.
        estimator.active_links = 18;
        if fixture["collective_interpolator"].is_null()
            && function.ends_with("ComputeCollectiveTime")
        {
            estimator.interpolation = Interpolation::Off;
        }
    }
    let micros = match function {
        "SolLatencyEstimator::ComputeCollectiveTime" => {
            estimator.instruction_time(entry, instr)?.as_micros_f64()
        }
        "SolLatencyEstimator::NodeCost" => estimator.node_cost(entry, instr, &Dummy)?.micros,
        "SolLatencyEstimator::GetLatencyBetween" => {
            let user = entry
                .users(instr.id)
                .first()
                .map(|&u| entry.instruction(u))
                .ok_or("the start has no user")?;
            let latency = estimator.latency_between(entry, instr, user, &Dummy);
            if !latency.modelled {
                return Err(format!(
                    "the collective time was not found ({} µs)",
                    latency.micros
                ));
            }
            latency.micros
        }
        other => return Err(format!("unknown function {other}")),
    };
    whole_micros(micros, record)
}

/// `SolGPUCostModelTest`: `RingLatency` / `AllToAllLatency` on 8 MiB.
fn sol_model(record: &Value) -> Result<(), String> {
    let model = SolModel::new(parameters(&record["fixture_info"]["config"]));
    let args = &record["args"];
    let bytes = args["buff_size_bytes"].as_i64().unwrap();
    let nodes = args["num_nodes"].as_i64().unwrap();
    let communicators = args["num_communicators"].as_i64().unwrap();
    let kind = match args["collective_type"]
        .as_str()
        .unwrap()
        .rsplit("::k")
        .next()
        .unwrap()
    {
        "AllGather" => CollectiveType::AllGather,
        "AllReduce" => CollectiveType::AllReduce,
        "ReduceScatter" => CollectiveType::ReduceScatter,
        "SendRecv" => CollectiveType::SendRecv,
        _ => CollectiveType::AllToAll,
    };
    let time = if kind == CollectiveType::AllToAll {
        model.all_to_all_latency(bytes, nodes, communicators)?
    } else {
        model.ring_latency(bytes, nodes, kind, communicators)?
    };
    whole_micros(time.as_micros_f64(), record)
}

/// `SolGPUCostModel::GetConfig` for a device that has only its name.
fn get_config(record: &Value) -> Result<(), String> {
    let name = record["device"]
        .as_str()
        .unwrap()
        .split('"')
        .nth(1)
        .unwrap();
    let nic = SolParameters::defaults_for_name(name).nic_speed_gbps as i64;
    let expected = record["expected"]["nic_speed_gbps"].as_i64().unwrap();
    check(
        nic == expected,
        format!("{name}: NIC {nic} GB/s, expected {expected}"),
    )
}

fn sync_op(cpp: &str) -> Op {
    Op::from_name(&opcode_name(cpp)).unwrap().synchronous()
}

/// The output's elements as `CollectiveInterpolationTest::CollectiveInstruction`
/// makes them: `tensor_size / 4`, and for a reduce-scatter also divided by the
/// iota list's devices per group. (The records' `instruction_shape` of the
/// non-world-level reduce-scatters divides by the devices of all groups, which
/// contradicts their own `profile_construction` note and XLA's test; the size
/// is taken from `tensor_size_bytes` as the test does.)
fn output_elements(op: Op, tensor_size: i64, groups: &str) -> i64 {
    let per_group = DeviceList::parse(groups).unwrap().groups()[0].len() as i64;
    match op {
        Op::ReduceScatter => tensor_size / (4 * per_group),
        _ => tensor_size / 4,
    }
}

/// The module `CollectiveInterpolator::ConstructModule` builds for a query:
/// the collective at the root, channel 1, global device ids.
fn constructed_module(op: Op, n: i64, groups: &str) -> String {
    let shape = format!("f32[{n}]");
    let size = DeviceList::parse(groups).unwrap().groups()[0].len() as i64;
    let (operand, extra) = match op {
        Op::AllReduce => (n, ", to_apply=add"),
        Op::ReduceScatter => (n * size, ", to_apply=add, dimensions={0}"),
        Op::AllGather => (n / size, ", dimensions={0}"),
        _ => (n, ", dimensions={0}"),
    };
    let global = if op == Op::AllToAll {
        ""
    } else {
        ", use_global_device_ids=true"
    };
    format!(
        "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n  p0 = f32[{operand}] parameter(0)\n  ROOT _ = {shape} {}(p0), replica_groups={groups}, channel_id=1{global}{extra}\n}}\n",
        op.name()
    )
}

/// The root of a parsed module as a collective.
fn root_op(case: &Case) -> Result<CollectiveOp, String> {
    let entry = case.entry();
    let root = entry.model().root_instruction().unwrap();
    let config = ModuleConfig::from_header(case.module().header_text().unwrap_or(""));
    CollectiveOp::from_instruction(case.module(), entry, root, config)
}

fn group(op: Op, devices: DeviceList, pairs: Vec<(i64, i64)>) -> Arc<Group> {
    Arc::new(Group {
        op,
        element: PrimitiveType::F32,
        devices,
        pairs,
    })
}

/// `CollectiveInterpolationTest`: nearest-neighbour interpolation over the
/// fixture's measurements.
fn interpolation(record: &Value) -> Result<(), String> {
    let fixture = &record["fixture_info"];
    let measurements: Vec<Measurement> = fixture["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let op = sync_op(&format!("HloOpcode::{}", p["opcode"].as_str().unwrap()));
            let groups = p["replica_groups"].as_str().unwrap();
            Measurement {
                group: group(op, DeviceList::parse(groups).unwrap(), vec![]),
                elements: output_elements(op, p["tensor_size_bytes"].as_i64().unwrap(), groups),
                throughput: p["network_throughput_bytes_per_sec"].as_i64().unwrap(),
            }
        })
        .collect();
    let per_host = fixture["num_gpus_per_host"].as_i64().unwrap();
    let interpolator = CollectiveInterpolator::from_measurements(&measurements, per_host)?;
    let args = &record["args"];
    let op = sync_op(args["opcode"].as_str().unwrap());
    let groups = args["replica_groups"].as_str().unwrap();
    let n = output_elements(op, args["tensor_size_bytes"].as_i64().unwrap(), groups);
    let text = constructed_module(op, n, groups);
    let (time, _) = interpolator.estimated_runtime(&root_op(&Case::new(&text))?)?;
    let expected = Duration::from_secs_f64(record["expected"]["runtime_s"].as_f64().unwrap());
    check(time == expected, format!("{time}, expected {expected}"))
}

/// `CollectiveInterpolationWithDefaultProfileTest`: XLA's own table.
fn default_table(record: &Value) -> Result<(), String> {
    let d = device(record);
    let profile = hlo_lsp::cost::collective::platform::profile_name(&d).unwrap();
    let interpolator = CollectiveInterpolator::default_for(&profile, 8)?;
    let case = Case::new(record["hlo"].as_str().unwrap());
    let (time, _) = interpolator.estimated_runtime(&root_op(&case)?)?;
    let expected =
        Duration::from_nanos_f64(record["expected"]["runtime_us"].as_f64().unwrap() * 1e3);
    check(time == expected, format!("{time}, expected {expected}"))
}

/// `CollectivePermuteInterpolationTest`.
fn permute_interpolation(record: &Value) -> Result<(), String> {
    let fixture = &record["fixture_info"];
    let mut measurements = vec![];
    for p in fixture["profiles"].as_array().unwrap() {
        let pairs = hlo_lsp::cost::collective::groups::parse_pairs(
            p["source_target_pairs"].as_str().unwrap(),
        )?;
        let g = group(Op::CollectivePermute, DeviceList::empty(), pairs);
        for point in p["points_tensor_size_bytes_to_throughput_bytes_per_sec"]
            .as_array()
            .unwrap()
        {
            measurements.push(Measurement {
                group: g.clone(),
                elements: point[0].as_i64().unwrap() / 4,
                throughput: point[1].as_i64().unwrap(),
            });
        }
    }
    let interpolator = CollectiveInterpolator::from_measurements(
        &measurements,
        fixture["num_gpus_per_host"].as_i64().unwrap(),
    )?;
    let args = &record["args"];
    let text = format!(
        "HloModule m, num_partitions=8\n\nENTRY e {{\n  p0 = {s} parameter(0)\n  ROOT _ = {s} collective-permute(p0), channel_id=1, source_target_pairs={}\n}}\n",
        args["source_target_pairs"].as_str().unwrap(),
        s = args["instruction_shape"].as_str().unwrap(),
    );
    let (time, _) = interpolator.estimated_runtime(&root_op(&Case::new(&text))?)?;
    let expected = record["expected"]["runtime_s"].as_f64().unwrap();
    let tolerance = record["expected"]["tolerance_s"].as_f64().unwrap();
    let got = time.as_secs_f64();
    check(
        (got - expected).abs() <= tolerance,
        format!("{got} s, expected {expected} ± {tolerance}"),
    )
}

fn run(record: &Value) -> Result<(), String> {
    let function = record["function"].as_str().unwrap();
    match function {
        f if f.starts_with("SolLatencyEstimator::") => sol_estimator(record),
        "SolGPUCostModel::RingLatency" | "SolGPUCostModel::AllToAllLatency" => sol_model(record),
        "SolGPUCostModel::GetConfig" => get_config(record),
        "CollectiveInterpolator::EstimatedRuntime" => interpolation(record),
        "CollectiveInterpolator::EstimatedRuntime (default profile)" => default_table(record),
        "CollectiveInterpolator::EstimatedRuntime (collective-permute)" => {
            permute_interpolation(record)
        }
        f if f.starts_with("AnalyticalLatencyEstimator") => Err(
            "needs XLA's latency-hiding scheduler and its analytical estimator (not ported)".into(),
        ),
        other => Err(format!("unknown function {other}")),
    }
}

#[test]
fn collective_cost_conformance() {
    let records = records();
    assert_eq!(records.len(), 69);
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}
