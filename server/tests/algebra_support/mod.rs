//! Shared helpers of the algebra tests: brute-force semantics of indexing maps.
//!
//! Two maps are equivalent when they have the same feasible points and the same
//! results there. Domains up to `FULL_ENUMERATION_LIMIT` points are enumerated
//! completely; bigger ones are checked on their corners plus a fixed
//! pseudo-random sample.
#![allow(dead_code)]

use hlo_lsp::algebra::{IndexingMap, Interval, VarKind};

pub const FULL_ENUMERATION_LIMIT: u128 = 200_000;
const SAMPLES: usize = 20_000;

/// The data path of a test vector file.
pub fn data_path(rel: &str) -> String {
    format!("{}/../tests/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Per-variable boxes: the hull of both maps' declared bounds.
fn hull(a: &IndexingMap, b: &IndexingMap) -> Vec<Interval> {
    let mut out = Vec::new();
    for kind in [VarKind::Dim, VarKind::Range, VarKind::Runtime] {
        let va = a.variables(kind);
        let vb = b.variables(kind);
        for i in 0..va.len().max(vb.len()) {
            let ia = va.get(i).map(|v| v.bounds).filter(|r| r.is_feasible());
            let ib = vb.get(i).map(|v| v.bounds).filter(|r| r.is_feasible());
            out.push(match (ia, ib) {
                (Some(x), Some(y)) => x.union(&y),
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => Interval::new(0, -1),
            });
        }
    }
    out
}

/// Every point of the box, in lexicographic order (however many there are).
pub fn every_point(boxes: &[Interval]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for b in boxes {
        let mut next = Vec::with_capacity(out.len() * b.size() as usize);
        for p in &out {
            for v in b.lo..=b.hi {
                let mut q = p.clone();
                q.push(v);
                next.push(q);
            }
        }
        out = next;
    }
    out
}

/// Every point of `[0, e)` for each extent `e`, in lexicographic order.
pub fn every_index(extents: &[i64]) -> Vec<Vec<i64>> {
    let boxes: Vec<Interval> = extents.iter().map(|&e| Interval::new(0, e - 1)).collect();
    every_point(&boxes)
}

/// Every point of the box (or a sample of it when it is too big).
pub fn points(boxes: &[Interval]) -> Vec<Vec<i64>> {
    if boxes.iter().any(|b| !b.is_feasible()) {
        return vec![];
    }
    let size = boxes
        .iter()
        .fold(1u128, |acc, b| acc.saturating_mul(b.size()));
    if size <= FULL_ENUMERATION_LIMIT {
        return every_point(boxes);
    }
    let mut out = Vec::new();
    // Corners (first 2^12 combinations) and a deterministic sample.
    for mask in 0u32..(1 << boxes.len().min(12)) {
        out.push(
            boxes
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if i < 32 && mask & (1 << i) != 0 {
                        b.hi
                    } else {
                        b.lo
                    }
                })
                .collect(),
        );
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..SAMPLES {
        out.push(
            boxes
                .iter()
                .map(|b| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let span = (b.hi as i128 - b.lo as i128 + 1) as u128;
                    (b.lo as i128 + ((state >> 11) as u128 % span) as i128) as i64
                })
                .collect(),
        );
    }
    out
}

fn split<'a>(m: &IndexingMap, p: &'a [i64]) -> (&'a [i64], &'a [i64], &'a [i64]) {
    let nd = m.dims().len();
    let nr = m.range_vars().len();
    (
        &p[..nd.min(p.len())],
        &p[nd.min(p.len())..(nd + nr).min(p.len())],
        &p[(nd + nr).min(p.len())..],
    )
}

/// Checks `candidate` against `reference` at every point of both domains.
/// A reference result or constraint that is undefined at a point (division by
/// zero) is not compared there.
pub fn check_equivalent(reference: &IndexingMap, candidate: &IndexingMap) -> Result<(), String> {
    if reference.is_undefined() || candidate.is_undefined() {
        return if reference.is_undefined() == candidate.is_undefined() {
            Ok(())
        } else {
            Err("one map is UNDEFINED".into())
        };
    }
    if !candidate.is_known_empty()
        && !reference.is_known_empty()
        && (reference.dims().len() != candidate.dims().len()
            || reference.range_vars().len() != candidate.range_vars().len()
            || reference.runtime_vars().len() != candidate.runtime_vars().len())
    {
        return Err("variable counts differ".into());
    }
    let layout = if reference.is_known_empty() {
        candidate
    } else {
        reference
    };
    for p in points(&hull(reference, candidate)) {
        let (d, r, t) = split(layout, &p);
        // A constraint undefined at the point (division by zero) says nothing
        // there: the simplifier may fold `x mod 1` to 0 whatever x is.
        if reference
            .constraints()
            .iter()
            .any(|(e, _)| e.evaluate(d, r, t).is_none())
        {
            continue;
        }
        let fr = reference.contains_point(d, r, t);
        let fc = candidate.contains_point(d, r, t);
        if fr != fc {
            return Err(format!(
                "feasibility differs at {p:?}: reference {fr}, candidate {fc}"
            ));
        }
        if !fr {
            continue;
        }
        for (i, (er, ec)) in reference
            .results()
            .iter()
            .zip(candidate.results())
            .enumerate()
        {
            if let Some(vr) = er.evaluate(d, r, t) {
                let vc = ec.evaluate(d, r, t);
                if vc != Some(vr) {
                    return Err(format!(
                        "result {i} differs at {p:?}: reference {vr}, candidate {vc:?}"
                    ));
                }
            }
        }
        if reference.results().len() != candidate.results().len() {
            return Err("result counts differ".into());
        }
    }
    Ok(())
}

/// (floordiv+mod nodes, all nodes) over results and constraints; KNOWN EMPTY is
/// the simplest map.
pub fn map_cost(m: &IndexingMap) -> (usize, usize) {
    if m.is_known_empty() {
        return (0, 0);
    }
    let exprs = m
        .results()
        .iter()
        .chain(m.constraints().iter().map(|(e, _)| e));
    exprs.fold((0, 0), |(d, n), e| {
        (d + e.div_mod_count(), n + e.node_count())
    })
}

/// Removes all whitespace (XLA compares map strings that way).
pub fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Score of one suite: (name, total, sound, simple), failures listed.
#[derive(Default)]
pub struct Score {
    pub total: usize,
    pub unsound: Vec<String>,
    pub not_simple: Vec<String>,
}

impl Score {
    pub fn report(&self, suite: &str) -> f64 {
        let simple = self.total - self.not_simple.len();
        let pct = 100.0 * simple as f64 / self.total.max(1) as f64;
        println!(
            "suite {suite}: {} cases, {} sound, {} at least as simple as expected ({pct:.1}%)",
            self.total,
            self.total - self.unsound.len(),
            simple
        );
        for u in &self.unsound {
            println!("  UNSOUND {u}");
        }
        for n in &self.not_simple {
            println!("  NOT AS SIMPLE {n}");
        }
        pct
    }
}
