//! The answers that need a whole module (the memory estimate, the stack-frame tables,
//! the memory findings), kept across the versions of one document.
//!
//! They are computed once per version, beside the edited computation's checks and
//! never before them (the server publishes a version's diagnostics first), and a
//! version reuses the last one's when its text differs only where none of them
//! reads: every unit's [`crate::model::Unit::fingerprint`] (its text without the
//! instructions' metadata) is the same, so no shape, name, schedule or table changed
//! and no buffer can have (an edit of an `op_name` or a source line). An edit that
//! changes a shape makes the next version compute them again; until it has, its
//! diagnostics show the last version's memory findings wherever the computation they
//! are in is unchanged ([`Kept::carried`]), so they do not blink off and on.

use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::checks::anchored::Anchored;
use crate::memory::Report;
use crate::model::stack_frames::StackFrameIndex;
use crate::model::{ComputationId, Diagnostic, Document, HloFile, ModuleId};
use crate::syntax::Chunk;

/// The key of a version's module-wide answers: its units' fingerprints. For one
/// module (a dump), their sum ([`Document::fingerprint_sum`], which an edit updates
/// by the units it touched) with the entry computation's: the order of computations
/// changes no buffer, except which one is the entry when none is marked. A file of
/// several modules hashes them in order, since moving a computation across a
/// module boundary changes both modules.
pub fn key(document: &Document) -> u64 {
    use std::hash::Hasher;
    let units = document.units();
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write_usize(units.len());
    let file = document.file();
    if file.modules.len() <= 1 {
        hasher.write_u64(document.fingerprint_sum());
        if let Some(entry) = file
            .modules
            .first()
            .and_then(|m| Some(m.chunk_of(m.entry?)))
        {
            hasher.write_u64(units[entry].fingerprint());
        }
        return hasher.finish();
    }
    // The first version hashes its whole text: in parallel.
    units.par_iter().for_each(|u| {
        u.fingerprint();
    });
    for unit in units {
        hasher.write_u64(unit.fingerprint());
    }
    hasher.finish()
}

/// The memory answer of each module (`None` where there is none).
pub type Reports = Arc<Vec<Option<Arc<Report>>>>;
/// The stack-frame tables of each module.
pub type Frames = Arc<Vec<Arc<StackFrameIndex>>>;

/// A version's memory findings, by the chunk they are shown in, in chunk order.
pub type Findings = Arc<Vec<(usize, Vec<Diagnostic>)>>;

/// The memory findings of `file`'s modules from their `reports`, by chunk
/// ([`crate::checks::module_wide`]).
pub fn findings(file: &HloFile, reports: &[Option<Arc<Report>>]) -> Vec<(usize, Vec<Diagnostic>)> {
    crate::checks::module_wide(file, reports)
}

/// What one version computed, for the versions after it.
#[derive(Debug)]
struct Kept {
    key: u64,
    reports: Reports,
    frames: Option<Frames>,
    /// Its findings, anchored in the computation they are shown in (see [`Carried`]).
    carried: Vec<Carried>,
}

/// Findings shown in one computation, placed again in a later version only while
/// that computation's chunk is the same (then every position in it is too).
#[derive(Debug)]
struct Carried {
    module: ModuleId,
    name: Arc<str>,
    chunk: Arc<Chunk>,
    anchored: Vec<Anchored>,
}

/// How many versions' answers a document keeps, the most recently used: an edit and
/// its undo come back to the text before them, whose answers are then at hand.
pub const VERSIONS_KEPT: usize = 2;

/// The last module-wide answers of one document (see the module docs); shared by its
/// versions' snapshots.
#[derive(Debug, Default)]
pub struct ModuleMemo {
    /// Most recent first, at most [`VERSIONS_KEPT`], keys distinct.
    kept: Mutex<Vec<Kept>>,
    /// The computations the last formatting found in XLA's form, which the next
    /// one does not print again where it shares their chunks.
    pub formatted: crate::format::Known,
    /// Set once a version was formatted ahead of any request
    /// ([`super::HloSnapshot::format_ahead`]).
    pub formatted_ahead: std::sync::atomic::AtomicBool,
}

impl ModuleMemo {
    /// The reports kept for `key`, if a recent version computed them under it; they
    /// become the most recent. The text an edit's undo comes back to is the one the
    /// versions in between keep returning to: kept by when it was computed, it was
    /// dropped after two edits elsewhere, and its estimate (13 MiB while it runs on a
    /// 58 MiB dump, at the server's peak) was computed again at the next undo.
    pub fn reports(&self, key: u64) -> Option<Reports> {
        let mut kept = super::memo::lock(&self.kept);
        let at = kept.iter().position(|k| k.key == key)?;
        let entry = kept.remove(at);
        let reports = entry.reports.clone();
        kept.insert(0, entry);
        Some(reports)
    }

    /// The stack-frame tables kept for `key`.
    pub fn frames(&self, key: u64) -> Option<Frames> {
        let kept = super::memo::lock(&self.kept);
        kept.iter()
            .find(|k| k.key == key)
            .and_then(|k| k.frames.clone())
    }

    /// Drops the answers used longest ago when [`VERSIONS_KEPT`] are kept: for a
    /// version about to compute its own, which would drop them once done
    /// ([`Self::keep_reports`]). Held beside the estimate while it runs, they were
    /// 6.5 MiB of the server's peak on a 58 MiB dump (the estimate's most is 13 MiB).
    pub fn make_room(&self) {
        Self::keep_first(super::memo::lock(&self.kept), VERSIONS_KEPT - 1);
    }

    /// Keeps `reports`, computed for `key`, as the most recent (the one used longest
    /// ago beyond [`VERSIONS_KEPT`] goes).
    pub fn keep_reports(&self, key: u64, reports: Reports) {
        let mut kept = super::memo::lock(&self.kept);
        let entry = match kept.iter().position(|k| k.key == key) {
            Some(at) => {
                let mut entry = kept.remove(at);
                entry.reports = reports;
                entry
            }
            None => Kept {
                key,
                reports,
                frames: None,
                carried: Vec::new(),
            },
        };
        kept.insert(0, entry);
        Self::keep_first(kept, VERSIONS_KEPT);
    }

    /// Keeps the `count` answers used last; the others are dropped on the reaper
    /// thread, after the lock is released.
    fn keep_first(mut kept: std::sync::MutexGuard<'_, Vec<Kept>>, count: usize) {
        let keep = count.min(kept.len());
        let old: Vec<Kept> = kept.drain(keep..).collect();
        drop(kept);
        super::reaper::release(old);
    }

    /// Keeps `frames` with the reports of `key` (nothing if none are kept for it).
    pub fn keep_frames(&self, key: u64, frames: Frames) {
        let mut kept = super::memo::lock(&self.kept);
        if let Some(k) = kept.iter_mut().find(|k| k.key == key) {
            k.frames = Some(frames);
        }
    }

    /// Keeps the findings of `document` (a version whose key is `key`), anchored.
    pub fn keep_findings(&self, key: u64, document: &Document, findings: &Findings) {
        let file = document.file();
        let mut carried = Vec::new();
        for (chunk, found) in findings.iter() {
            let Some((mi, ci)) = file.computation_in_chunk(*chunk) else {
                continue;
            };
            let m = file.module(mi);
            let Some(name) = m.outline(ci).name.as_ref().map(|n| n.name.clone()) else {
                continue;
            };
            let c = m.computation(ci);
            carried.push(Carried {
                module: mi,
                name,
                chunk: document.units()[*chunk].chunk.clone(),
                anchored: found
                    .iter()
                    .map(|d| Anchored::new(d.clone(), m, c))
                    .collect(),
            });
        }
        let mut kept = super::memo::lock(&self.kept);
        if let Some(k) = kept.iter_mut().find(|k| k.key == key) {
            k.carried = carried;
        }
    }

    /// The findings kept last, placed in `document` where the computation they are
    /// shown in is unchanged (see [`Carried`]): those of `document`'s own key when
    /// kept, else the most recent version's.
    pub fn carried(&self, document: &Document, key: Option<u64>) -> Vec<(usize, Vec<Diagnostic>)> {
        let kept = super::memo::lock(&self.kept);
        let Some(kept) = key
            .and_then(|key| kept.iter().find(|k| k.key == key))
            .or(kept.first())
        else {
            return Vec::new();
        };
        let file = document.file();
        let mut out: Vec<(usize, Vec<Diagnostic>)> = kept
            .carried
            .iter()
            .filter_map(|carried| {
                let m = file.modules.get(carried.module.index())?;
                let ci: ComputationId = m.computation_by_name(&carried.name)?;
                let chunk = m.chunk_of(ci);
                if !Arc::ptr_eq(&document.units()[chunk].chunk, &carried.chunk) {
                    return None;
                }
                let c = m.computation(ci);
                let placed = carried.anchored.iter().map(|a| a.place(m, c)).collect();
                Some((chunk, placed))
            })
            .collect();
        out.sort_by_key(|(chunk, _)| *chunk);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::incremental::Checked;
    use crate::ide::{HloSnapshot, ModuleAnswers};

    const LOOP: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/memory/loop_carry_copy/module_0097.jit_loop_carry_copy.cpu_after_optimizations.txt"
    );

    fn snapshot(document: &Arc<Document>, memo: &Arc<ModuleMemo>) -> HloSnapshot {
        HloSnapshot::new(document.clone(), Arc::new(Checked::new(document)))
            .with_module_answers(ModuleAnswers::Background)
            .with_module_memo(memo.clone())
    }

    /// Replaces `old` (its first occurrence) by `new` in `document`.
    fn edited(document: &Document, old: &str, new: &str) -> Arc<Document> {
        let text: String = document
            .syntax()
            .chunks()
            .iter()
            .map(|c| c.text())
            .collect();
        let at = text.find(old).expect("the text to edit");
        Arc::new(document.edited(at, at + old.len(), new).0)
    }

    /// The loop dump's first version, its memo, and its estimate, computed (not
    /// remembered: the memo is new).
    fn first_version() -> (Arc<Document>, Arc<ModuleMemo>, HloSnapshot, Arc<Report>) {
        let text = std::fs::read_to_string(LOOP).unwrap();
        let memo = Arc::new(ModuleMemo::default());
        let first = Arc::new(Document::parse(&text));
        let snapshot = snapshot(&first, &memo);
        assert!(
            snapshot.prepare_module_answers(),
            "the first estimate is computed"
        );
        let report = snapshot.memory(ModuleId(0)).expect("an estimate");
        (first, memo, snapshot, report)
    }
    /// An edit of metadata keeps the estimate (the same answer, not computed again);
    /// an edit of a shape computes it anew; undoing it finds the first one again.
    #[test]
    fn answers_are_kept_across_versions_whose_edits_change_no_buffer() {
        let (first, memo, one, report) = first_version();
        let renamed = edited(&first, "jit(_roll_static)/slice", "jit(_roll_static)/cut");
        let two = snapshot(&renamed, &memo);
        assert!(!one.module_findings().is_empty());
        // Before its own answers, the version shows the last one's findings, placed
        // where they are in it: what its own answers find.
        let carried = two.ready_module_findings();
        assert!(
            !two.prepare_module_answers(),
            "the same buffers: remembered"
        );
        assert_eq!(*carried, *two.module_findings());
        assert!(Arc::ptr_eq(&report, &two.memory(ModuleId(0)).unwrap()));
        let reshaped = edited(&renamed, "f32[1,1024]{1,0} slice", "f32[2,1024]{1,0} slice");
        let three = snapshot(&reshaped, &memo);
        assert!(three.prepare_module_answers(), "a new shape: computed");
        assert!(!Arc::ptr_eq(&report, &three.memory(ModuleId(0)).unwrap()));
        let undone = edited(
            &reshaped,
            "f32[2,1024]{1,0} slice",
            "f32[1,1024]{1,0} slice",
        );
        let four = snapshot(&undone, &memo);
        assert!(!four.prepare_module_answers(), "undone: remembered");
        assert!(Arc::ptr_eq(&report, &four.memory(ModuleId(0)).unwrap()));
    }

    #[test]
    fn room_is_made_by_dropping_the_answers_used_longest_ago() {
        let memo = ModuleMemo::default();
        let reports = |n: usize| -> Reports { Arc::new(vec![None; n]) };
        memo.keep_reports(1, reports(1));
        // Below the number kept: nothing goes.
        memo.make_room();
        assert!(memo.reports(1).is_some());
        memo.keep_reports(2, reports(2));
        // 1 used after 2 was kept: 2 goes.
        assert!(memo.reports(1).is_some());
        memo.make_room();
        assert!(memo.reports(2).is_none());
        assert!(memo.reports(1).is_some());
    }

    /// Edits elsewhere, each undone: the text they all come back to keeps its answers
    /// (used at each undo), while the edits' own go first.
    #[test]
    fn the_text_each_undo_comes_back_to_keeps_its_answers() {
        let (first, memo, _base, report) = first_version();
        for (old, new) in [
            ("f32[1,1024]{1,0} slice", "f32[2,1024]{1,0} slice"),
            ("f32[1,1024]{1,0} slice", "f32[3,1024]{1,0} slice"),
            ("f32[1,1024]{1,0} slice", "f32[4,1024]{1,0} slice"),
        ] {
            let changed = edited(&first, old, new);
            let edit = snapshot(&changed, &memo);
            assert!(
                edit.prepare_module_answers(),
                "{new}: a new shape, computed"
            );
            let undone = snapshot(&edited(&changed, new, old), &memo);
            assert!(!undone.prepare_module_answers(), "{new} undone: remembered");
            assert!(Arc::ptr_eq(&report, &undone.memory(ModuleId(0)).unwrap()));
        }
    }
}
