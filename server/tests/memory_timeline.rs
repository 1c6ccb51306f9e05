//! The memory timeline (`hlo-lsp memory --svg`, VS Code's memory panel) against the
//! report it draws, on the 44 programs XLA compiled in tests/data/memory, with XLA's
//! numbers and with the estimate, on ENTRY and on each while body: the curve is the
//! bytes live at each step counted step by step, its top is the peak the picture
//! marks, at the report's own peak step it holds the report's peak bytes, so the
//! report's peak is never above it; and a snapshot of the SVG a reader sees.

use std::path::{Path, PathBuf};

use std::collections::HashSet;

use hlo_lsp::memory::{self, timeline, Buffer, Report};
use hlo_lsp::model::stack_frames::StackFrameIndex;
use hlo_lsp::model::{HloFile, Opcode};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/memory")
}

/// Every program's after-optimizations dump.
fn dumps() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| {
            let folder = e.ok()?.path();
            std::fs::read_dir(&folder)
                .ok()?
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().ends_with("after_optimizations.txt"))
        })
        .collect();
    out.sort();
    assert!(out.len() >= 30, "only {} programs", out.len());
    out
}

fn analyze(dump: &Path, estimate: bool) -> (HloFile, Report) {
    let text = std::fs::read_to_string(dump).unwrap();
    let file = hlo_lsp::model::parse_hlo(&text);
    let report = memory::analyze(Some(dump), &file.modules[0], estimate).unwrap();
    (file, report)
}

/// The while bodies of the module, by name.
fn while_bodies(file: &HloFile) -> Vec<String> {
    let module = &file.modules[0];
    module
        .computations()
        .flat_map(|c| c.model().instructions.to_vec())
        .filter(|i| i.opcode == Opcode::While)
        .filter_map(|i| {
            let body = i.called.iter().find(|k| k.attribute == "body")?;
            Some(body.name.trim_start_matches('%').to_string())
        })
        .collect()
}

/// The bytes live at step `t`, counted the slow way: every buffer live then with
/// bytes, one count per place (allocation and offset) it shares with others.
fn live_at(buffers: &[Buffer], t: u64) -> u64 {
    let mut seen = HashSet::new();
    buffers
        .iter()
        .filter(|b| b.bytes > 0 && b.live_at(t))
        .filter(|b| match (b.allocation, b.offset) {
            (Some(a), Some(o)) => seen.insert((a, o, b.bytes)),
            _ => true,
        })
        .map(|b| b.bytes)
        .sum()
}

#[test]
fn the_curve_is_what_is_live_and_its_top_is_the_marked_peak_on_every_program() {
    let frames = StackFrameIndex::default();
    let (mut checked, mut below, mut elsewhere) = (0, Vec::new(), 0);
    for dump in dumps() {
        for estimate in [false, true] {
            let (file, report) = analyze(&dump, estimate);
            let module = &file.modules[0];
            let entry = module.entry_computation().unwrap().model().name.clone();
            let mut peaks = vec![(entry, report.peak.clone())];
            peaks.extend(while_bodies(&file).into_iter().map(|b| {
                let p = report.peak_in(&b);
                (b, p)
            }));
            for (name, reported) in peaks {
                let t = timeline::lay_out(&report, module, &name, &frames, 40)
                    .unwrap_or_else(|| panic!("{}: no timeline of {name}", dump.display()));
                checked += 1;
                let at = |step: u64| t.curve[(step - t.steps.start) as usize];
                for step in t.steps.clone() {
                    assert_eq!(
                        at(step),
                        live_at(&report.buffers, step),
                        "{name} step {step}"
                    );
                }
                let peak = t.peak.as_ref().expect("something is live");
                assert_eq!(t.curve_max(), peak.bytes, "{name}");
                assert_eq!(at(peak.time), peak.bytes, "{name}");
                assert!(
                    t.rows.iter().take_while(|r| r.at_peak).count() > 0,
                    "{name}"
                );
                let Some(reported) = reported else { continue };
                // The report's peak, counted on the curve: XLA's listing adds the same
                // buffers, but a value under several names once per name.
                assert!(at(reported.time) <= reported.bytes, "{name}");
                if reported.time != peak.time {
                    elsewhere += 1;
                }
                if reported.bytes < peak.bytes {
                    below.push(format!(
                        "{} {name} ({}): {} below the top of the curve",
                        dump.file_name().unwrap().to_string_lossy(),
                        report.source.as_str(),
                        100 * (peak.bytes - reported.bytes) / peak.bytes
                    ));
                }
            }
        }
    }
    assert!(checked >= 88, "only {checked} timelines");
    eprintln!(
        "{elsewhere} of {checked} reported peaks at another step; {} below the curve's top \
         (by %):\n{}",
        below.len(),
        below.join("\n")
    );
    assert_eq!(below.len(), REPORTED_BELOW_TOP, "{}", below.join("\n"));
}

/// Timelines (of 112: 44 programs' ENTRY and while bodies, XLA's and estimated) whose
/// report names a peak below the most memory live at one step, measured when the
/// timeline was built: XLA's `HloLiveRange` peak (and the estimate's, found the same
/// way) is up to 98% below it (outer_broadcast: a 384 KiB temporary dies a step
/// before its "peak"). The picture marks the top and names the report's peak.
const REPORTED_BELOW_TOP: usize = 46;

/// The picture of a JAX scan's memory read from XLA's files: its rows, the peak
/// marked and XLA's own peak named where it differs.
#[test]
fn snapshot_svg_of_a_scan() {
    let dump = data().join("scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    let (file, report) = analyze(&dump, false);
    let module = &file.modules[0];
    let t = timeline::lay_out(&report, module, "main.6", &StackFrameIndex::default(), 12).unwrap();
    assert_eq!(t.rows.len(), 12);
    assert!(t.more > 0);
    insta::assert_snapshot!(timeline::svg::to_svg(&t));
}

/// A while body's picture covers its steps only, and keeps its callers' buffers.
#[test]
fn a_while_body_draws_its_own_steps() {
    let dump = data().join("scan_rnn/module_0038.jit_scan_rnn.cpu_after_optimizations.txt");
    let (file, report) = analyze(&dump, false);
    let module = &file.modules[0];
    let span = report
        .spans
        .iter()
        .find(|s| s.computation == "region_0.4")
        .unwrap();
    let t = timeline::lay_out(
        &report,
        module,
        "region_0.4",
        &StackFrameIndex::default(),
        40,
    )
    .unwrap();
    assert_eq!(t.steps, span.times);
    assert_eq!(t.curve.len() as u64, span.times.end - span.times.start);
    assert!(
        t.rows.iter().any(|r| r.instruction == "xs.1"),
        "the caller's parameter"
    );
    assert!(
        timeline::lay_out(&report, module, "no_such", &StackFrameIndex::default(), 40).is_none()
    );
}
