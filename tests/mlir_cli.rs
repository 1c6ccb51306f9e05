//! End-to-end tests of `hlo-lsp mlir FILE [--json]` on the ByteIR samples and
//! constructed variants, through the built binary.

use std::process::Command;

use serde_json::{json, Value};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/samples/mlir/");
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/mlir/");

fn run(path: &str, json: bool) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"));
    cmd.arg("mlir").arg(path);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().expect("run hlo-lsp");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
    )
}

fn json(path: &str) -> (i32, Value) {
    let (code, out) = run(path, true);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON {e}: {out}")),
    )
}

fn extents(op: &Value) -> Vec<Option<i64>> {
    op["loops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["extent"].as_i64())
        .collect()
}

fn diags_with(v: &Value, code: &str) -> Vec<Value> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == code)
        .cloned()
        .collect()
}

#[test]
fn resnet_generics_show_domain_and_every_operand_map() {
    let (code, v) = json(&format!("{SAMPLES}byteir_resnet_block_fuse_ext.mlir"));
    assert_eq!(code, 0, "{v}");
    let generics: Vec<&Value> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["name"] == "linalg.generic")
        .collect();
    assert_eq!(generics.len(), 2);
    // Input: the root over the whole tensor; result: the tiled body (8 rows, 32 channels).
    assert_eq!(
        extents(generics[0]),
        vec![Some(1), Some(56), Some(56), Some(256)]
    );
    assert_eq!(
        extents(generics[1]),
        vec![Some(1), Some(8), Some(56), Some(32)]
    );
    for (g, hi) in generics.iter().zip([
        "d1 in [0, 55], d2 in [0, 55], d3 in [0, 255]",
        "d1 in [0, 7], d2 in [0, 55], d3 in [0, 31]",
    ]) {
        let operands = g["operands"].as_array().unwrap();
        assert_eq!(operands.len(), 3);
        for o in operands {
            let m = o["indexing_map"]
                .as_str()
                .unwrap_or_else(|| panic!("no map for {o}"));
            // Identity maps; the unit batch loop simplifies to the constant 0.
            assert!(
                m.starts_with("(d0, d1, d2, d3) -> (0, d1, d2, d3), domain: d0 in [0, 0], "),
                "{m}"
            );
            assert!(m.ends_with(hi), "{m}");
            assert_eq!(o["utilization"]["fraction"], 1.0);
            assert_eq!(o["utilization"]["multiplicity"], 1.0);
        }
    }
    // The convolutions: reduction loops are range variables from the output's view.
    let conv = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "linalg.conv_2d_nhwc_fhwc" && extents(o)[4] == Some(3))
        .unwrap();
    assert_eq!(
        extents(conv),
        vec![
            Some(1),
            Some(56),
            Some(56),
            Some(64),
            Some(3),
            Some(3),
            Some(64)
        ]
    );
    assert_eq!(
        conv["operands"][0]["indexing_map"],
        "(d0, d1, d2, d3)[s0, s1, s2] -> (0, d1 + s0, d2 + s1, s2), domain: d0 in [0, 0], d1 in [0, 55], d2 in [0, 55], d3 in [0, 63], s0 in [0, 2], s1 in [0, 2], s2 in [0, 63]"
    );
    assert!(diags_with(&v, "out-of-bounds").is_empty());
}

#[test]
fn divisible_tile_sizes_are_silent() {
    let (_, v) = json(&format!("{SAMPLES}byteir_resnet_block_fuse_ext.mlir"));
    let tiles = v["tiles"].as_array().unwrap();
    assert_eq!(tiles.len(), 1);
    assert_eq!(tiles[0]["tile_sizes"], serde_json::json!([0, 8, 0, 32]));
    let targets = tiles[0]["targets"].as_array().unwrap();
    // The `__root__` generic of the input function (written before the script).
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0]["at"]["line"], 26);
    let splits = targets[0]["splits"].as_array().unwrap();
    assert_eq!(splits.len(), 2);
    for s in splits {
        assert_eq!(s["holes"], 0, "{s}");
        assert!(s["predicate"].is_null());
    }
    assert!(diags_with(&v, "indivisible-tile").is_empty());
}

#[test]
fn indivisible_tile_sizes_report_holes_and_predicates() {
    let path = format!("{DATA}resnet_tile_indivisible.mlir");
    let (code, v) = json(&path);
    assert_eq!(code, 0, "warnings only: {v}");
    let d = diags_with(&v, "indivisible-tile");
    assert_eq!(d.len(), 1, "{v}");
    assert_eq!(d[0]["severity"], "warning");
    assert_eq!(d[0]["line"], 18);
    let msg = d[0]["message"].as_str().unwrap();
    // 56 = 9 * 6 + 2: 10 tiles, 4 holes; 256 = 5 * 48 + 16: 6 tiles, 32 holes.
    assert!(
        msg.contains("d1: 56 is not a multiple of 6 → 10 tiles, 4 hole iterations, the last tile has 2 valid; predicate d1 < 56"),
        "{msg}"
    );
    assert!(
        msg.contains("d3: 256 is not a multiple of 48 → 6 tiles, 32 hole iterations, the last tile has 16 valid; predicate d3 < 256"),
        "{msg}"
    );
    // Padded 1 x 60 x 56 x 288 against 1 x 56 x 56 x 256.
    let holes = 60 * 56 * 288 - 56 * 56 * 256;
    assert!(
        msg.contains(&format!("{holes} of {} tiled iterations", 60 * 56 * 288)),
        "{msg}"
    );
    let splits = v["tiles"][0]["targets"][0]["splits"].as_array().unwrap();
    let got: Vec<(i64, i64, i64)> = splits
        .iter()
        .map(|s| {
            (
                s["loop"].as_i64().unwrap(),
                s["tiles"].as_i64().unwrap(),
                s["holes"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(1, 10, 4), (3, 6, 32)]);
    assert_eq!(v["tiles"][0]["targets"][0]["holes"], holes);
    // The text form says the same.
    let (_, text) = run(&path, false);
    assert!(
        text.contains("d1: 56 by 6 → 10 tiles, 4 holes; predicate d1 < 56"),
        "{text}"
    );
    assert!(
        text.contains("warning: tile sizes [0, 6, 0, 48] do not divide"),
        "{text}"
    );
}

#[test]
fn constructed_errors_are_reported_with_positions() {
    let (code, v) = json(&format!("{DATA}errors.mlir"));
    assert_eq!(code, 1, "errors exit 1: {v}");
    let at = |c: &str| {
        diags_with(&v, c)
            .iter()
            .map(|d| d["line"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(at("loop-extent-mismatch"), vec![7]);
    assert_eq!(at("map-rank-mismatch"), vec![12]);
    assert_eq!(at("out-of-bounds"), vec![17]);
    assert_eq!(at("undefined-alias"), vec![22]);
    let oob = &diags_with(&v, "out-of-bounds")[0];
    assert!(
        oob["message"]
            .as_str()
            .unwrap()
            .contains("indexed in [1, 4] along dimension 0 of extent 4"),
        "{oob}"
    );
}

#[test]
fn every_sample_is_read_without_errors() {
    for entry in std::fs::read_dir(SAMPLES).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("mlir") {
            continue;
        }
        let (code, v) = json(path.to_str().unwrap());
        assert!(
            !v["ops"].as_array().unwrap().is_empty(),
            "{}",
            path.display()
        );
        let diags = v["diagnostics"].as_array().unwrap();
        if path.ends_with("byteir_constant_in_affine_map.mlir") {
            // A real slip of the excerpt: the fused result (line 53) uses `#map1`, defined
            // for the 2-loop input as `(d0, d1) -> (d0, 0)`, on 3 loops and rank-3 operands
            // (the pass's own `#map1` definition was elided from the document).
            assert_eq!(code, 1);
            let found: Vec<(i64, i64, &str)> = diags
                .iter()
                .map(|d| {
                    (
                        d["line"].as_i64().unwrap(),
                        d["column"].as_i64().unwrap(),
                        d["code"].as_str().unwrap(),
                    )
                })
                .collect();
            assert_eq!(
                found,
                vec![
                    (53, 53, "map-dimension-count"),
                    (53, 53, "map-rank-mismatch"),
                    (53, 60, "map-dimension-count"),
                    (53, 60, "map-rank-mismatch")
                ]
            );
            continue;
        }
        assert_eq!(code, 0, "{}: {v}", path.display());
        assert!(diags.is_empty(), "{}: {}", path.display(), v["diagnostics"]);
    }
}

#[test]
fn missing_file_is_a_usage_error() {
    let (code, _) = run("/nonexistent/x.mlir", false);
    assert_eq!(code, 2);
}

/// `mlir` given HLO text (a dump, whatever its name), or a file with nothing it
/// reads, says so in one line on stderr and exits 2, in text and JSON: never an
/// empty answer and success.
#[test]
fn hlo_text_and_files_without_ops_are_refused_in_one_line() {
    let softmax = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/softmax.hlo");
    let dump = std::fs::read_to_string(softmax).expect("softmax.hlo");
    let cases = [
        (softmax.to_string(), "this is HLO text, not MLIR"),
        (
            crate::cli_support::temp_file("mlir_cli", "dump.mlir", &dump)
                .display()
                .to_string(),
            "this is HLO text, not MLIR",
        ),
        (
            crate::cli_support::temp_file("mlir_cli", "empty.mlir", "")
                .display()
                .to_string(),
            "nothing to show",
        ),
        (
            crate::cli_support::temp_file(
                "mlir_cli",
                "arith.mlir",
                "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n  return %0 : i32\n}\n",
            )
            .display()
            .to_string(),
            "nothing to show",
        ),
    ];
    for (path, says) in &cases {
        for json in [false, true] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"));
            cmd.arg("mlir").arg(path);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.output().expect("run hlo-lsp");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{path} json={json}: {stderr}");
            assert!(out.stdout.is_empty(), "{path}: {:?}", out.stdout);
            assert_eq!(stderr.lines().count(), 1, "{path}: {stderr}");
            assert!(stderr.contains(says), "{path}: {stderr}");
        }
    }
}

/// ByteIR's `linalg_ext` ops and `tile_ext` in the text and JSON output.
#[test]
fn linalg_ext_ops_in_text_and_json() {
    let path = format!("{DATA}linalg_ext.mlir");
    let (code, v) = json(&path);
    assert_eq!(code, 0, "warnings only: {v}");
    let names: Vec<&str> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "linalg_ext.softmax",
            "linalg_ext.topk",
            "linalg_ext.scan",
            "linalg_ext.scatter",
            "linalg_ext.diag",
            "linalg_ext.batch_matmul",
            "linalg_ext.layer_norm",
            "linalg.softmax"
        ]
    );
    let ops = v["ops"].as_array().unwrap();
    assert!(ops.iter().all(|o| o["semantics"].is_string()), "{v}");
    assert_eq!(extents(&ops[1]), vec![Some(1024), Some(64)]);
    assert_eq!(ops[1]["loops"][1]["iterator"], "reduction");
    // batch_matmul "nt": rhs (batch, n, k).
    assert_eq!(
        ops[5]["operands"][1]["indexing_map"],
        "(d0, d1, d2)[s0] -> (d0, d2, s0), domain: d0 in [0, 7], d1 in [0, 31], d2 in [0, 63], s0 in [0, 127]"
    );
    let scatter_src = &ops[3]["operands"][2];
    assert!(
        scatter_src["note"]
            .as_str()
            .unwrap()
            .contains("not an affine map"),
        "{scatter_src}"
    );
    let tiles = v["tiles"].as_array().unwrap();
    assert_eq!(tiles.len(), 2);
    assert_eq!(tiles[0]["tile_sizes"], json!([4]));
    assert_eq!(tiles[0]["targets"][0]["name"], "linalg_ext.softmax");
    assert_eq!(tiles[1]["interchange"], json!([0, 1, 2]));
    let split = &tiles[1]["targets"][0]["splits"][1];
    assert_eq!(split["holes"], 8);
    assert_eq!(split["reduction"], true);
    assert_eq!(diags_with(&v, "indivisible-tile").len(), 1);
    assert_eq!(v["moves"][0]["name"], "linalg_ext.alias");

    let (code, text) = run(&path, false);
    assert_eq!(code, 0);
    assert!(
        text.contains("  semantics: scatter over the update's index space"),
        "{text}"
    );
    assert!(
        text.contains(
            "    note: written at runtime positions: rt0..rt1 are the values indices[d0, 0..2)"
        ),
        "{text}"
    );
    assert!(
        text.contains("transform.structured.tile_ext tile_sizes [32, 24] interchange [0, 1, 2]"),
        "{text}"
    );
}

/// JAX's softmax as StableHLO: every op of `@main` with the maps of the HLO
/// instruction it is (a broadcast that stretches a size-1 dimension reads its own
/// operand, through the reshape it is written with); the JSON has the same.
#[test]
fn stablehlo_ops_with_their_maps() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/stablehlo/softmax.mlir"
    );
    let (code, text) = run(path, false);
    assert_eq!(code, 0);
    let shown = text.replace(path, "softmax.mlir");
    insta::assert_snapshot!("stablehlo_mlir_summary", shown);
    let (_, v) = json(path);
    let ops = v["stablehlo"].as_array().expect("stablehlo ops");
    assert_eq!(ops.len(), 11);
    let broadcast = &ops[4];
    assert_eq!(broadcast["value"], "%4");
    assert_eq!(broadcast["opcode"], "broadcast");
    assert_eq!(broadcast["operands"][0]["value"], "%3");
    assert_eq!(
        broadcast["operands"][0]["maps"][0],
        "(d0, d1) -> (d0, 0), domain: d0 in [0, 3], d1 in [0, 7]"
    );
}

/// `cost`, `fusion`, `coalescing` and `tiles` read XLA's HLO: on a StableHLO
/// file they refuse in one line that says what to run instead, with the usage exit code
/// and nothing on stdout (not an empty answer and 0, not a list of HLO syntax errors).
/// (`sharding` reads StableHLO's shardings: `tests/cli_sharding.rs`.)
#[test]
fn hlo_only_commands_refuse_stablehlo_in_one_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/stablehlo/softmax.mlir"
    );
    for (command, options) in [
        ("cost", &[][..]),
        ("fusion", &["--simulate"]),
        ("coalescing", &[]),
        ("tiles", &[]),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hlo-lsp"))
            .arg(command)
            .arg(path)
            .args(options)
            .output()
            .expect("run hlo-lsp");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(out.stdout.is_empty(), "{command}: {:?}", out.stdout);
        assert_eq!(stderr.lines().count(), 1, "{command}: {stderr}");
        assert!(
            stderr.contains("this is StableHLO, not HLO text") && stderr.contains("hlo-lsp mlir"),
            "{command}: {stderr}"
        );
    }
}

/// The StableHLO text of the JAX program `name` of `tests/data/stablehlo/programs.jsonl`.
fn jax_program(name: &str) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/stablehlo/programs.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("programs.jsonl");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .find(|v| v["name"] == name)
        .and_then(|v| v["stablehlo"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no program {name}"))
}

/// Ops in regions have their maps: a fori_loop's cond and body (relative to the
/// carried values, the block arguments), a shard_map's body on per-shard shapes
/// and the reducer of the psum in it, each saying which region it is in.
#[test]
fn stablehlo_ops_in_regions_with_their_maps() {
    let fori = crate::cli_support::temp_file("mlir_cli", "fori.mlir", jax_program("fori_loop"));
    let (code, text) = run(fori.to_str().unwrap(), false);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("%1 = stablehlo.compare (compare in @main, cond of %0 = stablehlo.while)\n  %iterArg_0: () -> ()"),
        "{text}"
    );
    assert!(
        text.contains("%2 = stablehlo.add (add in @main, body of %0 = stablehlo.while)"),
        "{text}"
    );
    let path =
        crate::cli_support::temp_file("mlir_cli", "shard_map.mlir", jax_program("shard_map"));
    let (code, v) = json(path.to_str().unwrap());
    assert_eq!(code, 0);
    let ops = v["stablehlo"].as_array().expect("stablehlo ops");
    let sine = ops
        .iter()
        .find(|o| o["name"] == "stablehlo.sine")
        .expect("sine");
    assert_eq!(
        sine["region"],
        "per-shard body of %0 = sdy.manual_computation"
    );
    assert_eq!(
        sine["operands"][0]["maps"][0],
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 3]"
    );
    let reducer = ops
        .iter()
        .find(|o| o["name"] == "stablehlo.add")
        .expect("add");
    assert_eq!(reducer["region"], "reducer of %5 = stablehlo.all_reduce");
}
