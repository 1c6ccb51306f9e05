//! Library tests of the MLIR reader and analysis: differential against brute
//! force (loop nests enumerated point by point), the samples' maps through the
//! algebra's printer and parser, and XLA's `#xla.indexing_map` CHECK lines.

use std::collections::HashMap;

use crate::algebra_support;

use algebra_support::every_index;
use hlo_lsp::algebra::IndexingMap;
use hlo_lsp::mlir::domain::ViewVar;
use hlo_lsp::mlir::{self, maps, MapKind};
use proptest::prelude::*;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/samples/");

/// A random operand access: a list of result expressions over `loops` loops, as MLIR text.
fn result_expr(loops: usize) -> impl Strategy<Value = String> {
    let d = 0..loops;
    prop_oneof![
        d.clone().prop_map(|i| format!("d{i}")),
        (d.clone(), d.clone()).prop_map(|(i, j)| format!("d{i} + d{j}")),
        (d.clone(), 2..4i64).prop_map(|(i, c)| format!("d{i} * {c}")),
        (d.clone(), 2..4i64).prop_map(|(i, c)| format!("d{i} floordiv {c}")),
        (d.clone(), 2..4i64).prop_map(|(i, c)| format!("d{i} mod {c}")),
        (d, 0..3i64).prop_map(|(i, c)| format!("d{i} + {c}")),
        (0..3i64).prop_map(|c| format!("{c}")),
    ]
}

fn generic_case() -> impl Strategy<Value = (Vec<i64>, Vec<usize>, Vec<Vec<String>>)> {
    (1usize..=3)
        .prop_flat_map(|loops| {
            (
                proptest::collection::vec(1i64..=4, loops),
                Just((0..loops).collect::<Vec<usize>>()).prop_shuffle(),
                0..=loops,
                proptest::collection::vec(
                    proptest::collection::vec(result_expr(loops), 0..=3),
                    1..=2,
                ),
            )
        })
        .prop_map(|(extents, order, kept, inputs)| {
            // The output indexes `kept` loops in a shuffled order; the rest are reductions.
            let mut out: Vec<usize> = order[..kept.max(1)].to_vec();
            out.dedup();
            (extents, out, inputs)
        })
}

/// MLIR text of a generic with the given loop extents, output loop order and input maps;
/// operand shapes are the exact bounding boxes of what each map reads.
fn generic_text(
    extents: &[i64],
    out: &[usize],
    inputs: &[Vec<String>],
) -> (String, Vec<IndexingMap>, Vec<Vec<i64>>) {
    let loops = extents.len();
    let dims: Vec<String> = (0..loops).map(|i| format!("d{i}")).collect();
    let header = format!("({})", dims.join(", "));
    let mut maps_text = Vec::new();
    let mut maps = Vec::new();
    let mut shapes = Vec::new();
    let out_results: Vec<String> = out.iter().map(|&d| format!("d{d}")).collect();
    for results in inputs.iter().chain(std::iter::once(&out_results)) {
        let text = format!("affine_map<{header} -> ({})>", results.join(", "));
        let m = IndexingMap::parse(&text).unwrap();
        let mut shape = vec![1i64; results.len()];
        for p in every_index(extents) {
            for (j, v) in m.evaluate(&p, &[]).unwrap().into_iter().enumerate() {
                shape[j] = shape[j].max(v + 1);
            }
        }
        maps_text.push(text);
        maps.push(m);
        shapes.push(shape);
    }
    let ty = |s: &Vec<i64>| {
        if s.is_empty() {
            "f32".to_string()
        } else {
            format!(
                "tensor<{}xf32>",
                s.iter().map(i64::to_string).collect::<Vec<_>>().join("x")
            )
        }
    };
    let n_in = inputs.len();
    let ins: Vec<String> = (0..n_in).map(|k| format!("%in{k}")).collect();
    let in_types: Vec<String> = shapes[..n_in].iter().map(ty).collect();
    // Loops the output does not index are reductions; the output also pins every loop
    // it indexes to the right extent, the inputs may not mention some loops at all,
    // so an extra input indexes every loop directly to fix the domain.
    let iters: Vec<String> = (0..loops)
        .map(|d| {
            if out.contains(&d) {
                "\"parallel\""
            } else {
                "\"reduction\""
            }
            .to_string()
        })
        .collect();
    let all = format!("affine_map<{header} -> ({})>", dims.join(", "));
    let all_ty = format!(
        "tensor<{}xf32>",
        extents
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join("x")
    );
    let text = format!(
        "func.func @f() {{\n  %r = linalg.generic {{indexing_maps = [{}, {all}, {}], iterator_types = [{}]}} ins({}, %all : {}, {all_ty}) outs(%o : {}) {{\n  ^bb0:\n    linalg.yield\n  }} -> {}\n}}\n",
        maps_text[..n_in].join(", "),
        maps_text[n_in],
        iters.join(", "),
        ins.join(", "),
        in_types.join(", "),
        ty(&shapes[n_in]),
        ty(&shapes[n_in]),
    );
    let mut all_maps = maps[..n_in].to_vec();
    all_maps.push(IndexingMap::parse(&all).unwrap());
    all_maps.push(maps[n_in].clone());
    let mut all_shapes = shapes[..n_in].to_vec();
    all_shapes.push(extents.to_vec());
    all_shapes.push(shapes[n_in].clone());
    (text, all_maps, all_shapes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The output-view map of every operand, simplified, reads exactly what the MLIR
    /// map reads at every point of the loop nest, and utilization matches a count.
    #[test]
    fn operand_views_agree_with_the_loop_nest((extents, out, inputs) in generic_case()) {
        let (text, maps, shapes) = generic_text(&extents, &out, &inputs);
        let a = mlir::analyze(&text);
        prop_assert_eq!(a.linalg.len(), 1, "{}", text);
        let l = &a.linalg[0];
        prop_assert!(l.diagnostics.is_empty(), "{:?}\n{}", l.diagnostics, text);
        prop_assert_eq!(l.extents(), Some(extents.clone()));
        for (k, m) in maps.iter().enumerate() {
            let view = l.views[k].as_ref().expect("view");
            let mut reads: HashMap<Vec<i64>, u64> = HashMap::new();
            for p in every_index(&extents) {
                let mut dims = vec![0; view.map.dims().len()];
                let mut ranges = vec![0; view.map.range_vars().len()];
                for (d, v) in l.view_vars.iter().enumerate() {
                    match *v {
                        ViewVar::Dim(i) => dims[i] = p[d],
                        ViewVar::Range(i) => ranges[i] = p[d],
                    }
                }
                // Simplification may drop range variables no result uses.
                ranges.truncate(view.map.range_vars().len());
                let want = m.evaluate(&p, &[]).unwrap();
                prop_assert!(view.map.contains_point(&dims, &ranges, &[]), "{} at {:?}", view.map, p);
                prop_assert_eq!(view.map.evaluate(&dims, &ranges), Some(want.clone()), "{} at {:?}\n{}", view.map, p, text);
                *reads.entry(want).or_default() += 1;
            }
            let size: i64 = shapes[k].iter().product();
            let u = view.utilization.expect("utilization");
            let distinct = reads.len() as f64;
            let total: u64 = reads.values().sum();
            if u.exact {
                prop_assert!((u.fraction - distinct / size as f64).abs() < 1e-9, "{:?} vs {}/{}", u, distinct, size);
                prop_assert!((u.multiplicity - total as f64 / distinct).abs() < 1e-9);
            }
        }
    }
}

/// The implied maps of `linalg.matmul` equal the written-out generic's.
#[test]
fn matmul_implied_maps_match_the_generic_form() {
    let named = "func.func @m(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>, %c: tensor<4x5xf32>) {\n  %0 = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>\n}\n";
    let generic = "#a = affine_map<(m, n, k) -> (m, k)>\n#b = affine_map<(m, n, k) -> (k, n)>\n#c = affine_map<(m, n, k) -> (m, n)>\nfunc.func @m(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>, %c: tensor<4x5xf32>) {\n  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) {\n  ^bb0:\n    linalg.yield\n  } -> tensor<4x5xf32>\n}\n";
    let x = mlir::analyze(named);
    let y = mlir::analyze(generic);
    assert_eq!(x.linalg[0].extents(), Some(vec![4, 5, 6]));
    assert_eq!(y.linalg[0].extents(), Some(vec![4, 5, 6]));
    for k in 0..3 {
        let a = &x.linalg[0].views[k].as_ref().unwrap().map;
        let b = &y.linalg[0].views[k].as_ref().unwrap().map;
        assert_eq!(a.to_string(), b.to_string());
    }
    assert_eq!(
        x.linalg[0].views[0].as_ref().unwrap().map.to_string(),
        "(d0, d1)[s0] -> (d0, s0),\ndomain:\nd0 in [0, 3],\nd1 in [0, 4],\ns0 in [0, 5]"
    );
}

#[test]
fn named_ops_derive_their_domains() {
    let src = "func.func @n(%x: tensor<2x3x4xf32>, %y: tensor<2x4x5xf32>, %z: tensor<2x3x5xf32>, %t: tensor<3x2xf32>, %u: tensor<2x3xf32>, %v: tensor<3xf32>, %w: tensor<3x7xf32>) {\n  %0 = linalg.batch_matmul ins(%x, %y : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%z : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>\n  %1 = linalg.transpose ins(%u : tensor<2x3xf32>) outs(%t : tensor<3x2xf32>) permutation = [1, 0]\n  %2 = linalg.reduce ins(%u : tensor<2x3xf32>) outs(%v : tensor<3xf32>) dimensions = [0]\n  %3 = linalg.broadcast ins(%v : tensor<3xf32>) outs(%w : tensor<3x7xf32>) dimensions = [1]\n}\n";
    let a = mlir::analyze(src);
    let got: Vec<(String, Option<Vec<i64>>)> = a
        .linalg
        .iter()
        .map(|l| (l.op.name.clone(), l.extents()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("linalg.batch_matmul".to_string(), Some(vec![2, 3, 5, 4])),
            ("linalg.transpose".to_string(), Some(vec![3, 2])),
            ("linalg.reduce".to_string(), Some(vec![2, 3])),
            ("linalg.broadcast".to_string(), Some(vec![3, 7])),
        ]
    );
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    // transpose: out[i, j] = in[j, i]; reduce: the reduced loop is a range variable.
    assert_eq!(
        a.linalg[1].views[0]
            .as_ref()
            .unwrap()
            .map
            .to_string()
            .lines()
            .next(),
        Some("(d0, d1) -> (d1, d0),")
    );
    assert_eq!(
        a.linalg[2].views[0]
            .as_ref()
            .unwrap()
            .map
            .to_string()
            .lines()
            .next(),
        Some("(d0)[s0] -> (s0, d0),")
    );
    assert_eq!(
        a.linalg[3].views[0]
            .as_ref()
            .unwrap()
            .map
            .to_string()
            .lines()
            .next(),
        Some("(d0, d1) -> (d0),")
    );
}

/// Reshapes preserve the row-major linear position; slices are offset + i * stride.
#[test]
fn reshape_and_slice_maps_by_enumeration() {
    let src = "func.func @r(%a: tensor<6x4xf32>, %b: tensor<2x3x4xf32>, %c: tensor<10x9xf32>, %i: index) {\n  %0 = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>\n  %1 = tensor.collapse_shape %b [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>\n  %2 = tensor.extract_slice %c[1, %i] [3, 4] [2, 1] : tensor<10x9xf32> to tensor<3x4xf32>\n  %3 = tensor.extract_slice %c[2, 3] [1, 4] [1, 2] : tensor<10x9xf32> to tensor<4xf32>\n}\n";
    let a = mlir::analyze(src);
    assert_eq!(a.moves.len(), 4);
    let expand = a.moves[0].map.as_ref().unwrap();
    for p in every_index(&[2, 3, 4]) {
        let linear = (p[0] * 3 + p[1]) * 4 + p[2];
        assert_eq!(expand.evaluate(&p, &[]), Some(vec![linear / 4, linear % 4]));
    }
    let collapse = a.moves[1].map.as_ref().unwrap();
    for x in 0..24 {
        assert_eq!(
            collapse.evaluate(&[x], &[]),
            Some(vec![x / 12, (x / 4) % 3, x % 4])
        );
    }
    let slice = a.moves[2].map.as_ref().unwrap();
    assert_eq!(slice.runtime_vars().len(), 1);
    // %i may be at most 9 - 1 - 3 = 5 for 4 columns to fit.
    assert_eq!(slice.runtime_vars()[0].bounds.hi, 5);
    for p in every_index(&[3, 4]) {
        for i in 0..=5 {
            assert_eq!(
                slice.evaluate_at(&p, &[], &[i]),
                Some(vec![1 + 2 * p[0], i + p[1]])
            );
        }
    }
    let reduced = a.moves[3].map.as_ref().unwrap();
    for j in 0..4 {
        assert_eq!(reduced.evaluate(&[j], &[]), Some(vec![2, 3 + 2 * j]));
    }
}

fn sample_files(dir: &str, ext: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(format!("{SAMPLES}{dir}"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(ext))
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every `affine_map` of the samples: printed by the algebra, parsed back, printed
/// again: the same text, and the same values on a grid of points.
#[test]
fn every_sample_affine_map_round_trips() {
    let mut count = 0;
    for (name, text) in sample_files("mlir", "mlir") {
        let file = mlir::read(&text);
        for site in file.maps.iter().filter(|s| s.kind == MapKind::AffineMap) {
            let m = site
                .map
                .as_ref()
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let printed = m.to_affine_map();
            let back = IndexingMap::parse(&printed).unwrap_or_else(|e| panic!("{printed}: {e:?}"));
            assert_eq!(back.to_affine_map(), printed, "{name}");
            let n = m.dims().len();
            for p in every_index(&vec![7; n]) {
                let p: Vec<i64> = p.iter().map(|v| v - 3).collect();
                assert_eq!(
                    m.evaluate(&p, &[]),
                    back.evaluate(&p, &[]),
                    "{name}: {printed} at {p:?}"
                );
            }
            count += 1;
        }
    }
    // 3 + 1 + 1 + 8 alias definitions in the four files that have maps.
    assert_eq!(count, 13);
}

/// FileCheck patterns in CHECK lines become concrete names: `[[PID:pid(_0)?]]` and
/// `[[PID]]` → `pid`, `{{.*}}` → nothing.
fn instantiate_filecheck(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(['[', '{']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(body) = tail.strip_prefix("[[") {
            let end = body.find("]]").unwrap();
            let name = body[..end]
                .split(':')
                .next()
                .unwrap()
                .trim_start_matches('$');
            out.push_str(&name.to_lowercase());
            rest = &body[end + 2..];
        } else if let Some(body) = tail.strip_prefix("{{") {
            let end = body.find("}}").unwrap();
            rest = &body[end + 2..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The `#xla.indexing_map` texts in the CHECK lines of the XLA samples parse and
/// simplify, and the simplified map is the same function on the same domain
/// (checked at every point of the domain).
#[test]
fn xla_check_line_indexing_maps_parse_and_simplify() {
    let mut count = 0;
    for (name, text) in sample_files("xla", "hlo") {
        for line in text.lines().filter(|l| l.contains("#xla.indexing_map<")) {
            let start = line.find("#xla.indexing_map<").unwrap();
            let concrete = instantiate_filecheck(&line[start..]);
            let end = concrete.find("\">").unwrap() + 2;
            let attr = &concrete[..end];
            let m = maps::decode(MapKind::XlaIndexingMap, attr, 0)
                .unwrap_or_else(|e| panic!("{name}: {attr}: {e:?}"));
            let s = m.simplified();
            assert!(!m.dims().is_empty());
            let box_: Vec<i64> = m
                .dims()
                .iter()
                .map(|v| v.bounds.hi - v.bounds.lo + 1)
                .collect();
            for p in every_index(&box_) {
                let p: Vec<i64> = p
                    .iter()
                    .zip(m.dims())
                    .map(|(v, d)| v + d.bounds.lo)
                    .collect();
                let inside = m.contains_point(&p, &[], &[]);
                assert_eq!(inside, s.contains_point(&p, &[], &[]), "{attr} at {p:?}");
                if inside {
                    assert_eq!(
                        m.evaluate(&p, &[]),
                        s.evaluate(&p, &[]),
                        "{attr} → {s} at {p:?}"
                    );
                }
            }
            // The same text inside an MLIR document is found and decoded by the reader.
            let doc = format!("#m = {attr}\n");
            let f = mlir::read(&doc);
            assert_eq!(f.maps.len(), 1);
            assert!(
                f.maps[0].map.is_ok() && f.aliases[0].map == Some(0),
                "{doc}"
            );
            count += 1;
        }
    }
    // Every CHECK line with a map in the five Triton samples.
    assert_eq!(count, 19);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Cutting or corrupting a sample anywhere never panics and never loses the
    /// ops before the cut.
    #[test]
    fn truncated_and_corrupted_samples_never_panic(cut in 0usize..10_000, junk in "[{}()<>\\[\\]%#\"., a-z0-9\n-]{0,12}") {
        let text = std::fs::read_to_string(format!("{SAMPLES}mlir/byteir_resnet_block_fuse_ext.mlir")).unwrap();
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let broken = format!("{}{junk}", &text[..cut]);
        // Budget 0: utilization by estimate, the reading is what is under test.
        let a = mlir::analyze_with_budget(&broken, 0);
        let full = mlir::read(&text);
        // Ops whose header ends well before the cut are still read.
        let before = full.ops.iter().filter(|o| o.range.end + 200 < cut).count();
        prop_assert!(a.file.ops.len() >= before, "{} < {}", a.file.ops.len(), before);
        let mixed = format!("{junk}{}", &text[cut..]);
        let _ = mlir::analyze_with_budget(&mixed, 0);
    }
}

/// The newer transform syntax: a named sequence, `tile_sizes [..]`, `match ops{[..]}`;
/// an indivisible reduction loop, a negative size and too many sizes.
#[test]
fn tile_using_for_on_a_matched_matmul() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/mlir/matmul_tile_using_for.mlir"
    ))
    .unwrap();
    let a = mlir::analyze(&text);
    assert_eq!(a.linalg.len(), 1);
    assert_eq!(a.linalg[0].extents(), Some(vec![128, 96, 100]));
    assert_eq!(a.tiles.len(), 3);
    for t in &a.tiles {
        assert_eq!(t.targets, vec![0], "{}", t.matcher);
    }
    assert_eq!(a.tiles[0].tile_sizes, vec![8, 0, 6]);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec!["indivisible-tile", "invalid-tile-size", "tile-sizes-count"],
        "{:?}",
        a.diagnostics
    );
    let msg = &a.diagnostics[0].message;
    // 100 = 16 * 6 + 4: 17 tiles, 2 holes, in the reduction loop d2; 8 divides 128.
    assert!(msg.contains("d2: 100 is not a multiple of 6 → 17 tiles, 2 hole iterations, the last tile has 4 valid; predicate d2 < 100 (a reduction loop: masked loads must fill holes with 0, the identity of the sum of linalg.matmul)"), "{msg}");
    assert!(!msg.contains("d0:"), "{msg}");
    assert!(
        a.diagnostics[1].message.contains("must be at least 1"),
        "{}",
        a.diagnostics[1].message
    );
    // The diagnostic sits on the sizes list.
    assert_eq!(&text[a.diagnostics[0].range.clone()], "[8, 0, 6]");
}

/// Strided convolutions read rows `oh * 2 + kh`; an input too small for the output
/// is flagged, a right-sized one is not.
#[test]
fn strided_convolution_bounds() {
    let conv = |h: i64| {
        format!(
            "func.func @c(%i: tensor<1x{h}x{h}x3xf32>, %f: tensor<8x3x3x3xf32>, %o: tensor<1x4x4x8xf32>) {{\n  %0 = linalg.conv_2d_nhwc_fhwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}} ins(%i, %f : tensor<1x{h}x{h}x3xf32>, tensor<8x3x3x3xf32>) outs(%o : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>\n}}\n"
        )
    };
    // Rows read: 2 * oh + kh <= 2 * 3 + 2 = 8, so 9 rows are needed.
    let ok = mlir::analyze(&conv(9));
    assert!(ok.diagnostics.is_empty(), "{:?}", ok.diagnostics);
    let view = &ok.linalg[0].views[0].as_ref().unwrap().map;
    assert_eq!(
        view.to_string().lines().next(),
        Some("(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 * 2 + s0, d2 * 2 + s1, s2),")
    );
    let small = mlir::analyze(&conv(8));
    let codes: Vec<&str> = small.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec!["out-of-bounds", "out-of-bounds"]);
    assert!(small.diagnostics[0]
        .message
        .contains("indexed in [0, 8] along dimension 1 of extent 8"));
}
