//! The SPMD programs of the repository's test data, read as a user reads them:
//! every `sharding=` and every collective's devices decode without a warning,
//! the tiles of JAX's programs (HLO after XLA's partitioner, StableHLO with and
//! without Shardy) are the ones JAX's own `devices_indices_map` gives
//! (`tests/data/jax/spmd/indices.json`, written by `make_spmd.py`), and each
//! collective names its mesh axes, bytes and cause.

use std::path::{Path, PathBuf};

use hlo_lsp::analysis;
use hlo_lsp::model::{self, HloFile};
use hlo_lsp::sharding::{self, collective, Written};
use serde_json::Value;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// Every HLO file of the test data (but the conformance inputs, which hold
/// bad shardings on purpose) that shards or communicates.
fn spmd_programs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("conformance") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "hlo") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if ["sharding={", "replica_groups=", "source_target_pairs="]
                    .iter()
                    .any(|k| text.contains(k))
                {
                    out.push(path);
                }
            }
        }
    }
    let mut out = vec![];
    walk(&data(), &mut out);
    out.sort();
    out
}

/// At least these programs shard: the two JAX dumps, the five of `spmd/`, two
/// of XLA's samples. The floor may only go up.
const PROGRAMS: usize = 9;

#[test]
fn every_sharding_and_replica_group_of_the_spmd_programs_decodes() {
    let programs = spmd_programs();
    assert!(programs.len() >= PROGRAMS, "{programs:?}");
    let mut failures = vec![];
    let (mut shardings, mut collectives) = (0, 0);
    for path in &programs {
        let text = std::fs::read_to_string(path).unwrap();
        let file = model::parse_hlo(&text);
        for module in &file.modules {
            let view = analysis::view::borrowed(module);
            let (written, _) = sharding::written_shapes(module, Some(&path.to_string_lossy()));
            for s in sharding::sharded_instructions(module) {
                shardings += 1;
                let parsed = match &s.sharding {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("{}: %{}: {e}", path.display(), s.instruction.name));
                        continue;
                    }
                };
                let devices = Some(module.num_partitions().max(1));
                for layout in sharding::layouts(&s.instruction.shape, parsed, written, devices) {
                    if let Err(e) = &layout.tiles {
                        failures.push(format!("{}: %{}: {e}", path.display(), s.instruction.name));
                    }
                }
            }
            for computation in module.computations() {
                for instruction in &computation.model().instructions {
                    match collective::explain(module, &view, computation, instruction) {
                        None => {}
                        Some(Ok(_)) => collectives += 1,
                        Some(Err(e)) => {
                            failures.push(format!("{}: %{}: {e}", path.display(), instruction.name))
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        shardings >= 15 && collectives >= 6,
        "{shardings} shardings, {collectives} collectives"
    );
}

/// Each device with the start and the limit of its tile, by device.
type DeviceTiles = Vec<(i64, Vec<i64>, Vec<i64>)>;

/// The tiles of `value`'s sharding as JAX lays them: device → `[[start, stop], ...]`.
fn jax_tiles(value: &Value) -> DeviceTiles {
    let mut out: DeviceTiles = value["devices_indices_map"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(d, ranges)| {
            let ranges = ranges.as_array().unwrap();
            let start = ranges.iter().map(|r| r[0].as_i64().unwrap()).collect();
            let stop = ranges.iter().map(|r| r[1].as_i64().unwrap()).collect();
            (d.parse().unwrap(), start, stop)
        })
        .collect();
    out.sort();
    out
}

/// Our tiles of the parameter `k` of ENTRY in `file`, read as `written`.
fn our_tiles(file: &HloFile, k: u32, written: Written) -> (String, DeviceTiles) {
    let module = &file.modules[0];
    let entry = module.entry_computation().expect("ENTRY");
    let param = entry
        .model()
        .instructions
        .iter()
        .find(|i| i.parameter_number == Some(k))
        .expect("parameter");
    let text = entry.src(param.attribute("sharding").expect("sharded").value_range);
    let parsed = sharding::parse(text).expect("reads");
    let layout = sharding::layouts(&param.shape, &parsed, written, Some(8)).remove(0);
    let tiles = layout.tiles.expect("tiles");
    let mut out = vec![];
    for tile in &tiles.tiles {
        for &d in &tile.devices {
            out.push((d, tile.start.clone(), tile.limit.clone()));
        }
    }
    out.sort();
    (layout.leaf.to_text(false), out)
}

/// Every argument of every JAX program: the compiled module's per-device
/// parameter and both StableHLO spellings give JAX's tiles and its HloSharding.
#[test]
fn the_tiles_of_jax_programs_are_jax_devices_indices_map() {
    let dir = data().join("jax/spmd");
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("indices.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (case, entry) in record.as_object().unwrap() {
        let after = std::fs::read_to_string(dir.join(format!("{case}.after.hlo"))).unwrap();
        let mut files = vec![("after", model::parse_hlo(&after), Written::PerDevice)];
        for flavour in ["sdy", "gspmd"] {
            let text = std::fs::read_to_string(dir.join(format!("{case}.{flavour}.mlir"))).unwrap();
            let mlir = hlo_lsp::mlir::read(&text);
            let hlo = hlo_lsp::mlir::stablehlo::translate(&text, &mlir).hlo;
            files.push((flavour, model::parse_hlo(&hlo), Written::Global));
        }
        let args = entry["values"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["value"].as_str().unwrap().starts_with("arg"));
        for (k, value) in args.enumerate() {
            for (flavour, file, written) in &files {
                let (text, ours) = our_tiles(file, k as u32, *written);
                assert_eq!(ours, jax_tiles(value), "{case} arg{k} ({flavour})");
                assert_eq!(text, value["hlo_sharding"], "{case} arg{k} ({flavour})");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18, "6 arguments in 3 spellings");
}

/// Each collective of the compiled programs: its mesh axis, the bytes each
/// device moves (XLA's ring: 2(n-1)/n of the buffer for an all-reduce,
/// (n-1)/n of the gathered array for an all-gather) and its cause.
#[test]
fn each_collective_says_its_axis_bytes_and_cause() {
    let dir = data().join("jax/spmd");
    let cases = [
        (
            "all_gather",
            "axis 1 of the 2x4 mesh",
            1536,
            "which this all-gather makes whole",
        ),
        (
            "partial_sums",
            "axis 1 of the 2x4 mesh",
            3072,
            "dim 1 4 ways over axis 1 of the 2x4 mesh, and that dim is summed",
        ),
        (
            "all_to_all",
            "axis 1 of the 2x4 mesh",
            768,
            "the split moves to another dimension",
        ),
        ("both_axes", "8 devices", 42, "summed on the way here"),
        (
            "permute",
            "8 pairs",
            256,
            "the next device along axis 1 of the 2x4 mesh (cyclic)",
        ),
    ];
    for (case, devices, sends, why) in cases {
        let text = std::fs::read_to_string(dir.join(format!("{case}.after.hlo"))).unwrap();
        let file = model::parse_hlo(&text);
        let module = &file.modules[0];
        let view = analysis::view::borrowed(module);
        let mut reports = vec![];
        for computation in module.computations() {
            for instruction in &computation.model().instructions {
                if let Some(r) = collective::explain(module, &view, computation, instruction) {
                    reports.push(r.expect("decodes"));
                }
            }
        }
        let [report] = &reports[..] else {
            panic!("{case}: {} collectives", reports.len())
        };
        let groups = collective::groups_text(report);
        assert!(groups.contains(devices), "{case}: {groups}");
        assert_eq!(
            report.traffic.as_ref().map(|t| t.sends),
            Some(sends),
            "{case}"
        );
        assert!(
            report.why.iter().any(|w| w.contains(why)),
            "{case}: {:?}",
            report.why
        );
    }
}
