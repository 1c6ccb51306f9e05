//! Reshape-chain fixes on every HLO sample under `tests/data` (XLA, JAX, tinygrad):
//! each offered fix, applied, must leave a module with no new diagnostics, fewer
//! instructions, and the same output-to-input maps for every fusion (composed by the
//! analysis through the possibly rewritten fused computation).

use std::path::{Path, PathBuf};

use hlo_lsp::algebra::IndexingMap;
use hlo_lsp::analysis::{analyze, view, Query};
use hlo_lsp::model::parse_hlo;
use hlo_lsp::refactor::{diagnostics_of, maps::maps_equal, rewrite::apply};

fn samples(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("test data directory") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            samples(&path, out);
        } else if path.extension().is_some_and(|e| e == "hlo") {
            out.push(path);
        }
    }
}

/// A fusion's (computation name, instruction name) and its maps per operand.
type FusionMaps = ((String, String), Vec<Vec<IndexingMap>>);

/// Every fusion's output-to-operand maps.
fn fusion_maps(text: &str) -> Vec<FusionMaps> {
    let (_, modules) = view::parse(text);
    let mut out = vec![];
    for module in &modules {
        for (ci, c) in module.computations().enumerate() {
            for (ni, node) in c.nodes.iter().enumerate() {
                if node.op.opcode != "fusion" || node.op.shape.output_count() != 1 {
                    continue;
                }
                let q = Query::output_to_input(ci, ni, 0);
                let maps = analyze(module, &q)
                    .entries
                    .iter()
                    .map(|e| e.maps.iter().map(|m| m.map.clone()).collect())
                    .collect();
                out.push(((c.name.clone(), node.name.clone()), maps));
            }
        }
    }
    out
}

fn codes(text: &str) -> Vec<&'static str> {
    let mut codes: Vec<_> = parse_hlo(text).diagnostics.iter().map(|d| d.code).collect();
    codes.sort();
    codes
}

#[test]
fn fixes_on_real_samples_keep_modules_valid_and_fusion_maps_equal() {
    let mut files = vec![];
    samples(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data")),
        &mut files,
    );
    files.sort();
    let mut applied = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let found = diagnostics_of(&text);
        if found.is_empty() {
            continue;
        }
        let name = path.display();
        let before_codes = codes(&text);
        let before_count = parse_hlo(&text)
            .modules
            .iter()
            .flat_map(|m| m.computations())
            .map(|c| c.instructions.len())
            .sum::<usize>();
        let before_maps = fusion_maps(&text);
        for d in &found {
            for fix in &d.fixes {
                let after = apply(&text, &fix.edits);
                assert_eq!(codes(&after), before_codes, "{name}: {}", fix.title);
                let after_count = parse_hlo(&after)
                    .modules
                    .iter()
                    .flat_map(|m| m.computations())
                    .map(|c| c.instructions.len())
                    .sum::<usize>();
                assert!(after_count < before_count, "{name}: {}", fix.title);
                let after_maps = fusion_maps(&after);
                assert_eq!(after_maps.len(), before_maps.len(), "{name}");
                for ((key, b), (key2, a)) in before_maps.iter().zip(&after_maps) {
                    assert_eq!(key, key2, "{name}");
                    assert_eq!(a.len(), b.len(), "{name}: {key:?}");
                    for (bm, am) in b.iter().zip(a) {
                        assert_eq!(am.len(), bm.len(), "{name}: {key:?}");
                        for (x, y) in bm.iter().zip(am) {
                            assert!(
                                maps_equal(x, y) || (x.is_undefined() && y.is_undefined()),
                                "{name}: {key:?} after `{}`:\n{x}\nvs\n{y}",
                                fix.title
                            );
                        }
                    }
                }
                applied += 1;
            }
        }
    }
    // The samples do contain chains (a no-op reshape in XLA's sharded computation,
    // bitcast+transpose pairs in JAX's reshape_transpose): the test is not vacuous.
    assert!(
        applied >= 6,
        "only {applied} fixes found in {} samples",
        files.len()
    );
}
