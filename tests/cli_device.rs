//! End-to-end tests of `hlo-lsp device` through the real binary: the JSON keys the
//! lead and users rely on, XLA's peak rates (H100 bf16 tensor cores ~989 TFLOP/s,
//! the A100's 312), a device read from a text proto with its own unit
//! descriptions and host link, and one-line errors.

use crate::cli_support;

use cli_support::{run, stderr, stdout, temp_file};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn near(v: &Value, want: f64, tolerance: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    assert!((got - want).abs() <= tolerance, "{got} vs {want}");
}

#[test]
fn h100_json_has_the_promised_fields_and_xlas_peaks() {
    let v = json(&["device", "h100", "--json"]);
    for key in [
        "name",
        "sm_count",
        "clock_ghz",
        "memory_bandwidth_gbps",
        "l2_bytes",
        "peak_tflops",
    ] {
        assert!(v.get(key).is_some(), "no {key} in {v}");
    }
    assert_eq!(v["name"], "h100");
    assert_eq!(v["sm_count"], 132);
    near(&v["clock_ghz"], 1.98, 1e-6);
    near(&v["memory_bandwidth_gbps"], 3352.32, 0.01);
    assert_eq!(v["l2_bytes"], 50 * 1024 * 1024);
    let matrix = &v["peak_tflops"]["matrix"];
    near(&matrix["bf16"], 989.0, 989.0 * 0.02);
    near(&matrix["f16"], 989.0, 989.0 * 0.02);
    near(&matrix["tf32"], 494.0, 494.0 * 0.02);
    near(&matrix["f8e4m3fn"], 1979.0, 1979.0 * 0.02);
    near(&matrix["s8"], 1979.0, 1979.0 * 0.02);
    let vector = &v["peak_tflops"]["vector"];
    near(&vector["f32"], 67.0, 67.0 * 0.02);
    near(&vector["f64"], 33.5, 33.5 * 0.02);
    near(&vector["bf16"], 134.0, 134.0 * 0.02);
    // PCIe 5.0 x16, one direction.
    near(&v["host_bandwidth_gbps"], 68.72, 0.01);
}

#[test]
fn a100_text_names_the_units() {
    let o = run(&["device", "a100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("108 SMs at 1.41 GHz"), "{out}");
    assert!(out.contains("bf16 311.9"), "{out}");
    assert!(out.contains("tf32 155.9"), "{out}");
}

#[test]
fn a_text_proto_with_its_own_units_and_host_link() {
    let spec = temp_file(
        "cli-device",
        "h100_like.gpu_target_config.pbtxt",
        r#"gpu_device_info {
  threads_per_block_limit: 1024
  threads_per_warp: 32
  threads_per_core_limit: 2048
  shared_memory_per_block: 49152
  core_count: 66
  fpus_per_core: 128
  memory_bandwidth: 1000000000000
  l2_cache_size: 1048576
  clock_rate_ghz: 1.98
  cuda_compute_capability { major: 9 minor: 0 }
  matrix_unit_description {
    rate_infos { key: 16 value { clock_rate_ghz: 1.8295201 units_per_core: 4 ops_per_clock: 512 } }
  }
  pcie_bandwidth: 34359738368
}
device_description_str: "half an H100"
"#,
    );
    let v = json(&["device", spec.to_str().unwrap(), "--json"]);
    assert_eq!(v["name"], "half an H100");
    assert_eq!(v["sm_count"], 66);
    near(&v["peak_tflops"]["matrix"]["bf16"], 494.6, 1.0);
    // Only the listed matrix type; the vector units come from the table.
    assert!(v["peak_tflops"]["matrix"].get("f16").is_none());
    near(&v["peak_tflops"]["vector"]["f32"], 33.45, 0.1);
    near(&v["host_bandwidth_gbps"], 34.36, 0.01);
}

#[test]
fn a_bad_name_or_file_is_one_line_and_fails() {
    for arg in ["v100", "/no/such/file.pbtxt"] {
        let o = run(&["device", arg]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("neither a preset"), "{err}");
    }
    let bad = temp_file("cli-device", "bad.pbtxt", "core_count: \"many\"");
    let o = run(&["device", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("bad.pbtxt:1:13"), "{err}");
}
