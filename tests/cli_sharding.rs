//! End-to-end tests of `hlo-lsp sharding` through the built binary, on a real
//! JAX program sharded over a 2x4 mesh (`tests/data/jax/sharded_mlp.*.hlo`,
//! made by `make_sharded.py`): the lowered module's shapes are read as global,
//! the compiled one's as per device, and both give the same tiles; `--device`
//! says what one device holds; the replica groups of the compiled
//! all-reduce decode to device sets; bad input exits 2.

use crate::cli_support;

use std::path::{Path, PathBuf};

use cli_support::{run, stderr, stdout};
use serde_json::Value;

fn data(rel: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data")
        .join(rel);
    path.to_string_lossy().into_owned()
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

fn entry<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

#[test]
fn the_compiled_module_is_read_per_device() {
    let v = json(&["sharding", &data("jax/sharded_mlp.after.hlo"), "--json"]);
    assert_eq!(v["assumed"], "partitioned", "{v}");
    assert_eq!(v["devices"], 8);
    // w: f32[64,128] with columns over the mesh's 4-way axis, each column
    // block on the 2 devices of the other axis: 0,4 / 1,5 / 2,6 / 3,7.
    let w = entry(&v, "param.1");
    assert_eq!(w["global_shape"], serde_json::json!([64, 128]));
    assert_eq!(w["shard_shape"], serde_json::json!([64, 32]));
    assert_eq!(w["replicated_over"], 2);
    let tiles = w["tiles"].as_array().unwrap();
    assert_eq!(tiles.len(), 4);
    assert_eq!(tiles[1]["devices"], serde_json::json!([1, 5]));
    assert_eq!(tiles[1]["start"], serde_json::json!([0, 32]));
    assert_eq!(tiles[1]["limit"], serde_json::json!([64, 64]));
    let words = w["description"].as_str().unwrap();
    assert!(
        words.contains("dim 1 split 4 ways, each tile on 2 devices (replicated)"),
        "{words}"
    );
    // The all-reduce over the mesh's axis 1: one group per row of the mesh.
    let groups = &v["collectives"][0];
    assert_eq!(
        groups["groups"],
        serde_json::json!([[0, 1, 2, 3], [4, 5, 6, 7]]),
        "{groups}"
    );
}

#[test]
fn both_dumps_give_the_same_tiles() {
    let before = json(&["sharding", &data("jax/sharded_mlp.before.hlo"), "--json"]);
    let after = json(&["sharding", &data("jax/sharded_mlp.after.hlo"), "--json"]);
    assert_eq!(before["assumed"], "global", "{before}");
    for (b, a) in [("x.1", "param"), ("w.1", "param.1")] {
        assert_eq!(
            entry(&before, b)["tiles"],
            entry(&after, a)["tiles"],
            "{b} / {a}"
        );
    }
    // Overriding the guess reads the compiled module's shapes as global.
    let forced = json(&[
        "sharding",
        &data("jax/sharded_mlp.after.hlo"),
        "--json",
        "--as",
        "global",
    ]);
    assert_eq!(forced["assumed"], "global");
    assert_eq!(
        entry(&forced, "param.1")["global_shape"],
        serde_json::json!([64, 32])
    );
}

#[test]
fn a_device_says_what_it_holds() {
    let o = run(&[
        "sharding",
        &data("jax/sharded_mlp.after.hlo"),
        "--instruction",
        "param.1",
        "--device",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("shapes read as partitioned"), "{out}");
    assert!(
        out.contains("device 5 holds [0:64, 32:64] of f32[64,128]"),
        "{out}"
    );
}

#[test]
fn bad_input_is_an_error() {
    let o = run(&[
        "sharding",
        &data("jax/sharded_mlp.after.hlo"),
        "--instruction",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope"), "{}", stderr(&o));
    let bad = cli_support::temp_file(
        "sharding",
        "bad.hlo",
        "HloModule m\n\nENTRY e {\n  ROOT p = f32[4] parameter(0), sharding={devices=[2]0,1,2}\n}\n",
    );
    let o = run(&["sharding", bad.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let error = v["instructions"][0]["error"].as_str().unwrap();
    assert!(error.contains("at byte"), "{error}");
}

#[test]
fn the_readme_examples_print_what_they_show() {
    cli_support::check_readme_examples("sharding");
}

#[test]
fn a_tuple_sharding_on_an_array_is_reported() {
    let file = cli_support::temp_file(
        "sharding",
        "mismatch.hlo",
        "HloModule m, num_partitions=4\n\nENTRY e {\n  ROOT r = f32[4] parameter(0), sharding={{replicated}}\n}\n",
    );
    let v = json(&["sharding", file.to_str().unwrap(), "--json"]);
    let error = v["instructions"][0]["error"].as_str().unwrap_or("");
    assert!(error.contains("does not fit"), "{v}");
}

/// The compiled all-reduce: the mesh axis its groups run along, the bytes each
/// device sends in XLA's ring (2·3/4 of 32 B), why it is there, and on a GPU
/// the collective model's time, the number `hlo-lsp cost` prints for it.
#[test]
fn a_collective_says_its_axis_bytes_cause_and_time() {
    let v = json(&["sharding", &data("jax/sharded_mlp.after.hlo"), "--json"]);
    let c = &v["collectives"][0];
    assert_eq!(c["mesh_axes"], serde_json::json!([1]), "{c}");
    assert_eq!(c["sends_bytes"], 48, "{c}");
    assert_eq!(c["receives_bytes"], 48, "{c}");
    assert!(
        c["why"][0]
            .as_str()
            .unwrap_or("")
            .starts_with("%param.1 splits dim 1 4 ways over axis 1 of the 2x4 mesh"),
        "{c}"
    );
    assert!(
        c.get("estimate_us").is_none(),
        "a CPU dump is not timed: {c}"
    );
    let on_gpu = json(&[
        "sharding",
        &data("jax/sharded_mlp.after.hlo"),
        "--json",
        "--gpu",
        "h100",
    ]);
    let cost = json(&[
        "cost",
        &data("jax/sharded_mlp.after.hlo"),
        "--json",
        "--device",
        "h100",
    ]);
    let kernel = cost["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "all-reduce")
        .cloned()
        .unwrap_or_else(|| panic!("{cost}"));
    let ours = on_gpu["collectives"][0]["estimate_us"].as_f64().unwrap();
    let theirs = kernel["exec_time_us"]
        .as_f64()
        .unwrap_or_else(|| panic!("{kernel}"));
    // `cost --json` rounds to the nanosecond.
    assert!((ours - theirs).abs() < 1e-3, "{ours} vs {theirs}");
}

/// StableHLO as JAX lowers it, with Shardy's attributes and with GSPMD's
/// strings: the same tiles as the compiled module's parameters.
#[test]
fn stablehlo_shardings_are_read_in_both_spellings() {
    let after = json(&[
        "sharding",
        &data("jax/spmd/partial_sums.after.hlo"),
        "--json",
    ]);
    for flavour in ["sdy", "gspmd"] {
        let v = json(&[
            "sharding",
            &data(&format!("jax/spmd/partial_sums.{flavour}.mlir")),
            "--json",
        ]);
        assert_eq!(v["assumed"], "global", "{v}");
        for (ours, compiled) in [("arg0", "param"), ("arg1", "param.1")] {
            assert_eq!(
                entry(&v, ours)["tiles"],
                entry(&after, compiled)["tiles"],
                "{flavour}: {ours}"
            );
        }
    }
    // A shard_map body over both axes: its values are each device's own.
    let v = json(&["sharding", &data("jax/spmd/permute.sdy.mlir"), "--json"]);
    assert!(
        v["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["global_shape"] == serde_json::json!([16, 32])
                && e["shard_shape"] == serde_json::json!([8, 8])),
        "{v}"
    );
}

/// On a partitioned module, memory and cost say their totals are one device's.
#[test]
fn memory_and_cost_say_per_device_on_a_partitioned_module() {
    let o = run(&["memory", &data("jax/sharded_mlp.after.hlo")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("per device (XLA partitioned the module over 8 devices"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "cost",
        &data("jax/sharded_mlp.after.hlo"),
        "--device",
        "h100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("per device: XLA partitioned the module over 8 devices"),
        "{}",
        stdout(&o)
    );
    let o = run(&["memory", &data("jax/sharded_mlp.before.hlo")]);
    assert!(!stdout(&o).contains("per device"), "{}", stdout(&o));
}

/// A program with no sharding says so in a line of its own (StableHLO and HLO alike),
/// rather than a header over an empty list.
#[test]
fn an_unsharded_program_says_nothing_is_sharded() {
    for file in ["stablehlo/softmax.mlir", "jax/softmax.after.hlo"] {
        let o = run(&["sharding", &data(file)]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("; 1 device\n"), "{file}: {out}");
        assert!(
            out.contains("nothing sharded: no instruction has a sharding and no collective has replica groups"),
            "{file}: {out}"
        );
    }
}

/// Shardy's sub-axes from a real program (`jax/subaxes/make_subaxes.py`): a
/// reshape splits a sharded dimension, and Shardy shards the halves over
/// pieces of the axis (`"d":(1)2`, `"d":(2)4`). Each value's sharding, read from
/// Shardy's propagated module, is the one XLA itself wrote after `shardy-xla`.
#[test]
fn shardy_sub_axes_read_as_xla_converts_them() {
    let shardings = |file: &str| -> Vec<String> {
        let v = json(&["sharding", &data(file), "--json"]);
        v["instructions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["sharding"].as_str().unwrap().to_string())
            .collect()
    };
    for case in ["line_split", "mesh_split"] {
        let ours = shardings(&format!("jax/subaxes/{case}.propagated.mlir"));
        let xla = shardings(&format!("jax/subaxes/{case}.shardy_xla.hlo"));
        // The argument, the reshape, the sine and the reduce, in that order.
        assert_eq!(ours.len(), 4, "{case}: {ours:?}");
        assert_eq!(ours[..], xla[..4], "{case}");
    }
}

/// A mesh of one axis (llama3 over 8 devices, `<=[8]` tilings): every
/// collective over all 8 names the axis.
#[test]
fn a_one_axis_mesh_names_its_axis() {
    let file = data(
        "samples/xla/xla__tools__benchmarks__hlo__hlo_llama3_8b_bf16_activation_offloading_1x8.hlo",
    );
    let v = json(&["sharding", &file, "--json"]);
    let collectives = v["collectives"].as_array().unwrap();
    assert!(collectives.len() > 60, "{}", collectives.len());
    for c in collectives {
        assert_eq!(c["mesh_axes"], serde_json::json!([0]), "{c}");
    }
    let text = stdout(&run(&["sharding", &file]));
    assert!(
        text.contains("1 group of 8 devices over axis 0 of the 8-device mesh"),
        "{text}"
    );
}

/// `stablehlo.collective_permute` (a `ppermute` in a `shard_map`) reads as
/// HLO's collective-permute: its pairs and the shift they make.
#[test]
fn a_stablehlo_permute_reads_as_hlo_s() {
    let mlir = stdout(&run(&["sharding", &data("jax/spmd/permute.sdy.mlir")]));
    let hlo = stdout(&run(&["sharding", &data("jax/spmd/permute.after.hlo")]));
    let pairs = "collective-permute: 8 pairs = [[0,1],[1,2],[2,3],[3,0],[4,5],[5,6],[6,7],[7,4]]";
    assert!(mlir.contains(pairs), "{mlir}");
    assert!(hlo.contains(pairs), "{hlo}");
    assert!(
        mlir.contains(
            "each device sends to the next device along axis 1 ('y') of the 2x4 mesh (cyclic)"
        ),
        "{mlir}"
    );
}

/// Before partitioning, `sharding` predicts what XLA's partitioner inserts
/// (JAX's before-optimizations dump of a Megatron MLP: one all-reduce over y at
/// the second dot), in text and JSON; after it, nothing is predicted.
#[test]
fn the_collectives_of_a_module_before_partitioning_are_predicted() {
    let before = data("jax/predict/mlp_megatron.before.hlo");
    let v = json(&["sharding", &before, "--json"]);
    assert_eq!(v["assumed"], "global", "{v}");
    let predicted = v["predicted"]["collectives"].as_array().unwrap();
    assert_eq!(predicted.len(), 1, "{v}");
    let p = &predicted[0];
    assert_eq!(p["kind"], "all-reduce");
    assert_eq!(p["instruction"], "dot_general.4");
    assert_eq!(p["mesh_axes"], serde_json::json!([1]));
    assert_eq!(p["groups"], serde_json::json!([[0, 1, 2, 3], [4, 5, 6, 7]]));
    // f32[16,64] over 2 (x) rows: 8x64x4 = 2 KiB per device, a ring of 4.
    assert_eq!(p["bytes_per_device"], 2048);
    assert_eq!(p["sends_bytes"], 3072);
    let text = stdout(&run(&["sharding", &before]));
    assert!(
        text.contains("dot_general.4: all-reduce over axis 1 ('y') of the 2x4 mesh, each device sends 3.0 KiB"),
        "{text}"
    );
    // A dot whose operands split the same axis on free dimensions: XLA
    // chooses by cost, so it is said, not guessed.
    let conflict = json(&[
        "sharding",
        &data("jax/predict/dot_conflict.before.hlo"),
        "--json",
    ]);
    let why = conflict["predicted"]["unpredicted"][0]["why"]
        .as_str()
        .unwrap();
    assert!(why.contains("chosen by cost"), "{why}");
    let after = json(&[
        "sharding",
        &data("jax/predict/mlp_megatron.after.hlo"),
        "--json",
    ]);
    assert!(after.get("predicted").is_none(), "{after}");
}
