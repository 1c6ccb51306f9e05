//! The coalescing analysis on every fusion and ENTRY ROOT of the shipped
//! samples and JAX dumps, intact and with random lines deleted (undefined
//! names, missing roots, broken shapes): it answers or declines, never panics,
//! and a verdict always has a reason.

use hlo_lsp::analysis::view;
use hlo_lsp::coalescing::{self, Options, Subject};
use hlo_lsp::model;

fn samples() -> Vec<String> {
    let mut out = vec![];
    for dir in ["samples/xla", "jax", "bench", "coalescing", "tiling"] {
        let path = format!("{}/../tests/data/{dir}", env!("CARGO_MANIFEST_DIR"));
        let Ok(entries) = std::fs::read_dir(path) else {
            continue;
        };
        let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        {
            out.push(std::fs::read_to_string(p).unwrap());
        }
    }
    assert!(out.len() > 20);
    out
}

fn analyze_all(text: &str) -> usize {
    let file = model::parse_hlo(text);
    let mut verdicts = 0;
    for module in &file.modules {
        let v = view::borrowed(module);
        for c in module.computations() {
            for i in c.model().instructions.iter() {
                if i.opcode.name() != "fusion" && !(c.is_entry && i.is_root) {
                    continue;
                }
                let Ok(subject) = Subject::new(module, &v, c, i) else {
                    continue;
                };
                for sizes in [None, Some(vec![4, 4]), Some(vec![1, 2, 3])] {
                    let options = Options {
                        sizes,
                        ..Options::default()
                    };
                    let report = coalescing::analyze(&subject, &options, None);
                    for o in &report.operands {
                        assert!(!o.reason.is_empty(), "{}: {o:?}", i.name);
                        if let Some(u) = o.bandwidth_utilization {
                            assert!((0.0..=1.0).contains(&u), "{}: {o:?}", i.name);
                        }
                    }
                    verdicts += report.operands.len();
                }
            }
        }
    }
    verdicts
}

#[test]
fn samples_never_panic() {
    let mut total = 0;
    for text in samples() {
        total += analyze_all(&text);
    }
    assert!(total > 1000, "{total}");
}

#[test]
fn damaged_samples_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for text in samples().iter().take(30) {
        let lines: Vec<&str> = text.lines().collect();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let cut = (seed % lines.len().max(1) as u64) as usize;
            let damaged: String = lines
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != cut && *k != cut + 3)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n");
            analyze_all(&damaged);
        }
    }
}
