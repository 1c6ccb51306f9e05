//! The memory timeline (`memory::timeline`): laying out and drawing the timeline of
//! ENTRY once the memory answer is known (the server keeps it per document version),
//! on the largest program of tests/data/memory with XLA's files (a transformer
//! training step), and on a made-up answer of 50,000 steps and 100,000 buffers: the
//! size the panel is capped for ("… N more" rows, one curve column per pixel).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::memory::{self, timeline, Buffer, Report, Source, Totals};
use hlo_lsp::model::{self, stack_frames::StackFrameIndex};

const STEPS: u64 = 50_000;

/// A scheduled chain of `STEPS` adds, each buffer live until its user, every 100th
/// kept for 5,000 steps more.
fn long_module() -> String {
    let mut text = String::from(
        "HloModule long, is_scheduled=true\n\nENTRY %main (p: f32[1024]) -> f32[1024] {\n  %p = f32[1024]{0} parameter(0)\n",
    );
    let mut prev = "p".to_string();
    for i in 0..STEPS {
        text.push_str(&format!("  %a{i} = f32[1024]{{0}} add(%{prev}, %{prev})\n"));
        prev = format!("a{i}");
    }
    text.push_str(&format!("  ROOT %r = f32[1024]{{0}} negate(%{prev})\n}}\n"));
    text
}

fn long_report() -> Report {
    let mut buffers = Vec::new();
    for i in 0..STEPS {
        let end = if i % 100 == 0 { i + 5_000 } else { i + 1 };
        for (index, bytes) in [("{}", 4096), ("{}", 64)] {
            buffers.push(Buffer {
                instruction: format!("a{i}").into(),
                shape_index: index.into(),
                bytes: bytes + i % 7,
                start: i,
                end: end.min(STEPS - 1),
                allocation: None,
                offset: None,
            });
        }
    }
    let peak = memory::report::peak_of(&buffers, None);
    Report {
        source: Source::Estimate,
        totals: Totals::default(),
        allocations: Vec::new(),
        schedule: (0..STEPS).map(|i| format!("a{i}").into()).collect(),
        spans: Vec::new(),
        buffers,
        heap: None,
        xla_live_range_peak: peak.clone(),
        peak,
        notes: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("memory timeline");
    group.sample_size(20);
    let frames = StackFrameIndex::default();

    let dump = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/data/memory/transformer_train_step/module_0030.jit_transformer_train_step.cpu_after_optimizations.txt",
    );
    let text = std::fs::read_to_string(&dump).unwrap();
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let report = memory::analyze(Some(&dump), module, false).unwrap();
    let entry = module.entry_computation().unwrap().model().name.clone();
    eprintln!(
        "transformer_train_step: {} steps, {} buffers",
        report.schedule.len(),
        report.buffers.len()
    );
    group.bench_function("transformer_train_step: lay out", |b| {
        b.iter(|| timeline::lay_out(&report, module, &entry, &frames, timeline::DEFAULT_ROWS))
    });
    let t = timeline::lay_out(&report, module, &entry, &frames, timeline::DEFAULT_ROWS).unwrap();
    group.bench_function("transformer_train_step: svg", |b| {
        b.iter(|| timeline::svg::to_svg(&t))
    });

    let text = long_module();
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let report = long_report();
    group.bench_function("50,000 steps, 100,000 buffers: lay out", |b| {
        b.iter(|| timeline::lay_out(&report, module, "main", &frames, timeline::DEFAULT_ROWS))
    });
    let t = timeline::lay_out(&report, module, "main", &frames, timeline::DEFAULT_ROWS).unwrap();
    let svg = timeline::svg::to_svg(&t);
    eprintln!(
        "50,000 steps: {} rows, {} more, svg {} KB",
        t.rows.len(),
        t.more,
        svg.len() / 1000
    );
    group.bench_function("50,000 steps, 100,000 buffers: svg", |b| {
        b.iter(|| timeline::svg::to_svg(&t))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
