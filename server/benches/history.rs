//! Which pass made each instruction (`dump::history`): building the history of a
//! pass-by-pass dump directory, and the editor's lenses on a snapshot once it is
//! built (one lookup per instruction).
//!
//! The directory is `HLO_LSP_PASS_DUMP` when set (make one of 300 snapshots of a
//! 2 MB module with `scripts/make-pass-dump-bench.py`), else the transformer block of
//! `tests/data/pass_dumps`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

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
    group.finish();
}

criterion_group!(benches, history);
criterion_main!(benches);
