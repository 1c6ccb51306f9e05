//! Issue 30's speed bars, through the real binary: on 32 renamed copies of the
//! transformer dump in one module (60 MB, a CPU dump read as if compiled for the
//! a6000 the user chose), the time from `textDocument/codeLens` to the resolved
//! lenses of one screen (the editor asks for every lens, unresolved, then resolves
//! the ones it shows), and `hlo-lsp cost --device a6000` against `hlo-lsp check` on
//! the same file (best of three each: on a shared machine a single run measures the
//! neighbours). The bars: a screen's lenses in under 50 ms, `cost` in under 2x
//! `check`. A plain harness, like `benches/lsp.rs`: latencies, not throughput.
//!
//! `HLO_BENCH_COPIES` sets the copies (default 32); `HLO_BENCH_SCREENS` how many
//! screens to resolve, spread over the module (default 20).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
#[path = "../../tests/lsp_support/mod.rs"]
mod lsp_support;

use lsp_support::Client;

/// Lines an editor shows at once.
const SCREEN_LINES: u64 = 60;

/// The lenses whose line is in the screen starting at `top`.
fn on_screen(lenses: &[Value], top: u64) -> Vec<Value> {
    lenses
        .iter()
        .filter(|l| {
            let line = l["range"]["start"]["line"].as_u64().unwrap_or(0);
            (top..top + SCREEN_LINES).contains(&line)
        })
        .cloned()
        .collect()
}

/// Times of `screens` screens of lenses, each from the `codeLens` request to the
/// last resolved lens of that screen, spread evenly over the kernels.
fn screen_latencies(path: &Path, text: &str, screens: usize) -> (usize, Vec<Duration>) {
    let (mut client, _) = Client::start_with(json!({"coalescing": {"device": "a6000"}}), false);
    let uri = format!("file://{}", path.display());
    client.open(&uri, text);
    // The first answer waits for the open's model: not a screen's cost.
    let all = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let kernels = all.as_array().map_or(0, Vec::len);
    assert!(kernels > 0, "no kernel lenses on the module");
    let tops: Vec<u64> = (0..screens)
        .map(|k| {
            let lens = &all[kernels * k / screens];
            lens["range"]["start"]["line"].as_u64().unwrap()
        })
        .collect();
    let mut latencies = Vec::new();
    for top in tops {
        let t = Instant::now();
        let lenses = client.result(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        );
        let listed = t.elapsed();
        let shown = on_screen(lenses.as_array().unwrap(), top);
        let count = shown.len();
        for lens in shown {
            let resolved = client.result("codeLens/resolve", lens);
            assert!(
                resolved["command"]["title"]
                    .as_str()
                    .is_some_and(|t| t.contains("as if compiled for a6000")
                        || t.starts_with("not modelled: an XLA:CPU kernel")),
                "{resolved}"
            );
        }
        eprintln!(
            "  listed in {listed:?}, {count} resolved in {:?}",
            t.elapsed() - listed
        );
        latencies.push(t.elapsed());
    }
    assert!(client.shutdown_and_exit().success());
    latencies.sort();
    (kernels, latencies)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` must not run this.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let copies = common::env_number("HLO_BENCH_COPIES", 32);
    let screens = common::env_number("HLO_BENCH_SCREENS", 20);
    let text = common::transformer_module(copies);
    let dir = std::env::temp_dir().join(format!("hlo-lsp-cost-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench folder");
    // A CPU dump's name: the cost is only given because a GPU is chosen.
    let path = dir.join("module_0001.big.cpu_after_optimizations.txt");
    std::fs::write(&path, &text).expect("writing the module");

    let (kernels, latencies) = screen_latencies(&path, &text, screens);
    let file = path.to_str().unwrap();
    let check = common::cli_seconds(&lsp_support::server_binary(), &["check", file], 3);
    let cost = common::cli_seconds(
        &lsp_support::server_binary(),
        &["cost", "--device", "a6000", file],
        3,
    );
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "cost lenses ({:.1} MB, {kernels} kernels, {screens} screens of {SCREEN_LINES} lines)",
        text.len() as f64 / 1e6
    );
    println!(
        "  codeLens -> a screen resolved  p50 {:?}  max {:?}",
        common::percentile(&latencies, 0.5),
        latencies.last().unwrap()
    );
    println!("cli/check                        {check:.3} s");
    println!(
        "cli/cost --device a6000          {cost:.3} s = {:.2}x check",
        cost / check
    );
}
