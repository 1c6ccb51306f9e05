//! Parse speed on a large realistic module: full parse throughput through
//! `SyntaxDocument::parse` (chunks in parallel) and the time of one-character
//! edits in the middle through `SyntaxDocument::edit`.
//!
//! The module is generated from the shipped samples and JAX dumps: their
//! computations are replicated under fresh names (every `name` node gets a suffix)
//! until the text reaches `HLO_BENCH_MB` megabytes (default 50), followed by an
//! ENTRY that calls one fusion per copy.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hlo_lsp::syntax::SyntaxDocument;

mod common;

/// An offset inside an instruction name in an indented line near the middle.
fn middle_edit_point(text: &str) -> usize {
    let from = text.len() / 2;
    let line = text[from..]
        .find("\n  %")
        .or_else(|| text[from..].find("\n  "))
        .expect("an instruction line")
        + from;
    let name = line + 3;
    name + text[name..]
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let mb = std::env::var("HLO_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let text = common::replicated_samples(mb);
    let doc = SyntaxDocument::parse(&text);
    let errors = doc.syntax_errors().len();
    eprintln!(
        "generated module: {:.1} MB, {} chunks, {} lines, {errors} syntax errors",
        text.len() as f64 / 1e6,
        doc.chunks().len(),
        text.lines().count()
    );
    assert_eq!(errors, 0, "the generated module must be valid");

    let mut group = c.benchmark_group("parse");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("full_parse_parallel", |b| {
        b.iter(|| SyntaxDocument::parse(&text))
    });
    group.finish();

    let at = middle_edit_point(&text);
    let mut group = c.benchmark_group("edit");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    let mut doc = doc;
    let mut flip = false;
    group.bench_function("replace_one_char_middle", |b| {
        b.iter(|| {
            flip = !flip;
            doc.edit(at, at + 1, if flip { "q" } else { "z" });
        })
    });
    group.bench_function("insert_then_delete_one_char_middle", |b| {
        b.iter(|| {
            doc.edit(at, at, "q");
            doc.edit(at, at + 1, "");
        })
    });
    group.bench_function("insert_brace_middle_then_delete", |b| {
        b.iter_batched(
            || (),
            |_| {
                doc.edit(at, at, "{");
                doc.edit(at, at + 1, "");
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
    assert!(doc.syntax_errors().is_empty(), "edits were undone");
}

criterion_group!(benches, bench);
criterion_main!(benches);
