//! Completion's latency on a large module (issue 48: p99 under 20 ms on the 53 MB
//! module). At 200 places drawn with a fixed seed, a token is deleted as in
//! `server/tests/completion_measure.rs` (an opcode, an attribute's name, an operand, a
//! called computation's name) and completion is asked for where it was; the edit and
//! the build of the edited computation (which the server's diagnostics do on every
//! edit anyway) are not timed, the completion request is.
//!
//! `HLO_BENCH_MODULE=/tmp/live32.hlo cargo bench -p hlo-lsp --bench completion`
//! reads the module `../shared/bench/make_live_module.py` writes; without it, 32
//! copies of the transformer dump (`HLO_BENCH_COPIES`).
//!
//! Measured 2026-11-28 on the 60.6 MB live module (2 shared cores): p50 0.25 ms,
//! p99 8.9 ms, max 9.7 ms; a computation name is the slowest kind (p50 4.8 ms).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hlo_lsp::checks::incremental::Checked;
use hlo_lsp::ide::completion::{self, Options};
use hlo_lsp::ide::{HloSnapshot, Snapshot};
use hlo_lsp::model::Document;

const PLACES: usize = 200;

/// Token ranges of the four kinds, in document bytes (names without their `%`).
fn tokens(document: &Document, text: &str) -> [Vec<std::ops::Range<usize>>; 4] {
    let mut out: [Vec<_>; 4] = Default::default();
    let unpercent = |r: std::ops::Range<usize>| {
        if text.as_bytes().get(r.start) == Some(&b'%') {
            r.start + 1..r.end
        } else {
            r
        }
    };
    for (_, c) in document.file().all_computations() {
        for i in c.model().instructions.iter().filter(|i| !i.synthetic) {
            out[0].push(c.abs(i.opcode_range));
            out[1].extend(i.attributes.iter().map(|a| c.abs(a.name_range)));
            out[2].extend(
                i.operands
                    .iter()
                    .filter_map(|o| o.name_range())
                    .map(|r| unpercent(c.abs(r))),
            );
            out[3].extend(i.called.iter().map(|k| unpercent(c.abs(k.name_range))));
        }
    }
    out
}

fn main() {
    let text = match std::env::var("HLO_BENCH_MODULE") {
        Ok(path) => std::fs::read_to_string(&path).expect("HLO_BENCH_MODULE is readable"),
        Err(_) => common::transformer_module(common::env_number("HLO_BENCH_COPIES", 32)),
    };
    let started = Instant::now();
    let opened = Document::parse(&text);
    opened.build_all();
    println!(
        "module: {:.1} MB, parsed and built in {:.1} s",
        text.len() as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let kinds = tokens(&opened, &text);
    let mut seed = 0x48_c0_11_e7_u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut times: Vec<Duration> = Vec::new();
    let mut by_kind: [Vec<Duration>; 4] = Default::default();
    let mut items = 0;
    for k in 0..PLACES {
        let pool = &kinds[k % 4];
        let range = pool[next(pool.len())].clone();
        let (edited, _) = opened.edited(range.start, range.end, "");
        let edited = Arc::new(edited);
        let snapshot = Snapshot::Hlo(HloSnapshot::new(
            edited.clone(),
            Arc::new(Checked::new(&edited)),
        ));
        // The edited computation is built by the diagnostics of the edit.
        let _ = edited.file().computation_at(range.start);
        let start = Instant::now();
        let answer = completion::complete(
            &snapshot,
            range.start,
            Options {
                snippets: true,
                ..Options::default()
            },
        );
        times.push(start.elapsed());
        by_kind[k % 4].push(start.elapsed());
        items += answer.map_or(0, |a| a.items.len());
    }
    times.sort();
    for (name, mut t) in ["opcode", "attribute", "operand", "computation"]
        .into_iter()
        .zip(by_kind)
    {
        t.sort();
        println!(
            "  {name}: p50 {:.2} ms, max {:.2} ms",
            common::percentile(&t, 0.5).as_secs_f64() * 1e3,
            t.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
        );
    }
    println!(
        "completion at {PLACES} places: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} items on average)",
        common::percentile(&times, 0.5).as_secs_f64() * 1e3,
        common::percentile(&times, 0.99).as_secs_f64() * 1e3,
        times.last().map_or(0.0, |t| t.as_secs_f64() * 1e3),
        items / PLACES
    );
}
