//! What one edit costs the library, on the transformer dump (1.9 MB) and on 32 renamed
//! copies of it in one module (60 MB): a one-character change inside a fused
//! computation, then the new version's diagnostics, each step timed on its own
//! (`Document::edited`, `Checked::after`, `Checked::diagnostics`), and the server's
//! `publishDiagnostics` notification of the new version, rendered from the renderings
//! kept for the previous one (`Renderings::notification`). Issue 13 asks that an edit
//! cost what it touches, not what the file holds, so the two sizes should cost about
//! the same (`benches/lsp.rs` measures the whole round trip).
//!
//! `HLO_BENCH_COPIES` sets the large module's copies (default 32).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::sync::Arc;

use hlo_lsp::checks::incremental::Checked;
use hlo_lsp::lsp::position::PositionEncoding;
use hlo_lsp::lsp::rendered::{Renderings, Style};
use hlo_lsp::lsp::snapshot::Snapshot;
use hlo_lsp::model::Document;

mod common;

/// Byte offset of a character inside an `op_name` string of a fused instruction in
/// the middle of `text`: changing it keeps the module valid.
fn edit_offset(text: &str) -> usize {
    let middle = text.len() / 2;
    let line_start = text[..middle].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let found = rest
        .match_indices("op_name=\"")
        .next()
        .expect("an instruction with op_name metadata");
    line_start + found.0 + "op_name=\"".len() + 1
}

/// A version of `text` edited once at the offset to edit, with every diagnostic
/// computed; the offset; and the text that edits it back. The benches edit that
/// version: an edit in a session follows others (the first one after an open also
/// sorts out, once, which computations have nothing to show).
fn prepared(text: &str) -> (Document, Checked, usize, String) {
    let opened = Document::parse(text);
    let checked = Checked::new(&opened);
    black_box(checked.diagnostics(&opened, &[]));
    let at = edit_offset(text);
    let before = text[at..at + 1].to_string();
    let once = if before == "x" { "y" } else { "x" };
    let (document, change) = opened.edited(at, at + 1, once);
    let checked = checked.after(&document, &change);
    black_box(checked.diagnostics(&document, &[]));
    (document, checked, at, before)
}

fn bench(c: &mut Criterion) {
    let copies = common::env_number("HLO_BENCH_COPIES", 32);
    let mut group = c.benchmark_group("edit");
    group.sample_size(20);
    for (name, text) in [
        ("small", common::transformer_module(1)),
        ("large", common::transformer_module(copies)),
    ] {
        let (document, checked, at, replacement) = prepared(&text);
        let replacement = replacement.as_str();
        group.bench_function(format!("{name}/edited"), |b| {
            b.iter(|| document.edited(at, at + 1, replacement))
        });
        group.bench_function(format!("{name}/after"), |b| {
            b.iter_batched(
                || document.edited(at, at + 1, replacement),
                |(next, change)| checked.after(&next, &change),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("{name}/diagnostics"), |b| {
            b.iter_batched(
                || {
                    let (next, change) = document.edited(at, at + 1, replacement);
                    let after = checked.after(&next, &change);
                    (next, after)
                },
                |(next, after)| after.diagnostics(&next, &[]),
                BatchSize::LargeInput,
            )
        });
        let style = Style {
            encoding: PositionEncoding::Utf16,
            raise_uncoalesced: false,
        };
        let snapshot = |document: Arc<Document>, checked: Checked| {
            let uri = "file:///bench.hlo".parse().expect("a URI");
            let ide = hlo_lsp::ide::Snapshot::new(
                document,
                Arc::new(checked),
                hlo_lsp::language::Language::Hlo,
                "bench.hlo",
                None,
            )
            // As the server makes them: the memory estimate is computed after the
            // diagnostics are out, never for them.
            .with_module_answers(hlo_lsp::ide::ModuleAnswers::Background);
            Snapshot::new(uri, 1, 1, ide)
        };
        let renderings = Renderings::default();
        let document = Arc::new(document);
        let first = snapshot(document.clone(), checked.clone());
        black_box(renderings.notification(&first, style));
        group.bench_function(format!("{name}/notification"), |b| {
            b.iter_batched(
                || {
                    let (next, change) = document.edited(at, at + 1, replacement);
                    let after = checked.after(&next, &change);
                    let next = snapshot(Arc::new(next), after);
                    if let hlo_lsp::ide::Snapshot::Hlo(hlo) = &next.ide {
                        black_box(hlo.check_parts());
                    }
                    next
                },
                |next| renderings.notification(&next, style),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
