//! Every map the tool prints parses back to an equal map (issue 14.2): for every
//! HLO file under `tests/data`, every instruction's own maps in both directions
//! (logical and physical), and the composed maps from every output of every
//! computation to each instruction (what hovers, inlay hints and `maps --all`
//! show), including the maps of runtime variables and replica ids. A map that
//! names a variable it does not declare (`rt0` with no `{rt0}`) fails here.

use crate::analysis_support;

use std::path::{Path, PathBuf};

use analysis_support::{check_round_trip, every_map, printed_maps};

use hlo_lsp::analysis::view;

fn hlo_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            hlo_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "hlo") {
            out.push(path);
        }
    }
}

#[test]
fn every_printed_map_parses_back_to_an_equal_map() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = vec![];
    hlo_files(&data, &mut files);
    assert!(files.len() > 20, "expected the samples under {data:?}");
    let mut failures = vec![];
    let mut checked = 0usize;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.strip_prefix(&data).unwrap().display().to_string();
        let (_, modules) = view::parse(&text);
        let mut maps = vec![];
        for module in &modules {
            every_map(module, &name, &mut maps);
        }
        for (at, m) in &maps {
            for map in printed_maps(m) {
                checked += 1;
                if let Err(e) = check_round_trip(map, at) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} maps checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} printed maps do not read back:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
