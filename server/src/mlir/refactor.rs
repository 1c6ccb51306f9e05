//! Edits on MLIR maps: simplify an `affine_map` (a hint diagnostic with its fix),
//! inline an alias use, and extract an inline map into a new alias.
//!
//! A map written inline in a linalg op serves that op only, so it is simplified within
//! the op's loop bounds (`d0 mod 8` is `d0` when `d0 < 8`). Any other map, an alias in
//! particular (ops with different bounds may share it), is simplified with every
//! variable unbounded: the result equals the written map on every integer point.

use std::ops::Range;

use super::domain::LinalgAnalysis;
use super::maps::MapKind;
use super::ops::MapSource;
use super::reader::MlirFile;
use crate::algebra::{IndexingMap, Interval, Variable};
use crate::model::{Diagnostic, Fix, Severity, TextEdit};
use crate::syntax::ranges_touch;

/// Code of the hint on an `affine_map` that simplifies.
pub const SIMPLIFIABLE_MAP: &str = "simplifiable-map";

/// What kind of code action a [`Refactor`] is (LSP `refactor.inline` / `refactor.extract`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefactorKind {
    Inline,
    Extract,
}

/// A refactoring offered at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refactor {
    pub kind: RefactorKind,
    pub fix: Fix,
}

/// A hint with a fix on every `affine_map` that simplifies to a shorter form. An inline
/// map of a linalg op is simplified within that op's loop bounds (it serves no other
/// op); any other map (an alias may be shared) without bounds.
pub fn simplification_hints(file: &MlirFile, linalg: &[LinalgAnalysis]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (index, site) in file.maps.iter().enumerate() {
        if site.kind != MapKind::AffineMap {
            continue;
        }
        let Ok(map) = &site.map else { continue };
        let before = map.to_affine_map();
        let bounded = loop_extents(linalg, index).and_then(|e| within_extents(map, &e));
        let (after, why) = match bounded {
            Some(m) => (
                m.simplified().to_affine_map(),
                " within this op's loop bounds",
            ),
            None => (map.simplified().to_affine_map(), ""),
        };
        // Only a strictly shorter form is worth a hint: the simplifier's canonical
        // order alone (`d0 - d1` printed `-d1 + d0`) is not simpler.
        if after.len() >= before.len() {
            continue;
        }
        let fix = Fix {
            title: format!("Simplify to {after}"),
            edits: vec![TextEdit {
                range: site.range.clone(),
                new_text: after.clone(),
            }],
        };
        out.push(
            Diagnostic::new(
                site.range.clone(),
                Severity::Hint,
                SIMPLIFIABLE_MAP,
                format!("this map simplifies{why} to {after}"),
            )
            .with_fix(fix),
        );
    }
    out
}

/// The loop extents of the linalg op whose inline map is site `site`, when all known.
fn loop_extents(linalg: &[LinalgAnalysis], site: usize) -> Option<Vec<i64>> {
    let op = linalg.iter().find(|a| {
        a.op.maps
            .iter()
            .any(|m| matches!(m.source, MapSource::Inline { site: s, .. } if s == site))
    })?;
    op.extents()
}

/// `map` with its dimensions bounded by `extents` (`d_i in [0, extent_i - 1]`).
fn within_extents(map: &IndexingMap, extents: &[i64]) -> Option<IndexingMap> {
    if extents.len() != map.dims().len() || extents.iter().any(|&e| e < 1) {
        return None;
    }
    let dims = map
        .dims()
        .iter()
        .zip(extents)
        .map(|(v, &e)| Variable {
            bounds: Interval { lo: 0, hi: e - 1 },
            name: v.name.clone(),
        })
        .collect();
    Some(IndexingMap::new(
        dims,
        map.range_vars().to_vec(),
        map.runtime_vars().to_vec(),
        map.results().to_vec(),
        map.constraints().to_vec(),
    ))
}

/// The refactorings at `range` (bytes): inline the alias used there, or extract the
/// inline map there into a new alias.
pub fn refactors(file: &MlirFile, src: &str, range: &Range<usize>) -> Vec<Refactor> {
    let mut out = Vec::new();
    for alias_use in &file.alias_uses {
        if !ranges_touch(&alias_use.range, range) {
            continue;
        }
        let Some(target) = alias_use.target.and_then(|t| file.aliases.get(t)) else {
            continue;
        };
        let Some(value) = src.get(target.value_range.clone()) else {
            continue;
        };
        out.push(Refactor {
            kind: RefactorKind::Inline,
            fix: Fix {
                title: format!("Inline #{}", alias_use.name.trim_start_matches('#')),
                edits: vec![TextEdit {
                    range: alias_use.range.clone(),
                    new_text: value.to_string(),
                }],
            },
        });
    }
    for site in &file.maps {
        let inside_alias = file.aliases.iter().any(|a| {
            a.value_range.start <= site.range.start && site.range.end <= a.value_range.end
        });
        if inside_alias || site.kind != MapKind::AffineMap || !ranges_touch(&site.range, range) {
            continue;
        }
        let Some(text) = src.get(site.range.clone()) else {
            continue;
        };
        let name = fresh_alias_name(file);
        let (at, newline_before) = insertion_point(file, src);
        out.push(Refactor {
            kind: RefactorKind::Extract,
            fix: Fix {
                title: format!("Extract into #{name}"),
                edits: vec![
                    TextEdit {
                        range: at..at,
                        new_text: if newline_before {
                            format!("\n#{name} = {text}\n")
                        } else {
                            format!("#{name} = {text}\n")
                        },
                    },
                    TextEdit {
                        range: site.range.clone(),
                        new_text: format!("#{name}"),
                    },
                ],
            },
        });
    }
    out
}

/// `mapN` with the smallest `N` no alias uses.
fn fresh_alias_name(file: &MlirFile) -> String {
    (0..)
        .map(|n| format!("map{n}"))
        .find(|name| {
            !file
                .aliases
                .iter()
                .any(|a| a.name.trim_start_matches('#') == name)
        })
        .expect("an unused name")
}

/// Where a new alias goes (aliases must precede their uses): after the line of the last
/// alias, else at the start; `true` when that line has no newline to follow.
fn insertion_point(file: &MlirFile, src: &str) -> (usize, bool) {
    let Some(last) = file.aliases.iter().map(|a| a.value_range.end).max() else {
        return (0, false);
    };
    match src.get(last..).and_then(|rest| rest.find('\n')) {
        Some(n) => (last + n + 1, false),
        None => (src.len(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::{analyze, read};

    fn hints(src: &str) -> Vec<Diagnostic> {
        simplification_hints(&read(src), &analyze(src).linalg)
    }

    const SRC: &str = "#map = affine_map<(d0, d1) -> (d0, d1)>\n#inner = affine_map<(d0, d1) -> ((d0 * 4) floordiv 2, (d1 * 8 + 4) mod 4)>\nfunc.func @f(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>) -> tensor<8x16xf32> {\n  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #map], iterator_types = [\"parallel\", \"parallel\"]} ins(%b : tensor<16x8xf32>) outs(%a : tensor<8x16xf32>) {\n  ^bb0(%x: f32, %y: f32):\n    linalg.yield %x : f32\n  } -> tensor<8x16xf32>\n  return %0 : tensor<8x16xf32>\n}\n";

    /// `src` with the (non-overlapping) edits applied.
    fn apply(src: &str, fix: &Fix) -> String {
        let mut edits = fix.edits.clone();
        edits.sort_by_key(|e| std::cmp::Reverse(e.range.start));
        let mut out = src.to_string();
        for e in edits {
            out.replace_range(e.range, &e.new_text);
        }
        out
    }

    /// Every operand map of every linalg op, as printed with its domain.
    fn operand_maps(src: &str) -> Vec<String> {
        analyze(src)
            .linalg
            .iter()
            .flat_map(|a| a.views.iter())
            .map(|v| v.as_ref().map(|v| v.map.to_string()).unwrap_or_default())
            .collect()
    }

    /// The two maps agree on every point of `[-12, 12]^dims`.
    fn same_everywhere(a: &IndexingMap, b: &IndexingMap) {
        let dims = a.dims().len();
        assert_eq!(dims, b.dims().len());
        let mut point = vec![-12i64; dims];
        loop {
            assert_eq!(
                a.evaluate_at(&point, &[], &[]),
                b.evaluate_at(&point, &[], &[]),
                "at {point:?}: {a} vs {b}"
            );
            let Some(k) = point.iter().position(|&v| v < 12) else {
                return;
            };
            point[k] += 1;
            point[..k].iter_mut().for_each(|v| *v = -12);
        }
    }

    #[test]
    fn a_map_that_simplifies_gets_a_hint_whose_fix_is_the_same_function() {
        let hints = hints(SRC);
        assert_eq!(hints.len(), 1, "{hints:?}");
        let fix = &hints[0].fixes[0];
        assert_eq!(fix.edits[0].new_text, "affine_map<(d0, d1) -> (d0 * 2, 0)>");
        let before = IndexingMap::parse(&SRC[hints[0].range.clone()]).unwrap();
        let after = IndexingMap::parse(&fix.edits[0].new_text).unwrap();
        same_everywhere(&before, &after);
        // Applied, nothing is left to simplify.
        assert!(super::tests::hints(&apply(SRC, fix)).is_empty());
    }

    #[test]
    fn every_sample_map_hint_is_sound_and_shorter() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/samples/mlir");
        let mut texts = vec![SRC.to_string()];
        for entry in std::fs::read_dir(dir).unwrap() {
            texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        for text in texts {
            for hint in hints(&text) {
                if hint.message.contains("loop bounds") {
                    // Equal within the op's domain: the op's operand maps are unchanged.
                    let fixed = apply(&text, &hint.fixes[0]);
                    assert_eq!(operand_maps(&fixed), operand_maps(&text));
                    continue;
                }
                let before = IndexingMap::parse(&text[hint.range.clone()]).unwrap();
                let new_text = &hint.fixes[0].edits[0].new_text;
                let after = IndexingMap::parse(new_text).unwrap();
                assert!(new_text.len() < before.to_affine_map().len());
                same_everywhere(&before, &after);
            }
        }
    }

    #[test]
    fn inlining_an_alias_use_keeps_the_op_maps() {
        let file = read(SRC);
        let at = SRC.find("#map]").unwrap();
        let actions = refactors(&file, SRC, &(at..at));
        assert_eq!(actions.len(), 1, "{actions:?}");
        assert_eq!(actions[0].kind, RefactorKind::Inline);
        let inlined = apply(SRC, &actions[0].fix);
        assert!(
            inlined.contains("affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]")
        );
        assert_eq!(operand_maps(&inlined), operand_maps(SRC));
    }

    #[test]
    fn extracting_an_inline_map_defines_a_fresh_alias_before_its_use() {
        let file = read(SRC);
        let at = SRC.find("affine_map<(d0, d1) -> (d1, d0)>").unwrap() + 3;
        let actions = refactors(&file, SRC, &(at..at));
        assert_eq!(actions.len(), 1, "{actions:?}");
        assert_eq!(actions[0].kind, RefactorKind::Extract);
        let extracted = apply(SRC, &actions[0].fix);
        let definition = extracted
            .find("#map0 = affine_map<(d0, d1) -> (d1, d0)>\n")
            .expect("the new alias");
        let inner = extracted.find("#inner =").unwrap();
        assert!(inner < definition && definition < extracted.find("[#map0, #map]").unwrap());
        assert_eq!(operand_maps(&extracted), operand_maps(SRC));
        assert!(analyze(&extracted)
            .diagnostics
            .iter()
            .all(|d| d.code != crate::mlir::codes::UNDEFINED_ALIAS));
    }

    #[test]
    fn an_alias_at_the_end_of_the_text_gets_a_newline_before_the_new_one() {
        let src = "func.func @g() { %c = \"x\"() {m = affine_map<(d0) -> (d0)>} : () -> () }\n#last = affine_map<(d0) -> (d0)>";
        let file = read(src);
        let at = src.find("affine_map").unwrap() + 1;
        let actions = refactors(&file, src, &(at..at));
        let extract = actions
            .iter()
            .find(|a| a.kind == RefactorKind::Extract)
            .expect("extract");
        let out = apply(src, &extract.fix);
        assert!(
            out.ends_with("#last = affine_map<(d0) -> (d0)>\n#map0 = affine_map<(d0) -> (d0)>\n"),
            "{out}"
        );
    }

    #[test]
    fn an_inline_map_simplifies_within_its_op_loop_bounds_only() {
        // d0 < 8 and d1 < 16: `d0 mod 8` is `d0`, `d1 floordiv 16` is 0. The same map
        // as an alias is left alone (another op could use it with other bounds).
        let src = SRC.replace(
            "affine_map<(d0, d1) -> (d1, d0)>",
            "affine_map<(d0, d1) -> (d1 + (d1 floordiv 16) * 3, d0 mod 8)>",
        );
        let found = hints(&src);
        let hint = found
            .iter()
            .find(|h| h.message.contains("loop bounds"))
            .unwrap_or_else(|| panic!("{found:?}"));
        let new_text = &hint.fixes[0].edits[0].new_text;
        assert_eq!(new_text, "affine_map<(d0, d1) -> (d1, d0)>");
        // Equal on every point of the op's domain, and the op's maps are unchanged.
        let before = IndexingMap::parse(&src[hint.range.clone()]).unwrap();
        let after = IndexingMap::parse(new_text).unwrap();
        for d0 in 0..8 {
            for d1 in 0..16 {
                assert_eq!(
                    before.evaluate_at(&[d0, d1], &[], &[]),
                    after.evaluate_at(&[d0, d1], &[], &[])
                );
            }
        }
        assert_eq!(
            operand_maps(&apply(&src, &hint.fixes[0])),
            operand_maps(&src)
        );
        let aliased =
            format!("#m = affine_map<(d0, d1) -> (d1 + (d1 floordiv 16) * 3, d0 mod 8)>\n{SRC}");
        assert!(hints(&aliased)
            .iter()
            .all(|h| !h.message.contains("affine_map<(d0, d1) -> (d1, d0)>")));
    }
}
