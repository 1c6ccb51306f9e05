//! Issue 44's speed bars for measured time in the editor, through the real binary: a
//! large module (default: 28 renamed copies of the transformer dump, 52.9 MB; or the
//! file `HLO_BENCH_MODULE` names, e.g. `make_live_module.py`'s live module) written as
//! a CPU dump with an XProf logdir beside it, a Chrome trace with an event per kernel
//! per execution. Measured: reading the profile (the library, best of three), joining
//! it to the module (the library), the time from `didOpen` until the server shows the
//! measured lenses (found, read and joined in the background), and then, as in
//! `cost_lens.rs`, a screen of lenses: `textDocument/codeLens` and the resolves of the
//! lenses on screen, spread over the module; also the first screen after an edit (the
//! new version joins the profile again), and all of it once more with a GPU chosen
//! (each lens then also estimates its kernel). The bar: a screen under 50 ms. A plain
//! harness: latencies, not throughput.
//!
//! `HLO_BENCH_COPIES` (default 28), `HLO_BENCH_SCREENS` (default 20),
//! `HLO_BENCH_MODULE` (a module file instead of the copies).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod common;
#[path = "../../tests/lsp_support/mod.rs"]
mod lsp_support;

use hlo_lsp::cost;
use hlo_lsp::model::parse_hlo;
use lsp_support::Client;

/// Lines an editor shows at once.
const SCREEN_LINES: u64 = 60;
/// Executions the profile holds.
const EXECUTIONS: u32 = 5;

/// The kernels of the module, by name: what XLA launches (or XLA:CPU runs as thunks).
fn kernel_names(text: &str) -> (String, Vec<String>) {
    let file = parse_hlo(text);
    let module = &file.modules[0];
    let mut names = Vec::new();
    for c in module.computations() {
        if !cost::report::launches_kernels(module, c.id) {
            continue;
        }
        for i in &c.model().instructions {
            if !i.synthetic && cost::is_kernel(i) {
                names.push(i.name.trim_start_matches('%').to_string());
            }
        }
    }
    let name = module.name.clone().unwrap_or_else(|| "module".into());
    (name, names)
}

/// A Chrome trace as `jax.profiler` writes it: one host thread, one op event per
/// kernel per execution, each a few microseconds.
fn trace(module: &str, kernels: &[String]) -> String {
    let mut out = String::from(
        r#"{"displayTimeUnit":"ns","traceEvents":[{"ph":"M","pid":1,"name":"process_name","args":{"name":"/host:CPU"}},{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"tf_XLAPjRtCpuClient"}}"#,
    );
    let mut ts = 0.0;
    for run in 1..=EXECUTIONS {
        for (k, name) in kernels.iter().enumerate() {
            let dur = 1.0 + (k % 17) as f64 * 0.5;
            let _ = write!(
                out,
                r#",{{"ph":"X","pid":1,"tid":2,"ts":{ts:.3},"dur":{dur:.3},"name":"{name}","args":{{"hlo_op":"{name}","hlo_module":"{module}","run_id":"{run}"}}}}"#
            );
            ts += dur + 0.1;
        }
    }
    out.push_str(",{}]}\n");
    out
}

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

/// What one screen took.
struct Screen {
    /// The lens list and the resolves.
    total: Duration,
    /// The lens list alone (`textDocument/codeLens`, every lens of the module).
    list: Duration,
    shown: usize,
    measured: usize,
}

/// A screen: the lens list, then every lens on it resolved; its times and how many
/// lenses said a measurement.
fn screen(client: &mut Client, uri: &str, top: u64) -> Screen {
    let t = Instant::now();
    let lenses = client.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let list = t.elapsed();
    let shown = on_screen(lenses.as_array().unwrap(), top);
    let mut measured = 0;
    for lens in &shown {
        let resolved = match lens["command"].is_null() {
            true => client.result("codeLens/resolve", lens.clone()),
            false => lens.clone(),
        };
        let title = resolved["command"]["title"].as_str().unwrap_or_default();
        measured += usize::from(title.starts_with("measured "));
    }
    Screen {
        total: t.elapsed(),
        list,
        shown: shown.len(),
        measured,
    }
}

struct Run {
    ready: Duration,
    lenses: usize,
    screens: Vec<Duration>,
    lists: Vec<Duration>,
    after_edit: Duration,
    per_screen: usize,
}

/// Opens `path` in a server with `options`, waits for the measured lenses, then times
/// `screens` screens spread over them and one after an edit.
fn session(path: &Path, text: &str, options: Value, screens: usize) -> Run {
    let (mut client, _) = Client::start_with(options, false);
    let uri = format!("file://{}", path.display());
    let opened = Instant::now();
    client.open(&uri, text);
    let all = loop {
        let all = client.result(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        );
        let first = all.as_array().and_then(|a| a.first()).cloned();
        let measured = first.is_some_and(|lens| {
            let resolved = client.result("codeLens/resolve", lens);
            resolved["command"]["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("measured "))
        });
        if measured {
            break all;
        }
        assert!(
            opened.elapsed() < Duration::from_secs(600),
            "no measured lens"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let ready = opened.elapsed();
    let lenses = all.as_array().unwrap().clone();
    let tops: Vec<u64> = (0..screens)
        .map(|k| {
            lenses[lenses.len() * k / screens]["range"]["start"]["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let mut times = Vec::new();
    let mut lists = Vec::new();
    let mut per_screen = 0;
    for top in &tops {
        let s = screen(&mut client, &uri, *top);
        assert!(
            s.measured > 0,
            "no measured lens on the screen at line {top}"
        );
        per_screen = per_screen.max(s.shown);
        times.push(s.total);
        lists.push(s.list);
    }
    // An edit in a comment at the end: a new version, which joins the profile again.
    let line = text.lines().count() as u32;
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                             "end": {"line": line, "character": 0}},
                                   "text": "// edited\n"}]}),
    );
    let edited = screen(&mut client, &uri, tops[0]);
    assert!(edited.measured > 0, "no measured lens after the edit");
    assert!(client.shutdown_and_exit().success());
    times.sort();
    lists.sort();
    Run {
        ready,
        lenses: lenses.len(),
        screens: times,
        lists,
        after_edit: edited.total,
        per_screen,
    }
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        best = best.min(t.elapsed());
    }
    (best, last.expect("one run"))
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` must not run this.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let screens = common::env_number("HLO_BENCH_SCREENS", 20);
    let text = match std::env::var("HLO_BENCH_MODULE") {
        Ok(path) => std::fs::read_to_string(&path).expect("HLO_BENCH_MODULE"),
        Err(_) => common::transformer_module(common::env_number("HLO_BENCH_COPIES", 28)),
    };
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hlo-lsp-profile-bench-{}", std::process::id()));
    let run_dir = dir.join("profile/plugins/profile/2026_01_01_00_00_00");
    std::fs::create_dir_all(&run_dir).expect("bench folder");
    let (module_name, kernels) = kernel_names(&text);
    let path = dir.join(format!(
        "module_0001.{module_name}.cpu_after_optimizations.txt"
    ));
    std::fs::write(&path, &text).expect("writing the module");
    let trace_file = run_dir.join("host.trace.json");
    std::fs::write(&trace_file, trace(&module_name, &kernels)).expect("writing the trace");
    let trace_mb = std::fs::metadata(&trace_file).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;

    let (read_time, profile) = best_of(3, || hlo_lsp::profile::read(&trace_file).expect("read"));
    let file = parse_hlo(&text);
    let module = &file.modules[0];
    let (join_time, joined) = best_of(3, || {
        hlo_lsp::profile::join(&profile, module, Some(1)).expect("join")
    });
    drop(file);

    let plain = session(&path, &text, json!({}), screens);
    let gpu = session(
        &path,
        &text,
        json!({"coalescing": {"device": "a6000"}}),
        screens,
    );
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "measured lenses ({:.1} MB module, {} kernels measured; trace {trace_mb:.1} MB, {EXECUTIONS} executions)",
        text.len() as f64 / 1e6,
        joined.instructions.len()
    );
    println!("  profile::read (trace.json)       {read_time:?} (best of 3)");
    println!("  profile::join (the module built)  {join_time:?} (best of 3)");
    for (what, r) in [("CPU dump", &plain), ("a6000 chosen", &gpu)] {
        println!(
            "  {what}: didOpen -> measured lenses shown {:?}; {} lenses; {screens} screens of {SCREEN_LINES} lines (up to {} lenses): p50 {:?}  max {:?} (of which the lens list: p50 {:?}  max {:?}); first screen after an edit {:?}",
            r.ready,
            r.lenses,
            r.per_screen,
            common::percentile(&r.screens, 0.5),
            r.screens.last().unwrap(),
            common::percentile(&r.lists, 0.5),
            r.lists.last().unwrap(),
            r.after_edit,
        );
    }
}
