//! What one warp reads, and XLA's rule for calling it coalesced.
//!
//! Input: a map from `(thread_x)[loop and vector indices]` (runtime values
//! allowed) to the linear physical offset of the elements read, for the first
//! warp. As XLA's `IsIndexingCoalesced` does, every loop index but the innermost
//! is fixed at its first value and runtime values at their lower bound; the read
//! is split into `f(thread_x) + g(s)`:
//!
//! * not separable: not coalesced (the pattern changes from step to step);
//! * `g(s) = s` (the innermost index walks consecutive elements: unrolled or
//!   vector loads): the warp reads the union over `s`;
//! * otherwise the warp reads `f(thread_x)` per step.
//!
//! The read is coalesced when its runs of consecutive elements need few more
//! 128-byte memory transactions than the bytes would fill
//! (`EstimateCoalescingViaMemoryTransactionsCount`: lower bound > 0.9 x count).
//! Unlike XLA this works on values, not on the expression's syntax, and a
//! thread masked off by a constraint reads nothing instead of making the read
//! uncoalesced.
//!
//! Besides the verdict: the bandwidth utilization of the read (bytes used over
//! bytes of the 64-byte DRAM-to-L2 transactions it touches, buffers aligned) and
//! a description of the pattern.

use crate::algebra::{IndexingMap, VarKind};

/// XLA's `kBytesPerMemoryTransaction` in the warp rule.
pub const BYTES_PER_MEMORY_TRANSACTION: i64 = 128;
/// XLA's `kIsCoalescedThreshold`.
pub const IS_COALESCED_THRESHOLD: f64 = 0.9;
/// Values of the innermost loop index enumerated per thread; beyond that, a
/// consecutive walk is extended in closed form.
pub const MAX_STEPS: i64 = 256;

/// A warp's read of one tensor, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct WarpRead {
    /// `(thread_x)[s] -> (linear offset)`, simplified, outer loops fixed.
    pub map: IndexingMap,
    pub coalesced: bool,
    /// Bytes used over bytes transferred in DRAM-to-L2 transactions.
    pub utilization: f64,
    /// Element offsets one access of the warp reads, sorted, unique.
    pub offsets: Vec<i64>,
    /// `a warp reads stride 100 (400 B)`.
    pub pattern: String,
    /// `1/16 of each transaction used`.
    pub usage: String,
}

impl WarpRead {
    /// `a warp reads stride 100 (400 B); 1/16 of each transaction used`.
    pub fn reason(&self) -> String {
        format!("{}; {}", self.pattern, self.usage)
    }
}

/// What is judged: the map, the element width, the DRAM-to-L2 transaction.
pub struct Judge {
    pub element_bits: i64,
    pub transaction_bytes: i64,
}

/// Runs of consecutive values in sorted unique `offsets`: `(first, last)`.
pub fn runs(offsets: &[i64]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = vec![];
    for &o in offsets {
        match out.last_mut() {
            Some(r) if r.1 + 1 == o => r.1 = o,
            _ => out.push((o, o)),
        }
    }
    out
}

/// XLA's transaction estimate over runs of `bytes`-wide elements.
pub fn xla_coalesced(runs: &[(i64, i64)], bytes: i64) -> bool {
    let ceil = |b: i64| {
        b / BYTES_PER_MEMORY_TRANSACTION + i64::from(b % BYTES_PER_MEMORY_TRANSACTION != 0)
    };
    let mut transactions = 0i64;
    let mut total = 0i64;
    for &(lo, hi) in runs {
        let n = hi.saturating_sub(lo).saturating_add(1);
        transactions = transactions.saturating_add(ceil(n.saturating_mul(bytes)));
        total = total.saturating_add(n);
    }
    if transactions == 0 {
        return true;
    }
    ceil(total.saturating_mul(bytes)) as f64 > transactions as f64 * IS_COALESCED_THRESHOLD
}

/// Bytes used over bytes transferred: `offsets` (elements of `bits` bits) touch
/// whole `transaction`-byte segments. Also whether every touched segment is used
/// alike.
pub fn utilization(offsets: &[i64], bits: i64, transaction: i64) -> (f64, bool) {
    if offsets.is_empty() {
        return (1.0, true);
    }
    let bit_transaction = transaction * 8;
    let mut segments: Vec<(i64, i64)> = vec![]; // (segment, bits used)
    for &o in offsets {
        let start = o * bits;
        let (first, last) = (
            start.div_euclid(bit_transaction),
            (start + bits - 1).div_euclid(bit_transaction),
        );
        for s in first..=last {
            let lo = start.max(s * bit_transaction);
            let hi = start
                .saturating_add(bits)
                .min((s + 1).saturating_mul(bit_transaction));
            match segments.last_mut() {
                Some(x) if x.0 == s => x.1 += hi - lo,
                _ => segments.push((s, hi - lo)),
            }
        }
    }
    segments.sort_unstable();
    segments.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
    let used: i64 = segments.iter().map(|s| s.1).sum();
    let alike = segments.iter().all(|s| s.1 == segments[0].1);
    (
        used as f64 / (segments.len() as i64 * bit_transaction) as f64,
        alike,
    )
}

/// `1/16 of each transaction used`, `each transaction fully used`, `75% of the
/// transferred bytes used`.
pub fn usage_text(u: f64, alike: bool) -> String {
    if u >= 1.0 - 1e-9 {
        return "each transaction fully used".to_string();
    }
    let whom = if alike {
        "of each transaction"
    } else {
        "of the transferred bytes"
    };
    let inverse = 1.0 / u;
    if (inverse - inverse.round()).abs() < 1e-9 && inverse.round() >= 2.0 {
        format!("1/{} {whom} used", inverse.round() as i64)
    } else {
        format!("{:.0}% {whom} used", u * 100.0)
    }
}

/// `(n B)` for `n` elements of `bits` bits.
fn bytes_text(n: i64, bits: i64) -> String {
    let b = n.saturating_mul(bits);
    if b % 8 == 0 {
        format!("{} B", b / 8)
    } else {
        format!("{b} bits")
    }
}

/// The values the warp reads: for each thread (in order), the offsets at each
/// value of the innermost loop index (`None`: masked off).
struct Samples {
    /// `[thread][step]`.
    values: Vec<Vec<Option<i64>>>,
    /// Steps enumerated, and the innermost index' full trip count.
    steps: i64,
    trip_count: i64,
}

/// Evaluates `map` (one dimension, one result) for the first warp.
fn sample(map: &IndexingMap, threads: i64) -> Option<Samples> {
    let ranges: Vec<i64> = map.range_vars().iter().map(|v| v.bounds.lo).collect();
    let runtimes: Vec<i64> = map.runtime_vars().iter().map(|v| v.bounds.lo).collect();
    let used = |k: usize| {
        let var = crate::algebra::Var {
            kind: VarKind::Range,
            index: k,
        };
        map.results().iter().any(|e| e.uses_var(var))
            || map.constraints().iter().any(|(e, _)| e.uses_var(var))
    };
    let inner = (0..ranges.len())
        .rev()
        .find(|&k| used(k) && map.range_vars()[k].bounds.lo < map.range_vars()[k].bounds.hi);
    let (lo, trip_count) = match inner {
        Some(k) => {
            let b = map.range_vars()[k].bounds;
            (b.lo, b.hi - b.lo + 1)
        }
        None => (0, 1),
    };
    let steps = trip_count.min(MAX_STEPS);
    let mut values = vec![];
    for t in 0..threads {
        let mut row = vec![];
        for s in 0..steps {
            let mut r = ranges.clone();
            if let Some(k) = inner {
                r[k] = lo + s;
            }
            let v = if map.contains_point(&[t], &r, &runtimes) {
                map.evaluate_at(&[t], &r, &runtimes)
                    .and_then(|v| v.first().copied())
            } else {
                None
            };
            row.push(v);
        }
        values.push(row);
    }
    Some(Samples {
        values,
        steps,
        trip_count,
    })
}

/// `g(s)` relative to the first step, if `v(t, s) = f(t) + g(s)` on every
/// feasible point; `None` when the read is not separable.
fn separate(samples: &Samples) -> Option<Vec<Option<i64>>> {
    let steps = samples.steps as usize;
    let mut g: Vec<Option<i64>> = vec![None; steps];
    for row in &samples.values {
        let Some(first) = row.iter().position(Option::is_some) else {
            continue;
        };
        let base = row[first]?;
        // Calibrate g from this thread where unknown, check where known. The
        // first feasible step of this thread anchors it: g[first] must be known
        // (or this is the first thread).
        let anchor = match g[first] {
            Some(a) => a,
            None if g.iter().all(Option::is_none) => {
                g[first] = Some(0);
                0
            }
            None => return None,
        };
        for (s, v) in row.iter().enumerate() {
            let Some(v) = v else { continue };
            let rel = v - base + anchor;
            match g[s] {
                Some(known) if known != rel => return None,
                Some(_) => {}
                None => g[s] = Some(rel),
            }
        }
    }
    Some(g)
}

/// Judges the read `map` of the first `threads` threads of a warp.
pub fn judge(map: &IndexingMap, threads: i64, judge: &Judge) -> WarpRead {
    let mut map = map.clone();
    map.simplify();
    map.remove_unused_symbols();
    let bits = judge.element_bits.max(1);
    let xla_bytes = (bits / 8).max(1);
    let not_separable = |map: IndexingMap, offsets: Vec<i64>, how: &str| {
        let (u, alike) = utilization(&offsets, bits, judge.transaction_bytes);
        WarpRead {
            map,
            coalesced: false,
            utilization: u,
            offsets,
            pattern: how.to_string(),
            usage: usage_text(u, alike),
        }
    };
    if map.is_known_empty() || map.results().len() != 1 {
        return WarpRead {
            map,
            coalesced: true,
            utilization: 1.0,
            offsets: vec![],
            pattern: "the first warp reads nothing of it".into(),
            usage: "no transaction".into(),
        };
    }
    let Some(samples) = sample(&map, threads) else {
        return not_separable(map, vec![], "its read cannot be evaluated");
    };
    let first_step: Vec<i64> = sorted(
        samples
            .values
            .iter()
            .filter_map(|r| r.iter().flatten().next().copied()),
    );
    let Some(g) = separate(&samples) else {
        return not_separable(
            map,
            first_step,
            "a warp's read pattern changes from one loop step to the next",
        );
    };
    // f(t) = v(t, s) - g(s) at the thread's first feasible step.
    let f: Vec<Option<i64>> = samples
        .values
        .iter()
        .map(|row| {
            let s = row.iter().position(Option::is_some)?;
            Some(row[s]? - g[s]?)
        })
        .collect();
    let consecutive = samples.trip_count > 1
        && g.iter()
            .enumerate()
            .all(|(s, v)| v.is_none_or(|v| v == s as i64));
    let offsets: Vec<i64> = if consecutive {
        let extend = samples.trip_count - samples.steps;
        let mut all: Vec<i64> = samples.values.iter().flatten().flatten().copied().collect();
        if extend > 0 {
            // The walk goes on past the enumerated steps: whole runs per thread.
            for (t, row) in samples.values.iter().enumerate() {
                if let (Some(base), true) = (f[t], row.last().is_some_and(Option::is_some)) {
                    all.extend((samples.steps..samples.trip_count).map(|s| base + s));
                }
            }
        }
        sorted(all.into_iter())
    } else {
        sorted(f.iter().flatten().copied())
    };
    let rs = runs(&offsets);
    let coalesced = xla_coalesced(&rs, xla_bytes);
    let (u, alike) = utilization(&offsets, bits, judge.transaction_bytes);
    let run_length = if consecutive { samples.trip_count } else { 1 };
    WarpRead {
        pattern: describe(&f, &rs, run_length, bits),
        usage: usage_text(u, alike),
        map,
        coalesced,
        utilization: u,
        offsets,
    }
}

fn sorted(it: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut v: Vec<i64> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `a warp reads 32 consecutive elements (128 B)`, `a warp reads stride 100 (400 B)`,
/// `a warp reads 8 runs of 4 elements (16 B)`.
fn describe(f: &[Option<i64>], runs: &[(i64, i64)], run_length: i64, bits: i64) -> String {
    let total: i64 = runs.iter().map(|(a, b)| b - a + 1).sum();
    if runs.is_empty() {
        return "the first warp reads nothing of it".into();
    }
    if total == 1 {
        return "every thread of a warp reads the same element".into();
    }
    if runs.len() == 1 {
        return format!(
            "a warp reads {total} consecutive elements ({})",
            bytes_text(total, bits)
        );
    }
    let fs: Vec<i64> = f.iter().flatten().copied().collect();
    let steps: Vec<i64> = fs.windows(2).map(|w| w[1] - w[0]).collect();
    if let Some(&k) = steps.first() {
        if k != 0 && steps.iter().all(|&s| s == k) {
            let k = k.abs();
            return if run_length <= 1 {
                format!("a warp reads stride {k} ({})", bytes_text(k, bits))
            } else {
                format!(
                    "each thread reads {run_length} consecutive elements, threads {k} apart ({})",
                    bytes_text(k, bits)
                )
            };
        }
    }
    let lengths: Vec<i64> = runs.iter().map(|(a, b)| b - a + 1).collect();
    let (min, max) = (
        *lengths.iter().min().unwrap_or(&0),
        *lengths.iter().max().unwrap_or(&0),
    );
    if min == max {
        format!(
            "a warp reads {} runs of {min} elements ({})",
            runs.len(),
            bytes_text(min, bits)
        )
    } else {
        format!(
            "a warp reads {} runs of {min} to {max} elements",
            runs.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(text: &str, bits: i64) -> WarpRead {
        let m = IndexingMap::parse(text).unwrap();
        judge(
            &m,
            32,
            &Judge {
                element_bits: bits,
                transaction_bytes: 64,
            },
        )
    }

    #[test]
    fn xla_comment_maps() {
        // The warp maps XLA's coalescing tests give in their comments.
        assert!(j("(d0) -> (d0), domain: d0 in [0, 31]", 32).coalesced);
        let strided = j("(d0) -> (d0 * 100), domain: d0 in [0, 31]", 32);
        assert!(!strided.coalesced);
        assert_eq!(
            strided.reason(),
            "a warp reads stride 100 (400 B); 1/16 of each transaction used"
        );
        assert!(
            j(
                "(d0)[s0] -> (d0 + s0 * 128), domain: d0 in [0, 31], s0 in [0, 7]",
                32
            )
            .coalesced
        );
        assert!(j(
            "(d0)[s0] -> (d0 * 4 + s0 + (d0 floordiv 16) * 1984), domain: d0 in [0, 31], s0 in [0, 3]",
            32
        )
        .coalesced);
        let variadic = j(
            "(d0)[s0] -> ((d0 floordiv 4) * 40 + d0 mod 4 + s0 * 4), domain: d0 in [0, 31], s0 in [0, 9]",
            32,
        );
        assert!(!variadic.coalesced, "{variadic:?}");
        assert!(j(
            "(d0)[s0] -> (d0 + s0 * 32), domain: d0 in [0, 31], s0 in [0, 1], d0 + s0 * 32 in [0, 39]",
            32
        )
        .coalesced);
        assert!(j("(d0)[s0] -> (s0), domain: d0 in [0, 31], s0 in [0, 1]", 32).coalesced);
        let gather = j(
            "(d0)[s0] -> ((d0 floordiv 8) * 5320 + (d0 mod 8) * 70 + s0), domain: d0 in [0, 31], s0 in [0, 3]",
            32,
        );
        assert!(!gather.coalesced);
    }

    #[test]
    fn usage_and_utilization() {
        assert_eq!(utilization(&[0, 1, 2, 3], 32, 64), (0.25, true));
        assert_eq!(utilization(&(0..16).collect::<Vec<_>>(), 32, 64).0, 1.0);
        assert_eq!(usage_text(0.75, true), "75% of each transaction used");
        assert_eq!(
            usage_text(1.0 / 32.0, false),
            "1/32 of the transferred bytes used"
        );
        // s4: two elements per byte.
        assert_eq!(utilization(&(0..128).collect::<Vec<_>>(), 4, 64).0, 1.0);
    }
}
