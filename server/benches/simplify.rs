//! Parse+simplify time per expression over all expressions of the tinygrad and
//! XLA conformance suites. Criterion measures the whole batch; the per-expression
//! median and p99 (over expressions, each timed as the median of repeated runs)
//! are printed per suite, since that is the number the project targets (issue 17:
//! median at or below MLIR's `simplifyAffineExpr`, p99 under 30 µs).
//!
//! Where `python3` can import `jaxlib` (`pip install jax`), the same maps, printed
//! as `affine_map`s, are timed through MLIR's Python bindings by
//! `scripts/mlir-simplify-timing.py` in the same run, and both medians are printed
//! over the maps MLIR accepts (MLIR rejects products of dimensions). Without jaxlib
//! only ours is printed.

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

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report_per_expression(all: &[(&'static str, Vec<String>)]) {
    let mut everything = Vec::new();
    for (name, texts) in all {
        let mut times: Vec<Duration> = texts.iter().map(|t| time_one(t, 31)).collect();
        times.sort();
        println!(
            "per-expression parse+simplify, {name} ({} maps): median {:.2} µs, p99 {:.2} µs, max {:.2} µs",
            times.len(),
            us(percentile(&times, 0.5)),
            us(percentile(&times, 0.99)),
            us(*times.last().unwrap())
        );
        everything.extend(times);
    }
    everything.sort();
    println!(
        "per-expression parse+simplify, all ({} maps): median {:.2} µs, p99 {:.2} µs",
        everything.len(),
        us(percentile(&everything, 0.5)),
        us(percentile(&everything, 0.99))
    );
}

/// MLIR's times per map in nanoseconds (parse + simplify, simplify only; `None`
/// where MLIR rejects the map), from `scripts/mlir-simplify-timing.py`; `None` when
/// jaxlib is not installed.
fn mlir_times(affine_maps: &[String]) -> Option<Vec<Option<(f64, f64)>>> {
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let file = std::env::temp_dir().join(format!("hlo-lsp-bench-maps-{}.txt", std::process::id()));
    std::fs::write(&file, affine_maps.join("\n")).ok()?;
    let out = std::process::Command::new("python3")
        .arg(format!("{root}/scripts/mlir-simplify-timing.py"))
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            println!(
                "MLIR comparison skipped: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return None;
        }
        Err(e) => {
            println!("MLIR comparison skipped: python3: {e}");
            return None;
        }
    };
    let times: Vec<Option<(f64, f64)>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut fields = l.split_whitespace().map(|f| f.parse::<f64>().ok());
            Some((fields.next()??, fields.next()??))
        })
        .collect();
    (times.len() == affine_maps.len()).then_some(times)
}

/// Ours against MLIR's `simplifyAffineExpr` on the maps MLIR accepts.
fn report_against_mlir(all: &[(&'static str, Vec<String>)]) {
    let texts: Vec<&String> = all.iter().flat_map(|(_, t)| t).collect();
    let affine: Vec<String> = texts
        .iter()
        .map(|t| {
            IndexingMap::parse(t)
                .expect("suite maps parse")
                .to_affine_map()
        })
        .collect();
    let Some(mlir) = mlir_times(&affine) else {
        return;
    };
    let mut both = Vec::new();
    let mut simplify_only = Vec::new();
    let mut ours = Vec::new();
    for (text, t) in texts.iter().zip(&mlir) {
        if let Some((b, s)) = t {
            both.push(Duration::from_nanos(*b as u64));
            simplify_only.push(Duration::from_nanos(*s as u64));
            ours.push(time_one(text, 31));
        }
    }
    for v in [&mut both, &mut simplify_only, &mut ours] {
        v.sort();
    }
    let stats = |v: &[Duration]| {
        format!(
            "median {:.2} µs, p99 {:.2} µs",
            us(percentile(v, 0.5)),
            us(percentile(v, 0.99))
        )
    };
    println!("same {} maps MLIR accepts:", ours.len());
    println!(
        "  ours, parse + simplify:                         {}",
        stats(&ours)
    );
    println!(
        "  MLIR via jaxlib's Python bindings, parse + simplifyAffineExpr: {}",
        stats(&both)
    );
    println!(
        "  MLIR via jaxlib's Python bindings, simplifyAffineExpr only:    {}",
        stats(&simplify_only)
    );
}

fn bench(c: &mut Criterion) {
    let all = suites();
    report_per_expression(&all);
    report_against_mlir(&all);
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
