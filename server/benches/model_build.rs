//! Building the whole model of a large generated module: every chunk parsed and its
//! computation built (in parallel), then the module index. The split into chunks is
//! done once, outside the measurement. `HLO_MODEL_BENCH_MB` sets the size (default 50 MB).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::model::Document;
use hlo_lsp::syntax::SyntaxDocument;

mod common;

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("HLO_MODEL_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let text = common::fused_module(mb << 20);
    let started = Instant::now();
    let syntax = SyntaxDocument::parse(&text);
    let split = started.elapsed();
    let document = Document::from_syntax(syntax.clone());
    let diagnostics = document.diagnostics();
    assert!(
        diagnostics.is_empty(),
        "generated module has diagnostics: {:?}",
        diagnostics.first()
    );
    eprintln!(
        "generated {} bytes, {} instructions; splitting took {split:?}",
        text.len(),
        document.file().all_instructions().count()
    );
    let mut group = c.benchmark_group("model");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function(format!("build_all_{mb}mb"), |b| {
        b.iter(|| {
            let document = Document::from_syntax(syntax.clone());
            document.build_all();
            black_box(document.file().modules.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
