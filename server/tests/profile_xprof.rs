//! `hlo_lsp::profile` against XProf's own numbers: each program of
//! `tests/data/profiles/` (XLA's dump, a `jax.profiler` logdir, and `xprof.json`,
//! what XProf 2.24.2 aggregated from the same trace) is read from its `.xplane.pb` and
//! from its `.trace.json.gz`, and joined to its after-optimizations dump.
//!
//! A record is one instruction XProf measured, read from one of the two files: it
//! passes when the instruction is joined, in the computation XProf names, with
//! `mean_us` within 1% (or 0.5 µs) of `mean_us_per_execution` and `count` equal to
//! `count_per_execution`. Every record must pass; `PASSING` is the floor of how many
//! there are (it may only go up), and every failing record is printed with why.

use std::path::{Path, PathBuf};

use hlo_lsp::dump::naming::DumpName;
use hlo_lsp::model;
use hlo_lsp::profile::{self, Format, ModuleProfile, Profile, ProfileError};
use serde_json::Value;

use crate::profile_samples::{data, dump_of, profile_file, samples};

/// Records that must pass (a floor: raise it when samples are added).
const PASSING: usize = 52;

fn xprof(sample: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample.join("xprof.json")).unwrap()).unwrap()
}

/// The profile read from `file`, joined to the sample's dump.
fn joined(sample: &Path, file: impl AsRef<Path>) -> Result<(Profile, ModuleProfile), ProfileError> {
    let measured = profile::read(file.as_ref())?;
    let dump = dump_of(sample);
    let text = std::fs::read_to_string(&dump).unwrap();
    let parsed = model::parse_hlo(&text);
    let id = DumpName::parse(Path::new(&dump)).map(|n| n.module_id);
    let joined = profile::join(&measured, &parsed.modules[0], id)?;
    Ok((measured, joined))
}

fn record(joined: &ModuleProfile, name: &str, want: &Value) -> Result<(), String> {
    let m = joined
        .instructions
        .iter()
        .find(|m| m.name == name)
        .ok_or("not joined to an instruction of the dump")?;
    let mean = want["mean_us_per_execution"].as_f64().unwrap();
    let count = want["count_per_execution"].as_f64().unwrap();
    let tolerance = (0.01 * mean).max(0.5);
    if (m.mean_us - mean).abs() > tolerance {
        return Err(format!("measured {} µs, XProf {mean} µs", m.mean_us));
    }
    if (m.count - count).abs() > 1e-9 {
        return Err(format!("count {}, XProf {count}", m.count));
    }
    if m.computation_name != want["computation"].as_str().unwrap() {
        return Err(format!(
            "in {}, XProf says {}",
            m.computation_name, want["computation"]
        ));
    }
    Ok(())
}

#[test]
fn every_instruction_xprof_measured_is_joined_with_its_time_and_count() {
    let mut passed = 0;
    let mut failures = Vec::new();
    for sample in samples() {
        let expected = xprof(&sample);
        for suffix in [".xplane.pb", ".trace.json.gz"] {
            let file = profile_file(&sample, suffix);
            let tag = format!("{}{suffix}", sample.file_name().unwrap().to_string_lossy());
            let (_, joined) = match joined(&sample, &file) {
                Ok(j) => j,
                Err(e) => {
                    failures.push(format!("{tag}: {e}"));
                    continue;
                }
            };
            assert_eq!(
                joined.executions,
                expected["executions"].as_u64().unwrap() as u32,
                "{tag}"
            );
            for (name, want) in expected["ops"].as_object().unwrap() {
                match record(&joined, name, want) {
                    Ok(()) => passed += 1,
                    Err(why) => failures.push(format!("{tag} {name}: {why}")),
                }
            }
        }
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    eprintln!("{passed} records pass");
    assert!(failures.is_empty(), "{} records fail", failures.len());
    assert!(
        passed >= PASSING,
        "{passed} records pass, fewer than the floor {PASSING}"
    );
}

#[test]
fn the_protobuf_and_the_trace_give_the_same_numbers() {
    for sample in samples() {
        let (pb, a) = joined(&sample, profile_file(&sample, ".xplane.pb")).unwrap();
        let (json, b) = joined(&sample, profile_file(&sample, ".trace.json.gz")).unwrap();
        assert_eq!(pb.source.format, Format::XPlane);
        assert_eq!(json.source.format, Format::TraceJson { gzip: true });
        let tag = sample.display();
        assert_eq!(a.module, b.module, "{tag}");
        assert_eq!(a.executions, b.executions, "{tag}");
        // The trace prints picoseconds as microseconds to the nanosecond it resolves.
        assert!(
            (a.step_us - b.step_us).abs() < 1e-6,
            "{tag}: {} {}",
            a.step_us,
            b.step_us
        );
        assert_eq!(a.instructions.len(), b.instructions.len(), "{tag}");
        for (x, y) in a.instructions.iter().zip(&b.instructions) {
            assert_eq!(x.name, y.name, "{tag}");
            for (u, v) in [
                (x.mean_us, y.mean_us),
                (x.self_us, y.self_us),
                (x.toplevel_us, y.toplevel_us),
                (x.min_us.unwrap(), y.min_us.unwrap()),
                (x.max_us.unwrap(), y.max_us.unwrap()),
            ] {
                assert!((u - v).abs() < 1e-6, "{tag} {}: {u} {v}", x.name);
            }
            assert_eq!((x.count, x.events), (y.count, y.events), "{tag}");
        }
        assert_eq!(a.unmatched, b.unmatched, "{tag}");
        assert_eq!(a.never_ran.len(), b.never_ran.len(), "{tag}");
    }
}

#[test]
fn the_while_loop_body_time_is_the_body_instructions_and_counted_once_in_the_step() {
    let sample = data().join("fori_cumulative");
    let expected = xprof(&sample);
    for suffix in [".xplane.pb", ".trace.json.gz"] {
        let (_, p) = joined(&sample, profile_file(&sample, suffix)).unwrap();
        let get = |name: &str| p.instructions.iter().find(|m| m.name == name).unwrap();
        let body = "region_0.5.clone.clone.clone";
        let body_ops = [
            "dynamic-slice_add_fusion",
            "wrapped_add",
            "copy.2",
            "copy.5",
        ];
        let mut inside = 0.0;
        for name in body_ops {
            let m = get(name);
            assert_eq!(m.computation_name, body);
            assert_eq!(m.count, 5.0, "{name}: once per trip, 5 trips");
            assert!(
                m.toplevel_us.abs() < 1e-9,
                "{name} is inside the while's event"
            );
            inside += m.mean_us;
        }
        let w = get("while.1");
        assert_eq!(w.computation_name, "main.7");
        assert!((w.self_us - (w.mean_us - inside)).abs() < 1e-6);
        assert!(w.self_us > 0.0 && w.self_us < w.mean_us);
        // The step counts the body once (in the while): XProf's top-level sum.
        let toplevel = expected["sum_toplevel_op_us_per_execution"]
            .as_f64()
            .unwrap();
        assert!(
            (p.step_us - toplevel).abs() < 1e-6,
            "{} {toplevel}",
            p.step_us
        );
        let rows = profile::report::rows(&p, None, None);
        let last = rows.last().unwrap().cumulative_percent;
        assert!(
            (last - 100.0).abs() < 1e-6,
            "cumulative share ends at {last}"
        );
        assert!(rows
            .windows(2)
            .all(|w| w[0].cumulative_percent <= w[1].cumulative_percent));
        // The condition's compare never ran (XLA:CPU knows the trip count).
        assert!(p.never_ran.iter().any(|n| n.name == "wrapped_compare"));
    }
}

#[test]
fn an_instruction_missing_from_the_dump_is_reported_and_never_dropped() {
    let sample = data().join("attention");
    let dump = dump_of(&sample);
    let text = std::fs::read_to_string(&dump)
        .unwrap()
        .replace("%ynn_fusion.1 ", "%renamed_fusion ")
        .replace("%ynn_fusion.1)", "%renamed_fusion)")
        .replace("%ynn_fusion.1,", "%renamed_fusion,");
    let parsed = model::parse_hlo(&text);
    let measured = profile::read(Path::new(&profile_file(&sample, ".xplane.pb"))).unwrap();
    let p = profile::join(&measured, &parsed.modules[0], Some(6)).unwrap();
    assert_eq!(p.unmatched.len(), 1, "{:?}", p.unmatched);
    assert_eq!(p.unmatched[0].name, "ynn_fusion.1");
    assert_eq!(p.unmatched[0].events, 5);
    assert!(p.never_ran.iter().any(|n| n.name == "renamed_fusion"));
    // The step still holds its time.
    let listed: f64 = p.instructions.iter().map(|m| m.mean_us).sum();
    assert!(p.step_us > listed + 20.0);
}

#[test]
fn a_profile_of_another_module_says_what_it_holds() {
    let sample = data().join("attention");
    let other = profile_file(&data().join("fori_cumulative"), ".xplane.pb");
    let e = joined(&sample, &other).unwrap_err().to_string();
    assert_eq!(
        e,
        "no event names an instruction of jit_attention; \
         the profile holds jit_fori_cumulative(6)"
    );
    // The same program under another id is another compilation.
    let dump = dump_of(&sample);
    let text = std::fs::read_to_string(&dump).unwrap();
    let parsed = model::parse_hlo(&text);
    let measured = profile::read(Path::new(&profile_file(&sample, ".xplane.pb"))).unwrap();
    let e = profile::join(&measured, &parsed.modules[0], Some(7))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "no event names an instruction of jit_attention; the profile holds \
         jit_attention(6) (jit_attention(6) is another compilation: the dump is module 7)"
    );
}

/// A folder of this test run.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hlo-lsp-profile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_truncated_gzip_trace_is_one_clear_error() {
    let bytes = std::fs::read(profile_file(
        &data().join("sample_mlp_step"),
        ".trace.json.gz",
    ))
    .unwrap();
    let dir = temp("truncated");
    for cut in [bytes.len() / 2, bytes.len() - 10, 12] {
        let file = dir.join("vm.trace.json.gz");
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let e = profile::read(&file).unwrap_err();
        assert!(matches!(e, ProfileError::Corrupt(_)), "{e:?}");
        let e = e.to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(
            e.starts_with(&format!(
                "{}: not a readable gzipped Chrome trace",
                file.display()
            )),
            "{e}"
        );
        assert!(e.contains("truncated"), "cut at {cut}: {e}");
    }
    // Not gzip at all.
    let file = dir.join("plain.trace.json.gz");
    std::fs::write(&file, b"{\"traceEvents\": []}").unwrap();
    let e = profile::read(&file).unwrap_err().to_string();
    assert!(e.contains("broken gzip data"), "{e}");
}

#[test]
fn a_corrupt_or_truncated_protobuf_is_one_clear_error() {
    let bytes = std::fs::read(profile_file(&data().join("sample_mlp_step"), ".xplane.pb")).unwrap();
    let dir = temp("corrupt");
    let file = dir.join("vm.xplane.pb");
    // Truncated.
    std::fs::write(&file, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let e = profile::read(&file).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}: not a readable XSpace protobuf",
            file.display()
        )),
        "{e}"
    );
    assert!(e.contains("truncated"), "{e}");
    // Bytes that are no protobuf.
    std::fs::write(&file, b"this is not a protobuf at all, just text\n").unwrap();
    let e = profile::read(&file).unwrap_err().to_string();
    assert!(e.contains("not a readable XSpace protobuf"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // Every single-byte corruption is an error or a profile, never a panic or a hang.
    let mut seen_errors = 0;
    for at in (0..bytes.len()).step_by(97) {
        let mut broken = bytes.clone();
        broken[at] ^= 0xa5;
        std::fs::write(&file, &broken).unwrap();
        if profile::read(&file).is_err() {
            seen_errors += 1;
        }
    }
    assert!(seen_errors > 0);
}

#[test]
fn an_empty_logdir_and_a_missing_file_are_one_clear_error() {
    let dir = temp("empty-logdir");
    std::fs::create_dir_all(dir.join("plugins/profile/2026_11_28_07_58_36")).unwrap();
    let e = profile::read(&dir).unwrap_err();
    assert!(matches!(e, ProfileError::NoProfile(_)), "{e:?}");
    assert!(e.to_string().contains("no profile in it"), "{e}");
    let e = profile::read(&dir.join("nothing.xplane.pb"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("cannot read "), "{e}");
}

#[test]
fn a_logdir_is_read_at_its_newest_run() {
    let sample = data().join("fori_cumulative");
    let dir = temp("logdir");
    for (run, from) in [
        ("2026_01_01_00_00_00", data().join("attention")),
        ("2026_02_01_00_00_00", sample.clone()),
    ] {
        let folder = dir.join("logs/plugins/profile").join(run);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(
            profile_file(&from, ".xplane.pb"),
            folder.join("vm.xplane.pb"),
        )
        .unwrap();
    }
    let measured = profile::read(&dir).unwrap();
    assert_eq!(measured.source.run.as_deref(), Some("2026_02_01_00_00_00"));
    assert_eq!(
        measured.source.note.as_deref(),
        Some("the newest of 2 runs")
    );
    assert_eq!(measured.modules[0].name, "jit_fori_cumulative");
}

#[test]
fn reading_tells_progress_and_stops_when_asked() {
    let file = profile_file(&data().join("sample_mlp_step"), ".xplane.pb");
    let mut calls = 0;
    let e = profile::read_with_progress(Path::new(&file), &mut |p| {
        calls += 1;
        assert!(p.done <= p.total);
        false
    })
    .unwrap_err();
    assert!(matches!(e, ProfileError::Cancelled), "{e:?}");
    assert_eq!(calls, 1);
}
