//! The profiled programs of `tests/data/profiles/` (its README says how they were
//! made): each folder holds XLA's dump files, a `jax.profiler` logdir (`profile/`)
//! and XProf's own numbers (`xprof.json`). Shared by the library's and the command
//! line's tests; paths are returned as text, as the binary takes them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/profiles")
}

/// Every sample folder (one with an `xprof.json`), in name order.
pub fn samples() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("xprof.json").is_file())
        .collect();
    out.sort();
    out
}

/// The sample's after-optimizations dump.
pub fn dump_of(sample: &Path) -> String {
    std::fs::read_dir(sample)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("after_optimizations.txt"))
        .unwrap()
        .display()
        .to_string()
}

/// The sample's XProf logdir.
pub fn logdir(sample: &Path) -> String {
    sample.join("profile").display().to_string()
}

/// The file of the sample's (only) profile run whose name ends with `suffix`.
pub fn profile_file(sample: &Path, suffix: &str) -> String {
    let runs = sample.join("profile/plugins/profile");
    let run = std::fs::read_dir(runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap()
        .display()
        .to_string()
}
