//! Benchmarks of the indexing analysis: the composed maps of one fusion of 500
//! instructions (target < 10 ms), and `maps --all` over a generated ~50 MB module
//! (parse + every fusion in parallel; target < 2 s on 2 cores).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_lsp::analysis::fusion::fused_output_to_input;
use hlo_lsp::analysis::op::SliceDim;
use hlo_lsp::analysis::{
    analyze, view, ArrayShape, Computation, Module, Node, OpInfo, Query, Shape,
};
use rayon::prelude::*;

mod common;

fn arr(d: &[i64]) -> Shape {
    Shape::Array(ArrayShape::new(d.to_vec()))
}

/// A fusion of `n` instructions over f32[64,128]: elementwise ops, transposes
/// (pairs), reshapes through [8192] and adds of earlier values, like a long
/// normalization epilogue.
fn big_fusion(n: usize) -> Module<'static> {
    let mut nodes = vec![];
    let mut p0 = Node::new(
        "p0",
        OpInfo::new("parameter", ArrayShape::new(vec![64, 128]), vec![]),
        vec![],
    );
    p0.parameter_number = Some(0);
    nodes.push(p0);
    let mut p1 = Node::new(
        "p1",
        OpInfo::new("parameter", ArrayShape::new(vec![64, 128]), vec![]),
        vec![],
    );
    p1.parameter_number = Some(1);
    nodes.push(p1);
    let d = [64i64, 128];
    while nodes.len() < n {
        let v = nodes.len() - 1;
        let i = nodes.len();
        let node = match i % 6 {
            0 => Node::new(
                format!("e{i}"),
                OpInfo::new("exponential", ArrayShape::new(d.to_vec()), vec![arr(&d)]),
                vec![v],
            ),
            1 => {
                let mut op = OpInfo::new("reshape", ArrayShape::new(vec![8192]), vec![arr(&d)]);
                op.attrs = Default::default();
                Node::new(format!("r{i}"), op, vec![v])
            }
            2 => Node::new(
                format!("b{i}"),
                OpInfo::new("reshape", ArrayShape::new(d.to_vec()), vec![arr(&[8192])]),
                vec![v],
            ),
            3 => Node::new(
                format!("a{i}"),
                OpInfo::new("add", ArrayShape::new(d.to_vec()), vec![arr(&d), arr(&d)]),
                vec![v, 1],
            ),
            4 => {
                let mut op = OpInfo::new("slice", ArrayShape::new(d.to_vec()), vec![arr(&d)]);
                op.attrs_mut().slice = Some(vec![
                    SliceDim {
                        start: 0,
                        limit: 64,
                        stride: 1,
                    },
                    SliceDim {
                        start: 0,
                        limit: 128,
                        stride: 1,
                    },
                ]);
                Node::new(format!("s{i}"), op, vec![v])
            }
            _ => Node::new(
                format!("m{i}"),
                OpInfo::new(
                    "multiply",
                    ArrayShape::new(d.to_vec()),
                    vec![arr(&d), arr(&d)],
                ),
                vec![v, 0],
            ),
        };
        nodes.push(node);
    }
    let root = nodes.len() - 1;
    Module::new(
        vec![Computation {
            name: "f".into(),
            nodes,
            root,
        }],
        0,
    )
}

/// What `maps --all` does: parse, then every fusion (and the entry ROOT) in parallel.
fn maps_all(text: &str) -> usize {
    let (_, modules) = view::parse(text);
    let mut targets = vec![];
    for (mi, m) in modules.iter().enumerate() {
        for (ci, c) in m.computations().enumerate() {
            for (ii, n) in c.nodes.iter().enumerate() {
                if n.op.opcode == "fusion" || (ci == m.entry && ii == c.root) {
                    targets.push((mi, ci, ii));
                }
            }
        }
    }
    targets
        .par_iter()
        .map(|&(mi, ci, ii)| {
            let q = Query::output_to_input(ci, ii, 0);
            analyze(&modules[mi], &q).entries.len()
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let module = big_fusion(500);
    let mut g = c.benchmark_group("maps");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("fusion_500_instructions", |b| {
        b.iter(|| fused_output_to_input(&module, 0, 0, 2))
    });
    g.finish();
    let text = common::fused_module(50 << 20);
    let mut g = c.benchmark_group("maps_all");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("generated_50mb_module", |b| b.iter(|| maps_all(&text)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
