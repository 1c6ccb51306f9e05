//! Parse+simplify time per expression over all expressions of the tinygrad and
//! XLA conformance suites. Criterion measures the whole batch; the per-expression
//! median and p99 (over expressions, each timed as the median of repeated runs)
//! are printed per suite, since that is the number the project targets
//! (median < 5 µs).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::algebra::IndexingMap;
use serde_json::Value;

fn lines(rel: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/conformance/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid JSON"))
        .collect()
}

/// `(dims)[symbols] -> (expr), domain: ...` for a suite case.
fn map_text(case: &Value, expr_key: &str, xla_names: bool) -> String {
    let vars = case["vars"].as_object().expect("vars");
    let (syms, dims): (Vec<&String>, Vec<&String>) =
        vars.keys().partition(|n| xla_names && n.starts_with('s'));
    let mut domain: Vec<String> = dims
        .iter()
        .chain(&syms)
        .map(|n| format!("{n} in [{}, {}]", vars[*n][0], vars[*n][1]))
        .collect();
    if let Some(cs) = case.get("constraints").and_then(|c| c.as_array()) {
        domain.extend(
            cs.iter()
                .map(|c| format!("{} in [{}, {}]", c[0].as_str().unwrap(), c[1], c[2])),
        );
    }
    let names = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    let syms = if syms.is_empty() {
        String::new()
    } else {
        format!("[{}]", names(&syms))
    };
    format!(
        "({}){syms} -> ({}), domain: {}",
        names(&dims),
        case[expr_key].as_str().unwrap(),
        domain.join(", ")
    )
}

fn suites() -> Vec<(&'static str, Vec<String>)> {
    let tinygrad = lines("tinygrad/symbolic.jsonl")
        .iter()
        .map(|c| map_text(c, "expr", false))
        .collect();
    let xla_exprs = lines("xla/simplifier_exprs.jsonl")
        .iter()
        .map(|c| map_text(c, "expr_xla", true))
        .collect();
    let xla_maps = lines("xla/simplifier.jsonl")
        .iter()
        .filter(|c| {
            c["ops"]
                .as_array()
                .is_some_and(|o| o.iter().any(|op| op == "Simplify"))
        })
        .filter_map(|c| c["input"].as_str().map(str::to_string))
        .collect();
    vec![
        ("tinygrad/symbolic", tinygrad),
        ("xla/simplifier_exprs", xla_exprs),
        ("xla/simplifier maps", xla_maps),
    ]
}

fn parse_and_simplify(text: &str) -> IndexingMap {
    let mut map = IndexingMap::parse(text).expect("suite maps parse");
    map.simplify();
    map
}

/// Median of `runs` timings of one expression.
fn time_one(text: &str, runs: usize) -> Duration {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(parse_and_simplify(black_box(text)));
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples[runs / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn report_per_expression(all: &[(&'static str, Vec<String>)]) {
    let mut everything = Vec::new();
    for (name, texts) in all {
        let mut times: Vec<Duration> = texts.iter().map(|t| time_one(t, 31)).collect();
        times.sort();
        println!(
            "per-expression parse+simplify, {name} ({} maps): median {:.2} µs, p99 {:.2} µs, max {:.2} µs",
            times.len(),
            percentile(&times, 0.5).as_secs_f64() * 1e6,
            percentile(&times, 0.99).as_secs_f64() * 1e6,
            times.last().unwrap().as_secs_f64() * 1e6
        );
        everything.extend(times);
    }
    everything.sort();
    println!(
        "per-expression parse+simplify, all ({} maps): median {:.2} µs, p99 {:.2} µs",
        everything.len(),
        percentile(&everything, 0.5).as_secs_f64() * 1e6,
        percentile(&everything, 0.99).as_secs_f64() * 1e6
    );
}

fn bench(c: &mut Criterion) {
    let all = suites();
    report_per_expression(&all);
    let texts: Vec<&String> = all.iter().flat_map(|(_, t)| t).collect();
    c.bench_function(
        &format!("parse+simplify all {} suite maps", texts.len()),
        |b| {
            b.iter(|| {
                for t in &texts {
                    black_box(parse_and_simplify(black_box(t)));
                }
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
