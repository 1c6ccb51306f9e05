//! The fuzz targets' bodies (issue 14.4), shared by `server/fuzz` (cargo fuzz,
//! coverage-guided) and `tests/fuzz_regressions.rs`, which replays every input the
//! fuzzers found (`tests/data/fuzz/<target>/`) in the normal test suite. Each body
//! panics on a finding: a crash, or an answer that contradicts its oracle.

#![allow(dead_code)]

#[path = "../analysis_support/mod.rs"]
mod analysis_support;

use std::collections::BTreeSet;

use analysis_support::{check_round_trip, every_map, printed_maps};
use hlo_lsp::algebra::{DivSpelling, IndexingMap, PrintOptions, Variable};
use hlo_lsp::analysis::view;
use hlo_lsp::checks::{self, incremental::Checked};
use hlo_lsp::model::{self, Document};
use hlo_lsp::tiling::report::{analyze_file, ReportOptions};

/// A fuzz target's body: panics on a finding.
pub type Target = fn(&[u8]);

/// Every target by name, as the regression test replays them.
pub const TARGETS: &[(&str, Target)] = &[
    ("check", check),
    ("maps", maps),
    ("tiles", tiles),
    ("mlir", mlir),
    ("stablehlo", stablehlo),
    ("map_text", map_text),
    ("framing", framing),
];

/// Model build and every check the server runs on open (cross-references, shapes,
/// recursive calls, tiling and reshape-chain diagnostics), then one edit applied
/// incrementally: its diagnostics must equal a fresh open's.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let doc = Document::parse(&text);
    let mut checked = Checked::new(&doc);
    checked.diagnostics(&doc, &checks::module_wide_of(&doc, None));
    // One edit, derived from the input: delete from 2/5 to 1/2 of the text.
    let (start, end) = (text.len() * 2 / 5, text.len() / 2);
    if !(text.is_char_boundary(start) && text.is_char_boundary(end)) {
        return;
    }
    let (next, change) = doc.edited(start, end, "");
    checked = checked.after(&next, &change);
    let mut incremental = checked.diagnostics(&next, &checks::module_wide_of(&next, None));
    checks::sort(&mut incremental);
    let mut edited = text.to_string();
    edited.replace_range(start..end, "");
    let mut fresh = checks::all(&Document::parse(&edited));
    checks::sort(&mut fresh);
    assert_eq!(
        incremental, fresh,
        "incremental diagnostics differ from a fresh open"
    );
}

/// What `hlo-lsp maps --all`, hovers and inlay hints compute: every instruction's
/// maps in both directions (logical and physical) and the composed maps from every
/// output of every computation. Every printed map must parse back to an equal map.
pub fn maps(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (_, modules) = view::parse(&text);
    let mut found = vec![];
    for module in &modules {
        every_map(module, "fuzz", &mut found);
    }
    for (at, m) in &found {
        for map in printed_maps(m) {
            if let Err(e) = check_round_trip(map, at) {
                panic!("{e}");
            }
        }
    }
}

/// Tiling of every fusion with the sizes of its backend_config, and with sizes
/// taken from the input's first two bytes (`hlo-lsp tiles --sizes`, the tiling
/// quick fixes), candidates included.
pub fn tiles(data: &[u8]) {
    let (sizes, rest) = data.split_at(data.len().min(2));
    let text = String::from_utf8_lossy(rest);
    let file = model::parse_hlo(&text);
    for sizes in [
        None,
        Some(sizes.iter().map(|&b| i64::from(b % 64) + 1).collect()),
    ] {
        let options = ReportOptions {
            fusion: None,
            sizes,
            candidates: 4,
            transaction_bytes: Some(64),
        };
        analyze_file(&file, &options);
    }
}

/// The MLIR reader and the analysis of its affine maps and linalg ops.
pub fn mlir(data: &[u8]) {
    hlo_lsp::mlir::analyze_with_budget(&String::from_utf8_lossy(data), MLIR_UTILIZATION_BUDGET);
}

/// The StableHLO reader and everything a `.mlir` file of StableHLO goes through:
/// the translation to HLO (regions, shard_map bodies, multi-result ops), its
/// checks, every op's maps (those in regions too, each with maps or a reason),
/// and `graph` with namespaces open and folded. Oracle: every range the
/// translation maps back to lies on character boundaries of the input, and every
/// op in a region is counted once.
pub fn stablehlo(data: &[u8]) {
    use hlo_lsp::graph::{self, stablehlo::Namespaces};
    use hlo_lsp::mlir::stablehlo as shlo;
    let src = String::from_utf8_lossy(data);
    let file = hlo_lsp::mlir::read(&src);
    let t = shlo::translate(&src, &file);
    for line in &t.lines {
        for r in [&line.mlir_name, &line.mlir_op] {
            assert!(
                src.get(r.clone()).is_some(),
                "range {r:?} is not a piece of the input"
            );
        }
        let _ = t.to_hlo(line.mlir_op.start);
    }
    let ops = shlo::summary::ops(&src, &file);
    let coverage = shlo::summary::region_coverage_of(&src, &file, ops);
    let mut seen = BTreeSet::new();
    for op in &coverage {
        assert!(seen.insert(op.index), "op {} counted twice", op.index);
    }
    let _ = checks::mlir(&src);
    for namespaces in [Namespaces::Open, Namespaces::Folded] {
        let request = graph::stablehlo::Request {
            value: None,
            radius: 2,
            namespaces,
        };
        let _ = graph::stablehlo::graph(&src, &request, &graph::Options::default());
    }
}

/// Domain points the `mlir` target counts per operand before it bounds instead. Under
/// coverage instrumentation, counting the default budget (250,000 points per operand)
/// took nine tenths of the target's time, at 30-100 inputs a second; with a small
/// budget both ways are still reached (domains below and above it) and the reader and
/// the analysis see thousands of inputs a second.
const MLIR_UTILIZATION_BUDGET: u128 = 4_096;

/// The map parser and the simplifier: a map that parses is simplified, printed in
/// both spellings and read back equal; simplifying must not change which dimension
/// points map to which results (enumerated when the domain is small).
pub fn map_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(map) = IndexingMap::parse(&text) else {
        return;
    };
    let simplified = map.simplified();
    for div in [DivSpelling::FloorDiv, DivSpelling::Slash] {
        let options = PrintOptions {
            div,
            multiline: false,
        };
        let printed = simplified.print(&options);
        let back = IndexingMap::parse(&printed)
            .unwrap_or_else(|e| panic!("printed map does not parse: {e:?}\n{printed}"));
        // `KNOWN EMPTY` and `UNDEFINED` print no variables, as XLA's do.
        if simplified.is_known_empty() || simplified.is_undefined() {
            assert_eq!(back.state(), simplified.state(), "{printed}");
        } else {
            assert!(
                back.equivalent(&simplified),
                "reads back different: {printed}"
            );
        }
    }
    if map.dims().len() == simplified.dims().len() {
        if let (Some(a), Some(b)) = (semantics(&map), semantics(&simplified)) {
            assert_eq!(a, b, "simplify changed the map's meaning:\n{text}");
        }
    }
}

/// Points enumerated at most by [`semantics`].
const BUDGET: i64 = 20_000;

/// `(dimension values, results)` over every point of the domain (range and
/// runtime variables existentially), or `None` when it is too large to enumerate.
fn semantics(map: &IndexingMap) -> Option<BTreeSet<(Vec<i64>, Vec<i64>)>> {
    if map.is_undefined() {
        return None;
    }
    let vars: Vec<&Variable> = map
        .dims()
        .iter()
        .chain(map.range_vars())
        .chain(map.runtime_vars())
        .collect();
    let mut count: i64 = 1;
    for v in &vars {
        let n = v.bounds.hi.checked_sub(v.bounds.lo)?.checked_add(1)?;
        count = count.checked_mul(n.max(0))?;
        if count > BUDGET {
            return None;
        }
    }
    let mut out = BTreeSet::new();
    if map.is_known_empty() || count == 0 {
        return Some(out);
    }
    let (nd, nr) = (map.dims().len(), map.range_vars().len());
    let mut point: Vec<i64> = vars.iter().map(|v| v.bounds.lo).collect();
    loop {
        let (dims, rest) = point.split_at(nd);
        let (ranges, runtimes) = rest.split_at(nr);
        if map.contains_point(dims, ranges, runtimes) {
            let results: Option<Vec<i64>> = map
                .results()
                .iter()
                .map(|e| e.evaluate(dims, ranges, runtimes))
                .collect();
            out.insert((dims.to_vec(), results?));
        }
        let mut k = point.len();
        loop {
            if k == 0 {
                return Some(out);
            }
            k -= 1;
            if point[k] < vars[k].bounds.hi {
                point[k] += 1;
                break;
            }
            point[k] = vars[k].bounds.lo;
        }
    }
}

/// The LSP framing layer (`lsp::framing::Framer`): the byte stream fed whole and in
/// pieces gives the same messages; every event consumes input (no loop) and no more
/// than was given; and a well-formed frame after junk that holds no header arrives
/// intact.
pub fn framing(data: &[u8]) {
    use hlo_lsp::lsp::framing::Event;
    let whole = frame_all(&[data]);
    let step = data.first().map_or(1, |b| usize::from(*b % 17) + 1);
    let pieces: Vec<&[u8]> = data.chunks(step).collect();
    assert_eq!(
        messages(&whole),
        messages(&frame_all(&pieces)),
        "pieces of {step}"
    );
    let taken: usize = whole
        .iter()
        .map(|e| match e {
            Event::Message { body, .. } => body.len(),
            Event::Dropped { bytes, .. } => bytes.len(),
        })
        .sum();
    assert!(taken <= data.len(), "events hold more bytes than were read");
    let lower = data.to_ascii_lowercase();
    if !lower
        .windows(b"content-length".len())
        .any(|w| w == b"content-length")
    {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#;
        let mut input = data.to_vec();
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        input.extend_from_slice(body);
        let events = frame_all(&[&input]);
        assert_eq!(messages(&events).last(), Some(&body.to_vec()), "{events:?}");
    }
}

/// Every event of a framer given `pieces` one after the other, then the end.
fn frame_all(pieces: &[&[u8]]) -> Vec<hlo_lsp::lsp::framing::Event> {
    let mut framer = hlo_lsp::lsp::framing::Framer::new();
    let limit = 2 * pieces.iter().map(|p| p.len()).sum::<usize>() + 16;
    let mut out = Vec::new();
    for piece in pieces {
        framer.push(piece);
        while let Some(event) = framer.next(false) {
            out.push(event);
            assert!(out.len() <= limit, "the framer loops");
        }
    }
    while let Some(event) = framer.next(true) {
        out.push(event);
        assert!(out.len() <= limit, "the framer loops at the end");
    }
    out
}

fn messages(events: &[hlo_lsp::lsp::framing::Event]) -> Vec<Vec<u8>> {
    events
        .iter()
        .filter_map(|e| match e {
            hlo_lsp::lsp::framing::Event::Message { body, .. } => Some(body.clone()),
            _ => None,
        })
        .collect()
}
