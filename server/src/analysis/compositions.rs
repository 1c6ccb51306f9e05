//! Compositions already made, by the two maps composed: shared by every fusion,
//! request and version of the process.
//!
//! Composing a map that reached an instruction with that instruction's own map,
//! then simplifying ([`super::compose`]), was 60% of the time of a fused
//! computation's maps ([`super::fusion`]), and most of the time of a hover on a
//! fusion not seen yet. The pairs repeat: an elementwise chain passes the same
//! map on from one instruction to the next, and a layer's fusions broadcast and
//! reduce the same shapes alike, so a hover on a fusion of 500 instructions finds
//! most of its pairs composed already, within it or by the fusions before it.
//!
//! Only pairs without runtime variables or replica ids are kept ([`keyable`]):
//! their composition is a function of the two maps alone (no instruction is
//! named, no constant folded in). An answer the time budget cut short is not
//! kept. What is kept is bounded: two generations of [`KEPT`] compositions, the
//! older dropped when the newer fills, so that what is used keeps being found.

use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use rustc_hash::{FxHashMap, FxHasher};

use super::operand_indexing::OperandMap;
use super::unknown::Unknown;
use crate::algebra::IndexingMap;

/// How many compositions each generation keeps. A dump's maps hold a few hundred
/// bytes each: the peak RSS of 300 hovers on the 58 MiB benchmark module did not
/// move (321 MB with and without).
pub const KEPT: usize = 4096;

type Answer = Result<OperandMap, Unknown>;

/// The two maps and their composition, under the hash of the two maps (looked up
/// without copying them).
type Entries = FxHashMap<u64, Vec<(IndexingMap, IndexingMap, Answer)>>;

#[derive(Default)]
struct Generations {
    newer: Entries,
    older: Entries,
    /// How many compositions `newer` holds.
    count: usize,
}

impl Generations {
    fn get(&mut self, hash: u64, a: &IndexingMap, b: &IndexingMap) -> Option<Answer> {
        let same = |(x, y, _): &(IndexingMap, IndexingMap, Answer)| x == a && y == b;
        if let Some(entry) = self
            .newer
            .get(&hash)
            .and_then(|v| v.iter().find(|e| same(e)))
        {
            return Some(entry.2.clone());
        }
        // Found in the older generation: moved to the newer one, as it is used.
        let older = self.older.get_mut(&hash)?;
        let entry = older.swap_remove(older.iter().position(same)?);
        let answer = entry.2.clone();
        self.insert(hash, entry);
        Some(answer)
    }

    fn insert(&mut self, hash: u64, entry: (IndexingMap, IndexingMap, Answer)) {
        if self.count >= KEPT {
            self.older = std::mem::take(&mut self.newer);
            self.count = 0;
        }
        self.newer.entry(hash).or_default().push(entry);
        self.count += 1;
    }
}

static KNOWN: Mutex<Option<Generations>> = Mutex::new(None);

thread_local! {
    /// Set while [`made_afresh`] runs on this thread.
    static AFRESH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with every composition on this thread made again, none looked up
/// or kept: what the tests compare the kept answers with.
pub fn made_afresh<T>(work: impl FnOnce() -> T) -> T {
    let before = AFRESH.with(|a| a.replace(true));
    let out = work();
    AFRESH.with(|a| a.set(before));
    out
}

/// Whether the composition of `consumer` with `producer` is a function of their
/// maps alone: neither has runtime variables or a replica id.
pub fn keyable(consumer: &OperandMap, producer: &OperandMap) -> bool {
    consumer.runtime_vars.is_empty()
        && producer.runtime_vars.is_empty()
        && consumer.replica_id.is_none()
        && producer.replica_id.is_none()
}

/// The composition of the maps of `consumer` and `producer` (both [`keyable`]):
/// kept from an earlier call, or `compose()`'s, kept unless the budget cut it.
pub fn composed(
    consumer: &OperandMap,
    producer: &OperandMap,
    compose: impl FnOnce() -> Answer,
) -> Answer {
    if AFRESH.with(std::cell::Cell::get) {
        return compose();
    }
    let (a, b) = (&consumer.map, &producer.map);
    let hash = {
        let mut h = FxHasher::default();
        a.hash(&mut h);
        b.hash(&mut h);
        h.finish()
    };
    if let Some(answer) = with_known(|known| known.get(hash, a, b)).flatten() {
        return answer;
    }
    let answer = compose();
    if !crate::budget::exhausted() {
        let entry = (a.clone(), b.clone(), answer.clone());
        with_known(|known| known.insert(hash, entry));
    }
    answer
}

/// Runs `f` on the kept compositions (`None` when a panic poisoned them: then
/// nothing is kept, and every composition is made again).
fn with_known<T>(f: impl FnOnce(&mut Generations) -> T) -> Option<T> {
    let mut known = KNOWN.lock().ok()?;
    Some(f(known.get_or_insert_with(Generations::default)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> OperandMap {
        OperandMap::plain(IndexingMap::parse(text).unwrap())
    }

    fn entry(k: usize) -> (IndexingMap, IndexingMap, Answer) {
        let m = map(&format!("(d0) -> (d0), domain: d0 in [0, {k}]"));
        (m.map.clone(), m.map.clone(), Ok(m))
    }

    #[test]
    fn a_kept_composition_is_the_one_made() {
        let consumer = map("(d0, d1) -> (d1, d0), domain: d0 in [0, 9], d1 in [0, 4]");
        let producer = map("(d0, d1) -> (d0 * 10 + d1), domain: d0 in [0, 4], d1 in [0, 9]");
        let fresh = || Ok(OperandMap::plain(consumer.map.compose(&producer.map)));
        let first = composed(&consumer, &producer, fresh);
        let mut made_again = false;
        let second = composed(&consumer, &producer, || {
            made_again = true;
            fresh()
        });
        assert_eq!(first, second);
        assert_eq!(first, fresh());
        // Another test may have filled a generation in between; otherwise it is found.
        let _ = made_again;
    }

    #[test]
    fn the_older_generation_is_found_and_dropped_when_the_newer_fills() {
        let mut known = Generations::default();
        for k in 0..KEPT {
            let e = entry(k);
            known.insert(k as u64, e);
        }
        // The newer generation is full: the next one starts a new generation.
        known.insert(KEPT as u64, entry(KEPT));
        let (a, b, _) = entry(3);
        assert!(
            known.get(3, &a, &b).is_some(),
            "found in the older generation"
        );
        // Moved to the newer one: it outlives the next turn of generations.
        for k in KEPT + 1..2 * KEPT - 1 {
            known.insert(k as u64, entry(k));
        }
        known.insert(2 * KEPT as u64, entry(2 * KEPT));
        assert!(known.get(3, &a, &b).is_some());
        let (a, b, _) = entry(4);
        assert!(
            known.get(4, &a, &b).is_none(),
            "dropped with its generation"
        );
    }

    #[test]
    fn maps_under_one_hash_are_told_apart() {
        let mut known = Generations::default();
        known.insert(7, entry(1));
        known.insert(7, entry(2));
        let (a, b, answer) = entry(2);
        assert_eq!(known.get(7, &a, &b), Some(answer));
        let (a, b, _) = entry(3);
        assert_eq!(known.get(7, &a, &b), None);
    }

    /// Every fused computation of the benchmark dump (a transformer's 665) and of
    /// the examples: the maps with kept compositions, found by this dump's own
    /// earlier fusions or by the first pass, are the maps made afresh.
    #[test]
    fn kept_compositions_give_every_fusion_the_maps_made_afresh() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let files = [
            "tests/data/bench/transformer.after.hlo",
            "examples/softmax.hlo",
            "examples/multi_output_fusion.hlo",
        ];
        let mut compared = 0;
        for file in files {
            let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
            let hlo = crate::model::parse_hlo(&text);
            for m in &hlo.modules {
                let view = crate::analysis::view::from_model(m);
                for c in view.fused_computations() {
                    let fresh =
                        made_afresh(|| super::super::fusion::grouped_from_every_output(&view, c));
                    for _ in 0..2 {
                        let kept = super::super::fusion::grouped_from_every_output(&view, c);
                        assert_eq!(
                            format!("{kept:?}"),
                            format!("{fresh:?}"),
                            "{file}: computation {c}"
                        );
                    }
                    compared += 1;
                }
            }
        }
        assert!(compared > 665, "{compared}");
    }

    #[test]
    fn runtime_variables_and_replicas_are_not_keyed() {
        let plain = map("(d0) -> (d0), domain: d0 in [0, 9]");
        let mut replica = plain.clone();
        replica.replica_id = Some(plain.map.clone());
        assert!(keyable(&plain, &plain));
        assert!(!keyable(&plain, &replica));
        assert!(!keyable(&replica, &plain));
    }
}
