//! XLA's HloSharding tests and JAX's `devices_indices_map` on real meshes
//! (`tests/data/conformance/xla/sharding.jsonl`, 118 records, attribution in
//! its README) against `hlo_lsp::sharding`. Every record's `sharding` is
//! parsed; every fact XLA derived (`derived`: ToString, predicates, the tile
//! assignment, per-device offsets and limits) and every assertion of the
//! test (`expected`) is checked. An assertion about something the library
//! does not model fails the record with `not modelled: KEY`, so the count
//! says what is covered. `PASSING` is a floor that only goes up.

use hlo_lsp::sharding::{
    self, tile_assignment::iota_text, Leaf, NamedSharding, Sharding, Subgroup,
};
use serde_json::{json, Value};

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 117;

fn parse(text: &str) -> Result<Sharding, String> {
    sharding::parse(text).map_err(|e| format!("`{text}`: {e}"))
}

fn v2(s: &Sharding) -> Result<Leaf, String> {
    s.v2()
        .ok_or_else(|| "a tuple where a leaf was expected".to_string())
}

fn same(what: &str, got: Value, want: &Value) -> Result<(), String> {
    if &got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, expected {want}"))
    }
}

/// `u32[4,5]` → `[4, 5]`; `u32[]` → `[]`.
fn dims_of(shape: &str) -> Result<Vec<i64>, String> {
    let inner = shape
        .split_once('[')
        .and_then(|(_, r)| r.strip_suffix(']'))
        .ok_or_else(|| format!("shape `{shape}`"))?;
    if inner.trim().is_empty() {
        return Ok(vec![]);
    }
    inner
        .split(',')
        .map(|d| d.trim().parse().map_err(|_| format!("shape `{shape}`")))
        .collect()
}

fn subgroup_names(subgroups: &[Subgroup]) -> Value {
    json!(subgroups.iter().map(|s| s.type_name()).collect::<Vec<_>>())
}

/// The facts of `derived` for one sharding (a leaf or a tuple).
fn check_derived(s: &Sharding, derived: &Value, dims: Option<&[i64]>) -> Result<(), String> {
    let Some(facts) = derived.as_object() else {
        return Ok(());
    };
    if let Sharding::Tuple(elements) = s {
        for (key, want) in facts {
            match key.as_str() {
                "ToString" => same(key, json!(s.to_text(false)), want)?,
                "IsTuple" => same(key, json!(true), want)?,
                "tuple_elements" => {
                    let wants = want.as_array().ok_or("tuple_elements")?;
                    same("tuple size", json!(elements.len()), &json!(wants.len()))?;
                    for (e, w) in elements.iter().zip(wants) {
                        check_derived(e, w, None)?;
                    }
                }
                "IsReplicated" | "IsManual" | "IsTileMaximal" | "IsUnknown" | "IsUnreduced"
                | "IsTiled" => {
                    let all = elements
                        .iter()
                        .map(|e| v2(e).map(|l| predicate(&l, key).unwrap_or(false)))
                        .collect::<Result<Vec<_>, _>>()?;
                    same(key, json!(all.iter().all(|b| *b)), want)?;
                }
                _ => return Err(format!("not modelled: derived {key} of a tuple")),
            }
        }
        return Ok(());
    }
    let leaf = v2(s)?;
    let tiling = leaf.tiling();
    for (key, want) in facts {
        let got = match key.as_str() {
            "ToString" => json!(s.to_text(false)),
            "v2" => json!(leaf.to_text(false)),
            "IsTuple" => json!(false),
            k if predicate(&leaf, k).is_some() => json!(predicate(&leaf, k)),
            "tile_assignment_dimensions" => json!(tiling.map(|t| t.0.dims.clone())),
            "devices" => json!(tiling.map(|t| t.0.devices.clone())),
            "subgroup_types" => json!(tiling.map(|t| subgroup_names(t.1))),
            "replicate_on_last_tile_dim" => json!(tiling.map(|t| t.2)),
            "data_rank" => json!(leaf.data_rank()),
            "num_tiles" => json!(leaf.num_tiles()),
            "num_devices" => json!(tiling.map(|t| t.0.num_elements())),
            "iota" => json!(tiling.map(|t| t.0.iota.is_some())),
            "replicated_group_size" => json!(leaf.group_size(Subgroup::Replicated)),
            "manual_group_size" => json!(leaf.group_size(Subgroup::Manual)),
            "unreduced_group_size" => json!(leaf.group_size(Subgroup::Unreduced)),
            "unique_device" => json!(leaf.unique_device()),
            "TileShape" => json!(leaf.tile_shape(dims.ok_or("TileShape without a shape")?)),
            "TileIndexForDevice" => per_device(want, |d| json!(leaf.tile_index_for_device(d)))?,
            "TileOffsetForDevice" | "TileLimitForDevice" => {
                let dims = dims.ok_or("tiles without a shape")?;
                let limit = key == "TileLimitForDevice";
                per_device(want, |d| {
                    json!(leaf
                        .tile_for_device(dims, d)
                        .map(|(s, l)| if limit { l } else { s }))
                })?
            }
            _ => return Err(format!("not modelled: derived {key}")),
        };
        same(key, got, want)?;
    }
    Ok(())
}

/// `{device: value}` for the devices `want` keys.
fn per_device(want: &Value, f: impl Fn(i64) -> Value) -> Result<Value, String> {
    let keys = want.as_object().ok_or("a per-device map")?;
    let mut out = serde_json::Map::new();
    for k in keys.keys() {
        let d: i64 = k.parse().map_err(|_| format!("device `{k}`"))?;
        out.insert(k.clone(), f(d));
    }
    Ok(Value::Object(out))
}

fn predicate(leaf: &Leaf, key: &str) -> Option<bool> {
    Some(match key {
        "IsReplicated" => leaf.is_replicated(),
        "IsManual" => leaf.is_manual(),
        "IsTileMaximal" => leaf.is_tile_maximal(),
        "IsUnknown" => leaf.is_unknown(),
        "IsUnreduced" => leaf.is_unreduced(),
        "IsTiled" => leaf.is_tiled(),
        "HasUniqueDevice" | "IsSingleDevice" => leaf.unique_device().is_some(),
        _ => return None,
    })
}

/// Every device's tile index, offset, limit and tile shape (the tile facts
/// XLA's `TileEquality` tests compare).
fn tile_facts(leaf: &Leaf, dims: &[i64], devices: i64) -> Value {
    let facts: Vec<Value> = (0..devices)
        .map(|d| {
            json!([
                leaf.tile_index_for_device(d),
                leaf.tile_for_device(dims, d),
                leaf.tile_shape(dims),
                leaf.num_tiles()
            ])
        })
        .collect();
    json!(facts)
}

fn device_count(leaf: &Leaf) -> i64 {
    leaf.tiling().map_or(1, |t| t.0.num_elements())
}

/// `Validate(f32[3,5],num_devices=4)` → the shape's rank and the count.
fn validate(leaf: &Leaf, call: &str) -> Result<bool, String> {
    let inner = call
        .strip_prefix("Validate(")
        .and_then(|c| c.strip_suffix(')'))
        .ok_or("Validate call")?;
    let (shape, devices) = inner.rsplit_once(",num_devices=").ok_or("Validate call")?;
    let devices: i64 = devices.parse().map_err(|_| "num_devices")?;
    Ok(leaf.validate(dims_of(shape)?.len(), devices).is_ok())
}

/// The tile assignment (`IotaTileAssignment` / `TileAssignment` tests).
fn check_tile_assignment(s: &Sharding, function: &str, expected: &Value) -> Result<(), String> {
    let leaf = v2(s)?;
    let (tiles, _, _) = leaf.tiling().ok_or("not tiled")?;
    let iota = tiles.iota.clone();
    for (key, want) in expected.as_object().ok_or("expected")? {
        let got = match key.as_str() {
            "ToString" if function.starts_with("IotaTileAssignment") => json!(tiles.text()),
            "ToString" => json!(format!("devices={}", tiles.text())),
            "ArrayToString" => json!(iota.as_ref().map(iota_text)),
            "reshape_dims" => json!(iota.as_ref().map(|i| i.reshape.clone())),
            "transpose_perm" => json!(iota.as_ref().map(|i| i.perm.clone())),
            "dims" | "dimensions" => json!(tiles.dims),
            "num_elements" => json!(tiles.num_elements()),
            "local_mesh" => json!(tiles
                .sub_dims()
                .map(|d| d.iter().map(|s| s.size).collect::<Vec<_>>())),
            "sub_dims" => json!(tiles.sub_dims().map(|d| d.len())),
            "array" => {
                let rows: Vec<&[i64]> = tiles
                    .devices
                    .chunks(*tiles.dims.last().unwrap_or(&1) as usize)
                    .collect();
                json!(rows)
            }
            "value_at" => per_index(want, |index| json!(tiles.at(index)))?,
            k if k.starts_with("at(") => {
                let index: Vec<i64> = k[3..k.len() - 1]
                    .split(',')
                    .filter_map(|i| i.parse().ok())
                    .collect();
                json!(tiles.at(&index))
            }
            _ => return Err(format!("not modelled: {key}")),
        };
        same(key, got, want)?;
    }
    Ok(())
}

fn per_index(want: &Value, f: impl Fn(&[i64]) -> Value) -> Result<Value, String> {
    let mut out = serde_json::Map::new();
    for k in want.as_object().ok_or("value_at")?.keys() {
        let index: Vec<i64> = k.split(',').filter_map(|i| i.parse().ok()).collect();
        out.insert(k.clone(), f(&index));
    }
    Ok(Value::Object(out))
}

/// `{device: [[start, limit], ...]}` of every device.
fn ranges(leaf: &Leaf, dims: &[i64], devices: &[i64], keys: &[i64]) -> Value {
    let mut out = serde_json::Map::new();
    for (&d, &key) in devices.iter().zip(keys) {
        let pairs: Option<Vec<[i64; 2]>> = leaf
            .tile_for_device(dims, d)
            .map(|(s, l)| s.iter().zip(&l).map(|(&s, &l)| [s, l]).collect());
        out.insert(key.to_string(), json!(pairs));
    }
    Value::Object(out)
}

fn check_expected(r: &Value, s: &Sharding, dims: Option<&[i64]>) -> Result<(), String> {
    let function = r["function"].as_str().unwrap_or("");
    let expected = &r["expected"];
    if function.contains("TileAssignment") {
        return check_tile_assignment(s, function, expected);
    }
    for (key, want) in expected.as_object().ok_or("expected")? {
        let leaf = || v2(s);
        let got = match key.as_str() {
            // The parser tests print with the metadata.
            "ToString" | "ToString(include_metadata=true)" => json!(s.to_text(true)),
            "ToString(include_metadata=false)" => json!(s.to_text(false)),
            "GetAsShapeTree(u32[4]).element({})" => json!(s.element(0).map(|e| e.to_text(false))),
            "equals" | "from_named" => {
                let other = parse(want.as_str().ok_or("text")?)?;
                same(key, json!(leaf()? == v2(&other)?), &json!(true))?;
                continue;
            }
            "not_equals" => {
                let other = parse(want.as_str().ok_or("text")?)?;
                same(key, json!(leaf()? != v2(&other)?), &json!(true))?;
                continue;
            }
            "GetUniqueDevice" | "device" => json!(leaf()?.unique_device()),
            k if k.starts_with("UsesDevice(") => {
                let d: i64 = k[11..k.len() - 1].parse().map_err(|_| "device")?;
                json!(leaf()?.uses_device(d))
            }
            k if k.starts_with("Validate(") && k != "Validate(both)" => {
                json!(if validate(&leaf()?, k)? {
                    "ok"
                } else {
                    "error"
                })
            }
            "IsTuple" => json!(matches!(s, Sharding::Tuple(_))),
            k if predicate(&Leaf::of(sharding::Kind::Unknown), k).is_some() => {
                json!(predicate(&leaf()?, k))
            }
            "tuple_elements" => match s {
                Sharding::Tuple(e) => json!(e.len()),
                _ => json!(null),
            },
            "IsReplicatedLeaf" | "IsSingleDeviceLeaf" | "UseNamedShardingLeaf" => {
                let Sharding::Tuple(elements) = s else {
                    return Err(format!("{key} of a leaf"));
                };
                let wants = want.as_array().ok_or("list")?;
                let got: Vec<Value> = elements
                    .iter()
                    .zip(wants)
                    .map(|(e, w)| {
                        if w.is_null() {
                            return json!(null);
                        }
                        let l = e.v2().unwrap_or(Leaf::of(sharding::Kind::Unknown));
                        json!(match key.as_str() {
                            "IsReplicatedLeaf" => l.is_replicated(),
                            "IsSingleDeviceLeaf" => l.unique_device().is_some(),
                            _ => matches!(e, Sharding::Named(_)),
                        })
                    })
                    .collect();
                json!(got)
            }
            "TileOffsetForDevice" | "TileLimitForDevice" => {
                let dims = dims.ok_or("no shape")?;
                let leaf = leaf()?;
                let limit = key == "TileLimitForDevice";
                per_device(want, |d| {
                    json!(leaf
                        .tile_for_device(dims, d)
                        .map(|(s, l)| if limit { l } else { s }))
                })?
            }
            "EachTile" => {
                let dims = dims.ok_or("no shape")?;
                let leaf = leaf()?;
                let tiles = leaf.tiles(dims, None)?;
                let mut each = vec![];
                for tile in &tiles.tiles {
                    for &d in &tile.devices {
                        each.push((d, json!([d, tile.start, tile.limit])));
                    }
                }
                // XLA walks the devices in order of their ids.
                each.sort_by_key(|(d, _)| *d);
                json!(each.into_iter().map(|(_, v)| v).collect::<Vec<_>>())
            }
            "EachTile_matches_TileOffsetForDevice_and_TileLimitForDevice" => {
                let dims = dims.ok_or("no shape")?;
                let leaf = leaf()?;
                let tiles = leaf.tiles(dims, None)?;
                let agree = tiles.tiles.iter().all(|t| {
                    t.devices.iter().all(|&d| {
                        leaf.tile_for_device(dims, d) == Some((t.start.clone(), t.limit.clone()))
                    })
                });
                json!(agree)
            }
            "other" | "Validate(both)" => continue,
            "tiles_equal" => {
                let dims = dims.ok_or("no shape")?;
                let other = v2(&parse(expected["other"].as_str().ok_or("other")?)?)?;
                let leaf = leaf()?;
                let n = device_count(&leaf).max(device_count(&other));
                if expected.get("Validate(both)") == Some(&json!("ok")) {
                    for l in [&leaf, &other] {
                        if let Err(e) = l.validate(dims.len(), device_count(l)) {
                            return Err(format!("Validate(both): {e}"));
                        }
                    }
                }
                json!(tile_facts(&leaf, dims, n) == tile_facts(&other, dims, n))
            }
            "shard_shape" | "padded_shard_shape" => {
                json!(leaf()?.tile_shape(dims.ok_or("no shape")?))
            }
            "per_device" | "per_physical_device" => {
                let dims = dims.ok_or("no shape")?;
                let leaf = leaf()?;
                let n = want.as_object().map_or(0, |m| m.len() as i64);
                let devices: Vec<i64> = (0..n).collect();
                let keys: Vec<i64> = if key == "per_physical_device" {
                    r["device_assignment"]
                        .as_array()
                        .ok_or("no device_assignment")?
                        .iter()
                        .filter_map(Value::as_i64)
                        .collect()
                } else {
                    devices.clone()
                };
                ranges(&leaf, dims, &devices, &keys)
            }
            "device_assignment" => {
                let leaf = leaf()?;
                let (tiles, _, _) = leaf.tiling().ok_or("not tiled")?;
                let iota = tiles.iota.as_ref().ok_or("not an iota")?;
                let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
                let perm: Vec<i64> = iota.perm.iter().map(|&p| p as i64).collect();
                json!(format!(
                    "TileAssignment({{{}}},{{{}}},{{{}}})",
                    join(&tiles.dims),
                    join(&iota.reshape),
                    join(&perm)
                ))
            }
            "grouped_sharding" | "device_groups" | "device_groups_list" => {
                let (groups, inner) = leaf()?.manual_groups().ok_or("no manual subgroup")?;
                match key.as_str() {
                    "grouped_sharding" => json!(inner.to_text(false)),
                    "device_groups" => json!(format!("devices={}", groups.text())),
                    _ => json!(groups
                        .devices
                        .chunks(groups.dims[1].max(1) as usize)
                        .collect::<Vec<_>>()),
                }
            }
            "named_ToString" => json!(NamedSharding::from_v2(&leaf()?).map(|n| n.to_text(false))),
            "dimensions" if r["expected"].get("result").is_some() => continue,
            "result" => {
                let perm: Vec<usize> = expected["dimensions"]
                    .as_array()
                    .ok_or("dimensions")?
                    .iter()
                    .filter_map(|d| d.as_u64().map(|d| d as usize))
                    .collect();
                json!(leaf()?.transpose(&perm).map(|l| l.to_text(false)))
            }
            _ => return Err(format!("not modelled: {key}")),
        };
        same(key, got, want)?;
    }
    Ok(())
}

fn run(r: &Value) -> Result<(), String> {
    let s = parse(r["sharding"].as_str().ok_or("no sharding")?)?;
    let dims = match r["shape"].as_str() {
        Some(shape) if !shape.starts_with('(') => Some(dims_of(shape)?),
        _ => None,
    };
    check_derived(&s, &r["derived"], dims.as_deref())?;
    check_expected(r, &s, dims.as_deref())
}

#[test]
fn sharding_conformance() {
    let records = crate::conformance_support::xla_records("sharding.jsonl");
    assert_eq!(records.len(), 118);
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}

/// Nothing a user can write makes the reader panic or hang.
#[test]
fn hostile_shardings_are_errors() {
    let cases = [
        "{devices=[1000000,1000000]<=[1000000000000]}",
        "{devices=[2,2]<=[4]T(0,0)}",
        "{devices=[-1]0}",
        "{devices=[2]<=[2]T(5)}",
        "{mesh['a'=2], [{'a':(0)2}]}",
        "{mesh['a'=2], [{'a':(1)3}]}",
        "{mesh['a'=2, [{'a'}]}",
        "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
        "{devices=[2]0,1 last_tile_dims={bogus}}",
        "{maximal device=}",
        "{replicated metadata={op_name=\"unclosed}",
    ];
    for text in cases {
        assert!(sharding::parse(text).is_err(), "{text}");
    }
}
