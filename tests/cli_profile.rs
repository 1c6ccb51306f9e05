//! `hlo-lsp profile` through the binary on the programs of `tests/data/profiles/`:
//! the JSON's keys and XProf's numbers for every instruction, from the logdir, the
//! `.xplane.pb` and the `.trace.json.gz`; the dump folder in place of the dump;
//! `--top`, `--computation`, `--device` (estimate and ratio); the text; bad input
//! (one line, exit 2); and the time it takes.

use crate::cli_support;

use std::collections::BTreeSet;
use std::path::Path;

use cli_support::{check_readme_examples, run, stderr, stdout, temp_file};
use serde_json::Value;

use crate::profile_samples::{data, dump_of, profile_file, samples};

fn json(args: &[&str]) -> Value {
    let o = run(&[&["profile", "--json"], args].concat());
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(|k| k.as_str()).collect()
}

fn xprof(sample: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample.join("xprof.json")).unwrap()).unwrap()
}

#[test]
fn json_has_xprofs_numbers_for_every_instruction_from_each_input() {
    for sample in samples() {
        let dump = dump_of(&sample);
        let expected = xprof(&sample);
        let logdir = sample.join("profile").display().to_string();
        for profile in [
            logdir,
            profile_file(&sample, ".xplane.pb"),
            profile_file(&sample, ".trace.json.gz"),
        ] {
            let got = json(&[&dump, &profile]);
            let tag = &profile;
            for key in [
                "module",
                "executions",
                "step_us",
                "instructions",
                "unmatched",
            ] {
                assert!(keys(&got).contains(key), "{tag}: no {key}");
            }
            assert_eq!(got["module"], expected["module"], "{tag}");
            assert_eq!(got["executions"], expected["executions"], "{tag}");
            assert_eq!(got["unmatched"], serde_json::json!([]), "{tag}");
            let rows = got["instructions"].as_array().unwrap();
            assert_eq!(
                rows.len(),
                expected["ops"].as_object().unwrap().len(),
                "{tag}"
            );
            for row in rows {
                for key in [
                    "name",
                    "computation",
                    "measured_us",
                    "count",
                    "percent",
                    "estimate_us",
                    "ratio",
                ] {
                    assert!(keys(row).contains(key), "{tag}: no {key}");
                }
                let want = &expected["ops"][row["name"].as_str().unwrap()];
                let mean = want["mean_us_per_execution"].as_f64().unwrap();
                let measured = row["measured_us"].as_f64().unwrap();
                assert!(
                    (measured - mean).abs() <= (0.01 * mean).max(0.5),
                    "{tag}: {row}"
                );
                assert_eq!(row["count"], want["count_per_execution"], "{tag}");
                assert_eq!(row["computation"], want["computation"], "{tag}");
                assert!(row["estimate_us"].is_null() && row["ratio"].is_null());
                let percent = 100.0 * measured / got["step_us"].as_f64().unwrap();
                assert!((row["percent"].as_f64().unwrap() - percent).abs() < 1e-9);
            }
            let step = expected["sum_toplevel_op_us_per_execution"]
                .as_f64()
                .unwrap();
            assert!(
                (got["step_us"].as_f64().unwrap() - step).abs() < 1e-6,
                "{tag}"
            );
        }
    }
}

#[test]
fn the_dump_folder_stands_for_the_module_the_profile_measured() {
    let sample = data().join("sample_mlp_step");
    let profile = sample.join("profile").display().to_string();
    let by_file = json(&[&dump_of(&sample), &profile]);
    let o = run(&["profile", "--json", sample.to_str().unwrap(), &profile]);
    assert!(o.status.success(), "{}", stderr(&o));
    let by_folder: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(by_file["instructions"], by_folder["instructions"]);
    assert!(stderr(&o).contains("module_0000.jit_sample_mlp_step.cpu_after_optimizations.txt"));
}

#[test]
fn top_and_computation_choose_rows_and_keep_the_step_whole() {
    let sample = data().join("fori_cumulative");
    let (dump, profile) = (
        dump_of(&sample),
        sample.join("profile").display().to_string(),
    );
    let all = json(&[&dump, &profile]);
    let top = json(&[&dump, &profile, "--top", "2"]);
    assert_eq!(top["instructions"].as_array().unwrap().len(), 2);
    assert_eq!(top["instructions"][0]["name"], "while.1");
    let body = json(&[
        &dump,
        &profile,
        "--computation",
        "region_0.5.clone.clone.clone",
    ]);
    let rows = body["instructions"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows
        .iter()
        .all(|r| r["computation"] == "region_0.5.clone.clone.clone"));
    assert_eq!(body["step_us"], all["step_us"]);
    let o = run(&["profile", &dump, &profile, "--computation", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no computation named nowhere"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn device_adds_the_estimate_and_the_ratio() {
    let sample = data().join("sample_mlp_step");
    let got = json(&[
        &dump_of(&sample),
        &sample.join("profile").display().to_string(),
        "--device",
        "a6000",
    ]);
    assert_eq!(got["as_if_compiled_for"], "a6000");
    let rows = got["instructions"].as_array().unwrap();
    let estimated: Vec<&Value> = rows
        .iter()
        .filter(|r| r["estimate_us"].is_number())
        .collect();
    // Every measured kernel has an estimate but XLA:CPU's own (`__ynn_fusion`), which
    // no GPU model covers.
    for r in rows.iter().filter(|r| !r["estimate_us"].is_number()) {
        assert!(r["name"].as_str().unwrap().starts_with("ynn_fusion"), "{r}");
    }
    assert!(estimated.len() >= 9, "{}", estimated.len());
    for r in estimated {
        let ratio = r["measured_us"].as_f64().unwrap() / r["estimate_us"].as_f64().unwrap();
        assert!((r["ratio"].as_f64().unwrap() - ratio).abs() < 1e-9, "{r}");
    }
}

#[test]
fn the_text_ranks_by_measured_time_with_shares_and_counts() {
    let sample = data().join("fori_cumulative");
    let o = run(&[
        "profile",
        &dump_of(&sample),
        &sample.join("profile").display().to_string(),
        "--device",
        "a6000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("jit_fori_cumulative (program 6): 5 executions, step 7.67 µs"),
        "{text}"
    );
    assert!(
        text.contains("run 2026_11_28_07_58_37 (host threads)"),
        "{text}"
    );
    assert!(text.contains("as if compiled for a6000"), "{text}");
    let header = lines.iter().position(|l| l.contains("measured")).unwrap();
    assert!(lines[header].contains("estimate") && lines[header].contains("ratio"));
    let first = lines[header + 1];
    assert!(
        first.contains("6.57 µs") && first.contains("86%"),
        "{first}"
    );
    assert!(
        first.contains("while.1 (main.7), 1.49 µs its own"),
        "{first}"
    );
    assert!(text.contains("never ran (no event): wrapped_compare (region_1.6.clone.clone)"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let attention = data().join("attention");
    let dump = dump_of(&attention);
    let gz = std::fs::read(profile_file(&attention, ".trace.json.gz")).unwrap();
    let pb = std::fs::read(profile_file(&attention, ".xplane.pb")).unwrap();
    let truncated = temp_file("cli-profile", "cut.trace.json.gz", &gz[..gz.len() / 2]);
    let mut broken = pb.clone();
    broken.truncate(pb.len() / 3);
    let corrupt = temp_file("cli-profile", "cut.xplane.pb", &broken);
    let empty = truncated.parent().unwrap().join("empty-logdir");
    std::fs::create_dir_all(empty.join("plugins/profile/2026_01_01_00_00_00")).unwrap();
    let other = data().join("fori_cumulative").join("profile");
    let cases: [(&Path, &str); 4] = [
        (&truncated, "the gzip stream ends early (truncated?)"),
        (&corrupt, "not a readable XSpace protobuf"),
        (&empty, "no profile in it"),
        (
            &other,
            "no event names an instruction of jit_attention; the profile holds jit_fori_cumulative(6)",
        ),
    ];
    for (profile, says) in cases {
        let o = run(&["profile", &dump, profile.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", profile.display());
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("hlo-lsp: error: "), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn the_largest_sample_takes_well_under_a_second() {
    let largest = samples()
        .into_iter()
        .max_by_key(|s| {
            std::fs::metadata(profile_file(s, ".trace.json.gz"))
                .unwrap()
                .len()
        })
        .unwrap();
    let (dump, profile) = (
        dump_of(&largest),
        largest.join("profile").display().to_string(),
    );
    let start = std::time::Instant::now();
    let o = run(&["profile", &dump, &profile]);
    let took = start.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(took.as_secs_f64() < 1.0, "{}: {took:?}", largest.display());
}

#[test]
fn the_readme_example_is_what_the_binary_prints() {
    check_readme_examples("profile");
}
