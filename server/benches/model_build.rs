//! Building the model of a large generated module (parse done once, outside the
//! measurement), so the cost of `model::build` itself is visible.
//! `HLO_MODEL_BENCH_MB` sets the size (default 50 MB).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::model;
use hlo_lsp::syntax::SyntaxDocument;

/// A module of fused computations (elementwise chains, broadcasts, reduces, slices,
/// transposes with layouts and metadata) and an entry that calls each one.
fn generate(target_bytes: usize) -> String {
    let mut text = String::from(
        "HloModule bench, entry_computation_layout={(f32[128,256]{1,0})->f32[128]{0}}\n\n",
    );
    text.push_str("add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n");
    let mut entry = String::from("ENTRY main {\n  p0 = f32[128,256]{1,0} parameter(0)\n");
    let mut k = 0;
    let mut previous = "p0".to_string();
    while text.len() + entry.len() < target_bytes {
        text.push_str(&format!(
            "fused_{k} {{\n  param_0 = f32[128,256]{{1,0}} parameter(0)\n  c = f32[] constant(0.5)\n  b = f32[128,256]{{1,0}} broadcast(c), dimensions={{}}\n"
        ));
        let mut last = "param_0".to_string();
        for i in 0..12 {
            let op = ["add", "multiply", "subtract", "maximum"][i % 4];
            text.push_str(&format!(
                "  e{i} = f32[128,256]{{1,0}} {op}({last}, b), metadata={{op_type=\"{op}\" op_name=\"jit(f)/{op}\" source_file=\"model.py\" source_line={i}}}\n"
            ));
            let n = format!("x{i}");
            text.push_str(&format!("  {n} = f32[128,256]{{1,0}} exponential(e{i})\n"));
            last = n;
        }
        text.push_str(&format!(
            "  t = f32[256,128]{{0,1}} transpose({last}), dimensions={{1,0}}\n  s = f32[128,128]{{0,1}} slice(t), slice={{[0:256:2], [0:128]}}\n  r = f32[128,128]{{1,0}} bitcast(s)\n  z = f32[] constant(0)\n  ROOT red = f32[128]{{0}} reduce(r, z), dimensions={{1}}, to_apply=add_f32\n}}\n\n"
        ));
        let f = format!("fusion.{k}");
        entry.push_str(&format!(
            "  {f} = f32[128]{{0}} fusion({previous}), kind=kLoop, calls=fused_{k}, backend_config={{\"operation_queue_id\":\"0\",\"fusion_backend_config\":{{\"kind\":\"__loop\"}}}}\n  w{k} = f32[128,256]{{1,0}} broadcast({f}), dimensions={{0}}\n"
        ));
        previous = format!("w{k}");
        k += 1;
    }
    text.push_str(&entry);
    text.push_str(&format!(
        "  ROOT out = f32[128,256]{{1,0}} copy({previous})\n}}\n"
    ));
    text
}

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("HLO_MODEL_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let text = generate(mb << 20);
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
