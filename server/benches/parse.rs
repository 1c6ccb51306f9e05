//! Parse speed on a large realistic module: full parse throughput through
//! `SyntaxDocument::parse` (chunks in parallel) and the time of one-character
//! edits in the middle through `SyntaxDocument::edit`.
//!
//! The module is generated from the shipped samples and JAX dumps: their
//! computations are replicated under fresh names (every `name` node gets a suffix)
//! until the text reaches `HLO_BENCH_MB` megabytes (default 50), followed by an
//! ENTRY that calls one fusion per copy.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hlo_lsp::syntax::{ChunkKind, SyntaxDocument};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// Non-ENTRY computations of every sample, as text.
fn source_computations() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["jax", "samples/xla"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{DATA}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        {
            let text = std::fs::read_to_string(&path).unwrap();
            let doc = SyntaxDocument::parse(&text);
            for chunk in doc
                .chunks()
                .iter()
                .filter(|c| c.kind == ChunkKind::Computation)
            {
                let item = chunk.item();
                let is_entry = item.is_some_and(|n| n.child_by_field_name("entry").is_some());
                if !is_entry && !chunk.tree.root_node().has_error() {
                    out.push(strip_comments(chunk.text(&text)));
                }
            }
        }
    }
    out
}

/// Drops comment-only lines (lit-test CHECK lines) so the copies are plain HLO.
fn strip_comments(text: &str) -> String {
    let mut s: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    s.push_str("\n\n");
    s
}

/// `text` with every `name` node suffixed by `.c<copy>` (definitions, uses and
/// computation references alike, so the copy is as consistent as the original).
fn renamed(text: &str, copy: usize) -> String {
    let doc = SyntaxDocument::parse(text);
    let mut ends = Vec::new();
    for chunk in doc.chunks() {
        let mut stack = vec![chunk.tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "name" {
                ends.push(chunk.abs_range(n).end);
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
    }
    ends.sort_unstable();
    let mut out = String::with_capacity(text.len() + ends.len() * 8);
    let mut at = 0;
    for end in ends {
        out.push_str(&text[at..end]);
        out.push_str(&format!(".c{copy}"));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

fn large_module(megabytes: usize) -> String {
    let sources = source_computations();
    let header = "HloModule bench, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0})->f32[8,128]{1,0}}\n\n";
    let mut text = String::from(header);
    let mut entry = String::from(
        "ENTRY %main (p: f32[8,128]) -> f32[8,128] {\n  %p = f32[8,128]{1,0} parameter(0)\n",
    );
    let target = megabytes * 1_000_000;
    let mut copy = 0;
    while text.len() + entry.len() < target {
        for (k, source) in sources.iter().enumerate() {
            let comp = renamed(source, copy);
            let name_end = comp.find([' ', '{']).unwrap_or(0);
            entry.push_str(&format!(
                "  %call.{copy}.{k} = f32[8,128]{{1,0}} fusion(%p), kind=kLoop, calls={}, metadata={{op_name=\"bench\"}}\n",
                comp[..name_end].trim()
            ));
            text.push_str(&comp);
        }
        copy += 1;
    }
    entry.push_str("  ROOT %r = f32[8,128]{1,0} copy(%p)\n}\n");
    text.push_str(&entry);
    text
}

/// An offset inside an instruction name in an indented line near the middle.
fn middle_edit_point(text: &str) -> usize {
    let from = text.len() / 2;
    let line = text[from..]
        .find("\n  %")
        .or_else(|| text[from..].find("\n  "))
        .expect("an instruction line")
        + from;
    let name = line + 3;
    name + text[name..]
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let mb = std::env::var("HLO_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let text = large_module(mb);
    let doc = SyntaxDocument::parse(&text);
    let errors = doc.syntax_errors().len();
    eprintln!(
        "generated module: {:.1} MB, {} chunks, {} lines, {errors} syntax errors",
        text.len() as f64 / 1e6,
        doc.chunks().len(),
        text.lines().count()
    );
    assert_eq!(errors, 0, "the generated module must be valid");

    let mut group = c.benchmark_group("parse");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("full_parse_parallel", |b| {
        b.iter(|| SyntaxDocument::parse(&text))
    });
    group.finish();

    let at = middle_edit_point(&text);
    let mut group = c.benchmark_group("edit");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    let mut doc = doc;
    let mut flip = false;
    group.bench_function("replace_one_char_middle", |b| {
        b.iter(|| {
            flip = !flip;
            doc.edit(at, at + 1, if flip { "q" } else { "z" });
        })
    });
    group.bench_function("insert_then_delete_one_char_middle", |b| {
        b.iter(|| {
            doc.edit(at, at, "q");
            doc.edit(at, at + 1, "");
        })
    });
    group.bench_function("insert_brace_middle_then_delete", |b| {
        b.iter_batched(
            || (),
            |_| {
                doc.edit(at, at, "{");
                doc.edit(at, at + 1, "");
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
    assert!(doc.syntax_errors().is_empty(), "edits were undone");
}

criterion_group!(benches, bench);
criterion_main!(benches);
