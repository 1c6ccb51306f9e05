//! The dataflow graph on the scale module (32 renamed copies of the transformer
//! dump, ~60 MB, `common::transformer_module`): the radius-3 graph around the
//! instruction in the middle of the text, once the module is open (model built, its
//! analysis view kept, as the server keeps it), with coalescing verdicts on a6000;
//! and the SVG of it. Issue 34's target: under 200 ms.

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::analysis::view;
use hlo_lsp::device::Device;
use hlo_lsp::graph::{self, Options, Scope};
use hlo_lsp::model;

mod common;

fn bench(c: &mut Criterion) {
    let copies = std::env::var("HLO_BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let text = common::transformer_module(copies);
    let file = model::parse_hlo(&text);
    let at = file
        .instruction_at(text.len() / 2)
        .expect("an instruction in the middle");
    let module = file.module(at.module);
    let v = view::borrowed(module);
    let scope = Scope::Around {
        computation: at.computation,
        instruction: at.instruction,
        radius: 3,
    };
    let options = Options {
        device: Some(Device::a6000()),
        ..Options::default()
    };
    eprintln!(
        "{:.1} MB; around {}",
        text.len() as f64 / 1e6,
        file.instruction(at).name
    );
    let mut group = c.benchmark_group("graph");
    group.sample_size(20);
    group.bench_function("radius 3 around the middle instruction", |b| {
        b.iter(|| graph::build(module, &v, &scope, &options))
    });
    let g = graph::build(module, &v, &scope, &options);
    eprintln!("{} nodes, {} edges", g.nodes.len(), g.edges.len());
    group.bench_function("svg of it", |b| b.iter(|| graph::svg::to_svg(&g)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
