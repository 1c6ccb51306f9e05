//! End-to-end tests of the tiling analysis through the real binary:
//! `hlo-lsp tiles` (text and JSON, configured and given sizes, bad input) and the
//! tiling diagnostics of `hlo-lsp check`, on constructed fusions with known
//! answers and on XLA's Triton samples.

use crate::cli_support;

use cli_support::{run, stdout};
use serde_json::Value;

fn data(relative: &str) -> String {
    format!("{}/../tests/data/{relative}", env!("CARGO_MANIFEST_DIR"))
}

fn tiles_json(file: &str, extra: &[&str]) -> (Value, i32) {
    let path = data(file);
    let mut args = vec!["tiles", path.as_str(), "--json"];
    args.extend_from_slice(extra);
    let o = run(&args);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), String::from_utf8_lossy(&o.stderr)));
    (v, o.status.code().unwrap_or(-1))
}

fn check_json(file: &str) -> Vec<Value> {
    let o = run(&["check", &data(file), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("check --json");
    v["diagnostics"].as_array().unwrap().clone()
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn extent_six_split_by_four() {
    let (v, code) = tiles_json("tiling/split_6_by_4.hlo", &[]);
    assert_eq!(code, 0, "a valid tiling with holes exits 0");
    let out = &v["fusions"][0]["outputs"][0];
    assert_eq!(out["splits"][0]["tiles"], 2);
    assert_eq!(out["splits"][0]["holes"], 2);
    assert_eq!(out["splits"][0]["predicate"], "d0 < 6");
    assert_eq!(out["predicates"], serde_json::json!(["d0 < 6"]));
    assert_eq!(
        v["fusions"][0]["summary"],
        "tiles 4 · 1 predicate · 0 holes in reductions"
    );
    let text = stdout(&run(&["tiles", &data("tiling/split_6_by_4.hlo")]));
    assert!(
        text.contains("split d0: extent 6 by 4: 2 tiles, 2 holes in the last tile, guard d0 < 6"),
        "{text}"
    );
    let diagnostics = check_json("tiling/split_6_by_4.hlo");
    // The 4-element f32 tile also reads only 16 contiguous bytes (issue 12).
    assert_eq!(
        codes(&diagnostics),
        ["indivisible-tile", "uncoalesced-read", "indivisible-tile"]
    );
    // The emitter masks the partial last tile: normal codegen, reported as information
    // with the holes and the predicate.
    assert!(diagnostics.iter().all(|d| d["severity"] == "information"));
    assert!(
        diagnostics[2]["message"]
            .as_str()
            .unwrap()
            .contains("2 tiles, the last one masked by `d0 < 6` (2 holes)"),
        "{diagnostics:?}"
    );
}

#[test]
fn xla_triton_tests_get_no_warnings() {
    // XLA's own valid Triton tests: masked partial tiles (information), and the
    // maximum reduction whose init 0 masks its holes correctly (information too).
    for sample in [
        "samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo",
        "samples/xla/xla__backends__gpu__tests__pdl.hlo",
        "samples/xla/xla__backends__gpu__codegen__triton__tests__concat__concat_fusion.hlo",
        "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
    ] {
        let diagnostics = check_json(sample);
        assert!(!diagnostics.is_empty(), "{sample}: the masked tiles are reported");
        let loud: Vec<&Value> = diagnostics
            .iter()
            .filter(|d| d["severity"] != "information")
            .collect();
        assert!(loud.is_empty(), "{sample}: {loud:?}");
        assert_eq!(run(&["check", &data(sample)]).status.code(), Some(0), "{sample}");
    }
    let diagnostics = check_json(
        "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
    );
    let holes = diagnostics
        .iter()
        .find(|d| d["code"] == "reduction-holes")
        .expect("the reduction's holes are named");
    assert!(
        holes["message"]
            .as_str()
            .unwrap()
            .contains("masked with the init value 0: not the identity (-inf), but maximum is idempotent, so they do not change the result"),
        "{holes}"
    );
}

#[test]
fn merge_then_indivisible_split_is_invalid_and_non_contiguous() {
    let (v, code) = tiles_json("tiling/merge_2x5_split_4.hlo", &[]);
    assert_eq!(code, 1, "an invalid tiling exits 1");
    let out = &v["fusions"][0]["outputs"][0];
    assert_eq!(out["valid"], false);
    assert_eq!(out["non_contiguous"][0]["inner_extent"], 5);
    assert_eq!(out["non_contiguous"][0]["tile"], 4);
    assert_eq!(out["suggestion"]["sizes"], serde_json::json!([10]));
    let diagnostics = check_json("tiling/merge_2x5_split_4.hlo");
    let found = codes(&diagnostics);
    for want in ["invalid-tiling", "non-contiguous-tile", "indivisible-tile"] {
        assert!(found.iter().any(|c| c == want), "{want} in {found:?}");
    }
    let errors: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "invalid-tiling")
        .collect();
    assert_eq!(errors.len(), 2, "on the fusion and on the reshape");
    assert!(errors.iter().all(|d| d["severity"] == "error"));
    // check exits 1 on errors.
    assert_eq!(
        run(&["check", &data("tiling/merge_2x5_split_4.hlo")])
            .status
            .code(),
        Some(1)
    );
    // Valid sizes given on the command line: 10 tiles the merge whole.
    let (v, code) = tiles_json("tiling/merge_2x5_split_4.hlo", &["--sizes", "10"]);
    assert_eq!(code, 0);
    assert_eq!(v["fusions"][0]["valid"], true);
    let reads = &v["fusions"][0]["outputs"][0]["reads"];
    let p0 = reads
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instruction"] == "p0")
        .unwrap();
    assert_eq!(p0["sizes"], serde_json::json!([2, 5]));
}

#[test]
fn reduction_holes_and_init_value() {
    let (v, _) = tiles_json("tiling/sum_init_one.hlo", &[]);
    let r = &v["fusions"][0]["outputs"][0]["reductions"][0];
    assert_eq!(r["holes"], 28);
    assert_eq!(r["reducer"], "add");
    assert_eq!(r["identity"], "0");
    assert_eq!(r["init"], "1");
    assert_eq!(r["init_is_identity"], false);
    assert_eq!(
        v["fusions"][0]["summary"],
        "tiles 2 · 0 predicates · 28 holes in reductions"
    );
    let diagnostics = check_json("tiling/sum_init_one.hlo");
    assert_eq!(codes(&diagnostics), ["reduction-holes", "reduction-holes"]);
    // A sum whose holes are masked with init 1: a real hazard, a warning.
    assert!(diagnostics.iter().all(|d| d["severity"] == "warning"));
    assert!(diagnostics[0]["message"].as_str().unwrap().contains(
        "masked with the init value 1: not the identity of add (0): the holes change the result"
    ));
}

#[test]
fn divisible_tiles_have_no_findings() {
    let (v, code) = tiles_json("tiling/valid_tiles.hlo", &[]);
    assert_eq!(code, 0);
    let out = &v["fusions"][0]["outputs"][0];
    assert_eq!(out["splits"], serde_json::json!([]));
    let p0 = &out["reads"][0];
    assert_eq!(p0["offsets"], serde_json::json!(["t1 * 16", "t0 * 8"]));
    assert_eq!(p0["sizes"], serde_json::json!([16, 8]));
    // No tiling finding; the coalescing analysis (issue 12) informs that the
    // transposed read takes rows of 8 f32 (32 bytes, half a transaction).
    let found = check_json("tiling/valid_tiles.hlo");
    assert_eq!(codes(&found), ["uncoalesced-read"]);
    assert_eq!(found[0]["severity"], "information");
}

#[test]
fn triton_samples_output_tiles() {
    // XLA's generic emitter test: 1x1x127 is padded to a block of 128 over a
    // maximum reduction whose init 0 is not -inf (correct anyway: max is idempotent).
    let (v, code) = tiles_json(
        "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
        &[],
    );
    assert_eq!(code, 0);
    let out = &v["fusions"][0]["outputs"][0];
    assert_eq!(out["blocks"], serde_json::json!([1, 1, 128]));
    assert_eq!(out["predicates"], serde_json::json!(["d2 < 127"]));
    let r = &out["reductions"][0];
    assert_eq!(
        (r["holes"].as_i64(), r["identity"].as_str()),
        (Some(1), Some("-inf"))
    );
    assert_eq!(r["init_is_identity"], false);
    // concat: 281 by 32 → 9 tiles, 7 holes; the concatenate ranges are read predicates.
    let (v, _) = tiles_json(
        "samples/xla/xla__backends__gpu__codegen__triton__tests__concat__concat_fusion.hlo",
        &[],
    );
    let out = &v["fusions"][0]["outputs"][0];
    assert_eq!(
        (
            out["splits"][0]["tiles"].as_i64(),
            out["splits"][0]["holes"].as_i64()
        ),
        (Some(9), Some(7))
    );
    let preds: Vec<&str> = out["read_predicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["predicate"].as_str().unwrap())
        .collect();
    assert!(preds.contains(&"d0 in [128, 255]"), "{preds:?}");
    // kernel_reuse: escaped JSON in a string, 16x16 over 15x17, two fusions.
    let (v, _) = tiles_json(
        "samples/xla/xla__backends__gpu__tests__kernel_reuse.hlo",
        &[],
    );
    assert_eq!(v["fusions"].as_array().unwrap().len(), 2);
    for f in v["fusions"].as_array().unwrap() {
        assert_eq!(
            f["outputs"][0]["predicates"],
            serde_json::json!(["d0 < 15", "d1 < 17"])
        );
        assert_eq!(
            f["summary"],
            "tiles 16x16 · 2 predicates · 0 holes in reductions"
        );
    }
    // pdl: bare keys and numbers (64x32), and a quoted 4x4 softmax tiling.
    let (v, _) = tiles_json("samples/xla/xla__backends__gpu__tests__pdl.hlo", &[]);
    let sizes: Vec<Value> = v["fusions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["outputs"][0]["sizes"].clone())
        .collect();
    assert_eq!(
        sizes,
        [serde_json::json!([4, 4]), serde_json::json!([64, 32])]
    );
    // dot: 1x16x64 divides 16x32x512: valid, no predicates.
    let (v, code) = tiles_json(
        "samples/xla/xla__backends__gpu__codegen__triton__tests__dot__dot.hlo",
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(
        v["fusions"][0]["summary"],
        "tiles 1x16x64 · 0 predicates · 0 holes in reductions"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let o = run(&["tiles", &data("tiling/split_6_by_4.hlo"), "--sizes", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least 1"));
    let o = run(&["tiles", &data("tiling/split_6_by_4.hlo"), "--sizes", "4,4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("rank 2"),
        "{o:?}"
    );
    let o = run(&[
        "tiles",
        &data("tiling/split_6_by_4.hlo"),
        "--fusion",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no fusion named nope"));
    // With --sizes given, the error does not ask for them.
    let o = run(&[
        "tiles",
        &data("tiling/split_6_by_4.hlo"),
        "--fusion",
        "nope",
        "--sizes",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("no fusion named nope") && !stderr.contains("give --sizes"),
        "{stderr}"
    );
    let o = run(&[
        "tiles",
        &data("samples/xla/xla__tools__print_indexing_test.hlo"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no fusion with output_tiles"));
    let o = run(&["tiles", "/nonexistent.hlo"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 31: a rank-0 (scalar) fusion has one tile and no size to give, and
/// `--sizes ""` was refused by the argument parser. An empty list tiles it; a rank-1
/// fusion still refuses it by rank, and a list with an empty number is still an error.
#[test]
fn an_empty_size_list_tiles_a_scalar_fusion() {
    let scalar = "HloModule m\n\nfused {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  \
                  ROOT add = f32[] add(p0, p1)\n}\n\nENTRY main {\n  a = f32[] parameter(0)\n  \
                  b = f32[] parameter(1)\n  ROOT fusion = f32[] fusion(a, b), kind=kLoop, calls=fused\n}\n";
    let path = cli_support::temp_file("tiling-cli", "scalar.hlo", scalar);
    let path = path.to_str().unwrap();
    let o = run(&["tiles", path, "--sizes", "", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let output = &v["fusions"][0]["outputs"][0];
    assert_eq!(output["extents"], serde_json::json!([]), "{v}");
    assert_eq!(output["sizes"], serde_json::json!([]), "{v}");
    let o = run(&["tiles", path, "--sizes="]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).contains("1 tiles"), "{}", stdout(&o));

    let o = run(&["tiles", &data("tiling/split_6_by_4.hlo"), "--sizes", ""]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("rank 0"),
        "{o:?}"
    );
    let o = run(&["tiles", path, "--sizes", "4,"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}
