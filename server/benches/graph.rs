//! The dataflow graph on the scale module (32 renamed copies of the transformer
//! dump, ~60 MB, `common::transformer_module`): the radius-3 graph around the
//! instruction in the middle of the text, once the module is open (model built, its
//! analysis view kept, as the server keeps it), with coalescing verdicts on a6000;
//! and the SVG of it; the same around the entry computation's middle instruction
//! (the cap reached, every kernel timed). Issue 34's target: under 200 ms.
//! Issue 47's: that, with every edge's maps composed (not "not computed"): the
//! bench prints how many edges carry maps, and what the graph costs with time for
//! every map (wall and CPU). `HLO_BENCH_PROFILE_COMPLETE=N` builds that complete
//! graph N more times first, for a profiler.

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::analysis::view;
use hlo_lsp::device::Device;
use hlo_lsp::graph::{self, Options, Scope};
use hlo_lsp::model;

mod common;

fn bench(c: &mut Criterion) {
    let copies = common::env_number("HLO_BENCH_COPIES", 32);
    let text = common::transformer_module(copies);
    let file = model::parse_hlo(&text);
    // The middle byte may fall between computations: the first instruction from there.
    let at = (text.len() / 2..text.len())
        .step_by(64)
        .find_map(|offset| file.instruction_at(offset))
        .expect("an instruction in the second half");
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
    // The middle of the text is often inside a small fused computation; the entry's
    // middle instruction is where the graph is big (the cap) and every kernel is timed.
    let entry = module.entry.expect("an entry computation");
    let middle = module.computation(entry).model().instructions.len() / 2;
    let scope = Scope::Around {
        computation: entry,
        instruction: hlo_lsp::model::InstrId(middle as u32),
        radius: 3,
    };
    let g = graph::build(module, &v, &scope, &options);
    let stopped = g
        .edges
        .iter()
        .filter(|e| e.map.starts_with("unknown: not computed"))
        .count();
    eprintln!(
        "entry: around {}, {} nodes ({} timed), {} edges ({} with maps, {} not computed){}",
        module
            .computation(entry)
            .instruction(hlo_lsp::model::InstrId(middle as u32))
            .name,
        g.nodes.len(),
        g.nodes.iter().filter(|n| n.time.is_some()).count(),
        g.edges.len(),
        g.edges.len() - stopped,
        stopped,
        if g.partial { ", partial" } else { "" }
    );
    // What the complete graph costs: the same with time for every map.
    let unhurried = Options {
        maps_budget: std::time::Duration::from_secs(600),
        ..options.clone()
    };
    for _ in 0..common::env_number("HLO_BENCH_PROFILE_COMPLETE", 0) {
        graph::build(module, &v, &scope, &unhurried);
    }
    let started = std::time::Instant::now();
    let cpu = cpu_ms();
    let complete = graph::build(module, &v, &scope, &unhurried);
    eprintln!(
        "entry, every map composed: {:.0} ms ({} ms of CPU), {} edges ({} not computed)",
        started.elapsed().as_secs_f64() * 1e3,
        cpu_ms() - cpu,
        complete.edges.len(),
        complete
            .edges
            .iter()
            .filter(|e| e.map.starts_with("unknown: not computed"))
            .count()
    );
    group.bench_function("radius 3 around the entry's middle instruction", |b| {
        b.iter(|| graph::build(module, &v, &scope, &options))
    });
    group.bench_function("svg of that", |b| b.iter(|| graph::svg::to_svg(&g)));
    // Within the budget, once the view has met the module (its calls compared).
    let started = std::time::Instant::now();
    let again = graph::build(module, &v, &scope, &options);
    eprintln!(
        "entry again, within the budget: {:.0} ms, {} of {} edges not computed{}",
        started.elapsed().as_secs_f64() * 1e3,
        again
            .edges
            .iter()
            .filter(|e| e.map.starts_with("unknown: not computed"))
            .count(),
        again.edges.len(),
        if again.partial { ", partial" } else { "" }
    );
    // What the GPU adds (coalescing verdicts and kernel times): the same, drawn for none.
    let cpu = Options::default();
    group.bench_function("the same without a GPU", |b| {
        b.iter(|| graph::build(module, &v, &scope, &cpu))
    });
    group.finish();
}

/// The CPU time (user and system) this process has used so far, in milliseconds
/// (Linux; 0 elsewhere): with four builds sharing two cores, wall time says little.
fn cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the
    // 12th and 13th of them, in clock ticks (100 a second).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    ticks * 10
}

criterion_group!(benches, bench);
criterion_main!(benches);
