//! Replays every input the fuzzers kept (`tests/data/fuzz/<target>/`: crashes they
//! found, fixed since, and inputs that reached new code) through the same bodies
//! the `server/fuzz` targets run, so a fixed finding stays fixed without a nightly
//! toolchain. Each target also runs on the seed files it is fuzzed from.

use crate::fuzz_support;

use std::path::Path;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_kept_fuzz_input_passes_its_target() {
    let mut replayed = 0;
    for (name, body) in fuzz_support::TARGETS {
        for path in files(&Path::new(DATA).join("fuzz").join(name)) {
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(
                outcome.is_ok(),
                "fuzz target {name} fails on {}",
                path.display()
            );
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no kept fuzz inputs under {DATA}/fuzz");
}
