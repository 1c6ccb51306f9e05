//! End-to-end tests of `hlo-lsp coalescing` through the real binary: XLA's
//! coalescing vectors (emitter and tiled families) as files, the JSON shape,
//! the text report with the warp map and picture, devices, and bad input.

use crate::cli_support;

use std::path::PathBuf;

use cli_support::{repo_file, run, stderr, stdout, temp_file};
use serde_json::Value;

fn records() -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/conformance/xla/coalescing.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `text` to a file of this test run and returns its path.
fn write(name: &str, text: &str) -> PathBuf {
    let file = format!("{}.hlo", name.replace(['#', '/'], "_"));
    temp_file("cli-coalescing", &file, text)
}

fn record(name: &str) -> Value {
    records().into_iter().find(|r| r["test"] == name).unwrap()
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

#[test]
fn xla_vectors_through_the_binary() {
    let mut checked = 0;
    for r in records() {
        let kind = r["kind"].as_str().unwrap();
        if kind == "producer_consumer_heuristic" {
            continue; // a library function, not the fusion's own reads
        }
        let path = write(r["test"].as_str().unwrap(), r["hlo"].as_str().unwrap());
        let mut args = vec![
            "coalescing".to_string(),
            path.display().to_string(),
            "--json".into(),
        ];
        if let Some(sizes) = r["tile_sizes"].as_array() {
            let s: Vec<String> = sizes.iter().map(|x| x.to_string()).collect();
            args.push("--sizes".into());
            args.push(s.join(","));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v = json(&args);
        let operands = v["instructions"][0]["operands"].as_array().unwrap();
        if kind == "tiled_bandwidth" {
            let got: Vec<Value> = operands
                .iter()
                .map(|o| o["bandwidth_utilization"].clone())
                .collect();
            assert_eq!(
                Value::from(got),
                r["expected_bandwidth_utilization_per_operand"],
                "{}",
                r["test"]
            );
        } else {
            let got: Vec<Value> = operands.iter().map(|o| o["coalesced"].clone()).collect();
            assert_eq!(
                Value::from(got),
                r["expected_coalesced_per_operand"],
                "{}",
                r["test"]
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 28);
}

#[test]
fn json_has_exactly_the_issue_fields() {
    let r = record("Gather");
    let path = write("json_shape", r["hlo"].as_str().unwrap());
    let v = json(&["coalescing", path.to_str().unwrap(), "--json"]);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&v), vec!["instructions"]);
    let instruction = &v["instructions"][0];
    assert_eq!(keys(instruction), vec!["name", "operands"]);
    assert_eq!(instruction["name"], "fusion");
    for (k, o) in instruction["operands"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(
            keys(o),
            vec!["bandwidth_utilization", "coalesced", "index", "reason"]
        );
        assert_eq!(o["index"], k);
        assert!(o["reason"].as_str().is_some_and(|s| !s.is_empty()));
    }
    // A scalar has no utilization: null, not a number.
    let pad = record("PadOp");
    let path = write("pad", pad["hlo"].as_str().unwrap());
    let v = json(&["coalescing", path.to_str().unwrap(), "--json"]);
    assert!(v["instructions"][0]["operands"][1]["bandwidth_utilization"].is_null());
}

#[test]
fn text_report_shows_the_warp_map_and_picture() {
    let r = record("RhsTransposedLayout");
    let path = write("text", r["hlo"].as_str().unwrap());
    let o = run(&["coalescing", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("fusion: loop emitter"), "{out}");
    assert!(out.contains(
        "p1 f32[100,200]{0,1}: not coalesced — a warp reads stride 100 (400 B); 1/16 of each transaction used"
    ));
    assert!(out.contains("first warp reads: (thread_x) -> (thread_x * 100)"));
    // The strided read is a column at the left edge of the 200 x 100 plane.
    let picture: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("each cell 13 x 4"))
        .skip(1)
        .take(16)
        .map(str::trim)
        .collect();
    assert_eq!(picture.len(), 16);
    assert!(picture[..3].iter().all(|l| !l.starts_with('·')));
    assert!(picture[3..].iter().all(|l| l.chars().all(|c| c == '·')));
    // The coalesced operand has no picture.
    assert_eq!(out.matches("first warp reads").count(), 1);
}

/// XLA's `print_indexing` test passes `s32[1024]` to an `s32[]` parameter (the model
/// warns `call-shape-mismatch`): the parameter's read maps say nothing about the
/// operand's memory, so it is not judged, and no warp map is made up for it.
#[test]
fn an_operand_its_parameter_declares_otherwise_is_not_judged() {
    let path = repo_file("tests/data/samples/xla/xla__tools__print_indexing_test.hlo");
    let o = run(&["coalescing", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("b s32[1024]: not coalesced — its parameter is declared s32[]"),
        "{out}"
    );
    assert!(!out.contains("UNDEFINED"), "{out}");
    assert!(out.contains("a s32[1024]: coalesced — a warp reads 32 consecutive elements"));
}

#[test]
fn instruction_and_device_options() {
    let r = record("TransposeOnlyOuterDims");
    let path = write("device", r["hlo"].as_str().unwrap());
    let p = path.to_str().unwrap();
    let a6000 = stdout(&run(&["coalescing", p]));
    assert!(
        a6000.contains("unroll 4") && a6000.contains("device a6000"),
        "{a6000}"
    );
    // 204,800 elements: fewer than an H100's 270,336 resident threads, no unroll.
    let h100 = stdout(&run(&["coalescing", p, "--device", "h100"]));
    assert!(
        h100.contains("unroll 1") && h100.contains("device h100"),
        "{h100}"
    );
    // A fused instruction is a one-op fusion of its own operands.
    let v = json(&["coalescing", p, "--instruction", "%transpose", "--json"]);
    assert_eq!(v["instructions"][0]["name"], "transpose");
    assert_eq!(v["instructions"][0]["operands"][0]["coalesced"], true);
}

#[test]
fn bad_input_is_a_usage_error_with_a_message() {
    let r = record("IdentityLayout");
    let path = write("bad", r["hlo"].as_str().unwrap());
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (vec!["coalescing", "/nonexistent/x.hlo"], "cannot read"),
        (
            vec!["coalescing", p, "--instruction", "nope"],
            "no instruction named nope",
        ),
        (
            vec!["coalescing", p, "--sizes", "0,4"],
            "must be at least 1",
        ),
        (vec!["coalescing", p, "--sizes", "4"], "has rank 1"),
        (
            vec!["coalescing", p, "--device", "v100"],
            "neither a preset",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
    let empty = write("empty", "HloModule m\n");
    let o = run(&["coalescing", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no ENTRY"));
}

/// A CPU dump has no warps: without `--device` it is not judged as GPU kernels
/// (one note, nothing on stdout, no instruction in the JSON); named, a GPU reads
/// it as if compiled for it.
#[test]
fn a_cpu_dump_is_not_judged_without_a_device() {
    let file = repo_file("tests/data/bench/transformer.after.hlo");
    let o = run(&["coalescing", &file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let note = stderr(&o);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.contains("is a CPU dump: XLA's GPU coalescing analysis does not apply")
            && note.contains("--device"),
        "{note}"
    );
    let v = json(&["coalescing", &file, "--json"]);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["instructions"], serde_json::json!([]));
    let v = json(&["coalescing", &file, "--device", "h100", "--json"]);
    assert!(!v["instructions"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["as_if_compiled_for"], "h100");
    let text = stdout(&run(&["coalescing", &file, "--device", "h100"]));
    assert!(
        text.contains("(a CPU dump, as if compiled for h100)") && !text.contains("(device "),
        "{text}"
    );
}
