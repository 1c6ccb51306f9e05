//! End-to-end tests of `hlo-lsp cost` and `hlo-lsp fusion` through the real binary, on
//! HLO from XLA's performance-model, fusible and priority-fusion records: the ranking,
//! the exact JSON keys, XLA's refusal reasons, devices from presets and text protos,
//! the CPU-dump note, errors, and snapshots of the text output.

use crate::cli_support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use cli_support::{check_readme_examples, run, stderr, stdout, temp_file};
use serde_json::Value;

fn record(file: &str, name: &str) -> Value {
    let path = format!(
        "{}/../tests/data/conformance/xla/{file}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no record {name} in {file}"))
}

/// The HLO of record `name` of `file`.jsonl, written to a file of this test run.
fn hlo(file: &str, name: &str) -> PathBuf {
    let r = record(file, name);
    temp_file(
        "cli-cost",
        &format!("{file}.{}.hlo", name.replace('/', "_")),
        r["hlo"].as_str().unwrap(),
    )
}

/// [`hlo`] in a file of the test's own (`tag`): tests run in parallel, and one writing
/// a record's file while another reads it reads a truncated module.
fn hlo_for(tag: &str, file: &str, name: &str) -> PathBuf {
    let r = record(file, name);
    temp_file(
        "cli-cost",
        &format!("{tag}.{file}.{}.hlo", name.replace('/', "_")),
        r["hlo"].as_str().unwrap(),
    )
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(|k| k.as_str()).collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

fn bench(name: &str) -> String {
    format!("{}/../tests/data/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// XLA's `a6000.txtpb` spec with another name and half the SMs.
const SPEC: &str = r#"
gpu_device_info {
  threads_per_block_limit: 1024
  threads_per_warp: 32
  shared_memory_per_block: 49152
  shared_memory_per_core: 102400
  threads_per_core_limit: 1536
  core_count: 42
  fpus_per_core: 128
  block_dim_limit_x: 2147483647
  block_dim_limit_y: 65535
  block_dim_limit_z: 65535
  memory_bandwidth: 768096000000
  l2_cache_size: 6291456
  clock_rate_ghz: 1.8
  device_memory_size: 51041271808
  shared_memory_per_block_optin: 101376
  cuda_compute_capability {
    major: 8
    minor: 6
  }
  registers_per_core_limit: 65536
  registers_per_block_limit: 65536
}
platform_name: "CUDA"
device_description_str: "Half A6000"
"#;

const PREFER: &str = "PreferFusingExpensiveInstructionsIntoProducer";

#[test]
fn cost_ranks_kernels_costliest_first_with_exactly_the_documented_keys() {
    let file = hlo("performance_model", PREFER);
    let v = json(&["cost", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        keys(&v),
        set(&[
            "module",
            "device",
            "total_us",
            "total_is_lower_bound",
            "launch_overhead_us",
            "unfused",
            "per_device_of",
            "loops",
            "kernels",
        ])
    );
    assert_eq!(v["device"]["name"], "a6000");
    let kernels = v["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fusion.1", "fusion.0", "exp"]);
    let times: Vec<f64> = kernels
        .iter()
        .map(|k| k["exec_time_us"].as_f64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    // The total counts every kernel once, and each launch's overhead (1 µs).
    let total = v["total_us"].as_f64().unwrap();
    let launches = v["launch_overhead_us"].as_f64().unwrap();
    assert_eq!(launches, 3.0);
    assert!((total - times.iter().sum::<f64>() - launches).abs() < 1e-6);
    for k in kernels {
        assert_eq!(
            keys(k),
            set(&[
                "name",
                "computation",
                "kind",
                "exec_time_us",
                "compute_time_us",
                "read_time_us",
                "write_time_us",
                "flops",
                "bytes_read",
                "bytes_written",
                "bound",
                "operands",
                "model",
                "count",
                "count_is_lower_bound",
                "branch",
                "modelled",
                "per_step_us",
                "percent",
                "blocks",
                "threads_per_block",
                "tiles",
            ])
        );
        // Untiled unless `--tiles` names the kernel.
        assert!(k["tiles"].is_null());
        assert_eq!(k["count"], 1);
        assert_eq!(k["modelled"], true);
        assert!(k["bound"] == "memory" || k["bound"] == "compute");
        for o in k["operands"].as_array().unwrap() {
            assert_eq!(
                keys(o),
                set(&["index", "name", "bytes", "coalesced", "utilization"])
            );
        }
    }
    assert_eq!(kernels[0]["kind"], "kInput");
    assert_eq!(kernels[0]["computation"], "fusion");
    // --top keeps the costliest.
    let top = json(&["cost", file.to_str().unwrap(), "--json", "--top", "1"]);
    assert_eq!(top["kernels"].as_array().unwrap().len(), 1);
    assert_eq!(top["kernels"][0]["name"], "fusion.1");
}

#[test]
fn cost_text_is_a_header_then_one_line_per_kernel() {
    let file = hlo("performance_model", PREFER);
    let o = run(&["cost", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o).replace(file.to_str().unwrap(), "FILE");
    insta::assert_snapshot!(out);
}

/// A pass-by-pass dump of a CPU run: its module's `cpu_after_optimizations.txt`
/// beside it says what neither its name nor its text does.
#[test]
fn a_pass_dump_beside_its_cpu_dump_is_not_judged_without_a_device() {
    let file = format!(
        "{}/../tests/data/dumps/step/module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let v = json(&["cost", &file, "--json"]);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["kernels"], serde_json::json!([]));
    // Copied away from its dump, nothing says so: read as written for a GPU.
    let text = std::fs::read_to_string(&file).unwrap();
    let alone = temp_file(
        "cli-pass-dump",
        "module_0004.jit_step.0001.after_fusion.txt",
        &text,
    );
    let v = json(&["cost", alone.to_str().unwrap(), "--json"]);
    assert_ne!(v["kernels"], serde_json::json!([]), "{v}");
}

#[test]
fn a_cpu_dump_is_not_judged_without_a_device() {
    let file = bench("transformer.after.hlo");
    let o = run(&["cost", &file]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let note = stderr(&o);
    assert!(
        note.contains("is a CPU dump") && note.contains("--device"),
        "{note}"
    );
    let v = json(&["cost", &file, "--json"]);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["kernels"], serde_json::json!([]));
    // Asked for a GPU, it is read as if compiled for it.
    let o = run(&["cost", &file, "--device", "h100", "--top", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let head = stdout(&o);
    assert!(
        head.lines()
            .next()
            .unwrap()
            .contains("as if compiled for h100"),
        "{head}"
    );
    let v = json(&["cost", &file, "--device", "h100", "--json", "--top", "2"]);
    assert_eq!(v["as_if_compiled_for"], "h100");
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["kernels"].as_array().unwrap().len(), 2);
}

#[test]
fn devices_come_from_presets_text_protos_and_the_config_beside_the_dump() {
    let file = hlo("performance_model", PREFER);
    let spec = temp_file("cli-cost", "half.pbtxt", SPEC);
    let full = json(&["cost", file.to_str().unwrap(), "--json"]);
    let half = json(&[
        "cost",
        file.to_str().unwrap(),
        "--json",
        "--device",
        spec.to_str().unwrap(),
    ]);
    assert_eq!(half["device"]["name"], "Half A6000");
    assert_eq!(half["device"]["sm_count"], 42);
    assert_ne!(full["total_us"], half["total_us"]);
    let b200 = json(&["cost", file.to_str().unwrap(), "--json", "--device", "B200"]);
    assert_eq!(b200["device"]["name"], "b200");

    // XLA writes `*.gpu_target_config.pbtxt` beside its dumps: read without --device.
    let text = record("performance_model", PREFER)["hlo"]
        .as_str()
        .unwrap()
        .to_string();
    let beside = temp_file("cli-cost-beside", "module_0001.after.txt", text);
    temp_file(
        "cli-cost-beside",
        "module_0001.gpu_target_config.pbtxt",
        SPEC,
    );
    let v = json(&["cost", beside.to_str().unwrap(), "--json"]);
    assert_eq!(v["device"]["name"], "Half A6000");
    let v = json(&[
        "cost",
        beside.to_str().unwrap(),
        "--json",
        "--device",
        "a100",
    ]);
    assert_eq!(v["device"]["name"], "a100");
}

#[test]
fn bad_devices_and_names_are_clear_errors() {
    let file = hlo("performance_model", PREFER);
    let f = file.to_str().unwrap();
    let bad = temp_file(
        "cli-cost",
        "bad.pbtxt",
        "gpu_device_info {\n  core_count: 8x4\n}\n",
    );
    let o = run(&["cost", f, "--device", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad.pbtxt:2:") && e.contains("core_count"),
        "{e}"
    );
    let o = run(&["cost", f, "--device", "v100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a6000, a100, h100, b200"),
        "{}",
        stderr(&o)
    );
    let o = run(&["fusion", f, "--producer", "fusion0"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("no instruction named fusion0") && e.contains("fusion.0"),
        "{e}"
    );
    let o = run(&[
        "fusion",
        f,
        "--producer",
        "fusion.0",
        "--consumer",
        "fusion.1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not read"), "{}", stderr(&o));
    let o = run(&["fusion", f]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["cost", "/nonexistent/x.hlo"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn fusion_of_a_reduce_into_a_reduce_is_refused_in_xlas_words() {
    let file = hlo("priority_fusion", "DoNotFuseReduceIntoReduce");
    let f = file.to_str().unwrap();
    let v = json(&["fusion", f, "--producer", "r0", "--json"]);
    assert_eq!(
        keys(&v),
        set(&[
            "producer",
            "consumers",
            "fusible",
            "reason",
            "time_unfused_us",
            "time_fused_us",
            "saved_us",
            "multi_output",
            "per_consumer",
            "source",
        ])
    );
    assert_eq!(v["saved_us"], Value::Null);
    assert_eq!(v["producer"], "r0");
    assert_eq!(v["consumers"], serde_json::json!(["r1"]));
    assert_eq!(v["fusible"], false);
    assert_eq!(
        v["reason"],
        "both the producer and the consumer contain a reduce"
    );
    assert_eq!(v["source"], "rules");
    assert!(v["time_fused_us"].as_f64().unwrap() > 0.0);
    // The same with the consumer named, as COMPUTATION/NAME.
    let named = json(&[
        "fusion",
        f,
        "--producer",
        "main/r0",
        "--consumer",
        "%r1",
        "--json",
    ]);
    assert_eq!(named["reason"], v["reason"]);
    let o = run(&["fusion", f, "--producer", "r0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn an_allowed_fusion_says_what_it_saves() {
    let file = hlo("performance_model", PREFER);
    let f = file.to_str().unwrap();
    let v = json(&["fusion", f, "--producer", "fusion.0", "--json"]);
    assert_eq!(v["fusible"], true);
    assert_eq!(v["reason"], Value::Null);
    assert!(v["time_unfused_us"].as_f64().unwrap() > v["time_fused_us"].as_f64().unwrap());
    let o = run(&["fusion", f, "--producer", "fusion.0"]);
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn a_fusion_that_cannot_happen_names_why_and_offers_no_saving() {
    // Issue 43: a parameter producer got "fusing would save 3.81 µs".
    let file = hlo_for(
        "a_fusion_that_cannot_happen_names_why_and_offers_no_saving",
        "performance_model",
        PREFER,
    );
    let f = file.to_str().unwrap();
    let o = run(&["fusion", f, "--producer", "p1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("the producer is not fusible"), "{out}");
    assert!(
        !out.contains("would save") && !out.contains("would cost"),
        "{out}"
    );
    let v = json(&["fusion", f, "--producer", "p1", "--json"]);
    assert_eq!(v["fusible"], false);
    assert_eq!(v["saved_us"], Value::Null);
    for c in v["per_consumer"].as_array().unwrap() {
        assert_eq!(c["saved_us"], Value::Null, "{c}");
    }
}

#[test]
fn each_consumer_has_its_own_times() {
    let file = hlo_for(
        "each_consumer_has_its_own_times",
        "performance_model",
        PREFER,
    );
    let f = file.to_str().unwrap();
    let v = json(&["fusion", f, "--producer", "exp", "--json"]);
    let per: Vec<&Value> = v["per_consumer"].as_array().unwrap().iter().collect();
    assert_eq!(per.len(), v["consumers"].as_array().unwrap().len());
    for c in per {
        assert!(c["time_unfused_us"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["time_fused_us"].as_f64().unwrap() > 0.0, "{c}");
    }
}

#[test]
fn a_consumer_may_read_a_multi_output_producer_through_get_tuple_element() {
    // XLA's FusingTransposeMultiOutputFusionIntoReduceIsSlow: 105 ± 10 µs unfused,
    // 514 ± 10 µs fused (whole microseconds).
    let file = hlo(
        "performance_model",
        "FusingTransposeMultiOutputFusionIntoReduceIsSlow",
    );
    let f = file.to_str().unwrap();
    let v = json(&[
        "fusion",
        f,
        "--producer",
        "fusion",
        "--consumer",
        "reduce.1",
        "--json",
    ]);
    let unfused = v["time_unfused_us"].as_f64().unwrap().trunc();
    let fused = v["time_fused_us"].as_f64().unwrap().trunc();
    assert!((unfused - 105.0).abs() <= 10.0, "{v}");
    assert!((fused - 514.0).abs() <= 10.0, "{v}");
}

#[test]
fn multi_output_fusion_is_estimated_as_xla_does() {
    // XLA's EstimateRunTimeForFusion_MultiOutputWrite_ReturnsCorrectTime: 120 ± 1 ms
    // unfused, 103 ± 1 ms fused (whole milliseconds).
    let file = hlo(
        "performance_model",
        "EstimateRunTimeForFusion_MultiOutputWrite_ReturnsCorrectTime",
    );
    let f = file.to_str().unwrap();
    let args = [
        "fusion",
        f,
        "--producer",
        "loop_power_fusion",
        "--consumer",
        "input_reduce_fusion",
        "--multi-output",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    assert_eq!(v["multi_output"], true);
    assert_eq!(v["fusible"], true, "{v}");
    let ms = |k: &str| (v[k].as_f64().unwrap() / 1000.0).trunc();
    assert!((ms("time_unfused_us") - 120.0).abs() <= 1.0, "{v}");
    assert!((ms("time_fused_us") - 103.0).abs() <= 1.0, "{v}");
    let o = run(&args);
    assert!(
        stdout(&o).contains("as a multi-output fusion"),
        "{}",
        stdout(&o)
    );
    // One consumer only.
    let o = run(&[&args[..], &["--consumer", "tuple"]].concat());
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn simulation_writes_the_fused_module_and_a_before_after_summary() {
    let input = format!(
        "{}/../tests/data/jax/softmax.before.hlo",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = temp_file("cli-cost", "softmax.fused.hlo", "");
    let o = run(&[
        "fusion",
        &input,
        "--simulate",
        "--device",
        "a6000",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("before: ") && text.contains("after: "),
        "{text}"
    );
    assert!(text.contains("fused module written to"), "{text}");
    let fused = std::fs::read_to_string(&out).unwrap();
    let file = hlo_lsp::model::parse_hlo(&fused);
    assert!(file.diagnostics.is_empty(), "{:?}", file.diagnostics);
    let v = json(&[
        "fusion",
        &input,
        "--simulate",
        "--device",
        "a6000",
        "--json",
    ]);
    let kernels = |k: &str| v[k]["kernels"].as_u64().unwrap();
    assert!(kernels("after") < kernels("before"), "{v}");
    assert!(v["after"]["total_us"].as_f64().unwrap() > 0.0);
}

#[test]
fn rule_facts_are_keyed_by_xlas_function_names() {
    let file = hlo("fusible", "ChooseFusionKind");
    let f = file.to_str().unwrap();
    let v = json(&["fusion", f, "--instruction", "c", "--with", "r", "--json"]);
    assert_eq!(
        keys(&v),
        set(&[
            "instruction",
            "with",
            "is_physically_transposing",
            "transposes_minor_dimension",
            "is_reduce_input_fusion",
            "is_input_fusible_reduction",
            "is_fusible_as_multi_output_fusion_root",
            "is_producer_multi_output_fusible",
            "choose_fusion_kind",
            "shared_memory_usage",
            "unroll_factor",
            "may_cause_performance_drop_if_unrolled",
            "shapes_compatible_for_multi_output_fusion",
            "fusion_heroes_are_compatible",
            "is_consumer_the_only_non_root_user",
        ])
    );
    // XLA's ChooseFusionKind test: kInput.
    assert_eq!(v["choose_fusion_kind"], "kInput");
    assert_eq!(
        keys(&v["is_producer_multi_output_fusible"]),
        set(&["ok", "reason"])
    );
    let alone = json(&["fusion", f, "--instruction", "c", "--json"]);
    assert!(alone.get("choose_fusion_kind").is_none());

    let shared = hlo("fusible", "GetSharedMemoryUsage");
    let v = json(&[
        "fusion",
        shared.to_str().unwrap(),
        "--instruction",
        "res",
        "--json",
    ]);
    assert_eq!(v["shared_memory_usage"], 8448);
    let o = run(&["fusion", f, "--instruction", "c", "--with", "r"]);
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn simulation_lists_priorities_then_the_first_fusion() {
    let file = hlo("performance_model", PREFER);
    let f = file.to_str().unwrap();
    let v = json(&["fusion", f, "--simulate", "--json"]);
    assert!(v["module"]
        .as_str()
        .unwrap()
        .contains("calls=fused_computation"));
    let steps = v["steps"].as_array().unwrap();
    for s in steps {
        for k in [
            "kind",
            "producer",
            "consumer",
            "reason",
            "time_unfused_us",
            "time_fused_us",
        ] {
            assert!(s.get(k).is_some(), "{k} missing in {s}");
        }
    }
    let kinds: Vec<&str> = steps.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds[..3], ["update_priority", "update_priority", "fusion"]);
    assert_eq!(steps[2]["producer"], "fusion.0");
    assert_eq!(steps[2]["consumer"], "exp");
    let refused = hlo("priority_fusion", "DoNotFuseReduceIntoReduce");
    let v = json(&["fusion", refused.to_str().unwrap(), "--simulate", "--json"]);
    assert_eq!(v["steps"][0]["kind"], "producer_ineligible");
    assert_eq!(
        v["steps"][0]["reason"],
        "both the producer and the consumer contain a reduce"
    );
    let o = run(&["fusion", f, "--simulate"]);
    insta::assert_snapshot!(stdout(&o));
}

/// Whether XLA's own HLO parser (jaxlib's `_hlo.hlo_module_from_text`) reads `text`;
/// `None` when jaxlib is not installed.
fn xla_parses(text: &str) -> Option<Result<(), String>> {
    let probe = std::process::Command::new("python3")
        .args(["-c", "from jaxlib import _hlo"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let path = temp_file("cli-cost", "xla-parse.hlo", text);
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; from jaxlib import _hlo; _hlo.hlo_module_from_text(open(sys.argv[1]).read())",
            path.to_str().unwrap(),
        ])
        .output()
        .ok()?;
    Some(if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    })
}

/// The instructions of the entry computation of `text` that are not parameters.
fn entry_kernels(text: &str) -> Vec<(String, String)> {
    let file = hlo_lsp::model::parse_hlo(text);
    assert!(
        file.diagnostics.is_empty(),
        "{:?}\n{text}",
        file.diagnostics
    );
    let entry = file.modules[0].entry_computation().unwrap();
    entry
        .model()
        .instructions
        .iter()
        .filter(|i| i.opcode != hlo_lsp::model::Opcode::Parameter)
        .map(|i| (i.name.to_string(), i.opcode.name().to_string()))
        .collect()
}

#[test]
fn simulation_prints_the_fused_module_xla_reads() {
    // JAX's HLO before XLA's optimizations (tests/data/jax/README.md).
    for case in ["softmax", "attention", "scatter"] {
        let path = format!(
            "{}/../tests/data/jax/{case}.before.hlo",
            env!("CARGO_MANIFEST_DIR")
        );
        let input = std::fs::read_to_string(&path).unwrap();
        let v = json(&["fusion", &path, "--simulate", "--device", "a6000", "--json"]);
        assert_eq!(v["stopped"], Value::Null, "{case}");
        let fused = v["module"].as_str().unwrap();
        let before = entry_kernels(&input);
        let after = entry_kernels(fused);
        assert!(after.len() < before.len(), "{case}: {after:?}");
        // Names are the input's, or XLA's names for the fusions the pass made.
        let input_names: BTreeSet<&str> = before.iter().map(|(n, _)| n.as_str()).collect();
        for (name, opcode) in &after {
            assert!(
                input_names.contains(name.as_str())
                    || (opcode == "fusion" && name.starts_with("fusion")),
                "{case}: {name} ({opcode})"
            );
        }
        // Every fusion step names a producer and consumer the module had.
        let steps = v["steps"].as_array().unwrap();
        assert!(steps.iter().any(|s| s["kind"] == "fusion"), "{case}");
        if let Some(parsed) = xla_parses(fused) {
            parsed.unwrap_or_else(|e| panic!("{case}: XLA cannot read the fused module: {e}"));
        }
    }
}

#[test]
fn fusion_reads_xlas_own_dump_beside_the_module() {
    let data = format!(
        "{}/../tests/data/dumps/fusion_process",
        env!("CARGO_MANIFEST_DIR")
    );
    let sample = std::fs::read_to_string(format!("{data}/fusion_process_dump_sample.txt")).unwrap();
    let dump = hlo_lsp::fusible::process_dump::ProcessDump::parse(&sample).unwrap();
    assert_eq!(dump.steps.len(), 3);
    // The module the dump was made from, and the dump beside it, named as XLA names them.
    let module = temp_file(
        "cli-xla-dump",
        "module_0001.test_module.before_optimizations.txt",
        "HloModule test_module\n\nENTRY main {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  add = f32[] add(p0, p1)\n  subtract = f32[] subtract(p0, p1)\n  abs = f32[] abs(subtract)\n  ROOT multiply = f32[] multiply(add, abs)\n}\n",
    );
    let dir = module.parent().unwrap();
    std::fs::write(
        dir.join("module_0001.test_module.priority_fusion_dump.txt"),
        &sample,
    )
    .unwrap();
    let m = module.to_str().unwrap();
    let v = json(&["fusion", m, "--producer", "subtract", "--json"]);
    assert_eq!(v["source"], "xla-dump");
    assert_eq!(v["fusible"], true);
    assert_eq!(v["reason"], Value::Null);
    // XLA's refusal, in XLA's words, wins over the rules (which would fuse `add`).
    let refused = "fusion_steps {\n  producer_ineligible {\n    producer_name: \"add\"\n    reason: \"the fusion would result in an overly large code duplication\"\n  }\n}\nfusion_steps {\n  update_priority {\n    producer_name: \"abs\"\n    consumer_names: \"multiply\"\n    us_fused: 1.25\n    us_unfused: 3.5\n  }\n}\n";
    std::fs::write(
        dir.join("module_0001.test_module.priority_fusion_dump.txt"),
        refused,
    )
    .unwrap();
    let v = json(&["fusion", m, "--producer", "add", "--json"]);
    assert_eq!(v["source"], "xla-dump");
    assert_eq!(v["fusible"], false);
    assert_eq!(
        v["reason"],
        "the fusion would result in an overly large code duplication"
    );
    let o = run(&["fusion", m, "--producer", "abs"]);
    assert!(
        stdout(&o).contains("XLA's times: 3.50 µs unfused, 1.25 µs fused"),
        "{}",
        stdout(&o)
    );
    // A producer the dump does not name is answered by the rules.
    let v = json(&["fusion", m, "--producer", "subtract", "--json"]);
    assert_eq!(v["source"], "rules");
}

#[test]
fn the_readme_examples_are_what_the_binary_prints() {
    check_readme_examples("cost");
    check_readme_examples("fusion");
}
