//! The dataflow graph on the scale module (32 renamed copies of the transformer
//! dump, ~60 MB, `common::transformer_module`): the radius-3 graph around the
//! instruction in the middle of the text, once the module is open (model built, its
//! analysis view kept, as the server keeps it), with coalescing verdicts on a6000;
//! and the SVG of it; the same around the entry computation's middle instruction
//! (the cap reached, every kernel timed). Issue 34's target: under 200 ms.
//! Issue 47's: that, with every edge's maps composed (not "not computed"), on the
//! first request (a view that has not met the 32 calls of ENTRY): the bench
//! prints how many edges carry maps within the budget, and what the graph costs
//! with time for every map (wall and CPU), on a fresh view and again.
//! `HLO_BENCH_PROFILE_COMPLETE=N` builds that complete graph N more times first,
//! for a profiler. It runs on the server's allocator (mimalloc);
//! `HLO_BENCH_SYSTEM_ALLOCATOR=1` for glibc's.

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::analysis::view;
use hlo_lsp::device::Device;
use hlo_lsp::graph::{self, Graph, Options, Scope};
use hlo_lsp::model;

mod common;

/// The server's allocator (`main.rs`), with its setting: what a graph request
/// costs depends on it (glibc's malloc grew its heaps with `mprotect` for a
/// fifth of the maps' time). `HLO_BENCH_SYSTEM_ALLOCATOR=1`: glibc's, for
/// comparison with earlier numbers.
struct ServerAllocator;

unsafe impl std::alloc::GlobalAlloc for ServerAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { allocator().alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from the same allocator (chosen once, before any allocation).
        unsafe { allocator().dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`.
        unsafe { allocator().realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: ServerAllocator = ServerAllocator;

/// The allocator chosen at the first allocation, from the environment (read
/// without allocating), for the whole run.
fn allocator() -> &'static dyn std::alloc::GlobalAlloc {
    static SYSTEM: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let system = *SYSTEM.get_or_init(|| {
        // SAFETY: reads a variable set before the process started; no allocation.
        let set = unsafe { libc::getenv(c"HLO_BENCH_SYSTEM_ALLOCATOR".as_ptr()) };
        if set.is_null() {
            // mimalloc's `mi_option_purge_delay` set to 0, as the server sets it (main.rs).
            // SAFETY: sets a plain integer option before any allocation.
            unsafe { libmimalloc_sys::mi_option_set(15, 0) };
        }
        !set.is_null()
    });
    match system {
        true => &std::alloc::System,
        false => &mimalloc::MiMalloc,
    }
}

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
    let name = module
        .computation(entry)
        .instruction(hlo_lsp::model::InstrId(middle as u32))
        .name
        .to_string();
    // The first request, as the server meets it: a view that has met only the graph
    // above (no call of ENTRY compared, none of the 32 steps viewed), within the budget.
    let fresh = view::borrowed(module);
    let (g, ms, cpu) = timed(|| graph::build(module, &fresh, &scope, &options));
    eprintln!(
        "entry: around {name}, {} nodes ({} timed), {} edges; first request within the budget: \
         {ms:.0} ms ({cpu} ms of CPU), {}",
        g.nodes.len(),
        g.nodes.iter().filter(|n| n.time.is_some()).count(),
        g.edges.len(),
        computed(&g)
    );
    // What the complete graph costs: the same with time for every map, first on a
    // fresh view, then on one that has met the module (its calls compared).
    let unhurried = Options {
        maps_budget: std::time::Duration::from_secs(600),
        ..options.clone()
    };
    for _ in 0..common::env_number("HLO_BENCH_PROFILE_COMPLETE", 0) {
        graph::build(module, &view::borrowed(module), &scope, &unhurried);
    }
    let fresh = view::borrowed(module);
    let (complete, ms, cpu) = timed(|| graph::build(module, &fresh, &scope, &unhurried));
    eprintln!(
        "entry, first request, every map composed: {ms:.0} ms ({cpu} ms of CPU), {}",
        computed(&complete)
    );
    let g = graph::build(module, &v, &scope, &options);
    let (again, ms, cpu) = timed(|| graph::build(module, &v, &scope, &options));
    eprintln!(
        "entry again, within the budget: {ms:.0} ms ({cpu} ms of CPU), {}",
        computed(&again)
    );
    group.bench_function("radius 3 around the entry's middle instruction", |b| {
        b.iter(|| graph::build(module, &v, &scope, &options))
    });
    group.bench_function("svg of that", |b| b.iter(|| graph::svg::to_svg(&g)));
    // What the GPU adds (coalescing verdicts and kernel times): the same, drawn for none.
    let cpu = Options::default();
    group.bench_function("the same without a GPU", |b| {
        b.iter(|| graph::build(module, &v, &scope, &cpu))
    });
    group.finish();
}

/// What `build` returns, with its wall time (ms) and the process' CPU time (ms)
/// while it ran; after a pause, so that the previous graph's memo, freed on the
/// pool, is not counted.
fn timed(build: impl FnOnce() -> Graph) -> (Graph, f64, u64) {
    std::thread::sleep(std::time::Duration::from_millis(300));
    let started = std::time::Instant::now();
    let cpu = cpu_ms();
    let g = build();
    (g, started.elapsed().as_secs_f64() * 1e3, cpu_ms() - cpu)
}

/// How many of a graph's edges carry maps, and whether it is partial.
fn computed(g: &Graph) -> String {
    let stopped = g
        .edges
        .iter()
        .filter(|e| e.map.starts_with("unknown: not computed"))
        .count();
    format!(
        "{} of {} edges with maps, {stopped} not computed{}",
        g.edges.len() - stopped,
        g.edges.len(),
        if g.partial { ", partial" } else { "" }
    )
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
