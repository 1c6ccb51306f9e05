//! `cost --profile` and `graph --profile` through the binary on the programs of
//! `tests/data/profiles/`: each kernel's and each node's measured time is the one
//! `hlo-lsp profile` gives the instruction (itself checked against XProf's numbers in
//! `cli_profile.rs`), the JSON keeps every key it had without a profile, the ratio is
//! measured over the estimate per step, the graph's boxes are coloured by their share
//! of the step; a bad profile is one line and exit 2.

use crate::cli_support;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use cli_support::{run, stderr, stdout, temp_file};
use serde_json::Value;

use crate::profile_samples::{data, dump_of, logdir, samples};

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// `hlo-lsp profile`'s measured time per instruction.
fn measured(sample: &Path) -> HashMap<String, f64> {
    let v = json(&["profile", "--json", &dump_of(sample), &logdir(sample)]);
    v["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["measured_us"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn cost_json_gives_every_kernel_its_measured_time_and_keeps_its_keys() {
    for sample in samples() {
        let dump = dump_of(&sample);
        let want = measured(&sample);
        let plain = json(&["cost", "--json", "--device", "a6000", &dump]);
        let got = json(&[
            "cost",
            "--json",
            "--device",
            "a6000",
            &dump,
            "--profile",
            &logdir(&sample),
        ]);
        let tag = sample.display();
        assert!(keys(&got).is_superset(&keys(&plain)), "{tag}");
        assert_eq!(got["total_us"], plain["total_us"], "{tag}");
        let kernels = got["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), plain["kernels"].as_array().unwrap().len());
        let mut joined = 0;
        for (k, before) in kernels.iter().zip(plain["kernels"].as_array().unwrap()) {
            assert!(keys(k).is_superset(&keys(before)), "{tag}: {k}");
            for key in ["measured_us", "measured_count", "ratio"] {
                assert!(keys(k).contains(key), "{tag}: no {key} in {k}");
            }
            let name = k["name"].as_str().unwrap();
            match want.get(name) {
                Some(us) => {
                    joined += 1;
                    assert_eq!(k["measured_us"].as_f64(), Some(*us), "{tag}: {name}");
                    if let Some(per_step) = k["per_step_us"].as_f64() {
                        let ratio = us / per_step;
                        assert!(
                            (k["ratio"].as_f64().unwrap() - ratio).abs() < 1e-9,
                            "{tag}: {k}"
                        );
                    }
                }
                None => assert!(k["measured_us"].is_null(), "{tag}: {k}"),
            }
        }
        assert!(joined > 0, "{tag}: no kernel measured");
        let profile = &got["profile"];
        assert_eq!(profile["measured_kernels"], joined, "{tag}");
        assert!(profile["step_us"].as_f64().unwrap() > 0.0, "{tag}");
        assert_eq!(profile["executions"], 5, "{tag}");
    }
}

#[test]
fn cost_text_has_a_measured_column_and_the_profiles_step() {
    let sample = data().join("attention");
    let o = run(&[
        "cost",
        "--device",
        "a6000",
        &dump_of(&sample),
        "--profile",
        &logdir(&sample),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("measured: jit_attention (program 6), 5 executions, step 30.98 µs"),
        "{text}"
    );
    let header = text.lines().find(|l| l.contains("PER STEP")).unwrap();
    assert!(
        header.contains("MEASURED") && header.contains("M/E"),
        "{header}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("subtract_exponential_fusion (kLoop"))
        .unwrap();
    assert!(row.contains("2.38 µs"), "{row}");
    // The kernels no GPU model covers still show what they took.
    let custom = text.lines().find(|l| l.contains("ynn_fusion.1")).unwrap();
    assert!(custom.contains("(measured "), "{custom}");
}

#[test]
fn cost_on_a_cpu_dump_without_a_gpu_reads_the_profile_and_points_at_profile() {
    let sample = data().join("fori_cumulative");
    let dump = dump_of(&sample);
    let o = run(&["cost", &dump, "--profile", &logdir(&sample)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("hlo-lsp profile"), "{}", stderr(&o));
    let other = logdir(&data().join("attention"));
    let o = run(&["cost", &dump, "--profile", &other]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no event names an instruction of jit_fori_cumulative"),
        "{err}"
    );
}

#[test]
fn graph_json_puts_measured_time_on_nodes_and_a_heat_legend() {
    for sample in samples() {
        let dump = dump_of(&sample);
        let want = measured(&sample);
        let got = json(&["graph", &dump, "--profile", &logdir(&sample)]);
        let tag = sample.display();
        let nodes = got["nodes"].as_array().unwrap();
        let mut seen = 0;
        for n in nodes.iter().filter(|n| n["kind"] != "more") {
            let name = n["name"].as_str().unwrap();
            match want.get(name) {
                Some(us) => {
                    seen += 1;
                    assert_eq!(n["measured_us"].as_f64(), Some(*us), "{tag}: {name}");
                    assert!(n["heat"].is_string(), "{tag}: {n}");
                }
                None => assert!(n.get("measured_us").is_none(), "{tag}: {n}"),
            }
        }
        assert!(seen > 0, "{tag}: no node measured");
        assert_eq!(got["heat"].as_array().unwrap().len(), 5, "{tag}");
        let plain = json(&["graph", &dump]);
        assert!(plain.get("heat").is_none());
    }
}

#[test]
fn graph_dot_and_svg_colour_measured_nodes() {
    let sample = data().join("fori_cumulative");
    let (dump, profile) = (dump_of(&sample), logdir(&sample));
    // while.1 takes 86% of the step: the darkest band.
    let dot = run(&["graph", &dump, "--profile", &profile, "--format", "dot"]);
    assert!(dot.status.success(), "{}", stderr(&dot));
    let line = stdout(&dot)
        .lines()
        .find(|l| l.contains("label=\"while.1"))
        .map(str::to_string)
        .unwrap();
    assert!(line.contains("fillcolor=\"#b30000\""), "{line}");
    assert!(line.contains("measured 6.57 µs · 86%"), "{line}");
    let svg = run(&["graph", &dump, "--profile", &profile, "--format", "svg"]);
    let svg = stdout(&svg);
    assert!(svg.contains(r#"class="heat-legend""#), "{svg}");
    assert!(svg.contains("#b30000"));
}

#[test]
fn graph_with_a_bad_profile_is_one_line_and_exit_2() {
    let sample = data().join("attention");
    let gz = std::fs::read(
        std::fs::read_dir(sample.join("profile/plugins/profile"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("vm.trace.json.gz"),
    )
    .unwrap();
    let cut = temp_file(
        "cli-profile-views",
        "cut.trace.json.gz",
        &gz[..gz.len() / 2],
    );
    for profile in [
        cut.display().to_string(),
        logdir(&data().join("fori_cumulative")),
    ] {
        let o = run(&["graph", &dump_of(&sample), "--profile", &profile]);
        assert_eq!(o.status.code(), Some(2), "{profile}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("hlo-lsp: error: "), "{err}");
        assert!(stdout(&o).is_empty());
    }
}
