//! Which pass made each instruction (`dump::history`): building the history of a
//! pass-by-pass dump directory, and the editor's lenses on a snapshot once it is
//! built (one lookup per instruction); then what clicking a lens costs: the passes of
//! the instruction with the longest story, with its line in the snapshots around each
//! (two files scanned per pass), and one pass's diff of its computation (two parses).
//!
//! The directory is `HLO_LSP_PASS_DUMP` when set (make one of 300 snapshots of a
//! 2 MB module with `scripts/make-pass-dump-bench.py`), else the transformer block of
//! `tests/data/pass_dumps`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use hlo_lsp::dump::diff::compare_computation;
use hlo_lsp::dump::history::passes::passes;
use hlo_lsp::dump::history::{modules, ModuleHistory};
use hlo_lsp::ide::history::{lenses, PassHistory};
use hlo_lsp::ide::HloSnapshot;
use hlo_lsp::model::Document;

fn directory() -> PathBuf {
    std::env::var_os("HLO_LSP_PASS_DUMP")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/data/pass_dumps/transformer_block")
        })
}

fn history(c: &mut Criterion) {
    let dir = directory();
    let files = modules(&dir)
        .expect("a dump directory")
        .into_iter()
        .max_by_key(|m| m.snapshots.len())
        .expect("a module");
    let bytes: u64 = files
        .snapshots
        .iter()
        .map(|s| std::fs::metadata(&s.file).map_or(0, |m| m.len()))
        .sum();
    eprintln!(
        "{}: {} snapshots, {} MB",
        dir.display(),
        files.snapshots.len(),
        bytes >> 20
    );
    let mut group = c.benchmark_group("history");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("build", |b| {
        b.iter(|| ModuleHistory::build(&files, &|_, _| {}))
    });
    let built = ModuleHistory::build(&files, &|_, _| {});
    let last = built.snapshots.len() - 1;
    let text = std::fs::read_to_string(&built.snapshots[last].file).unwrap();
    let document = Arc::new(Document::parse(&text));
    let checked = Arc::new(hlo_lsp::checks::incremental::Checked::new(&document));
    let snapshot = HloSnapshot::new(document, checked);
    let at = PassHistory {
        module: &built,
        snapshot: last,
    };
    eprintln!(
        "{} lenses on the last snapshot",
        lenses(&snapshot, at).len()
    );
    group.bench_function("lenses_of_the_last_snapshot", |b| {
        b.iter(|| lenses(&snapshot, at))
    });
    let longest = built
        .instructions
        .iter()
        .filter(|i| i.removed.is_none())
        .max_by_key(|i| i.changed.len())
        .expect("an instruction");
    let steps = passes(&built, longest);
    eprintln!("%{}: {} passes", longest.name, steps.len());
    group.bench_function("passes_of_the_longest_story", |b| {
        b.iter(|| passes(&built, longest))
    });
    let step = steps.last().expect("a pass");
    let before = step.before.as_ref().expect("a snapshot before");
    eprintln!(
        "its last pass: {} ({} → {}) in %{}",
        step.label,
        before.file.display(),
        step.after.file.display(),
        longest.computation
    );
    group.bench_function("pass_diff_of_its_computation", |b| {
        b.iter(|| {
            let read = |f: &std::path::Path| {
                hlo_lsp::model::parse_hlo(&std::fs::read_to_string(f).unwrap())
            };
            compare_computation(
                &read(&before.file),
                &read(&step.after.file),
                &longest.computation,
            )
        })
    });
    group.finish();
}

criterion_group!(benches, history);
criterion_main!(benches);
