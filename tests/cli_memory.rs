//! `hlo-lsp memory` through the binary: on every program of tests/data/memory, the
//! JSON's four totals equal `memory_analysis()` and its allocations add up to XLA's
//! memory report; `--estimate` says it estimates; a dump alone is estimated.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn memory(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .arg("memory")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let alone = std::env::temp_dir().join(format!("hlo-lsp-memory-{}.txt", std::process::id()));
    std::fs::copy(&dump, &alone).unwrap();
    let text = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
        .args(["memory", alone.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_file(&alone).ok();
    let text = String::from_utf8_lossy(&text.stdout);
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
    let check = |dump: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
            .args(["check", dump.to_str().unwrap()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
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
