//! The cost of the coalescing analysis (issue 12), on the benchmark module: a real
//! JAX dump (8-layer transformer training step, 4,800+ fusions; 32 renamed copies
//! of it are the 53 MB scale module, whose fusions are the same ones).
//!
//! * `every fusion`: the report of each fusion of one copy, one after the other
//!   (the emitter family: launch model, composed maps, warp rule); the time per
//!   fusion is this divided by the count printed first, with the distribution
//!   (p50 / p99 / max of single fusions).
//! * `hover on a fusion` / `hover on a parameter`: what the hover adds on the
//!   most expensive fusion of the module (the server's cached fused maps given,
//!   as in the server).
//! * `uncoalesced-read diagnostics`: the `checks::SOURCES` entry over every
//!   computation of one copy.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::analysis::{fusion, view};
use hlo_lsp::coalescing::site::Site;
use hlo_lsp::coalescing::{self, Options, Subject};
use hlo_lsp::model::{self, ModuleId};

mod common;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn bench(c: &mut Criterion) {
    let text = common::transformer_module(1);
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let v = view::borrowed(module);
    let fusions: Vec<_> = module
        .computations()
        .flat_map(|comp| {
            comp.model()
                .instructions
                .iter()
                .filter(|i| i.opcode.name() == "fusion")
                .map(move |i| (comp, i))
                .collect::<Vec<_>>()
        })
        .collect();
    // Distribution of single fusions (first run: the view's computations are
    // built on first use, as in the server; the second run is what is measured).
    let options = Options::default();
    let run = |i: &model::Instruction, comp| {
        let subject = Subject::new(module, &v, comp, i).unwrap();
        coalescing::analyze(&subject, &options, None)
    };
    for &(comp, i) in &fusions {
        run(i, comp);
    }
    let mut times: Vec<(Duration, &str)> = fusions
        .iter()
        .map(|&(comp, i)| {
            let t = Instant::now();
            std::hint::black_box(run(i, comp));
            (t.elapsed(), &*i.name)
        })
        .collect();
    times.sort();
    let sorted: Vec<Duration> = times.iter().map(|t| t.0).collect();
    let total: Duration = sorted.iter().sum();
    let worst = times.last().unwrap().1.to_string();
    eprintln!(
        "coalescing: {} fusions, {:?} in all, per fusion mean {:?} p50 {:?} p99 {:?} max {:?} ({worst})",
        fusions.len(),
        total,
        total / fusions.len() as u32,
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        sorted.last().unwrap(),
    );

    let mut g = c.benchmark_group("coalescing");
    g.sample_size(10);
    g.bench_function("every fusion of the transformer", |b| {
        b.iter(|| {
            for &(comp, i) in &fusions {
                std::hint::black_box(run(i, comp));
            }
        })
    });
    let (comp, worst_fusion) = *fusions.iter().find(|(_, i)| *i.name == *worst).unwrap();
    let fused = module
        .called_computation(worst_fusion, "calls")
        .unwrap()
        .id
        .index();
    let cached = fusion::grouped_from_every_output(&v, fused);
    let site = Site::at(module, comp.id, worst_fusion).unwrap();
    g.bench_function("hover on a fusion (the slowest one)", |b| {
        b.iter(|| std::hint::black_box(site.report(module, &v, &options, Some(&cached))))
    });
    let fused_ref = module.computation(model::ComputationId(fused as u32));
    let parameter = fused_ref.model().parameter(0).unwrap();
    let param_site = Site::at(module, fused_ref.id, parameter).unwrap();
    g.bench_function("hover on its parameter 0", |b| {
        b.iter(|| std::hint::black_box(param_site.report(module, &v, &options, Some(&cached))))
    });
    g.bench_function("uncoalesced-read diagnostics of every computation", |b| {
        b.iter(|| {
            for comp in module.computations() {
                std::hint::black_box(coalescing::diagnostics::computation_diagnostics(
                    &file,
                    ModuleId(0),
                    comp,
                ));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
