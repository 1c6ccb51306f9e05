//! The server's diagnostics, kept per computation across versions of a document.
//!
//! Each chunk has a cell holding what the [`super::SOURCES`] found in its computation
//! (anchored, see [`super::anchored`]). A new version shares its predecessor's cell for
//! every computation the edit cannot have changed, so publishing after an edit costs the
//! computations it touches plus a walk over the cells. What a computation's findings
//! read besides itself, and so what an edit of computation `E` can change:
//! * the computations it calls, transitively (call shapes, tiling through fusions):
//!   the transitive callers of `E`'s name are recomputed;
//! * the computations that call it (a fused computation's tiling comes from its
//!   fusion): the computations `E` calls are recomputed;
//! * the first computation of its name (duplicate names), the free name its fix offers
//!   (`name.N`), and the `ENTRY` (a second `ENTRY`): the duplicates whose name has
//!   `E`'s stem, and every `ENTRY` when `E` is one;
//! * where its findings are shown: a range outside every named computation (recovered
//!   garbage, a computation whose name did not parse) is kept in document bytes, which
//!   any edit before it moves, so such findings are recomputed on every edit.
//!
//! Names are what tie computations together (calls are by name), so an edit that adds,
//! removes or renames a computation is covered by the same rules: old and new names
//! both count. Callers are found from the outlines (a byte scan), so computations with
//! syntax errors, where the parser's recovery may see other calls, are recomputed on
//! any such edit. An edit of a module header or separator recomputes everything: it moves
//! the scopes names resolve in.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rayon::prelude::*;

use super::anchored::Anchored;
use crate::blocks::Blocks;
use crate::budget::{self, Budget, Cut};
use crate::model::names;
use crate::model::{
    codes, Change, ComputationId, ComputationRef, Diagnostic, Document, HloFile, ModuleId, Severity,
};
use crate::syntax::{Chunk, ChunkKind, Splice};

/// Findings that need a whole module, placed in a version, by the chunk they are
/// shown in (in chunk order): they are not kept per cell, since every edit of a
/// computation the module reaches may change them.
pub type ModuleWide = [(usize, Vec<Diagnostic>)];

/// One chunk's findings, filled on first use; shared by versions while valid.
type Cell = Arc<OnceLock<Found>>;

/// One computation's findings, with what an edit elsewhere can do to them (known
/// when they are found, so that an edit reads a flag per computation, not each
/// finding's anchors).
#[derive(Debug)]
struct Found {
    anchored: Vec<Anchored>,
    /// Some range is measured from the document's start: any edit before it moves it.
    from_document: bool,
    /// Some range is measured from another computation, which its name finds.
    names_another: bool,
}

impl Found {
    fn new(anchored: Vec<Anchored>) -> Found {
        Found {
            from_document: anchored.iter().any(Anchored::measured_from_document),
            names_another: anchored.iter().any(|a| a.names_another(|_| true)),
            anchored,
        }
    }

    /// Whether an edit that adds or removes computations named in `renamed` (and
    /// moves bytes) moves where these findings are shown.
    fn moved_by(&self, renamed: &HashSet<Arc<str>>) -> bool {
        self.from_document
            || (self.names_another
                && !renamed.is_empty()
                && self
                    .anchored
                    .iter()
                    .any(|a| a.names_another(|name| renamed.contains(name))))
    }
}

fn fresh() -> Cell {
    Arc::new(OnceLock::new())
}

/// The findings of one version of a document, one cell per chunk.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    cells: Blocks<Cell>,
    /// The chunks not known to be settled, in document order. A settled chunk is built
    /// and shows nothing on its own, and its computation's cell (if it holds one) is
    /// filled and empty: it publishes nothing, and only an edit that replaces it or
    /// affects its computation can change that. Walks over a version (what an edit
    /// moves, what is still to fill, what to publish) visit these only: a dump of
    /// thousands of computations has findings in a few hundred, and reading every
    /// cell made an edit cost what the file holds.
    unsettled: Vec<usize>,
}

impl Checked {
    /// Nothing computed yet.
    pub fn new(document: &Document) -> Checked {
        let count = document.units().len();
        Checked {
            cells: (0..count).map(|_| fresh()).collect(),
            unsettled: (0..count).collect(),
        }
    }

    /// Whether chunk `chunk` of `document` (the version these cells belong to) is
    /// settled (see [`Checked::unsettled`]).
    fn is_settled(&self, document: &Document, chunk: usize) -> bool {
        if !document.units()[chunk].is_quiet() {
            return false;
        }
        match self.cells[chunk].get() {
            Some(found) => found.anchored.is_empty(),
            // Only computations' cells are filled.
            None => document.file().computation_in_chunk(chunk).is_none(),
        }
    }

    /// The findings of `document`, the version `change` made from this one's: cells are
    /// shared except for the chunks the change replaced and the computations it may
    /// have changed (see the module docs).
    pub fn after(&self, document: &Document, change: &Change) -> Checked {
        let splice = &change.splice;
        let added: Vec<_> = document
            .units()
            .range(splice.old.start..splice.old.start + splice.new_len)
            .collect();
        let touched: Vec<&Chunk> = added
            .iter()
            .map(|u| &*u.chunk)
            .chain(change.removed.iter().map(|c| &**c))
            .collect();
        // A module header or separator moves module boundaries: names resolve in
        // other scopes, so everything is recomputed.
        if touched
            .iter()
            .any(|c| matches!(c.kind, ChunkKind::Header | ChunkKind::Separator))
        {
            return Checked::new(document);
        }
        let mut cells = self.cells.clone();
        cells.splice(splice.old.clone(), (0..splice.new_len).map(|_| fresh()));
        let mut next = Checked {
            cells,
            unsettled: vec![],
        };
        // Chunks that settled since this version was made leave the list.
        next.unsettled = self
            .unsettled_across(splice)
            .filter(|&chunk| !next.is_settled(document, chunk))
            .collect();
        let renamed = renamed_names(added.iter().map(|u| &*u.chunk), &change.removed);
        let affected = affected(document, &next.unsettled, touched.into_iter());
        for &chunk in &affected {
            next.cells.set(chunk, fresh());
        }
        // Findings shown in another computation find it by its name and its rank among
        // the computations of that name: when one of that name appears or goes, the
        // rank may now lead to another computation. Ranges outside every named
        // computation are document bytes, which any edit before them moves. (A settled
        // chunk has no findings.)
        for &chunk in &next.unsettled {
            if next.cells[chunk]
                .get()
                .is_some_and(|found| found.moved_by(&renamed))
            {
                next.cells.set(chunk, fresh());
            }
        }
        next.unsettled.extend(affected);
        next.unsettled.sort_unstable();
        next.unsettled.dedup();
        next
    }

    /// This version's unsettled chunks renumbered for the version after an edit that
    /// replaced chunks `splice.old` by `splice.new_len` new ones, which are added.
    fn unsettled_across(&self, splice: &Splice) -> impl Iterator<Item = usize> + '_ {
        let (start, end, new_len) = (splice.old.start, splice.old.end, splice.new_len);
        let before = self
            .unsettled
            .iter()
            .copied()
            .take_while(move |&i| i < start);
        let after = self.unsettled.iter().copied().filter(move |&i| i >= end);
        before
            .chain(start..start + new_len)
            .chain(after.map(move |i| i - (end - start) + new_len))
    }

    /// Every diagnostic of `document` (the version these cells belong to), sorted:
    /// computes the missing cells, in parallel. `module_wide` are findings that need a
    /// whole module (the memory findings, see [`ModuleWide`]), by chunk, in chunk order.
    pub fn diagnostics(&self, document: &Document, module_wide: &ModuleWide) -> Vec<Diagnostic> {
        self.fill(document);
        let file = document.file();
        let mut out = Vec::new();
        let mut extra = module_wide.iter().peekable();
        for part in self.parts(document) {
            // Module-wide findings of chunks that have nothing else to show.
            while let Some((_, found)) = extra.next_if(|(at, _)| *at < part.chunk) {
                sorted_onto(&mut out, found.iter().cloned());
            }
            let mut here: Vec<Diagnostic> = document.own_diagnostics(part.chunk).collect();
            if let Some((mi, ci)) = part.computation {
                let m = file.module(mi);
                let c = m.computation(ci);
                here.extend(part.found.iter().map(|a| a.place(m, c)));
            }
            if let Some((_, found)) = extra.next_if(|(at, _)| *at == part.chunk) {
                here.extend(found.iter().cloned());
            }
            sorted_onto(&mut out, here);
        }
        for (_, found) in extra {
            sorted_onto(&mut out, found.iter().cloned());
        }
        out
    }

    /// The cells of chunks in block `b` ([`crate::blocks::BLOCK_LEN`] chunks each),
    /// held: the same token in two versions means the same cells.
    pub fn cells_token(&self, b: usize) -> crate::blocks::BlockToken {
        self.cells.token(b)
    }

    /// Computes the cells still missing, in parallel (under the caller's budget: a
    /// cell whose checks were cancelled stays missing).
    pub fn fill(&self, document: &Document) {
        let file = document.file();
        // Settled chunks are filled (or hold no computation).
        let missing = self
            .unsettled
            .iter()
            .copied()
            .filter(|&chunk| self.cells[chunk].get().is_none());
        let missing: Vec<(ModuleId, ComputationId)> =
            file.computations_in_chunks(missing).flatten().collect();
        let budget = budget::current();
        missing.into_par_iter().for_each(|(mi, ci)| {
            let m = file.module(mi);
            let c = m.computation(ci);
            if let Some(found) = checked_within(&budget, (file, mi, c)) {
                let anchored = found.into_iter().map(|d| Anchored::new(d, m, c)).collect();
                let _ = self.cells[m.chunk_of(ci)].set(Found::new(anchored));
            }
        });
    }

    /// Each unsettled chunk's cell in document order, with the computation it holds:
    /// what [`Self::diagnostics`] assembles (a settled chunk has nothing to show), for
    /// callers that keep something per cell (the server keeps each cell's findings
    /// rendered for the client).
    pub fn parts<'a>(&'a self, document: &Document) -> Vec<Part<'a>> {
        self.parts_of(document, &self.unsettled)
    }

    /// The chunks that may have something to show ([`Self::parts`] has one part each),
    /// in document order.
    pub fn unsettled(&self) -> &[usize] {
        &self.unsettled
    }

    /// The parts of `chunks`, some of [`Self::unsettled`] in order.
    pub fn parts_of<'a>(&'a self, document: &Document, chunks: &[usize]) -> Vec<Part<'a>> {
        let file = document.file();
        let computations = file.computations_in_chunks(chunks.iter().copied());
        chunks
            .iter()
            .zip(computations)
            .map(|(&chunk, computation)| {
                let cell = &self.cells[chunk];
                Part {
                    chunk,
                    computation,
                    cell,
                    found: cell.get().map_or(&[], |found| found.anchored.as_slice()),
                }
            })
            .collect()
    }
}

/// Appends `found`, sorted, to `out`.
fn sorted_onto(out: &mut Vec<Diagnostic>, found: impl IntoIterator<Item = Diagnostic>) {
    let start = out.len();
    out.extend(found);
    super::sort(&mut out[start..]);
}

/// One chunk's share of a version's diagnostics (see [`Checked::parts`]).
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// The chunk's index in the document.
    pub chunk: usize,
    /// The computation the chunk holds (none for headers and separators).
    pub computation: Option<(ModuleId, ComputationId)>,
    cell: &'a Cell,
    /// The computation's findings, anchored (empty while not computed).
    pub found: &'a [Anchored],
}

impl Part<'_> {
    /// The cell, held so that its address is not reused while a caller keeps
    /// something for it.
    pub fn cell(&self) -> KeptCell {
        KeptCell(self.cell.clone())
    }

    /// Whether the cell's checks are computed (a chunk without a computation has none).
    pub fn is_filled(&self) -> bool {
        self.cell.get().is_some()
    }

    /// The cell's address: equal in two versions exactly when they share the cell,
    /// so that its findings and its computation's text are the same (while the
    /// cell is alive: see [`Part::cell`]).
    pub fn cell_address(&self) -> usize {
        Arc::as_ptr(self.cell) as usize
    }
}

/// A cell held alive by someone who keeps something for it.
#[derive(Debug, Clone)]
pub struct KeptCell(#[allow(dead_code)] Cell);

/// How long the checks of one computation may run in the server unless its
/// budget says otherwise ([`Budget::part_limit`]): a computation that takes longer
/// keeps what was found, with a note saying so (kept like any finding, so that it
/// is not checked again and again).
pub const COMPUTATION_BUDGET: Duration = Duration::from_secs(10);

/// The findings of computation `c` under the caller's budget (the server's; none
/// for the CLI): `None` when cancelled (nobody wants them, and they are not kept).
fn checked_within(
    budget: &Budget,
    (file, mi, c): (&HloFile, ModuleId, ComputationRef<'_>),
) -> Option<Vec<Diagnostic>> {
    if budget.is_unlimited() {
        return Some(super::of_computation_alone(file, mi, c));
    }
    if budget.is_exhausted() {
        return None;
    }
    let limit = budget.part_limit().unwrap_or(COMPUTATION_BUDGET);
    let part = budget.child(limit);
    let mut found = part.run(|| super::of_computation_alone(file, mi, c));
    match part.cut() {
        None => Some(found),
        Some(Cut::Deadline) if budget.cut().is_none() => {
            found.push(Diagnostic::new(
                c.abs(c.name_range),
                Severity::Information,
                codes::ANALYSIS_BUDGET,
                format!(
                    "checks of `{}` stopped at their time budget ({} s): some findings may be missing",
                    c.name,
                    limit.as_secs_f64()
                ),
            ));
            Some(found)
        }
        Some(_) => None,
    }
}

/// The computation names an edit adds or takes away (a computation renamed, made or
/// deleted): those defined by the `added` chunks and by the `removed` ones, as multisets,
/// minus what both have.
fn renamed_names<'a>(
    added: impl Iterator<Item = &'a Chunk>,
    removed: &[Arc<Chunk>],
) -> HashSet<Arc<str>> {
    let mut count: std::collections::HashMap<Arc<str>, i64> = Default::default();
    for chunk in added {
        if let Some(name) = &chunk.outline().name {
            *count.entry(name.name.clone()).or_default() += 1;
        }
    }
    for chunk in removed {
        if let Some(name) = &chunk.outline().name {
            *count.entry(name.name.clone()).or_default() -= 1;
        }
    }
    count
        .into_iter()
        .filter(|(_, n)| *n != 0)
        .map(|(name, _)| name)
        .collect()
}

/// Chunks (document indices) whose computations' findings may change when chunks
/// `touched` (replaced ones and their replacements) change, in `file` (the new index).
/// `unsettled` are the new version's unsettled chunks (all chunks with syntax errors
/// are among them).
fn affected<'a>(
    document: &Document,
    unsettled: &[usize],
    touched: impl Iterator<Item = &'a Chunk>,
) -> Vec<usize> {
    let file = document.file();
    let mut defined: HashSet<Arc<str>> = HashSet::new();
    let mut called: HashSet<Arc<str>> = HashSet::new();
    let mut entry = false;
    for chunk in touched {
        let outline = chunk.outline();
        defined.extend(outline.name.as_ref().map(|n| n.name.clone()));
        called.extend(outline.calls.iter().map(|c| c.callee.name.clone()));
        entry |= outline.is_entry;
    }
    let defined_stems: HashSet<&str> = defined.iter().map(|n| names::stem(n)).collect();
    let mut out = Vec::new();
    for m in &file.modules {
        // Transitive callers of the names defined (old and new).
        let mut seen: HashSet<Arc<str>> = defined.clone();
        let mut queue: Vec<Arc<str>> = defined.iter().cloned().collect();
        while let Some(name) = queue.pop() {
            for site in m.callers_of_name(&name) {
                out.push(m.chunk_of(site.computation));
                if let Some(caller) = &m.outline(site.computation).name {
                    if seen.insert(caller.name.clone()) {
                        queue.push(caller.name.clone());
                    }
                }
            }
        }
        // The computations called, and those sharing a touched name.
        for name in called.iter().chain(&defined) {
            out.extend(m.computation_by_name(name).map(|id| m.chunk_of(id)));
        }
        // A duplicate's fix offers the first free name of its stem (`name.N`): a
        // name of that stem defined or removed changes which one.
        for &id in &m.duplicates {
            let name = m.outline(id).name.as_ref().map(|n| &n.name);
            if name.is_some_and(|n| defined_stems.contains(names::stem(n))) {
                out.push(m.chunk_of(id));
            }
        }
        if entry {
            out.extend(m.marked_entries.iter().map(|&id| m.chunk_of(id)));
        }
    }
    // The callers above come from outlines, a byte scan that agrees with the parser
    // on well-formed text only: where the parser recovered from syntax errors it may
    // have read a call the scan did not (a storm found `to_apply=  y` inside
    // unbalanced braces). Such computations are recomputed whenever a name is defined
    // or removed; they are rare and small (and unsettled: they show their errors).
    if !defined.is_empty() {
        out.extend(unsettled.iter().copied().filter(|&chunk| {
            document.units()[chunk].has_syntax_errors()
                && file.computation_in_chunk(chunk).is_some()
        }));
    }
    out
}
