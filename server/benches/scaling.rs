//! Work that once grew faster than its input (issue 19.4), at doubling sizes so a
//! super-linear step shows as a time ratio above 2 between neighbours:
//! * `tiles`: the tiling report of a fusion whose computation is one chain of
//!   3,125 .. 25,000 elementwise instructions (the CLI's text; 12,500 took 10.5 s
//!   and 25,000 took 62 s);
//! * `nested_literal`: parsing and checking a constant whose literal is nested
//!   7,500 .. 30,000 parentheses deep (30,000 took 17 s);
//! * `inlay_hints`: every inlay hint of a fused chain of 12,500 .. 100,000
//!   instructions, composed maps included (a 500,000-instruction fusion peaked at
//!   5.15 GB; hints are now capped per request, see `ide::inlay_hints::MAX_HINTS`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use hlo_lsp::lsp::documents::DocumentStore;
use hlo_lsp::lsp::handlers::inlay_hints;
use hlo_lsp::lsp::position::PositionEncoding;
use hlo_lsp::lsp::settings::Settings;

/// A fusion whose computation is a chain of `length` elementwise instructions
/// (the shape of `tests/data/repro`'s tiling reproducer), Triton-tiled.
fn fused_chain(length: usize) -> String {
    let ops = ["negate", "exponential", "add", "sqrt", "abs"];
    let mut text = String::from("HloModule chain\n\nf {\n  p0 = f32[4,8]{1,0} parameter(0)\n");
    for i in 0..length {
        let previous = if i == 0 {
            "p0".to_string()
        } else {
            format!("x{}", i - 1)
        };
        let op = ops[i % ops.len()];
        let operands = if op == "add" {
            format!("{previous}, p0")
        } else {
            previous
        };
        text += &format!("  x{i} = f32[4,8]{{1,0}} {op}({operands})\n");
    }
    text += &format!(
        "  ROOT r = f32[4,8]{{1,0}} negate(x{})\n}}\n\nENTRY e {{\n  a = f32[4,8]{{1,0}} parameter(0)\n  ROOT fu = f32[4,8]{{1,0}} fusion(a), kind=kCustom, calls=f, backend_config={{\"fusion_backend_config\":{{\"kind\":\"__triton\",\"block_level_fusion_config\":{{\"output_tiles\":[{{\"sizes\":[\"2\",\"8\"]}}]}}}}}}\n}}\n",
        length - 1
    );
    text
}

fn nested_literal(depth: usize) -> String {
    format!(
        "HloModule m\n\nENTRY e {{\n  ROOT c = f32[] constant({}1{})\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

fn tiles(c: &mut Criterion) {
    let mut g = c.benchmark_group("tiles");
    g.sample_size(10);
    for length in [3_125, 6_250, 12_500, 25_000] {
        let path = std::env::temp_dir().join(format!("hlo-lsp-bench-chain-{length}.hlo"));
        std::fs::write(&path, fused_chain(length)).unwrap();
        let args = hlo_lsp::cli::tiles::Args {
            file: path,
            fusion: None,
            sizes: None,
            candidates: 5,
            json: false,
        };
        g.bench_with_input(BenchmarkId::from_parameter(length), &args, |b, args| {
            b.iter(|| hlo_lsp::cli::tiles::report(args).unwrap().0.len())
        });
    }
    g.finish();
}

fn literal(c: &mut Criterion) {
    let mut g = c.benchmark_group("nested_literal");
    g.sample_size(10);
    for depth in [7_500, 15_000, 30_000] {
        let text = nested_literal(depth);
        g.bench_with_input(BenchmarkId::from_parameter(depth), &text, |b, text| {
            b.iter(|| hlo_lsp::model::parse_hlo(text).diagnostics.len())
        });
    }
    g.finish();
}

fn hints(c: &mut Criterion) {
    let mut g = c.benchmark_group("inlay_hints");
    g.sample_size(10);
    for length in [12_500, 25_000, 50_000, 100_000] {
        let text = fused_chain(length);
        let uri: tower_lsp_server::ls_types::Uri = "file:///bench/chain.hlo".parse().unwrap();
        let mut store = DocumentStore::default();
        let document = store.open(uri, 1, &text);
        let settings = Settings::default();
        g.bench_with_input(BenchmarkId::from_parameter(length), &text, |b, text| {
            b.iter(|| {
                // A fresh snapshot: the composed maps are part of the cost.
                let snapshot = document.snapshot_at(1);
                let config = &settings.features;
                inlay_hints(&snapshot, 0..text.len(), config, PositionEncoding::Utf16).len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, tiles, literal, hints);
criterion_main!(benches);
