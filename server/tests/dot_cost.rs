//! XLA's GEMM cost vectors (27 records in `tests/data/conformance/xla/dot_cost.jsonl`)
//! against `hlo_lsp::cost::dot` (`gpu_dot_fusion_cost_model`: the relations its
//! tests assert, `IsSupported`, `ExtractBlockK`, `CalculateLoopIterBytes`) and
//! `hlo_lsp::cost::matmul` (`MatmulInterpolator`: synthetic profile lists, XLA's
//! default table on H100 and B200, cuBLASLt calls and Triton GEMM fusions), each
//! compared as its XLA test does (times truncated to the test's unit). `PASSING`
//! is a floor; every failing record is printed with its cause.

use hlo_lsp::cost::dot::{self, DotProblem, DotTile, Pipeline, LATENCY_TAX};
use hlo_lsp::cost::gemm::Gemm;
use hlo_lsp::cost::matmul::{self, Interpolator, Profile};
use hlo_lsp::cost::Duration;
use hlo_lsp::device::{ComputeCapability, Device};
use hlo_lsp::model::{self, Instruction, PrimitiveType};
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 27;

/// A parsed module; `instr` finds an instruction in any computation.
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

    /// The instruction named `name` and its computation (the entry first).
    fn find(&self, name: &str) -> Result<(model::ComputationRef<'_>, &Instruction), String> {
        let m = self.module();
        let entry = m.entry_computation();
        entry
            .into_iter()
            .chain(m.computations())
            .find_map(|c| c.model().instruction_by_name(name).map(|i| (c, i)))
            .ok_or_else(|| format!("no instruction {name}"))
    }

    fn gemm(&self, name: &str) -> Result<Gemm, String> {
        let (c, i) = self.find(name)?;
        Gemm::of(self.module(), c, i).ok_or_else(|| format!("{name} is not a GEMM"))
    }
}

/// The device a record names.
fn device(name: &str) -> Device {
    if name.starts_with("TestGpuDeviceInfo::H100SXMDeviceInfo") {
        return Device::h100();
    }
    if name.starts_with("TestGpuDeviceInfo::B200SXMDeviceInfo") {
        // The test device's name: the table's section is `sm_100_B200`.
        let mut d = Device::b200();
        d.name = "NVIDIA B200".into();
        return d;
    }
    // `RTXA6000DeviceInfo(cc)`: the A6000's clock, perhaps another capability.
    let mut d = Device::a6000();
    d.matrix_units.clear();
    d.vector_units.clear();
    if name.contains("CudaComputeCapability(9, 0)") {
        d.set_compute_capability(ComputeCapability::Cuda { major: 9, minor: 0 });
    }
    d
}

fn check(ok: bool, what: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what)
    }
}

/// `args.block_level_parameters`: the tile, `num_stages`.
fn block_parameters(args: &Value) -> (Vec<i64>, Pipeline) {
    let p = &args["block_level_parameters"];
    let tile = p["output_tile_sizes"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let pipeline = Pipeline {
        num_stages: p["num_stages"].as_i64().unwrap_or(1),
        is_tma_allowed: false,
    };
    (tile, pipeline)
}

/// `EstimateRunTimeForDotOpWithBlockParameters` of the record's target `r`
/// in `text`, block `k` from the dot's config.
fn dot_estimate(text: &str, args: &Value, device: &Device) -> Result<dot::DotEstimate, String> {
    let case = Case::new(text);
    let (comp, instr) = case.find("r")?;
    let problem = DotProblem::of(comp, instr)?;
    let block_k = dot::extract_block_k(instr)?;
    let (tile, pipeline) = block_parameters(args);
    dot::estimate(&problem, &tile, block_k, pipeline, device)
}

fn tile_of(args: &Value, k: i64) -> DotTile {
    let (tile, _) = block_parameters(args);
    let r = tile.len();
    DotTile {
        m: tile[r - 2],
        n: tile[r - 1],
        k,
        b: tile[..r - 2].iter().product(),
    }
}

fn gpu_dot_model(r: &Value) -> Result<(), String> {
    let name = r["name"].as_str().unwrap();
    let text = r["hlo"].as_str().unwrap_or("");
    let args = &r["args"];
    let d = device(r["device"].as_str().unwrap());
    match name {
        "GpuDotComputeBoundBf16NumStages1" | "GpuDotComputeBoundBf16" => {
            let e = dot_estimate(text, args, &d)?;
            let case = Case::new(text);
            let (comp, instr) = case.find("r")?;
            let problem = DotProblem::of(comp, instr)?;
            let (_, compute) =
                dot::compute_time_with_quantization(&problem, &tile_of(args, 32), &d);
            if name.ends_with("NumStages1") {
                let bound = compute.mul_f64(1.2);
                check(
                    e.exec_time > bound,
                    format!("exec {} not above 1.2 x compute {}", e.exec_time, compute),
                )
            } else {
                let base = compute + LATENCY_TAX;
                check(
                    e.exec_time >= base && e.exec_time <= base.mul_f64(1.1),
                    format!("exec {} not in [{base}, 1.1 x {base}]", e.exec_time),
                )
            }
        }
        "GpuDotMemoryBoundBf16" => {
            let e = dot_estimate(text, args, &d)?;
            let bytes = r["expected"]["approx_total_bytes"].as_i64().unwrap();
            let bandwidth = dot::effective_hbm_bandwidth(bytes);
            let hbm = Duration::from_secs_f64(f64::from(bytes as f32 / bandwidth)) + LATENCY_TAX;
            check(
                e.exec_time >= hbm && e.exec_time <= hbm.mul_f64(1.1),
                format!("exec {} not in [{hbm}, 1.1 x {hbm}]", e.exec_time),
            )
        }
        "DifferentContractingDimsHaveSameRuntime" => {
            let a = dot_estimate(text, args, &d)?;
            let b = dot_estimate(r["hlo_b"].as_str().unwrap(), args, &d)?;
            check(
                a.exec_time.whole_micros() > 0 && a.exec_time == b.exec_time,
                format!("{} vs {}", a.exec_time, b.exec_time),
            )
        }
        "ExtractBlockKNoBackendConfig" => {
            let case = Case::new(text);
            let (_, instr) = case.find("r")?;
            match dot::extract_block_k(instr) {
                Err(_) => Ok(()),
                Ok(k) => Err(format!("got block k {k}, expected FailedPrecondition")),
            }
        }
        "GpuDot4DGemm" => {
            let e = dot_estimate(text, args, &d)?;
            check(
                e.exec_time.whole_micros() > 0,
                format!("exec {}", e.exec_time),
            )
        }
        "GpuDotWithDownstreamTransposeIsRejected" => {
            let case = Case::new(text);
            let (comp, instr) = case.find("d")?;
            match DotProblem::of(comp, instr) {
                Err(e) if e.contains("downstream transpose") => Ok(()),
                other => Err(format!("expected Unimplemented, got {other:?}")),
            }
        }
        "CalculateIterBytes" => {
            let p = &args["dot_problem_info"];
            let t = &args["dot_tile_size"];
            let int = |v: &Value, k: &str| v[k].as_i64().unwrap();
            let ty = |v: &Value, k: &str| {
                PrimitiveType::from_name(&v[k].as_str().unwrap().to_ascii_lowercase())
            };
            let problem = DotProblem {
                b: int(p, "b"),
                m: int(p, "m"),
                n: int(p, "n"),
                k: int(p, "k"),
                lhs: ty(p, "lhs_element_type"),
                rhs: ty(p, "rhs_element_type"),
                output: ty(p, "lhs_element_type"),
            };
            let tile = DotTile {
                m: int(t, "m"),
                n: int(t, "n"),
                k: int(t, "k"),
                b: int(t, "b"),
            };
            let got = dot::loop_iter_bytes(&problem, &tile);
            let want = r["expected"]["iter_bytes"].as_i64().unwrap();
            check(got == want, format!("{got} bytes, expected {want}"))
        }
        other => Err(format!("no runner for {other}")),
    }
}

/// The interpolator a record builds: its profile list, its one-entry perf
/// table, or XLA's default table.
fn interpolator(r: &Value, d: &Device) -> Result<std::sync::Arc<Interpolator>, String> {
    let fixture = &r["fixture_info"];
    let mut profiles = vec![];
    if let Some(list) = fixture["profiles"].as_array() {
        for p in list {
            let case = Case::new(p["hlo"].as_str().unwrap());
            profiles.push(Profile {
                gemm: case.gemm("_")?,
                clock_cycles: p["clock_cycles"].as_i64().unwrap(),
            });
        }
    } else if let Some(entries) = fixture["perf_table"]["entries"].as_array() {
        for e in entries {
            let i = &e["instruction"];
            let dims = &i["dot_dimension_numbers"];
            let list = |k: &str| {
                dims[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let operands: Vec<&str> = e["operands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap())
                .collect();
            let text = format!(
                "ENTRY e {{\n {}\n {}\n ROOT _ = {} dot(lhs, rhs), lhs_contracting_dims={{{}}}, rhs_contracting_dims={{{}}}, lhs_batch_dims={{{}}}, rhs_batch_dims={{{}}}\n}}\n",
                operands[0],
                operands[1],
                i["shape"].as_str().unwrap(),
                list("lhs_contracting_dimensions"),
                list("rhs_contracting_dimensions"),
                list("lhs_batch_dimensions"),
                list("rhs_batch_dimensions"),
            );
            profiles.push(Profile {
                gemm: Case::new(&text).gemm("_")?,
                clock_cycles: e["clock_cycles"].as_i64().unwrap(),
            });
        }
    } else {
        return Interpolator::for_device(d);
    }
    Ok(std::sync::Arc::new(Interpolator::from_profiles(
        &profiles, d,
    )?))
}

fn matmul_interpolator(r: &Value) -> Result<(), String> {
    let d = device(r["device"].as_str().unwrap());
    let interp = interpolator(r, &d)?;
    let case = Case::new(r["hlo"].as_str().unwrap());
    let (comp, instr) = case.find("_")?;
    let got = interp.estimate(case.module(), comp, instr)?;
    let expected = &r["expected"];
    let compare = expected["compare"].as_str().unwrap_or("");
    let (got_n, want) = if let Some(us) = expected["runtime_us"].as_f64() {
        (got.whole_micros() as f64, us)
    } else {
        let s = expected["runtime_s"].as_f64().unwrap();
        if compare.contains("1 ms") {
            (got.whole_millis() as f64 / 1000.0, s)
        } else {
            (got.as_secs_f64(), s)
        }
    };
    check(
        got_n == want,
        format!("{got} (compared {got_n}), expected {want} ({compare})"),
    )?;
    // The public entry point agrees on the default table.
    if r["fixture_info"]["profiles"].is_null() && r["fixture_info"]["perf_table"].is_null() {
        let direct = matmul::estimate(case.module(), comp, instr, &d)?;
        check(direct == got, format!("matmul::estimate {direct} vs {got}"))?;
    }
    Ok(())
}

#[test]
fn dot_cost_records_match_xla() {
    let records = crate::conformance_support::xla_records("dot_cost.jsonl");
    crate::conformance_support::run_with_floor(&records, PASSING, |r| {
        if r["function"]
            .as_str()
            .unwrap_or("")
            .starts_with("MatmulInterpolator")
        {
            matmul_interpolator(r)
        } else {
            gpu_dot_model(r)
        }
    });
}
