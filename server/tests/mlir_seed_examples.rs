//! The fusion and tiling examples of the ByteIR seed (`byteir-linalg-ext.md`), one
//! test each, on the samples copied from it (`tests/data/samples/mlir`): what the
//! analysis says about each input and its fused or tiled results.

use hlo_lsp::mlir::{self, LinalgAnalysis, MlirAnalysis};

fn sample(name: &str) -> (String, MlirAnalysis) {
    let text = std::fs::read_to_string(format!(
        "{}/../tests/data/samples/mlir/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let a = mlir::analyze(&text);
    (text, a)
}

fn func_of<'a>(a: &'a MlirAnalysis, l: &LinalgAnalysis) -> &'a str {
    let f = a.file.ops[l.op.op].func.unwrap();
    &a.file.funcs[f].name
}

/// (function, op name, extents) of every analyzed op, in text order.
fn domains(a: &MlirAnalysis) -> Vec<(String, String, Option<Vec<i64>>)> {
    a.linalg
        .iter()
        .map(|l| (func_of(a, l).to_string(), l.op.name.clone(), l.extents()))
        .collect()
}

fn view_line(l: &LinalgAnalysis, k: usize) -> String {
    l.views[k].as_ref().map_or("none".into(), |v| {
        v.map.to_string().lines().next().unwrap().to_string()
    })
}

fn errors(a: &MlirAnalysis) -> Vec<(&'static str, usize)> {
    a.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| (d.code, d.range.start))
        .collect()
}

/// "Tiling along a reduction axis": the upstream `fuse` puts the `linalg.fill` inside
/// the loop over k (the accumulator is zeroed at every step), `fuse_ext` keeps it
/// outside; both tiled matmuls reduce over a k tile of 8 read through slices at `%arg2`.
#[test]
fn tile_reduction_axis_keeps_the_fill_out_of_the_k_loop() {
    let (_, a) = sample("byteir_tile_reduction_axis.mlir");
    assert!(errors(&a).is_empty(), "{:?}", a.diagnostics);
    let full = Some(vec![128, 128]);
    let d = domains(&a);
    let want = [
        ("@tiled_matmul", "linalg.fill", full.clone()),
        ("@tiled_matmul", "linalg.matmul", Some(vec![128, 128, 128])),
        ("@tile_matmul", "linalg.fill", full.clone()),
        ("@tile_matmul", "linalg.matmul", Some(vec![128, 128, 8])),
        ("@tile_matmul", "linalg.fill", full),
        ("@tile_matmul", "linalg.matmul", Some(vec![128, 128, 8])),
    ];
    assert_eq!(d.len(), want.len());
    for (got, want) in d.iter().zip(want) {
        assert_eq!((got.0.as_str(), got.1.as_str(), got.2.clone()), want);
    }
    for l in a.linalg.iter().filter(|l| l.op.name == "linalg.matmul") {
        assert_eq!(view_line(l, 0), "(d0, d1)[s0] -> (d0, s0),");
        assert_eq!(
            l.loops[2].iterator,
            Some(mlir::ops::IteratorType::Reduction)
        );
    }
    // Which fills sit inside the scf.for over k: the fuse result's, not fuse_ext's.
    let in_loop = |l: &LinalgAnalysis| {
        let region = a.file.ops[l.op.op].region;
        a.file.ops.iter().any(|o| {
            o.name == "scf.for" && a.file.regions[region].parent == Some(o.region) && {
                let r = &a.file.regions[region].range;
                r.start > o.range.start
            }
        })
    };
    let fills: Vec<bool> = a
        .linalg
        .iter()
        .filter(|l| l.op.name == "linalg.fill")
        .map(in_loop)
        .collect();
    assert_eq!(fills, vec![false, true, false]);
    // The k slices: `[0, %arg2] [128, 8]` reads columns %arg2 + d1, %arg2 ≤ 120.
    let slice = a.moves[0].map.as_ref().unwrap().to_string();
    assert!(
        slice.starts_with("(d0, d1){rt0} -> (d0, d1 + rt0),") && slice.contains("rt0 in [0, 120]"),
        "{slice}"
    );
}

/// "An intermediate as output": the elementwise producer and consumer over 512x128;
/// the results are excerpts (`...`) that read without errors.
#[test]
fn intermediate_as_output_elementwise_domains() {
    let (_, a) = sample("byteir_intermediate_as_output.mlir");
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let d = domains(&a);
    assert_eq!(
        d.len(),
        2,
        "the elided `linalg.elemwise_unary ...` are not analyzed"
    );
    for (_, _, e) in &d {
        assert_eq!(e, &Some(vec![512, 128]));
    }
    for l in &a.linalg {
        for k in 0..l.op.operands.len() {
            assert_eq!(view_line(l, k), "(d0, d1) -> (d0, d1),");
        }
    }
    assert!(a.moves.iter().all(|m| m.map.is_none()), "elided slices");
}

/// "Tiling and fusing the resnet block": `fuse_ext` with `tile_sizes = [0, 8, 0, 32]`
/// tiles the root generic's 1x56x56x256 space into 7 x 8 tiles without holes, and
/// the tiled generic of the result runs over exactly one tile (1x8x56x32).
#[test]
fn resnet_fuse_ext_tile_is_the_result_generics_domain() {
    let (_, a) = sample("byteir_resnet_block_fuse_ext.mlir");
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    assert_eq!(a.tiles.len(), 1);
    let t = &a.tiles[0];
    assert_eq!(t.tile_sizes, vec![0, 8, 0, 32]);
    assert_eq!(t.targets.len(), 1);
    let root = &a.linalg[t.targets[0]];
    assert_eq!(root.extents(), Some(vec![1, 56, 56, 256]));
    let tiling = mlir::transform::tile(t, root).unwrap().unwrap();
    assert_eq!(tiling.space.tile_counts(), vec![1, 7, 1, 8]);
    assert_eq!(tiling.space.hole_elements(), 0);
    let tile: Vec<i64> = tiling.space.splits.iter().map(|s| s.tile).collect();
    let tiled = a
        .linalg
        .iter()
        .rfind(|l| l.op.name == "linalg.generic")
        .unwrap();
    assert_eq!(tiled.extents(), Some(tile));
}

/// "Input-sharing fusion": two generics reading `%arg0` become one with three inputs
/// and two outputs; dynamic shapes leave the domain unknown, the maps identities.
#[test]
fn input_sharing_fused_generic_has_two_outputs() {
    let (_, a) = sample("byteir_input_sharing.mlir");
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let fused = a.linalg.last().unwrap();
    let ins = fused.op.operands.iter().filter(|o| !o.is_output).count();
    assert_eq!((ins, fused.op.operands.len() - ins), (3, 2));
    assert_eq!(fused.extents(), None);
    assert_eq!(fused.domain_text(), "d0 ∈ ?, d1 ∈ ?");
    for m in &fused.op.maps {
        assert_eq!(
            m.map.as_ref().unwrap().to_affine_map(),
            "affine_map<(d0, d1) -> (d0, d1)>"
        );
    }
    // The two shared reads of %arg0 before fusion, one after.
    let reads_arg0 = |l: &LinalgAnalysis| l.op.operands.iter().any(|o| o.value == "%arg0");
    assert_eq!(a.linalg.iter().filter(|l| reads_arg0(l)).count(), 5);
}

/// "Intermediate tensor dim simplification": the two generics chained through `%0`
/// become one that reads `%arg0` and writes a fresh `tensor.empty`.
#[test]
fn intermediate_dim_simplification_fuses_into_one_generic() {
    let (_, a) = sample("byteir_intermediate_dim_simplification.mlir");
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    let last = a.linalg.last().unwrap();
    let values: Vec<&str> = last.op.operands.iter().map(|o| o.value.as_str()).collect();
    assert_eq!(values, ["%arg0", "%0"]);
    // Its body does both computations (add, then multiply).
    let body: Vec<&str> = hlo_lsp::mlir::combiner::body_ops(&a.file, last.op.op)
        .into_iter()
        .map(|o| a.file.ops[o].name.as_str())
        .collect();
    assert_eq!(body, ["arith.addf", "arith.mulf", "linalg.yield"]);
}

/// "Indexing maps with constant result": `(d0, d1) -> (d0, 0)` reads a 256x1 column
/// 1024 times per element; the fused excerpt reuses the 2-D `#map1` for a 3-loop
/// generic, which the analysis flags (ByteIR's output redefines it).
#[test]
fn constant_in_affine_map_reads_a_column_and_flags_the_excerpt() {
    let (text, a) = sample("byteir_constant_in_affine_map.mlir");
    let second = &a.linalg[1];
    assert_eq!(second.extents(), Some(vec![256, 1024]));
    assert_eq!(view_line(second, 0), "(d0, d1) -> (d0, 0),");
    let u = second.views[0].as_ref().unwrap().utilization.unwrap();
    assert!(
        u.exact && (u.fraction - 1.0).abs() < 1e-9 && (u.multiplicity - 1024.0).abs() < 1e-9,
        "{u:?}"
    );
    let fused_line = text
        .find("%1 = linalg.generic {indexing_maps = [#map, #map, #map1, #map1, #map]")
        .unwrap();
    let errs = errors(&a);
    assert!(!errs.is_empty());
    assert!(
        errs.iter()
            .all(|(_, at)| *at > fused_line && *at < fused_line + 200),
        "{errs:?}"
    );
    assert!(errs.iter().any(|(c, _)| *c == "map-dimension-count"));
}
