//! The language server on a generated 50 MB module, over stdio, as an editor drives it:
//! time to open (didOpen until the first diagnostics and the first hover answer),
//! hover latency (p50/p99 over random instructions inside fusions), the time from a
//! one-character `didChange` to the published diagnostics of the new version, and the
//! server's peak resident memory. Latency percentiles are what matter here, so this is
//! a plain harness rather than criterion (which reports means of batched iterations).
//!
//! `HLO_BENCH_MB` sets the size (default 50); `HLO_BENCH_HOVERS` the hover count (300);
//! `HLO_BENCH_WRITE=FILE` only writes the generated module (to profile the CLI on it).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
#[path = "../../tests/lsp_support/mod.rs"]
mod lsp_support;

use lsp_support::Client;

/// Positions (0-based line, column) of the names of instructions inside fused
/// computations.
fn fused_instruction_lines(text: &str) -> Vec<(u32, u32)> {
    let mut in_fused = false;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("fused_") {
            in_fused = true;
        } else if line.starts_with('}') {
            in_fused = false;
        } else if in_fused && line.starts_with("  ") {
            let column = if line.starts_with("  ROOT ") { 7 } else { 2 };
            lines.push((number as u32, column));
        }
    }
    lines
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Peak resident set of a process, in bytes (Linux).
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn hover_at(client: &mut Client, uri: &str, (line, character): (u32, u32)) -> Value {
    client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
    )
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` must not run this.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mb: usize = env_number("HLO_BENCH_MB", 50);
    let hovers: usize = env_number("HLO_BENCH_HOVERS", 300);
    let text = common::fused_module(mb << 20);
    if let Ok(path) = std::env::var("HLO_BENCH_WRITE") {
        std::fs::write(&path, &text).expect("writing the generated module");
        eprintln!("wrote {path}");
        return;
    }
    let lines = fused_instruction_lines(&text);
    eprintln!(
        "module: {:.1} MB, {} lines, {} fused instructions",
        text.len() as f64 / 1e6,
        text.lines().count(),
        lines.len()
    );
    let uri = lsp_support::uri("big.hlo");
    let mut client = Client::start();

    let started = Instant::now();
    client.open(&uri, &text);
    let diagnostics = client.diagnostics(&uri, 1);
    let to_diagnostics = started.elapsed();
    assert!(diagnostics.is_empty(), "generated module has diagnostics");
    let first = hover_at(&mut client, &uri, lines[lines.len() / 2]);
    let to_first_hover = started.elapsed();
    assert!(first.to_string().contains("->"), "no map in {first}");

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut latencies = Vec::with_capacity(hovers);
    for _ in 0..hovers {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let line = lines[(seed % lines.len() as u64) as usize];
        let t = Instant::now();
        let answer = hover_at(&mut client, &uri, line);
        latencies.push(t.elapsed());
        assert!(!answer.is_null(), "no hover at {line:?}");
    }
    latencies.sort();

    // One character of metadata in the middle: the module stays valid.
    let middle = lines[lines.len() / 2].0;
    let line_text = text.lines().nth(middle as usize).unwrap();
    let column = line_text.find("jit(f)").map(|c| c + 4).unwrap_or(3) as u32;
    let mut edits = Vec::new();
    for version in 2..12 {
        let letter = if version % 2 == 0 { "g" } else { "f" };
        let t = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": middle, "character": column},
                                                 "end": {"line": middle, "character": column + 1}},
                                       "text": letter}]}),
        );
        client.diagnostics(&uri, version);
        edits.push(t.elapsed());
    }
    edits.sort();
    let peak = peak_rss(client.pid());
    assert!(client.shutdown_and_exit().success());

    println!("lsp/open_to_diagnostics      {to_diagnostics:?}");
    println!("lsp/open_to_first_hover      {to_first_hover:?}");
    println!(
        "lsp/hover ({hovers} random fused instructions) p50 {:?}  p99 {:?}  max {:?}",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().unwrap()
    );
    println!(
        "lsp/didChange_to_diagnostics (10 edits) p50 {:?}  max {:?}",
        percentile(&edits, 0.5),
        edits.last().unwrap()
    );
    if let Some(peak) = peak {
        println!(
            "lsp/peak_rss {:.0} MB ({:.1}x the file)",
            peak as f64 / 1e6,
            peak as f64 / text.len() as f64
        );
    }
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
