//! XLA's GPU performance-model tests (`gpu_performance_model_test.cc`,
//! `gpu_indexing_performance_model_test.cc`; 38 records in
//! `tests/data/conformance/xla/performance_model.jsonl`, device RTX A6000)
//! against `hlo_lsp::cost`. Each record runs as its XLA test does: times
//! truncated to whole microseconds (`absl::ToInt64Microseconds`) or
//! milliseconds where the test truncates, compared with `EXPECT_NEAR`'s
//! tolerance; `relation` records check the relation. The number that pass may
//! only go up: `PASSING` is a floor, and every record that fails is printed
//! with what is off.

use hlo_lsp::analysis::view;
use hlo_lsp::cost::tiled::{self, BlockLevelParameters};
use hlo_lsp::cost::{dot, hlo_cost, Duration, KernelCost, Model, KERNEL_LAUNCH_OVERHEAD};
use hlo_lsp::device::Device;
use hlo_lsp::model::{self, ComputationRef, Instruction};
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 38;

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("performance_model.jsonl")
}

/// `EXPECT_NEAR(actual, expected, tolerance)`.
fn near(what: &str, actual: f64, expected: f64, tolerance: f64) -> Result<(), String> {
    if (actual - expected).abs() <= tolerance {
        Ok(())
    } else {
        Err(format!(
            "{what}: got {actual}, expected {expected} ± {tolerance}"
        ))
    }
}

fn check(ok: bool, what: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what)
    }
}

fn number(expected: &Value, key: &str) -> f64 {
    expected[key].as_f64().unwrap_or_else(|| panic!("no {key}"))
}

/// One parsed module and its entry computation.
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

    fn instr(&self, name: &str) -> &Instruction {
        self.entry()
            .model()
            .instruction_by_name(name)
            .unwrap_or_else(|| panic!("no instruction {name}"))
    }

    fn root(&self) -> &Instruction {
        self.entry().model().root_instruction().unwrap()
    }
}

/// XLA's `TestGpuDeviceInfo::RTXA6000DeviceInfo()`: the `a6000` preset without
/// execution units, since that test device is built without
/// `FillExecutionUnitDesc` (`performance_model_devices.json` lists units for the
/// A100, H100 and B200 test devices only), so XLA's GEMM model falls back to the
/// CUDA cores on it.
fn xla_a6000() -> Device {
    let mut d = Device::a6000();
    d.matrix_units.clear();
    d.vector_units.clear();
    d
}

/// Runs `f` with the model of the case's entry computation on the A6000.
fn with_model<T>(case: &Case, f: impl FnOnce(&Model<'_>) -> T) -> T {
    let device = xla_a6000();
    let module = case.module();
    let v = view::borrowed(module);
    let model = Model::new(&v, module, case.entry(), &device);
    f(&model)
}

fn micros(d: Duration) -> f64 {
    d.whole_micros() as f64
}

/// `name(producer, consumers)` from the record's `target` for the plain
/// `EstimateRunTimes` records.
fn producer_consumers(target: &str) -> (String, Vec<String>) {
    if let Some(rest) = target.strip_prefix("producer ") {
        let (p, c) = rest.split_once(", consumers [").unwrap();
        let consumers = c
            .trim_end_matches(']')
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        return (p.trim().to_string(), consumers);
    }
    let name = target.split_whitespace().next().unwrap().to_string();
    (name, vec![])
}

/// Every `{{a,b}}` block-level parameter set in a record's `target`, with the
/// `num_warps=N` after it (XLA's `BlockLevelParameters` default is 1 warp).
fn block_parameters(target: &str) -> Vec<BlockLevelParameters> {
    let mut out = vec![];
    let mut rest = target;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let sizes: Vec<Vec<i64>> = after[..end]
            .split("},{")
            .map(|t| t.split(',').map(|x| x.trim().parse().unwrap()).collect())
            .collect();
        let tail = &after[end + 2..];
        let next = tail.find("{{").unwrap_or(tail.len());
        let num_warps = tail[..next]
            .split("num_warps=")
            .nth(1)
            .and_then(|w| w.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|w| w.parse().ok())
            .unwrap_or(1);
        out.push(BlockLevelParameters::new(sizes, num_warps));
        rest = tail;
    }
    out
}

fn exact(what: &str, actual: i64, expected: &Value, key: &str) -> Result<(), String> {
    let e = expected[key].as_i64().unwrap();
    check(actual == e, format!("{what}: got {actual}, expected {e}"))
}

fn run(record: &Value) -> Result<(), String> {
    let name = record["name"].as_str().unwrap();
    let function = record["function"].as_str().unwrap();
    let expected = &record["expected"];
    let case = Case::new(record["hlo"].as_str().unwrap());
    let target = record["target"].as_str().unwrap_or("");
    match (name, function) {
        ("DusScalesWithUpdates", _) => with_model(&case, |m| {
            let root = case.root();
            let operand = |k: usize| m.computation.instruction(root.operands[k].target.unwrap());
            let t1 = m.run_times(operand(0), &[]);
            let t2 = m.run_times(operand(1), &[]);
            let (a, b) = (
                t1.time_unfused.whole_micros(),
                t2.time_unfused.whole_micros(),
            );
            check(
                (a - b).abs() <= 10,
                format!("dus1 {a} µs, dus2 {b} µs: more than 10 µs apart"),
            )
        }),
        ("PreferFusingExpensiveInstructionsIntoProducer", _) => with_model(&case, |m| {
            let exp = case.instr("exp");
            let as_consumer = m.run_times(case.instr("fusion.0"), &[exp]);
            let users: Vec<&Instruction> = m
                .computation
                .users(exp.id)
                .iter()
                .map(|&u| m.computation.instruction(u))
                .collect();
            let as_producer = m.run_times(exp, &users);
            let producer_gain =
                as_producer.time_unfused.as_nanos_f64() - as_producer.time_fused.as_nanos_f64();
            let consumer_gain =
                as_consumer.time_unfused.as_nanos_f64() - as_consumer.time_fused.as_nanos_f64();
            check(
                producer_gain < consumer_gain,
                format!("exp as producer gains {producer_gain} ns, as consumer {consumer_gain} ns"),
            )
        }),
        (_, "GpuPerformanceModel::EstimateRunTimeForFusion") => with_model(&case, |m| {
            let producer = case.instr("exp");
            let consumer = case.instr("add");
            let (p, c): (KernelCost, KernelCost) = if name.contains("InfiniteProducer") {
                (KernelCost::infinite("exp"), m.kernel(consumer))
            } else {
                (m.kernel(producer), KernelCost::infinite("add"))
            };
            let t = m.fused_time(producer, consumer, &p, &c, false);
            check(
                t.is_infinite(),
                format!("fused time {t}, expected infinite"),
            )
        }),
        (_, "GpuPerformanceModel::EstimateRunTimesForMultiOutputFusion") => {
            with_model(&case, |m| {
                let t = m.run_times_multi_output(
                    case.instr("loop_power_fusion"),
                    case.instr("input_reduce_fusion"),
                );
                near(
                    "time_unfused ms",
                    t.time_unfused.whole_millis() as f64,
                    number(expected, "time_unfused_ms"),
                    number(expected, "time_unfused_tolerance_ms"),
                )
                .and(near(
                    "time_fused ms",
                    t.time_fused.whole_millis() as f64,
                    number(expected, "time_fused_ms"),
                    number(expected, "time_fused_tolerance_ms"),
                ))
            })
        }
        (_, f) if f.starts_with("GpuPerformanceModel::RecordEstimatedRunTime") => {
            with_model(&case, |m| {
                let k = m.kernel(case.root());
                let cycles = k.exec_time.as_nanos_f64() * f64::from(m.device.clock_rate_ghz as f32);
                near(
                    "end_to_end_cycles",
                    cycles,
                    number(expected, "end_to_end_cycles"),
                    number(expected, "end_to_end_cycles_tolerance"),
                )
                .and(near(
                    "exec_time_us",
                    k.exec_time.as_micros_f64(),
                    number(expected, "exec_time_us"),
                    number(expected, "tolerance_us"),
                ))
            })
        }
        (_, "GpuPerformanceModel::EstimateRunTimes") => with_model(&case, |m| {
            let (p, cs) = producer_consumers(target);
            let consumers: Vec<&Instruction> = cs.iter().map(|c| case.instr(c)).collect();
            let t = m.run_times(case.instr(&p), &consumers);
            if let Some(relation) = expected["relation"].as_str() {
                return match relation {
                    "time_fused < time_unfused" => check(
                        t.time_fused < t.time_unfused,
                        format!("fused {} !< unfused {}", t.time_fused, t.time_unfused),
                    ),
                    "time_unfused < time_fused" => check(
                        t.time_unfused < t.time_fused,
                        format!("unfused {} !< fused {}", t.time_unfused, t.time_fused),
                    ),
                    other => Err(format!("unknown relation {other}")),
                };
            }
            let tolerance = |key: &str| {
                expected
                    .get(key)
                    .and_then(Value::as_f64)
                    .unwrap_or_else(|| number(expected, "tolerance_us"))
            };
            let mut result = near(
                "time_unfused µs",
                micros(t.time_unfused),
                number(expected, "time_unfused_us"),
                tolerance("time_unfused_tolerance_us"),
            );
            if expected.get("time_fused_us").is_some() {
                result = result.and(near(
                    "time_fused µs",
                    micros(t.time_fused),
                    number(expected, "time_fused_us"),
                    tolerance("time_fused_tolerance_us"),
                ));
            }
            result
        }),
        (n, _) if n.starts_with("FlopsPerElementTest/") => with_model(&case, |m| {
            let root = case.root();
            let per_element = tiled::flops_per_element(m.module, m.computation, root);
            let elements = root
                .shape
                .leaves()
                .first()
                .and_then(|a| a.element_count())
                .unwrap_or(0);
            let cost = hlo_cost::analyze(m.module, m.computation, root).flops;
            check(
                per_element * elements == cost,
                format!("FlopsPerElement {per_element} x {elements} elements != flop_count {cost}"),
            )
        }),
        (_, "GpuPerformanceModelWithIndexingAnalysis::EstimateRunTimes") => {
            with_model(&case, |m| {
                let data = tiled::estimate_indexed(m, case.root());
                let unfused = KERNEL_LAUNCH_OVERHEAD + data.exec_time;
                near(
                    "time_unfused µs",
                    micros(unfused),
                    number(expected, "time_unfused_us"),
                    number(expected, "tolerance_us"),
                )
            })
        }
        (_, "GpuPerformanceModelWithIndexingAnalysis::EstimateNumWarps") => {
            with_model(&case, |m| {
                let sizes: Vec<i64> = target
                    .split('{')
                    .nth(1)
                    .unwrap()
                    .trim_end_matches(|c| c != '}')
                    .trim_end_matches('}')
                    .split(',')
                    .map(|x| x.trim().parse().unwrap())
                    .collect();
                let warps = tiled::estimate_num_warps(m, case.root(), &[sizes])?;
                exact("num_warps", warps, expected, "num_warps")
            })
        }
        (_, "GpuPerformanceModelWithIndexingAnalysis::EstimateRunTimeForTiledFusion") => {
            with_model(&case, |m| {
                let params = block_parameters(target);
                let root = case.root();
                let estimate = |p: &BlockLevelParameters| tiled::estimate_tiled(m, root, p);
                if name.contains("Uncoalesced") {
                    let a = estimate(&params[0])?;
                    let b = estimate(&params[1])?;
                    exact(
                        "bytes_read coalesced",
                        a.bytes_read,
                        expected,
                        "bytes_read_coalesced",
                    )?;
                    exact(
                        "bytes_read uncoalesced",
                        b.bytes_read,
                        expected,
                        "bytes_read_uncoalesced",
                    )?;
                    return near(
                        "write time ratio",
                        b.write_time.as_secs_f64() / a.write_time.as_secs_f64(),
                        number(expected, "write_time_ratio_uncoalesced_over_coalesced"),
                        number(expected, "ratio_tolerance"),
                    );
                }
                if name.contains("RegisterSpill") {
                    let r1 = estimate(&params[0])?;
                    let r2 = estimate(&params[1])?;
                    let r3 = estimate(&params[2])?;
                    near(
                        "res1 exec µs",
                        micros(r1.exec_time),
                        number(expected, "res1_exec_time_us"),
                        number(expected, "res1_tolerance_us"),
                    )?;
                    check(
                        r2.exec_time.is_infinite(),
                        format!("res2 {} not infinite", r2.exec_time),
                    )?;
                    return check(
                        r3.exec_time.is_infinite(),
                        format!("res3 {} not infinite", r3.exec_time),
                    );
                }
                let r = estimate(&params[0])?;
                let mut result = Ok(());
                for (key, actual) in [("flops", r.flops), ("bytes_read", r.bytes_read)] {
                    if expected.get(key).is_some() {
                        result = result.and(exact(key, actual, expected, key));
                    }
                }
                for (key, tolerance, actual) in [
                    ("read_time_s", "read_time_tolerance_s", r.read_time),
                    ("compute_time_s", "compute_time_tolerance_s", r.compute_time),
                    ("exec_time_s", "exec_time_tolerance_s", r.exec_time),
                ] {
                    if expected.get(key).is_some() {
                        result = result.and(near(
                            key,
                            actual.whole_secs() as f64,
                            number(expected, key),
                            number(expected, tolerance),
                        ));
                    }
                }
                result
            })
        }
        (_, "GpuPerformanceModelWithIndexingAnalysis::EstimateRunTimeForTriton") => {
            with_model(&case, |m| {
                let root = case.root();
                let configured =
                    tiled::configured_parameters(m, root).ok_or("no block_level_fusion_config")?;
                let r = tiled::estimate_tiled(m, root, &configured)?;
                if name == "TritonGemmWithCustomBlockLevelParameters" {
                    let custom = BlockLevelParameters::new(vec![vec![16, 16]], 1);
                    let c = tiled::estimate_tiled(m, root, &custom)?;
                    return check(
                        c.exec_time != r.exec_time,
                        format!("custom and default both {}", r.exec_time),
                    );
                }
                if let Some(relation) = expected["relation"].as_str() {
                    return gemm_relation(m, root, relation, expected, r.exec_time).map_err(|e| {
                        format!(
                            "{e} (read {}, write {}, compute {})",
                            r.read_time, r.write_time, r.compute_time
                        )
                    });
                }
                exact("bytes_read", r.bytes_read, expected, "bytes_read")?;
                exact("bytes_written", r.bytes_written, expected, "bytes_written")?;
                near(
                    "exec_time µs",
                    micros(r.exec_time),
                    number(expected, "exec_time_us"),
                    number(expected, "tolerance_us"),
                )
            })
        }
        (_, "GpuPerformanceModelWithIndexingAnalysis::TryFindBestTilingForFusion") => {
            with_model(&case, |m| {
                let best = tiled::best_tiling(m, case.root())?;
                let sizes = &best.parameters.output_tile_sizes;
                let want = expected
                    .get("output_tile_sizes")
                    .or_else(|| expected.get("output_tile_sizes_symbolic_tiling"))
                    .unwrap();
                let want: Vec<Vec<i64>> = serde_json::from_value(want.clone()).unwrap();
                check(
                    sizes == &want,
                    format!(
                        "best tiling {sizes:?} ({}), expected {want:?}",
                        best.runtime.exec_time
                    ),
                )?;
                if expected.get("num_warps").is_some() {
                    exact(
                        "num_warps",
                        best.parameters.num_warps,
                        expected,
                        "num_warps",
                    )?;
                }
                if expected.get("bytes_read").is_some() {
                    exact(
                        "bytes_read",
                        best.runtime.bytes_read,
                        expected,
                        "bytes_read",
                    )?;
                    exact(
                        "bytes_written",
                        best.runtime.bytes_written,
                        expected,
                        "bytes_written",
                    )?;
                    near(
                        "exec_time µs",
                        micros(best.runtime.exec_time),
                        number(expected, "exec_time_us"),
                        number(expected, "tolerance_us"),
                    )?;
                }
                Ok(())
            })
        }
        _ => Err(format!("{function}: not modelled yet")),
    }
}

/// The bounds XLA's Triton GEMM tests put on a fusion's time, read from the
/// record's `relation`: `exec_time > 1.2 * C`, `E <= exec_time <= 1.1*E` with
/// `E = C + kLatencyTax`, where `C` is the dot's quantized compute time with
/// the `DotTileSize{m,n}` the relation names; or `H <= exec_time <= 1.1*H`
/// with `H` the record's bytes at the device's bandwidth plus the latency tax.
fn gemm_relation(
    m: &Model<'_>,
    fusion: &Instruction,
    relation: &str,
    expected: &Value,
    exec: Duration,
) -> Result<(), String> {
    let fused = m.module.called_computation(fusion, "calls").unwrap();
    let dot_instr = fused
        .model()
        .instructions
        .iter()
        .find(|i| i.opcode.name() == "dot")
        .ok_or("no dot")?;
    let problem = dot::DotProblem::of(fused, dot_instr)?;
    let quantized = |relation: &str| -> Result<Duration, String> {
        let tile = relation
            .split("DotTileSize{")
            .nth(1)
            .and_then(|t| t.split('}').next())
            .ok_or("no DotTileSize")?;
        let sizes: Vec<i64> = tile.split(',').map(|x| x.trim().parse().unwrap()).collect();
        let tile = dot::DotTile {
            m: sizes[0],
            n: sizes[1],
            k: 0,
            b: 1,
        };
        Ok(dot::compute_time_with_quantization(&problem, &tile, m.device).1)
    };
    let within = |bound: Duration| {
        check(
            bound <= exec && exec <= bound.mul_f64(1.1),
            format!("exec_time {exec} not within [{bound}, 1.1 × {bound}]"),
        )
    };
    if relation.starts_with("exec_time > 1.2 *") {
        let c = quantized(relation)?;
        return check(
            exec > c.mul_f64(1.2),
            format!("exec_time {exec} not above 1.2 × {c}"),
        );
    }
    if relation.starts_with("E <= exec_time <= 1.1*E") {
        return within(quantized(relation)? + dot::LATENCY_TAX);
    }
    if relation.starts_with("H <= exec_time <= 1.1*H") {
        let bytes = expected["approx_total_bytes"].as_i64().ok_or("no bytes")?;
        let seconds = bytes as f32 / m.device.memory_bandwidth as f32;
        return within(Duration::from_secs_f64(f64::from(seconds)) + dot::LATENCY_TAX);
    }
    Err(format!("unknown relation {relation}"))
}

#[test]
fn performance_model_conformance() {
    let records = records();
    assert_eq!(records.len(), 38);
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}
