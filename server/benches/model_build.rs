//! Building the model of a large generated module (parse done once, outside the
//! measurement), so the cost of `model::build` itself is visible.
//! `HLO_MODEL_BENCH_MB` sets the size (default 50 MB).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::model;
use hlo_lsp::syntax::SyntaxDocument;

mod common;

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("HLO_MODEL_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let text = common::fused_module(mb << 20);
    let started = Instant::now();
    let doc = SyntaxDocument::parse(&text);
    let parsed = started.elapsed();
    let file = model::build(&doc);
    let first = file.diagnostics.first();
    assert!(
        first.is_none(),
        "generated module has diagnostics: {first:?}"
    );
    eprintln!(
        "generated {} bytes, {} instructions; parse took {parsed:?}",
        text.len(),
        file.all_instructions().count()
    );
    let mut group = c.benchmark_group("model");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function(format!("build_{mb}mb"), |b| {
        b.iter(|| black_box(model::build(black_box(&doc))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
