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
        assert!(
            got["peak_bytes"].as_u64().unwrap() > 0 && got["peak_at"].is_string(),
            "{name}"
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
          %ynn_fusion.1 (from XLA's buffer assignment); its operand %x.1 (8.0 MiB) is live \
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
            "208.0 KiB  make_memory_dumps.py:81  4 buffers, largest %add_bitcast_fusion.1",
            "208.0 KiB  parameters  7 buffers, largest %p__w1__.1",
            "64.0 KiB  make_memory_dumps.py:178  %multiply_subtract_fusion.4",
            "… 6 more (145.3 KiB)",
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
        stdout(&out).contains("peak 68.0 KiB at %wrapped_add"),
        "the report still prints"
    );
    let svg = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert!(svg
        .contains("Memory of %main.6 over steps 0 to 30 (read from XLA&apos;s buffer assignment)"));
    assert!(
        svg.contains("peak 70.0 KiB at %copy.5"),
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
