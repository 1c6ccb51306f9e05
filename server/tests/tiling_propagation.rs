//! Brute-force check of the tile propagation: for small fusions (reshapes that
//! merge and split dimensions, transposes, broadcasts, strided slices) and every
//! tiling of their output, enumerate every tile and every element it covers,
//! evaluate the indexing maps, and compare with the reported tiles:
//!
//! * when every constraint holds, each instruction's elements read by a full
//!   tile are exactly the reported hyper-rectangle (offset + k * stride, k < size);
//! * when a constraint is violated, some tile reads a set that is not a
//!   hyper-rectangle (so the error is never a false alarm);
//!   (over its valid elements; a tile larger than its extent has no full tile)
//! * the holes and guards agree with the split arithmetic.

use std::collections::BTreeSet;

use hlo_lsp::analysis::view;
use hlo_lsp::model;
use hlo_lsp::tiling::propagate::{FusionMaps, TilingOptions};

const PLAIN: TilingOptions = TilingOptions {
    pad_to_power_of_two: false,
};

/// A module whose fused computation `fused` has parameter shape `param` and
/// body `body` (the ROOT last, named `root` with shape `out`).
fn module(param: &str, out: &str, body: &str) -> String {
    format!(
        "HloModule m\n\nfused {{\n  p0 = {param} parameter(0)\n  {body}\n}}\n\nENTRY main {{\n  a = {param} parameter(0)\n  ROOT f = {out} fusion(a), kind=kCustom, calls=fused\n}}\n"
    )
}

fn cases() -> Vec<String> {
    vec![
        module("f32[2,5]", "f32[10]", "ROOT r = f32[10] reshape(p0)"),
        module("f32[3,4]", "f32[12]", "ROOT r = f32[12] reshape(p0)"),
        module("f32[10]", "f32[2,5]", "ROOT r = f32[2,5] reshape(p0)"),
        module("f32[2,3,4]", "f32[6,4]", "ROOT r = f32[6,4] reshape(p0)"),
        module("f32[2,3,4]", "f32[4,6]", "ROOT r = f32[4,6] reshape(p0)"),
        module(
            "f32[4,3]",
            "f32[3,4]",
            "ROOT r = f32[3,4] transpose(p0), dimensions={1,0}",
        ),
        module(
            "f32[5]",
            "f32[3,5]",
            "ROOT r = f32[3,5] broadcast(p0), dimensions={1}",
        ),
        module(
            "f32[13]",
            "f32[4]",
            "ROOT r = f32[4] slice(p0), slice={[1:13:3]}",
        ),
        module(
            "f32[2,6]",
            "f32[3,4]",
            "n = f32[2,6] negate(p0)\n  ROOT r = f32[3,4] reshape(n)",
        ),
    ]
}

/// Every tiling with sizes 1..=extent+1 per dimension (the +1 overshoots).
fn tilings(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &n in extents {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<i64>| {
                (1..=n + 1).map(move |t| {
                    let mut v = prefix.clone();
                    v.push(t);
                    v
                })
            })
            .collect();
    }
    all
}

fn grid(counts: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &n in counts {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<i64>| {
                (0..n).map(move |i| {
                    let mut v = prefix.clone();
                    v.push(i);
                    v
                })
            })
            .collect();
    }
    all
}

fn is_hyper_rectangle(set: &BTreeSet<Vec<i64>>) -> bool {
    let Some(first) = set.iter().next() else {
        return true;
    };
    let mut total = 1usize;
    for k in 0..first.len() {
        let values: BTreeSet<i64> = set.iter().map(|x| x[k]).collect();
        let v: Vec<i64> = values.into_iter().collect();
        if v.len() > 2 {
            let step = v[1] - v[0];
            if v.windows(2).any(|w| w[1] - w[0] != step) {
                return false;
            }
        }
        total *= v.len();
    }
    total == set.len()
}

#[test]
fn propagated_tiles_match_enumeration() {
    let mut checked_tiles = 0usize;
    let mut invalid_tilings = 0usize;
    for text in cases() {
        let file = model::parse_hlo(&text);
        assert!(!file.has_errors(), "{text}: {:?}", file.diagnostics);
        let m = &file.modules[0];
        let v = view::from_model(m);
        let comp = m.computation_by_name("fused").unwrap().index();
        let maps = FusionMaps::new(&v, comp, 0).unwrap();
        for sizes in tilings(&maps.extents) {
            let p = maps.propagate(m, &v, &sizes, PLAIN).unwrap();
            assert!(p.unknown.is_empty(), "{text} {sizes:?}: {:?}", p.unknown);
            let space = &p.space;
            let mut non_rectangular = false;
            for tile_index in grid(&space.tile_counts()) {
                let full = space
                    .splits
                    .iter()
                    .zip(&tile_index)
                    .all(|(s, &t)| (t + 1) * s.tile <= s.extent);
                let offsets = grid(&space.tiles());
                for read in &p.reads {
                    let mut got = BTreeSet::new();
                    let mut holes = 0;
                    for o in &offsets {
                        let d: Vec<i64> = tile_index
                            .iter()
                            .zip(o)
                            .zip(&space.splits)
                            .map(|((&t, &o), s)| t * s.tile + o)
                            .collect();
                        if space.is_hole(&tile_index, o) {
                            holes += 1;
                            continue;
                        }
                        got.insert(read.map.evaluate(&d, &[]).unwrap());
                    }
                    assert_eq!(full, holes == 0);
                    if !is_hyper_rectangle(&got) {
                        non_rectangular = true;
                    }
                    if !full {
                        continue;
                    }
                    if !p.is_valid() {
                        continue;
                    }
                    let ranges: Vec<Vec<i64>> = read
                        .tile
                        .iter()
                        .map(|t| {
                            let off = t.offset.evaluate(&tile_index, &[], &[]).unwrap();
                            (0..t.size).map(|k| off + k * t.stride).collect()
                        })
                        .collect();
                    let want: BTreeSet<Vec<i64>> =
                        grid(&ranges.iter().map(|r| r.len() as i64).collect::<Vec<_>>())
                            .into_iter()
                            .map(|ix| {
                                ix.iter()
                                    .enumerate()
                                    .map(|(k, &i)| ranges[k][i as usize])
                                    .collect()
                            })
                            .collect();
                    assert_eq!(
                        got, want,
                        "{text}\nsizes {sizes:?} tile {tile_index:?} read {}",
                        read.name
                    );
                    checked_tiles += 1;
                }
            }
            if !p.is_valid() {
                invalid_tilings += 1;
                assert!(
                    non_rectangular,
                    "{text}\nsizes {sizes:?}: a violated constraint but every full tile is a rectangle: {:?}",
                    p.violated().collect::<Vec<_>>()
                );
            }
        }
    }
    // The domain is not vacuous: both outcomes happen.
    assert!(checked_tiles > 500, "{checked_tiles}");
    assert!(invalid_tilings > 10, "{invalid_tilings}");
}
