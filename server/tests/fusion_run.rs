//! Priority fusion run to the end (`hlo_lsp::fusible::run`, what `hlo-lsp fusion
//! --simulate` prints): the priorities kept between rounds give the fusions that
//! computing every priority each round gives (a differential test of
//! `fusible::priority_cache`), on every module of XLA's fusion records, JAX's modules
//! and the smaller samples.

use hlo_lsp::device::Device;
use hlo_lsp::fusible::run::{self, Options};

/// The HLO of every record of `file`.jsonl that has one, with its name.
fn record_modules(file: &str) -> Vec<(String, String)> {
    crate::conformance_support::xla_records(&format!("{file}.jsonl"))
        .into_iter()
        .filter_map(|r| {
            let hlo = r["hlo"].as_str()?.to_string();
            Some((format!("{file}:{}", r["name"].as_str()?), hlo))
        })
        .collect()
}

/// The modules of a folder of `tests/data` whose file names end in `suffix`, up to
/// `max_bytes` each (the debug build runs every round without the cache).
fn data_modules(folder: &str, suffix: &str, max_bytes: u64) -> Vec<(String, String)> {
    let dir = format!("{}/../tests/data/{folder}", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .filter(|p| p.metadata().is_ok_and(|m| m.len() <= max_bytes))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn kept_priorities_make_the_fusions_recomputed_ones_make() {
    let mut modules = vec![];
    for file in ["priority_fusion", "performance_model", "fusible"] {
        modules.extend(record_modules(file));
    }
    modules.extend(data_modules("jax", ".hlo", 64 * 1024));
    modules.extend(data_modules("samples/xla", ".hlo", 64 * 1024));
    assert!(modules.len() > 150, "{} modules", modules.len());
    let device = Device::a6000();
    let recompute = Options {
        reuse_priorities: false,
        ..Options::default()
    };
    let mut fused = 0;
    for (name, text) in &modules {
        let kept = run::run_with(text, &device, &Options::default());
        let fresh = run::run_with(text, &device, &recompute);
        assert_eq!(kept.fusions, fresh.fusions, "{name}");
        assert_eq!(kept.module, fresh.module, "{name}");
        assert_eq!(kept.stopped, fresh.stopped, "{name}");
        fused += kept.fusions.len();
    }
    assert!(fused > 300, "{fused} fusions in all");
}
