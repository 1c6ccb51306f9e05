//! ByteIR's `linalg_ext` ops and upstream `linalg.softmax` (seed
//! `byteir-linalg-ext.md`, "Linalg-ext Op Extension"): the operand maps the analysis
//! derives are checked by brute force on small shapes against plain loops written
//! from the seed's description of each op. The loops track, for every element they
//! compute, which operand elements it depends on (or, for outputs, which element an
//! iteration writes); the map's image at that index must be exactly that set.
//! Then `tile_ext` on each op: splits, holes and what holes of reduction loops must
//! hold; malformed ops; unknown ops.

use std::collections::BTreeSet;

use crate::algebra_support;

use algebra_support::every_index;
use hlo_lsp::algebra::IndexingMap;
use hlo_lsp::mlir::domain::ViewVar;
use hlo_lsp::mlir::{self, LinalgAnalysis, MlirAnalysis};

type Elements = BTreeSet<Vec<i64>>;

/// Every element `map` names at `dims` (all its range variables enumerated, the
/// runtime variables set to `runtime`), within its constraints.
fn image(map: &IndexingMap, dims: &[i64], runtime: &[i64]) -> Elements {
    let mut ranges = vec![vec![]];
    for v in map.range_vars() {
        ranges = ranges
            .into_iter()
            .flat_map(|p| {
                (v.bounds.lo..=v.bounds.hi).map(move |x| {
                    let mut q = p.clone();
                    q.push(x);
                    q
                })
            })
            .collect();
    }
    ranges
        .iter()
        .filter(|r| map.contains_point(dims, r, runtime))
        .filter_map(|r| map.evaluate_at(dims, r, runtime))
        .collect()
}

fn tensor(shape: &[i64], element: &str) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    if dims.is_empty() {
        format!("tensor<{element}>")
    } else {
        format!("tensor<{}x{element}>", dims.join("x"))
    }
}

/// The one analyzed op of `text`, with no diagnostics, views over its loops.
fn only_op(text: &str) -> (MlirAnalysis, usize) {
    let a = mlir::analyze(text);
    assert_eq!(a.linalg.len(), 1, "{text}");
    assert!(a.diagnostics.is_empty(), "{:?}\n{text}", a.diagnostics);
    assert!(a.linalg[0].views.iter().all(Option::is_some), "{text}");
    (a, 0)
}

fn view(l: &LinalgAnalysis, k: usize) -> &IndexingMap {
    &l.views[k].as_ref().expect("view").map
}

/// Every loop is a dimension of the views, in order (the first output indexes them all).
fn assert_loops_are_dims(l: &LinalgAnalysis) {
    for (d, v) in l.view_vars.iter().enumerate() {
        assert_eq!(*v, ViewVar::Dim(d), "{}", l.op.name);
    }
}

/// `p` with the coordinates at `dims` replaced by each point of `extents`.
fn varying(p: &[i64], dims: &[usize], extents: &[i64]) -> Elements {
    every_index(extents)
        .into_iter()
        .map(|v| {
            let mut q = p.to_vec();
            for (&d, &x) in dims.iter().zip(&v) {
                q[d] = x;
            }
            q
        })
        .collect()
}

fn without(p: &[i64], skip: &[usize]) -> Vec<i64> {
    p.iter()
        .enumerate()
        .filter(|(d, _)| !skip.contains(d))
        .map(|(_, &x)| x)
        .collect()
}

/// Which elements of each operand an element depends on: (operand, index) pairs.
type Deps = BTreeSet<(usize, Vec<i64>)>;

/// One element of the first output: its index, what it depends on, and the
/// (operand, index) pairs the iteration computing it writes.
type Case = (Vec<i64>, Deps, Vec<(usize, Vec<i64>)>);

fn of(deps: &Deps, operand: usize) -> Elements {
    deps.iter()
        .filter(|(k, _)| *k == operand)
        .map(|(_, e)| e.clone())
        .collect()
}

/// Softmax per the seed: max = max(max(input, dimension), max_init); accumulator =
/// accumulator_init · exp(max_init − max) + Σ exp(input − max); scale =
/// accumulator_init · exp(max_init − max) / accumulator; output = exp(input − max) /
/// accumulator. Operands: input 0, output 1, max 2, accumulator 3, scale 4.
fn softmax_deps(shape: &[i64], k: usize) -> Vec<Case> {
    let mut out = Vec::new();
    for p in every_index(shape) {
        let r = without(&p, &[k]);
        let row: Deps = varying(&p, &[k], &[shape[k]])
            .into_iter()
            .map(|e| (0, e))
            .collect();
        let mut max = row.clone();
        max.insert((2, r.clone()));
        let mut accumulator = max.clone();
        accumulator.insert((3, r.clone()));
        accumulator.extend(row.iter().cloned());
        let mut result: Deps = [(0, p.clone())].into_iter().collect();
        result.extend(max);
        result.extend(accumulator);
        // The iteration that computes result[p] writes max, accumulator, scale at r.
        let written = vec![(1, p.clone()), (2, r.clone()), (3, r.clone()), (4, r)];
        out.push((p, result, written));
    }
    out
}

fn check_deps(l: &LinalgAnalysis, operands: usize, cases: &[Case]) {
    for (p, deps, written) in cases {
        for k in 0..operands {
            let mut want = of(deps, k);
            want.extend(
                written
                    .iter()
                    .filter(|(o, _)| *o == k)
                    .map(|(_, e)| e.clone()),
            );
            assert_eq!(
                image(view(l, k), p, &[]),
                want,
                "{} operand {k} at {p:?}: {}",
                l.op.name,
                view(l, k)
            );
        }
    }
}

#[test]
fn softmax_maps_match_the_seed_formulas() {
    for (shape, k) in [
        (vec![3i64, 4], 1usize),
        (vec![3, 4], 0),
        (vec![2, 3, 2], 1),
        (vec![2, 2, 3], 2),
    ] {
        let reduced = without(&shape, &[k]);
        let (t, r) = (tensor(&shape, "f32"), tensor(&reduced, "f32"));
        let text = format!(
            "func.func @s(%x: {t}, %o: {t}, %m: {r}) -> {t} {{\n  %0:4 = linalg_ext.softmax\n    dimension({k})\n    ins(%x : {t}) outs(%o, %m, %m, %m : {t}, {r}, {r}, {r}) : {t}, {r}, {r}, {r}\n  return %0#0 : {t}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_eq!(l.extents(), Some(shape.clone()));
        assert_loops_are_dims(l);
        let iters: Vec<&str> = l
            .loops
            .iter()
            .map(|x| x.iterator.unwrap().as_str())
            .collect();
        assert_eq!(iters[k], "reduction");
        assert_eq!(iters.iter().filter(|i| **i == "reduction").count(), 1);
        check_deps(l, 5, &softmax_deps(&shape, k));
    }
}

#[test]
fn upstream_softmax_reads_whole_rows() {
    for (shape, k) in [(vec![2i64, 3, 4], 2usize), (vec![4, 3], 0)] {
        let t = tensor(&shape, "f32");
        let text = format!(
            "func.func @s(%x: {t}, %o: {t}) -> {t} {{\n  %0 = linalg.softmax dimension({k}) ins(%x : {t}) outs(%o : {t}) -> {t}\n  return %0 : {t}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_loops_are_dims(l);
        // Only the input and the result of the seed's computation.
        let cases: Vec<_> = softmax_deps(&shape, k)
            .into_iter()
            .map(|(p, deps, _)| {
                let deps: Deps = deps.into_iter().filter(|(o, _)| *o == 0).collect();
                (p.clone(), deps, vec![(1, p)])
            })
            .collect();
        check_deps(l, 2, &cases);
    }
}

#[test]
fn diag_reads_its_vector_on_the_diagonal() {
    for input in [vec![4i64], vec![2, 3]] {
        let mut shape = input.clone();
        shape.push(*input.last().unwrap());
        let (ti, to) = (tensor(&input, "f32"), tensor(&shape, "f32"));
        let text = format!(
            "func.func @d(%x: {ti}, %o: {to}) -> {to} {{\n  %0 = linalg_ext.diag ins(%x : {ti}) outs(%o : {to}) : {to}\n  return %0 : {to}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_eq!(l.extents(), Some(shape.clone()));
        assert_loops_are_dims(l);
        let n = shape.len();
        let cases: Vec<_> = every_index(&shape)
            .into_iter()
            .map(|p| {
                // result[..., i, j] = input[..., i] when i = j, else 0.
                let deps: Deps = if p[n - 2] == p[n - 1] {
                    [(0, p[..n - 1].to_vec())].into_iter().collect()
                } else {
                    Deps::new()
                };
                (p.clone(), deps, vec![(1, p)])
            })
            .collect();
        check_deps(l, 2, &cases);
        let u = l.views[0].as_ref().unwrap().utilization.unwrap();
        assert!(u.exact && (u.fraction - 1.0).abs() < 1e-9, "{u:?}");
    }
}

#[test]
fn scan_reads_a_prefix_inclusive_or_exclusive() {
    for (shape, k, inclusive) in [
        (vec![3i64, 4], 1usize, true),
        (vec![3, 4], 1, false),
        (vec![4, 2], 0, true),
        (vec![4, 2, 2], 0, false),
    ] {
        let reduced = without(&shape, &[k]);
        let (t, r) = (tensor(&shape, "i32"), tensor(&reduced, "i32"));
        let text = format!(
            "func.func @c(%x: {t}, %o: {t}, %acc: {r}) -> {t} {{\n  %0:2 = linalg_ext.scan dimension({k}) inclusive({inclusive})\n    ins(%x : {t}) outs(%o, %acc : {t}, {r}) {{\n    ^bb0(%a: i32, %b: i32):\n      %s = arith.addi %a, %b : i32\n      linalg_ext.yield %s : i32\n  }} -> {t}, {r}\n  return %0#0 : {t}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_loops_are_dims(l);
        assert!(l.op.ext.as_ref().unwrap().summary.contains("arith.addi"));
        // The scan as loops: inclusive out[0] = in[0], out[j] = out[j-1] ⊕ in[j];
        // exclusive out[0] = acc_init, out[j] = out[j-1] ⊕ in[j-1]; acc = out[last].
        let mut cases = Vec::new();
        for base in every_index(&reduced) {
            let at = |j: i64| {
                let mut p = base.clone();
                p.insert(k, j);
                p
            };
            let mut prev: Deps = Deps::new();
            for j in 0..shape[k] {
                let deps: Deps = match (inclusive, j) {
                    (true, 0) => [(0, at(0))].into_iter().collect(),
                    (true, _) => prev.iter().cloned().chain([(0, at(j))]).collect(),
                    (false, 0) => [(2, base.clone())].into_iter().collect(),
                    (false, _) => prev.iter().cloned().chain([(0, at(j - 1))]).collect(),
                };
                prev = deps.clone();
                cases.push((at(j), deps, vec![(1, at(j)), (2, base.clone())]));
            }
        }
        check_deps(l, 3, &cases);
    }
}

/// Scatter per the seed: over each update index `(b, w)`, `I = indices[b, :]`,
/// `src[I, w] = region(src[I, w], update[b, w])`; every index array is tried.
#[test]
fn scatter_writes_src_at_the_runtime_values_of_its_indices() {
    // (indices shape, update shape, src shape)
    for (ishape, ushape, sshape) in [
        (vec![2i64, 2], vec![2i64, 3], vec![2i64, 2, 3]),
        (vec![2, 2, 1], vec![2, 2, 2], vec![3, 2]),
        (vec![1], vec![2], vec![3, 2]),
    ] {
        let (ti, tu, ts) = (
            tensor(&ishape, "i64"),
            tensor(&ushape, "f32"),
            tensor(&sshape, "f32"),
        );
        let text = format!(
            "func.func @s(%src: {ts}, %i: {ti}, %u: {tu}) -> {ts} {{\n  %0 = linalg_ext.scatter\n    ins(%i, %u : {ti}, {tu})\n    outs(%src : {ts}) {{\n      ^bb0(%a: f32, %b: f32):\n        %c = arith.addf %a, %b : f32\n        linalg_ext.yield %c : f32\n      }} -> {ts}\n  return %0 : {ts}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_eq!(l.extents(), Some(ushape.clone()));
        assert_loops_are_dims(l);
        let batches = ishape.len() - 1;
        let width = *ishape.last().unwrap() as usize;
        let vectors = every_index(&ishape[..batches]);
        // Every assignment of in-bounds index vectors.
        let choices = every_index(&sshape[..width]);
        let mut assignments: Vec<Vec<Vec<i64>>> = vec![vec![]];
        for _ in &vectors {
            assignments = assignments
                .into_iter()
                .flat_map(|a| {
                    choices.iter().map(move |c| {
                        let mut b = a.clone();
                        b.push(c.clone());
                        b
                    })
                })
                .collect();
        }
        for assignment in &assignments {
            for p in every_index(&ushape) {
                let b = &p[..batches];
                let v = vectors.iter().position(|x| x == b).unwrap();
                let index = &assignment[v];
                let read_indices: Elements = (0..width as i64)
                    .map(|c| b.iter().copied().chain([c]).collect())
                    .collect();
                assert_eq!(image(view(l, 0), &p, &[]), read_indices);
                assert_eq!(image(view(l, 1), &p, &[]), [p.clone()].into());
                let written: Vec<i64> = index.iter().chain(&p[batches..]).copied().collect();
                let src = view(l, 2);
                assert!(
                    src.contains_point(&p, &[], index),
                    "{src} at {p:?} {index:?}"
                );
                assert_eq!(image(src, &p, index), [written].into(), "{src}");
            }
        }
        let iters: Vec<&str> = l
            .loops
            .iter()
            .map(|x| x.iterator.unwrap().as_str())
            .collect();
        let want: Vec<&str> = (0..ushape.len())
            .map(|d| if d < batches { "reduction" } else { "parallel" })
            .collect();
        assert_eq!(iters, want);
        let note = l.op.ext.as_ref().unwrap().operand_notes[2].clone().unwrap();
        assert!(note.contains("not an affine map"), "{note}");
    }
}

/// Topk per the seed: the k best of each row along `dimension` by the comparator;
/// output position r holds the r-th selected element.
#[test]
fn topk_writes_at_the_rank_of_each_selected_element() {
    let data = |p: &[i64]| -> i64 { (p.iter().fold(7i64, |h, &x| h * 31 + x * 17)) % 97 };
    for (shape, d, k, with_indices) in [
        (vec![2i64, 4], 1usize, 2i64, true),
        (vec![2, 4], 1, 3, false),
        (vec![4, 3], 0, 1, true),
    ] {
        let mut oshape = shape.clone();
        oshape[d] = k;
        let (tv, ti, ov, oi) = (
            tensor(&shape, "f32"),
            tensor(&shape, "i32"),
            tensor(&oshape, "f32"),
            tensor(&oshape, "i32"),
        );
        let ins = if with_indices {
            format!("ins(%v, %i : {tv}, {ti})")
        } else {
            format!("ins(%v : {tv})")
        };
        let text = format!(
            "func.func @t(%v: {tv}, %i: {ti}, %ov: {ov}, %oi: {oi}) -> {ov} {{\n  %0:2 = linalg_ext.topk\n        dimension({d})\n        {ins}\n        outs(%ov, %oi : {ov}, {oi}) {{\n        ^bb0(%a: f32, %b: f32):\n          %c = arith.cmpf ogt, %a, %b : f32\n          linalg_ext.yield %c : i1\n        }} -> {ov}, {oi}\n  return %0#0 : {ov}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_eq!(l.extents(), Some(shape.clone()), "k is not a loop");
        assert_loops_are_dims(l);
        let ins = if with_indices { 2 } else { 1 };
        for p in every_index(&shape) {
            for input in 0..ins {
                assert_eq!(image(view(l, input), &p, &[]), [p.clone()].into());
            }
            // The row's elements ordered by `ogt` (greater first), the first k selected.
            let mut row: Vec<i64> = (0..shape[d]).collect();
            row.sort_by_key(|&j| {
                let mut q = p.clone();
                q[d] = j;
                (std::cmp::Reverse(data(&q)), j)
            });
            let Some(rank) = row[..k as usize].iter().position(|&j| j == p[d]) else {
                continue;
            };
            let mut written = p.clone();
            written[d] = rank as i64;
            for out in [ins, ins + 1] {
                let m = view(l, out);
                assert!(m.contains_point(&p, &[], &[rank as i64]), "{m}");
                assert_eq!(image(m, &p, &[rank as i64]), [written.clone()].into());
            }
        }
        // Ranks past k are outside the runtime variable's bounds.
        let m = view(l, ins);
        assert_eq!(m.runtime_vars()[0].bounds.hi, k - 1);
    }
}

#[test]
fn batch_matmul_layouts_read_per_the_layout() {
    let (b, m, n, k) = (2i64, 2i64, 3i64, 4i64);
    for layout in ["nn", "nt", "tn", "tt"] {
        let lhs = if layout.starts_with('n') {
            [b, m, k]
        } else {
            [b, k, m]
        };
        let rhs = if layout.ends_with('n') {
            [b, k, n]
        } else {
            [b, n, k]
        };
        let (tl, tr, to) = (
            tensor(&lhs, "f32"),
            tensor(&rhs, "f32"),
            tensor(&[b, m, n], "f32"),
        );
        let text = format!(
            "func.func @b(%l: {tl}, %r: {tr}, %o: {to}) -> {to} {{\n  %0 = linalg_ext.batch_matmul\n    ins(%l, %r : {tl}, {tr})\n    outs(%o : {to})\n    layout = \"{layout}\"\n  return %0 : {to}\n}}\n"
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_eq!(l.extents(), Some(vec![b, m, n, k]), "{layout}");
        assert_eq!(l.view_vars[3], ViewVar::Range(0));
        for p in every_index(&[b, m, n]) {
            // out[b, m, n] = Σ_k lhs[b, m, k] · rhs[b, k, n] (transposed per the layout).
            let (lrow, rrow): (Elements, Elements) = (0..k)
                .map(|x| {
                    let l = if layout.starts_with('n') {
                        vec![p[0], p[1], x]
                    } else {
                        vec![p[0], x, p[1]]
                    };
                    let r = if layout.ends_with('n') {
                        vec![p[0], x, p[2]]
                    } else {
                        vec![p[0], p[2], x]
                    };
                    (l, r)
                })
                .unzip();
            assert_eq!(image(view(l, 0), &p, &[]), lrow, "{layout}");
            assert_eq!(image(view(l, 1), &p, &[]), rrow, "{layout}");
            assert_eq!(image(view(l, 2), &p, &[]), [p.clone()].into());
        }
    }
}

#[test]
fn layer_norm_reads_the_normalized_slice() {
    let shape = [2i64, 3, 4];
    let t = tensor(&shape, "f32");
    for (axes, affine, stats) in [
        (vec![2usize], true, false),
        (vec![1, 2], true, true),
        (vec![1], false, true),
    ] {
        let w = tensor(&axes.iter().map(|&a| shape[a]).collect::<Vec<_>>(), "f32");
        let kept = tensor(&without(&shape, &axes), "f32");
        let axis_text: Vec<String> = axes.iter().map(usize::to_string).collect();
        let ins = if affine {
            format!("ins(%x, %w, %w : {t}, {w}, {w})")
        } else {
            format!("ins(%x : {t})")
        };
        let outs = if stats {
            format!("outs(%o, %m, %m : {t}, {kept}, {kept})")
        } else {
            format!("outs(%o : {t})")
        };
        let text = format!(
            "func.func @n(%x: {t}, %w: {w}, %o: {t}, %m: {kept}) -> {t} {{\n  %0 = linalg_ext.layer_norm\n    axis([{}])\n    epsilon(9.9999999747524271E-7)\n    {ins}\n    {outs} : {t}\n  return %0 : {t}\n}}\n",
            axis_text.join(", ")
        );
        let (a, i) = only_op(&text);
        let l = &a.linalg[i];
        assert_loops_are_dims(l);
        let extents: Vec<i64> = axes.iter().map(|&a| shape[a]).collect();
        let out = if affine { 3 } else { 1 };
        for p in every_index(&shape) {
            // output = (x − E[x]) / sqrt(Var[x] + ε) · weight + bias, E and Var over the axes.
            assert_eq!(image(view(l, 0), &p, &[]), varying(&p, &axes, &extents));
            if affine {
                let at: Vec<i64> = axes.iter().map(|&a| p[a]).collect();
                assert_eq!(image(view(l, 1), &p, &[]), [at.clone()].into());
                assert_eq!(image(view(l, 2), &p, &[]), [at].into());
            }
            assert_eq!(image(view(l, out), &p, &[]), [p.clone()].into());
            if stats {
                for s in [out + 1, out + 2] {
                    assert_eq!(image(view(l, s), &p, &[]), [without(&p, &axes)].into());
                }
            }
        }
    }
}

/// `linalg_ext.alias` is not structured: no loops, a one-to-one move.
#[test]
fn alias_is_a_one_to_one_move() {
    let text = "func.func @a(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {\n  %0 = linalg_ext.alias(%x : tensor<3x4xf32>) : tensor<3x4xf32>\n  return %0 : tensor<3x4xf32>\n}\n";
    let a = mlir::analyze(text);
    assert!(a.linalg.is_empty());
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let m = a.moves[0].map.as_ref().unwrap();
    for p in every_index(&[3, 4]) {
        assert_eq!(m.evaluate(&p, &[]), Some(p.clone()));
    }
}

fn tiled(payload: &str, sizes: &str, matched: &str) -> MlirAnalysis {
    let text = format!(
        "{payload}transform.sequence failures(propagate) {{\n^bb0(%arg0: !pdl.operation):\n  %0 = transform.structured.match ops{{[\"{matched}\"]}} in %arg0\n  %1, %loops:2 = transform.structured.tile_ext %0 {sizes}\n}}\n"
    );
    mlir::analyze(&text)
}

fn messages(a: &MlirAnalysis, code: &str) -> Vec<String> {
    a.diagnostics
        .iter()
        .filter(|d| d.code == code)
        .map(|d| d.message.clone())
        .collect()
}

const SOFTMAX: &str = "func.func @softmax_tensor(%arg0: tensor<1024x64xf32>) -> (tensor<1024x64xf32>) {\n  %0 = tensor.empty() : tensor<1024x64xf32>\n  %1 = tensor.empty() : tensor<1024xf32>\n  %4:4 = linalg_ext.softmax\n    dimension(1)\n    ins(%arg0 : tensor<1024x64xf32>) outs(%0, %1, %1, %1 : tensor<1024x64xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) : tensor<1024x64xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>\n  return %4#0 : tensor<1024x64xf32>\n}\n";

fn topk_text(cmp: &str) -> String {
    format!("func.func @topk(%v: tensor<1024x64xf32>) -> tensor<1024x3xf32> {{\n  %ov = tensor.empty() : tensor<1024x3xf32>\n  %oi = tensor.empty() : tensor<1024x3xi32>\n  %0:2 = linalg_ext.topk\n        dimension(1)\n        ins(%v : tensor<1024x64xf32>)\n        outs(%ov, %oi : tensor<1024x3xf32>, tensor<1024x3xi32>) {{\n        ^bb0(%a: f32, %b: f32):\n          %c = arith.cmpf {cmp}, %a, %b : f32\n          linalg_ext.yield %c : i1\n        }} -> tensor<1024x3xf32>, tensor<1024x3xi32>\n  return %0#0 : tensor<1024x3xf32>\n}}\n")
}

#[test]
fn tile_ext_divisible_sizes_are_silent() {
    let a = tiled(SOFTMAX, "[4]", "linalg_ext.softmax");
    assert_eq!(a.tiles.len(), 1);
    assert_eq!(a.tiles[0].tile_sizes, vec![4]);
    assert_eq!(a.tiles[0].targets, vec![0]);
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let a = tiled(
        &topk_text("ogt"),
        "[32, 16] {interchange = [0, 1, 2]}",
        "linalg_ext.topk",
    );
    assert_eq!(a.tiles[0].interchange, vec![0, 1, 2]);
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
}

#[test]
fn tile_ext_holes_in_reduction_loops_name_what_they_must_hold() {
    // Softmax: 64 by 48 along the reduced dimension.
    let a = tiled(SOFTMAX, "[0, 48]", "linalg_ext.softmax");
    let m = messages(&a, "indivisible-tile");
    assert_eq!(m.len(), 1, "{:?}", a.diagnostics);
    assert!(
        m[0].contains("d1: 64 is not a multiple of 48 → 2 tiles, 32 hole iterations"),
        "{}",
        m[0]
    );
    assert!(m[0].contains("fill holes with -inf, the identity of the max, so that exp(-inf − max) = 0 adds the identity of the sum"), "{}", m[0]);
    // Topk: the comparator decides: ogt never prefers -inf, olt never prefers inf.
    for (cmp, fill) in [("ogt", "-inf"), ("olt", "inf")] {
        let a = tiled(&topk_text(cmp), "[32, 24]", "linalg_ext.topk");
        let m = messages(&a, "indivisible-tile");
        assert_eq!(m.len(), 1, "{:?}", a.diagnostics);
        assert!(
            m[0].contains(&format!(
                "fill holes with {fill}, which the comparator never prefers"
            )),
            "{}",
            m[0]
        );
    }
    // A parallel loop: holes, no note on reductions.
    let a = tiled(SOFTMAX, "[1000]", "linalg_ext.softmax");
    let m = messages(&a, "indivisible-tile");
    assert!(m[0].contains("d0: 1024 is not a multiple of 1000 → 2 tiles, 976 hole iterations, the last tile has 24 valid; predicate d0 < 1024"), "{}", m[0]);
    assert!(!m[0].contains("reduction"), "{}", m[0]);
}

#[test]
fn tile_ext_on_scan_scatter_layer_norm_and_batch_matmul() {
    let scan = "func.func @c(%x: tensor<16x30xi32>) -> tensor<16x30xi32> {\n  %acc = tensor.empty() : tensor<16xi32>\n  %out = tensor.empty() : tensor<16x30xi32>\n  %2:2 = linalg_ext.scan\n    {__internal_linalg_transform__ = \"__byteir_tile__\"}\n    dimension(1) inclusive(false)\n    ins(%x : tensor<16x30xi32>) outs(%out, %acc : tensor<16x30xi32>, tensor<16xi32>) {\n    ^bb0(%a : i32, %b : i32):\n      %s = arith.muli %a, %b : i32\n      linalg_ext.yield %s : i32\n  } -> tensor<16x30xi32>, tensor<16xi32>\n  return %2#0 : tensor<16x30xi32>\n}\n";
    let a = tiled(scan, "[4, 8]", "linalg_ext.scan");
    let m = messages(&a, "indivisible-tile");
    assert_eq!(m.len(), 1, "{:?}", a.diagnostics);
    assert!(m[0].contains("d1: 30 is not a multiple of 8"), "{}", m[0]);
    assert!(
        m[0].contains("fill holes with 1, the identity of arith.muli"),
        "{}",
        m[0]
    );
    let scatter = "func.func @s(%src: tensor<2x3x32x64xf32>, %indices: tensor<100x2xi64>, %update: tensor<100x32x64xf32>) -> tensor<2x3x32x64xf32> {\n  %res = linalg_ext.scatter\n    ins(%indices, %update: tensor<100x2xi64>, tensor<100x32x64xf32>)\n    outs(%src: tensor<2x3x32x64xf32>) {\n      ^bb0(%a: f32, %b: f32):\n        %0 = arith.addf %a, %b : f32\n        linalg_ext.yield %0 : f32\n      } -> tensor<2x3x32x64xf32>\n  return %res : tensor<2x3x32x64xf32>\n}\n";
    let a = tiled(
        scatter,
        "[2, 4, 8] {interchange = [1, 2, 0]}",
        "linalg_ext.scatter",
    );
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let a = tiled(scatter, "[3, 4, 8]", "linalg_ext.scatter");
    let m = messages(&a, "indivisible-tile");
    assert!(m[0].contains("d0: 100 is not a multiple of 3"), "{}", m[0]);
    assert!(m[0].contains("its write must be masked"), "{}", m[0]);
    let ln = "func.func @ln(%arg0: tensor<8x32x128xf32>, %arg1: tensor<128xf32>, %arg2: tensor<128xf32>) -> tensor<8x32x128xf32> {\n  %0 = tensor.empty() : tensor<8x32x128xf32>\n  %1 = linalg_ext.layer_norm\n                    axis([2])\n                    epsilon(9.9999999747524271E-7)\n                    ins(%arg0, %arg1, %arg2: tensor<8x32x128xf32>, tensor<128xf32>, tensor<128xf32>)\n                    outs(%0: tensor<8x32x128xf32>) : tensor<8x32x128xf32>\n  return %1 : tensor<8x32x128xf32>\n}\n";
    assert!(tiled(ln, "[4, 8]", "linalg_ext.layer_norm")
        .diagnostics
        .is_empty());
    let a = tiled(ln, "[0, 0, 96]", "linalg_ext.layer_norm");
    let m = messages(&a, "indivisible-tile");
    assert!(
        m[0].contains("must not count in the mean's divisor"),
        "{}",
        m[0]
    );
    let bmm = "func.func @b(%a: tensor<8x32x128xf32>, %b: tensor<8x128x64xf32>, %c: tensor<8x32x64xf32>) -> tensor<8x32x64xf32> {\n  %res = linalg_ext.batch_matmul\n                    ins(%a, %b: tensor<8x32x128xf32>, tensor<8x128x64xf32>)\n                    outs(%c: tensor<8x32x64xf32>)\n                    layout = \"nn\"\n  return %res : tensor<8x32x64xf32>\n}\n";
    assert!(tiled(
        bmm,
        "[2, 4, 8] {interchange = [0, 2, 1]}",
        "linalg_ext.batch_matmul"
    )
    .diagnostics
    .is_empty());
    let a = tiled(bmm, "[2, 4, 8, 100]", "linalg_ext.batch_matmul");
    let m = messages(&a, "indivisible-tile");
    assert!(
        m[0].contains("d3: 128 is not a multiple of 100"),
        "{}",
        m[0]
    );
    assert!(
        m[0].contains("fill holes with 0, the identity of the sum of linalg_ext.batch_matmul"),
        "{}",
        m[0]
    );
}

#[test]
fn malformed_ext_ops_are_errors_with_positions() {
    let cases = [
        (
            "%0:3 = linalg_ext.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%o, %m, %m : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) : tensor<4x8xf32>",
            "takes one input and four outputs",
        ),
        (
            "%0 = linalg.softmax dimension(2) ins(%x : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>",
            "dimension 2 is not a dimension of a rank-2 operand",
        ),
        (
            "%0:2 = linalg_ext.topk dimension(1) ins(%x : tensor<4x8xf32>) outs(%v, %i : tensor<4x9xf32>, tensor<4x9xi32>) {\n  ^bb0(%a: f32, %b: f32):\n    %c = arith.cmpf ogt, %a, %b : f32\n    linalg_ext.yield %c : i1\n  } -> tensor<4x9xf32>, tensor<4x9xi32>",
            "selects k = 9 of the 8 elements",
        ),
        (
            "%0 = linalg_ext.scatter ins(%i, %u : tensor<5x2xi64>, tensor<5x8xf32>) outs(%s : tensor<4x8xf32>) {\n  ^bb0(%a: f32, %b: f32):\n    linalg_ext.yield %b : f32\n  } -> tensor<4x8xf32>",
            "src has rank 2, but dim(indices, rank(indices) − 1) + rank(update) − rank(indices) + 1 = 2 + 2 − 2 + 1 = 3",
        ),
        (
            "%0:2 = linalg_ext.scan dimension(0) ins(%x : tensor<4xi32>) outs(%o, %a : tensor<4xi32>, tensor<i32>) {\n  ^bb0(%p: i32, %q: i32):\n    linalg_ext.yield %p : i32\n  } -> tensor<4xi32>, tensor<i32>",
            "`inclusive(true)` or `inclusive(false)` is missing",
        ),
        (
            "%0 = linalg_ext.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%c : tensor<2x3x5xf32>) layout = \"nx\"",
            "layout \"nx\" is not one of nn, nt, tn, tt",
        ),
        (
            "%0 = linalg_ext.layer_norm axis([3]) epsilon(1.0) ins(%x : tensor<2x3xf32>) outs(%o : tensor<2x3xf32>) : tensor<2x3xf32>",
            "axes [3] are not distinct dimensions of a rank-2 input",
        ),
    ];
    for (op, want) in cases {
        let text = format!("func.func @f() {{\n  {op}\n  return\n}}\n");
        let a = mlir::analyze(&text);
        let errors: Vec<_> = a
            .diagnostics
            .iter()
            .filter(|d| d.code == "invalid-linalg-ext")
            .collect();
        assert_eq!(errors.len(), 1, "{op}: {:?}", a.diagnostics);
        assert!(errors[0].message.contains(want), "{}", errors[0].message);
        assert!(errors[0].is_error());
        assert!(errors[0].range.start > 0 && errors[0].range.end <= text.len());
    }
    // A wrong rank is the generic map-rank check: softmax's max has the input's rank.
    let text = "func.func @f() {\n  %0:4 = linalg_ext.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%o, %m, %m, %m : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) : tensor<4x8xf32>\n}\n";
    let a = mlir::analyze(text);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec!["map-rank-mismatch"], "{:?}", a.diagnostics);
}

/// Ops of dialects we do not model, and the generic form of known ones, read
/// without a diagnostic and without an analysis.
#[test]
fn unknown_ops_cost_nothing() {
    let text = "func.func @u(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  %0 = linalg_ext.custom ins(%x : tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {\n  ^bb0(%a: f32):\n    linalg_ext.yield %a : f32\n  } -> tensor<4x8xf32>\n  %1 = \"linalg.softmax\"(%0, %x) <{dimension = 1 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n  %2 = mhlo.add %1, %1 : tensor<4x8xf32>\n  %3 = byre.compute @Foo(%2) {memory_effects = [1 : i32]} : tensor<4x8xf32>\n  %4 = foo.bar dimension(9) axis([7]) layout = \"zz\" ins(%3 : tensor<4x8xf32>)\n  return %4 : tensor<4x8xf32>\n}\n";
    let a = mlir::analyze(text);
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    assert!(a.linalg.is_empty());
    assert!(a.moves.is_empty());
}
