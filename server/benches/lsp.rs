//! Scale: the language server and the CLI on a real dump and on 32 renamed copies of it
//! in one module, measured side by side with XLA's own parser where jaxlib is installed
//! (issue 13's table). The dump is an 8-layer transformer training step (1.77 MB,
//! `tests/data/bench`); `HLO_BENCH_COPIES` sets the large module's copies (default 32,
//! 60 MB) and `HLO_BENCH_CHECK_COPIES` the `check` module's (default 9, 16 MB).
//!
//! For each module, over stdio as an editor drives the server: didOpen followed at once
//! by a hover (time to the hover's answer), the first published diagnostics, hover
//! latency over random instructions inside fused computations (p50/p99), a
//! one-character didChange inside a fused computation until the diagnostics of that
//! version arrive (their bytes read; the time until this client has also parsed them,
//! its own cost of 4-8 ms for the 2,048 findings of the large module, is printed beside;
//! p50 over 10 edits; the same instruction in both modules, in the
//! large one's middle copy, so that only the file size differs), and the server's peak resident memory. Then
//! `hlo-lsp check` and `hlo-lsp maps --all` through the built binary, each the best of
//! three runs (on a shared machine, a single run measures the neighbours). Latency
//! percentiles are what matter, so this is a plain harness rather than criterion.
//!
//! After the first hover, the requests an editor sends on opening a document are timed
//! one by one (lenses, outline, folding, semantic tokens, links, a screen's inlay
//! hints); after the diagnostics, the time until the module-wide answers (the memory
//! estimate) are ready, then hovers on the ENTRY's instructions, which carry them; the
//! slowest request after the open is printed.
//!
//! `HLO_BENCH_HOVERS` sets the hover count (300); `HLO_LSP_SERVER=PATH` measures another
//! build of the binary (e.g. the one before a change) on the same modules; `HLO_BENCH_WRITE=DIR` only writes the
//! generated modules there (to profile the CLI on them); `HLO_BENCH_SERVER_ONLY=1` leaves
//! out the CLI rows (for the 600 MB module: `HLO_BENCH_COPIES=320`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
#[path = "../../tests/lsp_support/mod.rs"]
mod lsp_support;

use lsp_support::Client;

/// Positions (0-based line, column) of the names of instructions inside fused
/// computations (computations named by a `calls=` of a `fusion`).
fn fused_instruction_positions(text: &str) -> Vec<(u32, u32)> {
    let fused: std::collections::HashSet<&str> = text
        .lines()
        .filter(|l| l.contains(" fusion("))
        .filter_map(|l| l.split("calls=").nth(1))
        .map(|rest| {
            let rest = rest.trim_start_matches('%');
            &rest[..rest.find([',', ' ', '}']).unwrap_or(rest.len())]
        })
        .collect();
    let mut in_fused = false;
    let mut positions = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if !line.starts_with(' ') && line.ends_with('{') {
            let name = line.trim_start_matches("ENTRY ").trim_start_matches('%');
            let name = &name[..name.find([' ', '(']).unwrap_or(name.len())];
            in_fused = fused.contains(name);
        } else if line.starts_with('}') {
            in_fused = false;
        } else if in_fused && line.starts_with("  ") {
            let column = if line.starts_with("  ROOT ") { 7 } else { 2 };
            positions.push((number as u32, column));
        }
    }
    positions
}

/// Positions of the names of the ENTRY computation's instructions: their hovers
/// carry the sections that need the whole module (memory, its live-range strip).
fn entry_instruction_positions(text: &str) -> Vec<(u32, u32)> {
    let mut in_entry = false;
    let mut positions = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("ENTRY ") {
            in_entry = true;
        } else if line.starts_with('}') {
            in_entry = false;
        } else if in_entry && line.starts_with("  ") {
            let column = if line.starts_with("  ROOT ") { 7 } else { 2 };
            positions.push((number as u32, column));
        }
    }
    positions
}

/// The requests an editor sends for a document it has just opened (VS Code: lenses,
/// outline, folding, semantic tokens, links, the inlay hints of the screen), each
/// timed on its own: `(method, time)`.
fn time_open_requests(
    client: &mut Client,
    uri: &str,
    screen: u32,
) -> Vec<(&'static str, Duration)> {
    let document = json!({"textDocument": {"uri": uri}});
    let mut hints = document.clone();
    hints["range"] = json!({"start": {"line": screen, "character": 0},
                            "end": {"line": screen + 60, "character": 0}});
    let shown = hints.clone();
    [
        ("textDocument/codeLens", document.clone()),
        ("textDocument/documentSymbol", document.clone()),
        ("textDocument/foldingRange", document.clone()),
        ("textDocument/semanticTokens/full", document.clone()),
        ("textDocument/semanticTokens/range", shown),
        ("textDocument/documentLink", document.clone()),
        ("textDocument/inlayHint", hints),
    ]
    .into_iter()
    .map(|(method, params)| {
        let t = Instant::now();
        client.result(method, params);
        (method, t.elapsed())
    })
    .collect()
}

/// Peak resident set of a process, in bytes (Linux).
fn peak_rss(pid: u32) -> Option<u64> {
    status_bytes(pid, "VmHWM:")
}

/// A size from a process's `/proc/PID/status` (`VmHWM:`, `VmRSS:`), in bytes.
fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The resident set at the end of a phase and the peak so far: where the peak comes from.
fn rss_after(pid: u32, phase: &'static str, phases: &mut Vec<(&'static str, u64, u64)>) {
    if let (Some(now), Some(peak)) = (status_bytes(pid, "VmRSS:"), peak_rss(pid)) {
        phases.push((phase, now, peak));
    }
}

fn hover_request(uri: &str, (line, character): (u32, u32)) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// What the server did on one module.
struct ServerRun {
    open_to_first_hover: Duration,
    open_to_diagnostics: Duration,
    hover_p50: Duration,
    hover_p99: Duration,
    /// Hovers on the ENTRY's instructions once the module-wide answers are ready
    /// (every section: the memory line and strip besides the maps).
    entry_hover_p50: Duration,
    entry_hover_p99: Duration,
    /// What an editor asks right after the open, each request timed.
    open_requests: Vec<(&'static str, Duration)>,
    /// The same once the checks are done.
    settled_requests: Vec<(&'static str, Duration)>,
    /// From the diagnostics until the hovers have the memory estimate.
    diagnostics_to_module_answers: Duration,
    /// The slowest request after the first hover (editor requests, hovers).
    slowest_request: Duration,
    /// Until the notification's bytes arrived.
    edit_p50: Duration,
    /// Until this client had parsed it into JSON values (its own cost).
    edit_parsed_p50: Duration,
    edit_max: Duration,
    peak_rss: Option<u64>,
    /// The resident set after each phase, and the peak then.
    rss_phases: Vec<(&'static str, u64, u64)>,
}

fn next_random(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// One character of `op_name` metadata in a fused computation near the middle of the
/// module, as (line, column): changing it keeps the module valid.
fn edit_site(text: &str, positions: &[(u32, u32)]) -> (u32, u32) {
    let lines: Vec<&str> = text.lines().collect();
    positions[positions.len() / 2..]
        .iter()
        .find_map(|&(line, _)| op_name_column(lines[line as usize]).map(|c| (line, c)))
        .expect("a fused instruction with op_name metadata")
}

fn op_name_column(line: &str) -> Option<u32> {
    let column = line.find("op_name=\"")?;
    Some((column + "op_name=\"".len() + 1) as u32)
}

/// The header line of the computation holding `line`, and its name.
fn computation_at<'t>(lines: &[&'t str], line: usize) -> (usize, &'t str) {
    let header = (0..=line)
        .rev()
        .find(|&l| !lines[l].starts_with(' ') && lines[l].ends_with('{'))
        .expect("a computation header");
    let name = lines[header]
        .trim_start_matches("ENTRY ")
        .trim_start_matches('%');
    (header, &name[..name.find([' ', '(']).unwrap_or(name.len())])
}

/// The same edit as `site` of `small` (the dump, copy 0) in copy `copy` of `large`:
/// the same instruction of the same computation, so that the two edits recompute the
/// same amount and only the file size differs.
fn same_site(small: &str, site: (u32, u32), large: &str, copy: usize) -> (u32, u32) {
    let small_lines: Vec<&str> = small.lines().collect();
    let (header, name) = computation_at(&small_lines, site.0 as usize);
    let offset = site.0 as usize - header;
    let renamed = format!("{}.c{copy}", name.strip_suffix(".c0").expect("copy 0"));
    let large_lines: Vec<&str> = large.lines().collect();
    let line = large_lines
        .iter()
        .position(|l| {
            let l = l.trim_start_matches("ENTRY ").trim_start_matches('%');
            l.starts_with(&renamed) && l[renamed.len()..].starts_with([' ', '('])
        })
        .expect("the computation in the copy")
        + offset;
    let column = op_name_column(large_lines[line]).expect("the same instruction");
    (line as u32, column)
}

/// Drives the server on `text`: open, hovers, then 10 one-character edits at `edit`.
/// With `HLO_BENCH_SLOWEST=N`, the N slowest hovers and the lines they were on: where
/// to look when p99 moves.
fn print_slowest(text: &str, sorted: &[(Duration, (u32, u32))]) {
    let count = common::env_number("HLO_BENCH_SLOWEST", 0);
    let lines: Vec<&str> = text.lines().collect();
    for (took, (line, _)) in sorted.iter().rev().take(count) {
        let shown: String = lines[*line as usize].trim().chars().take(120).collect();
        eprintln!("  slow hover {took:?} at line {}: {shown}", line + 1);
    }
}

fn run_server(text: &str, hovers: usize, edit: (u32, u32)) -> ServerRun {
    let positions = fused_instruction_positions(text);
    assert!(!positions.is_empty(), "no fused instructions");
    let uri = lsp_support::uri("big.hlo");
    let mut client = Client::start();

    let started = Instant::now();
    client.open(&uri, text);
    let first = client.result(
        "textDocument/hover",
        hover_request(&uri, positions[positions.len() / 2]),
    );
    let open_to_first_hover = started.elapsed();
    assert!(first.to_string().contains("->"), "no map in {first}");
    let mut rss_phases = Vec::new();
    rss_after(client.pid(), "first hover", &mut rss_phases);
    let open_requests = time_open_requests(&mut client, &uri, positions[positions.len() / 2].0);
    rss_after(client.pid(), "open requests", &mut rss_phases);
    client.diagnostics(&uri, 1);
    let open_to_diagnostics = started.elapsed();
    client.wait_module_answers(&uri, 1);
    let diagnostics_to_module_answers = started.elapsed() - open_to_diagnostics;
    // The same requests once the checks no longer hold the cores: what each costs alone.
    rss_after(client.pid(), "checked", &mut rss_phases);
    let settled_requests = time_open_requests(&mut client, &uri, positions[positions.len() / 2].0);
    rss_after(client.pid(), "requests again", &mut rss_phases);

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut latencies = Vec::with_capacity(hovers);
    for _ in 0..hovers {
        let position = positions[(next_random(&mut seed) % positions.len() as u64) as usize];
        let t = Instant::now();
        let answer = client.result("textDocument/hover", hover_request(&uri, position));
        latencies.push((t.elapsed(), position));
        assert!(!answer.is_null(), "no hover at {position:?}");
    }
    latencies.sort();
    print_slowest(text, &latencies);
    let latencies: Vec<Duration> = latencies.into_iter().map(|(d, _)| d).collect();
    let entry = entry_instruction_positions(text);
    let mut entry_latencies = Vec::with_capacity(hovers);
    for _ in 0..hovers {
        let position = entry[(next_random(&mut seed) % entry.len() as u64) as usize];
        let t = Instant::now();
        let answer = client.result("textDocument/hover", hover_request(&uri, position));
        entry_latencies.push(t.elapsed());
        assert!(!answer.is_null(), "no hover at {position:?}");
    }
    entry_latencies.sort();
    rss_after(client.pid(), "hovers", &mut rss_phases);
    let memory_hover = client.result("textDocument/hover", hover_request(&uri, entry[0]));
    assert!(
        memory_hover.to_string().contains("Memory ("),
        "no memory line in {memory_hover}"
    );
    let slowest_request = open_requests
        .iter()
        .map(|&(_, d)| d)
        .chain(latencies.last().copied())
        .chain(entry_latencies.last().copied())
        .max()
        .unwrap_or_default();

    let (line, column) = edit;
    let mut edits = Vec::new();
    let mut parsed = Vec::new();
    for version in 2..12 {
        let letter = if version % 2 == 0 { "X" } else { "Y" };
        let t = Instant::now();
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": line, "character": column},
                                                 "end": {"line": line, "character": column + 1}},
                                       "text": letter}]}),
        );
        let diagnostics = client.diagnostics(&uri, version);
        let arrived = client.last_arrival().expect("a notification off the wire");
        edits.push(arrived - t);
        parsed.push(t.elapsed());
        drop(diagnostics);
    }
    edits.sort();
    parsed.sort();
    rss_after(client.pid(), "edits", &mut rss_phases);
    let peak_rss = peak_rss(client.pid());
    assert!(client.shutdown_and_exit().success());
    ServerRun {
        open_to_first_hover,
        open_to_diagnostics,
        hover_p50: common::percentile(&latencies, 0.5),
        hover_p99: common::percentile(&latencies, 0.99),
        entry_hover_p50: common::percentile(&entry_latencies, 0.5),
        entry_hover_p99: common::percentile(&entry_latencies, 0.99),
        open_requests,
        settled_requests,
        diagnostics_to_module_answers,
        slowest_request,
        edit_p50: common::percentile(&edits, 0.5),
        edit_parsed_p50: common::percentile(&parsed, 0.5),
        edit_max: *edits.last().unwrap(),
        peak_rss,
        rss_phases,
    }
}

/// Seconds XLA's parser (jaxlib's `hlo_module_from_text`) takes on `path`, best of
/// `runs`, reading excluded; `None` when jaxlib is not installed.
fn xla_parse_seconds(path: &Path, runs: usize) -> Option<f64> {
    let script = "import sys, time\n\
        from jax._src.lib import hlo\n\
        text = open(sys.argv[1]).read()\n\
        best = min((lambda t: (hlo.hlo_module_from_text(text), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(int(sys.argv[2])))\n\
        print(best)\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .arg(runs.to_string())
        .env("JAX_PLATFORMS", "cpu")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "XLA's parser not timed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn write_module(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writing a generated module");
    path
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` must not run this.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let copies = common::env_number("HLO_BENCH_COPIES", 32);
    let check_copies = common::env_number("HLO_BENCH_CHECK_COPIES", 9);
    let hovers = common::env_number("HLO_BENCH_HOVERS", 300);
    let small = common::transformer_module(1);
    let large = common::transformer_module(copies);
    let checked = common::transformer_module(check_copies);
    let dir = match std::env::var("HLO_BENCH_WRITE") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => std::env::temp_dir().join(format!("hlo-lsp-bench-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).expect("bench folder");
    write_module(&dir, "small.hlo", &small);
    let large_path = write_module(&dir, "large.hlo", &large);
    let checked_path = write_module(&dir, "checked.hlo", &checked);
    if std::env::var("HLO_BENCH_WRITE").is_ok() {
        eprintln!("wrote the modules to {}", dir.display());
        return;
    }

    let xla_large = xla_parse_seconds(&large_path, 1);
    let small_site = edit_site(&small, &fused_instruction_positions(&small));
    let large_site = same_site(&small, small_site, &large, copies / 2);
    let small_run = run_server(&small, hovers, small_site);
    let large_run = run_server(&large, hovers, large_site);
    // `HLO_BENCH_SERVER_ONLY=1` (the 600 MB run): the server only.
    let cli = std::env::var("HLO_BENCH_SERVER_ONLY").is_err().then(|| {
        let xla_checked = xla_parse_seconds(&checked_path, 3);
        let check = common::cli_seconds(
            &lsp_support::server_binary(),
            &["check", checked_path.to_str().unwrap()],
            3,
        );
        let maps_all = common::cli_seconds(
            &lsp_support::server_binary(),
            &["maps", "--all", large_path.to_str().unwrap()],
            3,
        );
        (xla_checked, check, maps_all)
    });
    let _ = std::fs::remove_dir_all(&dir);

    let ratio = |ours: f64, theirs: Option<f64>| match theirs {
        Some(t) => format!(" = {:.2}x XLA's parse ({t:.2} s)", ours / t),
        None => String::new(),
    };
    for (label, text, run) in [("small", &small, &small_run), ("large", &large, &large_run)] {
        let open = run.open_to_first_hover.as_secs_f64();
        let xla = if label == "large" { xla_large } else { None };
        println!("lsp/{label} ({:.1} MB)", mb(text.len()));
        println!(
            "  didOpen -> first hover     {:.3} s{}",
            open,
            ratio(open, xla)
        );
        println!(
            "  didOpen -> diagnostics     {:.3} s",
            run.open_to_diagnostics.as_secs_f64()
        );
        println!(
            "  diagnostics -> memory      {:.3} s",
            run.diagnostics_to_module_answers.as_secs_f64()
        );
        for ((method, took), (_, settled)) in run.open_requests.iter().zip(&run.settled_requests) {
            println!("  after open: {method:<34} {took:?}  (once checked: {settled:?})");
        }
        println!(
            "  hover ({hovers} fused)        p50 {:?}  p99 {:?}",
            run.hover_p50, run.hover_p99
        );
        println!(
            "  hover ({hovers} ENTRY)        p50 {:?}  p99 {:?}",
            run.entry_hover_p50, run.entry_hover_p99
        );
        println!("  slowest request after open {:?}", run.slowest_request);
        println!(
            "  didChange -> diagnostics   p50 {:?}  max {:?}  (parsed by this client: p50 {:?})",
            run.edit_p50, run.edit_max, run.edit_parsed_p50
        );
        if let Some(peak) = run.peak_rss {
            println!(
                "  peak RSS                   {:.0} MB = {:.1}x the file",
                peak as f64 / 1e6,
                peak as f64 / text.len() as f64
            );
        }
        let phases: Vec<String> = run
            .rss_phases
            .iter()
            .map(|(phase, now, peak)| {
                format!("{phase} {:.0}/{:.0}", *now as f64 / 1e6, *peak as f64 / 1e6)
            })
            .collect();
        println!("  RSS/peak MB after: {}", phases.join(", "));
    }
    println!(
        "lsp/edit large vs small       {:.2}x",
        large_run.edit_p50.as_secs_f64() / small_run.edit_p50.as_secs_f64()
    );
    let Some((xla_checked, check, maps_all)) = cli else {
        return;
    };
    println!(
        "cli/check ({:.1} MB)           {check:.3} s{}",
        mb(checked.len()),
        ratio(check, xla_checked)
    );
    println!(
        "cli/maps --all ({:.1} MB)      {maps_all:.3} s",
        mb(large.len())
    );
}
