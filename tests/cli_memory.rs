//! `hlo-lsp memory` through the binary: on every program of tests/data/memory, the
//! JSON's four totals equal `memory_analysis()` and its allocations add up to XLA's
//! memory report; `--estimate` says it estimates; a dump alone is estimated.

use std::path::Path;

use serde_json::Value;

use crate::cli_support::{self, stderr, stdout};

fn memory(args: &[&str]) -> Value {
    let out = cli_support::run(&[&["memory"], args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/memory")
}

#[test]
fn json_totals_equal_memory_analysis_and_allocations_equal_xla_report() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(data().join("memory_analysis.json")).unwrap(),
    )
    .unwrap();
    for (name, want) in expected["programs"].as_object().unwrap() {
        let dump = std::fs::read_dir(data().join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("after_optimizations.txt"))
            .unwrap();
        let got = memory(&["--json", dump.to_str().unwrap()]);
        assert_eq!(got["source"], "buffer-assignment", "{name}");
        for key in [
            "argument_bytes",
            "output_bytes",
            "alias_bytes",
            "temp_bytes",
        ] {
            assert_eq!(got[key], want[key], "{name}: {key}");
        }
        let report = std::fs::read_to_string(
            dump.to_string_lossy()
                .replace(".txt", "-memory-usage-report.txt"),
        )
        .unwrap();
        let total: u64 = report
            .lines()
            .filter_map(|l| l.strip_prefix("Total bytes: "))
            .map(|l| l.split_whitespace().next().unwrap().parse::<u64>().unwrap())
            .sum();
        let allocated: u64 = got["allocations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["size"].as_u64().unwrap())
            .sum();
        assert_eq!(allocated, total, "{name}");
        // XProf names no instruction when no temporary is ever on the heap: the peak
        // is then what is held for the whole run.
        assert!(
            got["peak_bytes"].as_u64().unwrap() > 0
                && (got["peak_at"].is_string() || got["peak_bytes"] == got["indefinite_bytes"]),
            "{name}"
        );
        assert!(
            got["xla_live_range_peak_bytes"].as_u64().unwrap() > 0
                && got["xla_live_range_peak_at"].is_string(),
            "{name}: XLA's own live-range peak is kept"
        );
    }
}

#[test]
fn estimate_is_said_and_top_buffers_name_their_source_line() {
    let dump =
        data().join("mlp_train_step/module_0000.jit_mlp_train_step.cpu_after_optimizations.txt");
    let got = memory(&["--json", "--estimate", "--top", "3", dump.to_str().unwrap()]);
    assert_eq!(got["source"], "estimate");
    let top = got["top_buffers"].as_array().unwrap();
    assert_eq!(top.len(), 3);
    assert!(
        top.iter().any(|b| b["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("make_memory_dumps.py:"))),
        "{top:?}"
    );
    // A dump copied away from its siblings is estimated.
    let alone = cli_support::temp_file("memory", "alone.txt", std::fs::read(&dump).unwrap());
    let text = stdout(&cli_support::run(&["memory", alone.to_str().unwrap()]));
    assert!(
        text.contains("memory estimated from the module text") && text.contains("peak "),
        "{text}"
    );
}

/// `hlo-lsp check` on the #26987 reproduction: the transpose beside its operand is an
/// information finding naming its bytes, read from XLA's files; a small program has
/// none.
#[test]
fn check_names_the_transpose_live_at_the_peak() {
    let check = |dump: &Path| stdout(&cli_support::run(&["check", dump.to_str().unwrap()]));
    let dump = data()
        .join("transpose_at_peak/module_0095.jit_transpose_at_peak.cpu_after_optimizations.txt");
    let found: Vec<String> = check(&dump)
        .lines()
        .filter(|l| l.ends_with("[copy-at-memory-peak]"))
        .map(|l| l.split_once(": ").unwrap().1.to_string())
        .collect();
    assert_eq!(
        found,
        [
            "information: this transpose holds 8.0 MiB at the memory peak: 30% of 26.0 MiB at \
          %copy_bitcast_fusion (from XLA's buffer assignment); its operand %x.1 (8.0 MiB) is live \
          then too, so the data is held twice [copy-at-memory-peak]"
        ]
    );
    let small = data().join("scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    assert!(!check(&small).contains("copy-at-memory-peak"));
}

/// The text output ends with what is live at the peak grouped by the line of the
/// user's program, most bytes first, capped by `--top` with "… N more".
#[test]
fn text_groups_what_is_live_at_the_peak_by_source_line() {
    let dump = data().join(
        "transformer_train_step/module_0030.jit_transformer_train_step.cpu_after_optimizations.txt",
    );
    let out = cli_support::run(&["memory", "--top", "3", dump.to_str().unwrap()]);
    let text = stdout(&out);
    let groups: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "  live at the peak by source line:")
        .skip(1)
        .map(str::trim)
        .collect();
    assert_eq!(
        groups,
        [
            "400.0 KiB  make_memory_dumps.py:81  7 buffers, largest %add_bitcast_fusion.1",
            "208.0 KiB  parameters  7 buffers, largest %p__w1__.1",
            "48.5 KiB  make_memory_dumps.py:73  5 buffers, largest %broadcast_subtract_fusion",
            "… 5 more (96.8 KiB)",
        ],
        "{text}"
    );
}

/// `--svg OUT` writes the memory timeline beside the report: ENTRY's by default, a
/// while body's with `--computation`, `-` for standard output; a computation that
/// does not run in the schedule is a clear error.
#[test]
fn svg_writes_the_timeline_of_entry_or_of_a_while_body() {
    let dump = data().join("scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    let dump = dump.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("hlo-lsp-memory-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("scan.svg");
    let out = cli_support::run(&["memory", dump, "--svg", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("peak 70.0 KiB at %copy.4"),
        "the report still prints"
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert!(svg
        .contains("Memory of %main.6 over steps 0 to 30 (read from XLA&apos;s buffer assignment)"));
    assert!(
        svg.contains("peak 70.0 KiB at %copy.4"),
        "the curve's top is marked"
    );
    assert_eq!(
        svg.matches(r#"<g class="buffer"#).count(),
        32,
        "every buffer with bytes has a row"
    );

    let out = cli_support::run(&[
        "memory",
        dump,
        "--estimate",
        "--svg",
        "-",
        "--computation",
        "%region_0.4",
    ]);
    let svg = stdout(&out);
    assert!(
        svg.starts_with("<svg ") && svg.contains("Memory of %region_0.4 over steps "),
        "{svg}"
    );
    assert!(svg.contains("estimated from the module text"), "{svg}");

    let out = cli_support::run(&[
        "memory",
        dump,
        "--svg",
        "-",
        "--computation",
        "fused_computation",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not run in the schedule"),
        "{}",
        stderr(&out)
    );
}

/// The three profiled programs of tests/data/profiles (XProf 2.24.2's memory viewer in
/// their `xprof.json`).
const PROFILES: [&str; 3] = ["attention", "fori_cumulative", "sample_mlp_step"];

fn profile_dump(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/profiles");
    std::fs::read_dir(dir.join(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("after_optimizations.txt"))
        .unwrap()
}

fn xprof(name: &str) -> Value {
    let dump = profile_dump(name);
    let text = std::fs::read_to_string(dump.parent().unwrap().join("xprof.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["memory_viewer"].clone()
}

/// `peak_bytes` and `peak_at` are XProf's (`peakHeapMib` × 2^20 within 2%, `peak_op`),
/// read with the `.hlo.pb` beside the dump and again from the text files alone; the
/// text report prints the same peak, and XLA's own live-range line under its name.
#[test]
fn the_peak_is_xprofs_on_the_profile_samples_with_and_without_the_proto() {
    for name in PROFILES {
        let want = xprof(name);
        let bytes = want["peakHeapMib"].as_f64().unwrap() * f64::from(1u32 << 20);
        let op = want["peak_op"].as_str().unwrap();
        let dump = profile_dump(name);
        // The same dump without its `.hlo.pb`: the text files only.
        let mut text_only = None;
        for e in std::fs::read_dir(dump.parent().unwrap()).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "txt") {
                let file = p.file_name().unwrap().to_str().unwrap();
                let copy = cli_support::temp_file(
                    &format!("memory-{name}"),
                    file,
                    std::fs::read(&p).unwrap(),
                );
                if p == dump {
                    text_only = Some(copy);
                }
            }
        }
        let text_only = text_only.unwrap();
        for (how, path, rule) in [
            (
                "proto",
                &dump,
                "xprof: the heap simulator's trace (.hlo.pb)",
            ),
            ("text", &text_only, "xprof: allocations and live ranges"),
        ] {
            let got = memory(&["--json", path.to_str().unwrap()]);
            let peak = got["peak_bytes"].as_u64().unwrap() as f64;
            assert!(
                (peak - bytes).abs() <= 0.02 * bytes,
                "{name} ({how}): {peak} vs XProf's {bytes}"
            );
            assert_eq!(got["peak_at"], op, "{name} ({how})");
            assert_eq!(got["peak_rule"], rule, "{name} ({how})");
            assert!(got["xla_live_range_peak_bytes"].as_u64().unwrap() > 0);
            let out = cli_support::run(&["memory", path.to_str().unwrap()]);
            let line = format!(
                "  peak {} at %{op} (step {} of ",
                human(got["peak_bytes"].as_u64().unwrap()),
                got["peak_step"]
            );
            assert!(stdout(&out).contains(&line), "{name} ({how}): {line}");
            let differs = got["xla_live_range_peak_bytes"] != got["peak_bytes"]
                || got["xla_live_range_peak_step"] != got["peak_step"];
            assert_eq!(
                stdout(&out).contains("XLA's live-range peak: "),
                differs,
                "{name} ({how})"
            );
        }
        let _ = std::fs::remove_dir_all(text_only.parent().unwrap());
    }
}

/// `1.5 MiB` as the report prints it.
fn human(bytes: u64) -> String {
    hlo_lsp::units::bytes(bytes)
}

/// `--json`'s timeline: the heap at every step of the schedule (its values are the
/// heap sizes XProf's memory viewer plots, its top is `peak_bytes` at `peak_step`) and
/// every buffer's live range with its source line.
#[test]
fn json_timeline_is_the_heap_per_step_and_the_buffers() {
    for name in PROFILES {
        let got = memory(&["--json", profile_dump(name).to_str().unwrap()]);
        let steps = got["timeline"]["steps"].as_array().unwrap();
        let live: Vec<u64> = steps
            .iter()
            .map(|s| s["live_bytes"].as_u64().unwrap())
            .collect();
        assert_eq!(live.len(), steps.len());
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(s["step"], i, "{name}");
            assert!(s["instruction"].is_string(), "{name}");
        }
        let peak = got["peak_bytes"].as_u64().unwrap();
        assert_eq!(live.iter().max(), Some(&peak), "{name}");
        let at = got["peak_step"].as_u64().unwrap() as usize;
        assert_eq!(live[at], peak, "{name}");
        // XProf's heap sizes, event by event, take the same values as ours step by step.
        let sizes: std::collections::BTreeSet<u64> = xprof(name)["heapSizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m.as_f64().unwrap() * f64::from(1u32 << 20)).round() as u64)
            .collect();
        let ours: std::collections::BTreeSet<u64> = live.into_iter().collect();
        assert_eq!(ours, sizes, "{name}");
        let buffers = got["timeline"]["buffers"].as_array().unwrap();
        assert!(!buffers.is_empty());
        for b in buffers {
            let (start, end) = (b["start"].as_u64().unwrap(), b["end"].as_u64().unwrap());
            assert!(
                b["bytes"].as_u64().unwrap() > 0 && start <= end,
                "{name}: {b}"
            );
            assert!((end as usize) <= steps.len(), "{name}: {b}");
            assert!(
                b["name"].is_string() && b.get("source").is_some(),
                "{name}: {b}"
            );
        }
        assert!(
            buffers.iter().any(|b| b["source"]
                .as_str()
                .is_some_and(|s| s.contains("programs.py:"))),
            "{name}: the user's lines"
        );
    }
}

/// The bytes of an HLO shape's arrays (sub-byte types rounded up per array).
fn hlo_bytes(shape: &hlo_lsp::model::shape::Shape) -> u64 {
    shape
        .leaves()
        .iter()
        .map(|a| (a.bit_size().unwrap() as u64).div_ceil(8))
        .sum()
}

/// StableHLO: on the 41 JAX programs of tests/data/stablehlo, `argument_bytes` and
/// `output_bytes` are those of the ENTRY of the HLO JAX made from the same program
/// (its parameters, its root); the temporaries and the peak are said to be known
/// after XLA's pipeline, never zeros; the text says the same.
#[test]
fn stablehlo_arguments_and_outputs_are_mains_signature() {
    let programs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/stablehlo/programs.jsonl"),
    )
    .unwrap();
    let mut checked = 0;
    for line in programs.lines() {
        let p: Value = serde_json::from_str(line).unwrap();
        let name = p["name"].as_str().unwrap();
        let hlo = hlo_lsp::model::parse_hlo(p["hlo"].as_str().unwrap());
        let entry = hlo.modules[0].entry_computation().unwrap();
        let model = entry.model();
        let arguments: u64 = model
            .instructions
            .iter()
            .filter(|i| i.opcode == hlo_lsp::model::Opcode::Parameter)
            .map(|i| hlo_bytes(&i.shape))
            .sum();
        let outputs = hlo_bytes(&model.root_instruction().unwrap().shape);
        let file = cli_support::temp_file(
            "memory-stablehlo",
            &format!("{name}.mlir"),
            p["stablehlo"].as_str().unwrap(),
        );
        let got = memory(&["--json", file.to_str().unwrap()]);
        assert_eq!(got["source"], "stablehlo-signature", "{name}");
        assert_eq!(got["argument_bytes"], arguments, "{name}");
        assert_eq!(got["output_bytes"], outputs, "{name}");
        assert!(
            got["temp_bytes"].is_null() && got["peak_bytes"].is_null(),
            "{name}"
        );
        assert_eq!(got["temp"], "known after XLA's pipeline", "{name}");
        let out = cli_support::run(&["memory", file.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains(&format!(
                "  arguments {} · outputs {} · ",
                human(arguments),
                human(outputs)
            )) && text.contains("temps known after XLA's pipeline"),
            "{name}: {text}"
        );
        checked += 1;
    }
    assert_eq!(checked, 53);
    // MLIR that is not StableHLO is a clear error, not an empty report.
    let linalg = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/mlir/linalg_ext.mlir");
    let out = cli_support::run(&["memory", linalg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no StableHLO op found"),
        "{}",
        stderr(&out)
    );
}
