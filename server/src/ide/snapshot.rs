//! Immutable per-version views of a document, handed to request handlers and to the
//! diagnostics worker so that they never block (or observe) a later edit.
//!
//! A snapshot is cheap to make: it shares the version's [`model::Document`] (chunks and
//! their lazily built computations, shared in turn with earlier versions for every
//! chunk an edit did not touch). What is derived from the whole version (diagnostics,
//! the analysis view) is computed at most once per snapshot, on first use, by whichever
//! request needs it first.

use std::sync::{Arc, Mutex, OnceLock};

use super::memo::{lock, Memo};
use super::module_wide::{Findings, Frames, ModuleMemo, Reports};
use crate::checks::incremental::{Checked, Part};
use crate::language::Language;
use crate::model::{self, ComputationId, HloFile, ModuleId};
use crate::syntax::SyntaxDocument;

/// What reaches each instruction of a fused computation from each of its outputs:
/// `outputs[k][i]` from output `k` to instruction `i` (empty when it does not reach).
#[derive(Debug, Default)]
pub struct FusedMaps {
    pub outputs: Vec<Vec<crate::analysis::fusion::Reached>>,
    /// The instructions whose maps are complete when not all are
    /// ([`HloSnapshot::fused_maps_reaching`]): the others' are left empty.
    complete: Option<Vec<bool>>,
}

impl FusedMaps {
    /// The outputs that read instruction `i`, with what reaches it from each
    /// (`i` must be one of the instructions these maps were made for).
    pub fn reaching(
        &self,
        i: usize,
    ) -> impl Iterator<Item = (usize, &crate::analysis::fusion::Reached)> {
        debug_assert!(
            self.complete
                .as_ref()
                .is_none_or(|c| c.get(i).copied().unwrap_or(true)),
            "the maps of instruction {i} were not made"
        );
        self.outputs
            .iter()
            .enumerate()
            .filter_map(move |(k, reached)| Some((k, reached.get(i)?)))
            .filter(|(_, r)| r.is_read())
    }

    /// Whether these maps hold something of their computation alone: a runtime
    /// value read from one of its instructions (numbered within the module), or a
    /// reason for unknown maps that names its computations (a recursive call).
    fn belong_to_their_computation(&self) -> bool {
        use crate::analysis::operand_indexing::RuntimeSource;
        self.outputs.iter().flatten().any(|reached| {
            let runtime = reached.maps.iter().flat_map(|(_, m)| &m.runtime_vars);
            reached
                .unknown
                .as_ref()
                .is_some_and(crate::analysis::Unknown::names_computations)
                || runtime
                    .into_iter()
                    .any(|v| matches!(v.source, RuntimeSource::Instruction { .. }))
        })
    }
}

/// Which fused computation a [`FusedMaps`] belongs to: its text without names
/// ([`model::nameless`]) when it has one, so that the copies of a fusion a dump
/// repeats under other names (each layer's) share their maps; else its place,
/// (module, computation).
#[derive(Clone, Debug, PartialEq, Eq)]
enum FusedKey {
    Text(Arc<[u8]>),
    Place(ModuleId, ComputationId),
}

/// The maps kept for a key, with the computation they were computed for: they hold
/// for every computation of the key unless they print something of that one
/// ([`FusedMaps::belong_to_their_computation`]).
#[derive(Debug)]
struct KeptFused {
    owner: (ModuleId, ComputationId),
    shareable: bool,
    maps: Arc<FusedMaps>,
}

/// Custom-call targets a text writes, each with how often.
pub type Targets = Arc<[(String, i64)]>;

/// How many fused computations keep their [`FusedMaps`]. Each holds a map to every
/// instruction from every output, up to megabytes for a large fusion, and an engineer
/// hovering through a 50 MB dump visits hundreds of fusions; what is asked again is
/// what is on screen (the inlay hints of the computations shown): a few computations
/// (32 kept 6 MiB more over 100 random hovers of a 58 MiB dump, when hovers kept
/// them too). Hovers make only the maps they read ([`HloSnapshot::fused_maps_reaching`]).
pub const FUSED_KEPT: usize = 8;

/// How many computations' analysis views a version keeps past the requests that
/// converted them, per module ([`HloSnapshot::analysis_module`]): the computations
/// asked about last, mostly those on screen.
pub const VIEWS_KEPT: usize = 8;

/// The fused maps of the [`FUSED_KEPT`] fused computations used last.
#[derive(Debug, Default)]
struct RecentFused {
    /// `(computation, its maps, when last used)`.
    entries: Vec<(FusedKey, Arc<Memo<KeptFused>>, u64)>,
    clock: u64,
    /// The text key of each fused computation asked for in this version (`None`:
    /// it has none), so that a hover does not print its computation again to find
    /// its maps; forgotten with the entry it keys.
    keys: rustc_hash::FxHashMap<(ModuleId, ComputationId), Option<Arc<[u8]>>>,
}

impl RecentFused {
    /// The memo of `key`, made when missing (dropping the one used longest ago
    /// when full: requests computing with it keep it alive until they end).
    fn memo(&mut self, key: FusedKey) -> Arc<Memo<KeptFused>> {
        self.clock += 1;
        if let Some(entry) = self.entries.iter_mut().find(|e| e.0 == key) {
            entry.2 = self.clock;
            return entry.1.clone();
        }
        if self.entries.len() >= FUSED_KEPT {
            let oldest = (0..self.entries.len()).min_by_key(|&k| self.entries[k].2);
            if let Some(oldest) = oldest {
                let (key, memo, _) = self.entries.swap_remove(oldest);
                if let FusedKey::Text(text) = key {
                    self.keys
                        .retain(|_, kept| kept.as_ref().is_none_or(|k| *k != text));
                }
                super::reaper::release(memo);
            }
        }
        let memo = Arc::new(Memo::default());
        self.entries.push((key, memo.clone(), self.clock));
        memo
    }
}

/// When the answers that need a whole module are computed for a hover or a lens: the
/// memory estimate (it builds every computation of the module: seconds on a 60 MB
/// dump that is still being checked) and the stack-frame tables (every table chunk).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModuleAnswers {
    /// By whichever request asks first, which waits for them: the CLI and the
    /// library's tests read complete answers.
    #[default]
    OnDemand,
    /// Only by [`HloSnapshot::prepare_module_answers`], which the server runs in the
    /// background once a version is checked: until then a hover leaves out the
    /// sections that need them, so that the first hover after opening a large dump
    /// does not wait for the whole module (the next one has them).
    Background,
}

/// Up to this many bytes of text the server's snapshots compute the module-wide answers
/// a request needs at once ([`HloSnapshot::with_answers_now_below`]): on a dump of a
/// few MB the stack-frame tables take milliseconds, and a first hover without its
/// `Source:` line would be a worse answer.
pub const SMALL_DOCUMENT_BYTES: usize = 4 << 20;

/// From this many bytes of text the server formats a document once ahead of any
/// request ([`HloSnapshot::format_ahead`]): printing all of it takes about 0.4 s
/// per 100 MiB on two cores, and no request should take a second.
pub const FORMAT_AHEAD_BYTES: usize = 128 << 20;

/// How many utilizations a snapshot keeps ([`HloSnapshot::utilization`]).
pub const UTILIZATION_KEPT: usize = 256;

/// One operand read's utilization, by what it is a function of: the maps and the
/// operand's extents (`utilization::utilization` reads nothing else).
type KeptUtilization = (
    crate::analysis::OperandIndexing,
    Vec<i64>,
    Option<crate::analysis::utilization::Utilization>,
);

/// The state of one document at one version, in the library's terms: a value per
/// language, so that each feature is routed once (by the server's handlers) and no
/// code asks which language it holds. The server wraps it with the client's URI and
/// version.
// One per version, behind an `Arc`: the variants' sizes are never copied around.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Snapshot {
    Hlo(HloSnapshot),
    Mlir(MlirSnapshot),
}

impl Snapshot {
    /// A snapshot of `document` (whose checks so far are `checked`) read as `language`.
    /// `file_name` is how commands the features suggest name the file (`hlo-lsp maps
    /// ... FILE`); `path` is where it is on disk, when it is a file.
    pub fn new(
        document: Arc<model::Document>,
        checked: Arc<Checked>,
        language: Language,
        file_name: &str,
        path: Option<&std::path::Path>,
    ) -> Snapshot {
        match language {
            Language::Hlo => Snapshot::Hlo(
                HloSnapshot::new(document, checked)
                    .with_file_name(file_name)
                    .with_path(path),
            ),
            Language::Mlir => Snapshot::Mlir(MlirSnapshot::new(document)),
        }
    }

    /// Sets when an HLO snapshot computes its module-wide answers ([`ModuleAnswers`]).
    pub fn with_module_answers(self, when: ModuleAnswers) -> Snapshot {
        match self {
            Snapshot::Hlo(hlo) => Snapshot::Hlo(hlo.with_module_answers(when)),
            mlir => mlir,
        }
    }

    /// Shares the document's module-wide answers across its versions
    /// ([`super::module_wide`]), and computes them at once for a request on a
    /// document of at most `small` bytes ([`HloSnapshot::with_answers_now_below`]).
    pub fn with_module_memo(self, memo: Arc<ModuleMemo>, small: usize) -> Snapshot {
        match self {
            Snapshot::Hlo(hlo) => {
                Snapshot::Hlo(hlo.with_module_memo(memo).with_answers_now_below(small))
            }
            mlir => mlir,
        }
    }

    /// The chunks of this version (positions, text).
    pub fn syntax(&self) -> &SyntaxDocument {
        self.document().syntax()
    }

    /// The version in model terms (chunks, units, diagnostics).
    pub fn document(&self) -> &Arc<model::Document> {
        match self {
            Snapshot::Hlo(hlo) => &hlo.document,
            Snapshot::Mlir(mlir) => &mlir.document,
        }
    }

    /// The whole text, joined from the chunks once per snapshot.
    pub fn text(&self) -> &str {
        match self {
            Snapshot::Hlo(hlo) => hlo.text(),
            Snapshot::Mlir(mlir) => mlir.text(),
        }
    }

    /// Every diagnostic of this version in library terms: what `hlo-lsp check` reports.
    pub fn diagnostics(&self) -> Arc<Vec<model::Diagnostic>> {
        match self {
            Snapshot::Hlo(hlo) => hlo.diagnostics(),
            Snapshot::Mlir(mlir) => mlir.diagnostics(),
        }
    }
}

/// An MLIR document at one version: its text and, on first use, its reading and
/// analysis ([`crate::mlir`]).
#[derive(Debug)]
pub struct MlirSnapshot {
    document: Arc<model::Document>,
    text: OnceLock<String>,
    mlir: Memo<crate::mlir::MlirAnalysis>,
    diagnostics: Memo<Vec<model::Diagnostic>>,
    stablehlo: OnceLock<Option<Arc<StableHlo>>>,
}

/// A StableHLO document on the HLO model: its conversion and the HLO snapshot of the
/// converted module, whose features answer for the `.mlir` text through
/// [`crate::mlir::stablehlo::Translation`]'s ranges.
#[derive(Debug)]
pub struct StableHlo {
    pub translation: crate::mlir::stablehlo::Translation,
    pub hlo: HloSnapshot,
}

impl MlirSnapshot {
    pub fn new(document: Arc<model::Document>) -> Self {
        Self {
            document,
            text: OnceLock::new(),
            mlir: Memo::default(),
            diagnostics: Memo::default(),
            stablehlo: OnceLock::new(),
        }
    }

    /// The StableHLO view of this version, when it holds StableHLO ops.
    pub fn stablehlo(&self) -> Option<Arc<StableHlo>> {
        self.stablehlo
            .get_or_init(|| {
                let analysis = self.mlir();
                if !crate::mlir::stablehlo::is_stablehlo(&analysis.file) {
                    return None;
                }
                let translation = crate::mlir::stablehlo::translate(self.text(), &analysis.file);
                let document = Arc::new(model::Document::parse(&translation.hlo));
                let checked = Arc::new(Checked::new(&document));
                let hlo = HloSnapshot::new(document, checked).with_composed_functions();
                Some(Arc::new(StableHlo { translation, hlo }))
            })
            .clone()
    }

    /// The whole text (the MLIR reader wants one string).
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| self.document.syntax().text())
    }

    /// The chunks of this version (positions).
    pub fn syntax(&self) -> &SyntaxDocument {
        self.document.syntax()
    }

    /// The MLIR reading and analysis of this version (built once, unless a
    /// request's budget cut it short).
    pub fn mlir(&self) -> Arc<crate::mlir::MlirAnalysis> {
        self.mlir
            .get_or_compute(|| crate::mlir::analyze(self.text()))
    }

    /// The analysis' diagnostics, sorted as the CLI prints them.
    pub fn diagnostics(&self) -> Arc<Vec<model::Diagnostic>> {
        self.diagnostics
            .get_or_compute(|| crate::checks::mlir(self.text()))
    }
}

/// An HLO document at one version.
#[derive(Debug)]
pub struct HloSnapshot {
    document: Arc<model::Document>,
    /// The file's name, for the commands a hover suggests.
    file_name: Arc<str>,
    /// Where the document is on disk, when it is a file: XLA's buffer assignment is
    /// read from beside it ([`crate::memory::siblings`]).
    path: Option<Arc<std::path::Path>>,
    /// The version's diagnostics, per computation (see [`crate::checks::incremental`]).
    checked: Arc<Checked>,
    /// The whole text, for the `documentText` request; requests read their
    /// computations' text.
    text: OnceLock<String>,
    /// The analysis' view of each module while a request holds it
    /// ([`Self::analysis_module`]); each computation is converted on first use.
    analysis: Mutex<Vec<std::sync::Weak<crate::analysis::Module<'static>>>>,
    /// The views of each module's computations converted last (see
    /// [`crate::analysis::view::Recent`]), which the next request's view reuses.
    recent_views: OnceLock<Vec<Arc<crate::analysis::view::Recent>>>,
    /// Maps from every output of a fused computation to each of its instructions, per
    /// `(module, computation)`: made for inlay hints and a fusion's operands, read by
    /// hovers when kept ([`Self::fused_maps_reaching`]), kept for the computations
    /// used last.
    fused: Mutex<RecentFused>,
    /// Every library diagnostic (each chunk's own, `checks::SOURCES`), sorted.
    diagnostics: Memo<Vec<model::Diagnostic>>,
    /// Set once every computation's checks are in `checked`.
    checks_filled: Memo<()>,
    /// The stack-frame tables of each module (JAX dumps), read on first use.
    frames: OnceLock<Frames>,
    /// The memory estimate of each module (`ide::memory`), made on first use.
    memory: OnceLock<Reports>,
    /// The memory findings ([`super::module_wide::findings`]), made on first use.
    findings: Box<OnceLock<Findings>>,
    /// This version's key among the document's versions ([`super::module_wide::key`]).
    key: Box<OnceLock<u64>>,
    /// The document's module-wide answers across versions, when it has versions (the
    /// server's documents).
    module_memo: Option<Arc<ModuleMemo>>,
    /// Up to this many bytes of text a request computes the module-wide answers it
    /// needs even in [`ModuleAnswers::Background`] ([`Self::with_answers_now_below`]).
    answers_now_below: usize,
    /// How many times each computation runs per step, per module (`ide::cost`'s
    /// lenses say "× 32"), made on first use: it walks only ENTRY and the
    /// computations it calls as control flow. Boxed: rarely used, and the snapshot
    /// is moved by value.
    executions: Box<OnceLock<Vec<Arc<Vec<crate::loops::Executions>>>>>,
    /// The collectives XLA's partitioner will insert, per module ([`Self::prediction`]),
    /// made on first use (boxed: rarely used).
    predictions: Box<OnceLock<Vec<OnceLock<Arc<crate::sharding::predict::Prediction>>>>>,
    /// The custom-call targets the text writes, with their uses (completion offers
    /// them here and in the other open documents), found on first use.
    custom_call_targets: Box<OnceLock<Targets>>,
    /// Whether a function's maps compose from its result as a fusion's from its
    /// output (see [`Self::with_composed_functions`]).
    functions_compose: bool,
    /// When [`Self::memory`] and [`Self::stack_frames`] are computed for hovers and
    /// lenses ([`Self::ready_memory`], [`Self::ready_stack_frames`]).
    module_answers: ModuleAnswers,
    /// The utilizations hovers counted last, newest at the back (boxed: it is
    /// rarely used, and the snapshot is moved by value).
    utilization: Box<Mutex<std::collections::VecDeque<KeptUtilization>>>,
    /// The last profile joined to this version ([`super::profile::joined`]) and its
    /// join, computed once by whichever request (or the server's background work)
    /// asks first.
    measured: Box<Mutex<Option<KeptJoin>>>,
}

/// A profile and its join to a version's modules.
type KeptJoin = (
    Arc<crate::profile::Profile>,
    Arc<Memo<super::profile::Joined>>,
);

impl HloSnapshot {
    pub fn new(document: Arc<model::Document>, checked: Arc<Checked>) -> Self {
        Self {
            document,
            file_name: "FILE".into(),
            path: None,
            checked,
            text: OnceLock::new(),
            analysis: Mutex::default(),
            recent_views: OnceLock::new(),
            diagnostics: Memo::default(),
            checks_filled: Memo::default(),
            fused: Mutex::default(),
            frames: OnceLock::new(),
            memory: OnceLock::new(),
            findings: Box::default(),
            key: Box::default(),
            module_memo: None,
            answers_now_below: 0,
            executions: Box::default(),
            predictions: Box::default(),
            custom_call_targets: Box::default(),
            functions_compose: false,
            module_answers: ModuleAnswers::default(),
            utilization: Box::default(),
            measured: Box::default(),
        }
    }

    /// Where the join of `profile` to this version is kept (made anew when another
    /// profile is asked for: a document shows one at a time).
    pub(super) fn measured_memo(
        &self,
        profile: &Arc<crate::profile::Profile>,
    ) -> Arc<Memo<super::profile::Joined>> {
        let mut kept = lock(&self.measured);
        match kept.as_ref() {
            Some((p, memo)) if Arc::ptr_eq(p, profile) => memo.clone(),
            _ => {
                let memo = Arc::new(Memo::default());
                let old = kept.replace((profile.clone(), memo.clone()));
                drop(kept);
                super::reaper::release(old);
                memo
            }
        }
    }

    /// The utilization of a read by `maps` of an operand of extents `target`: kept
    /// from an earlier hover of this version when one counted it (counting point by
    /// point takes tens of milliseconds on a fusion's 128 x 128 operands, and a dump
    /// repeats its layers' reads), else `count`ed and kept (the last
    /// [`UTILIZATION_KEPT`]).
    pub fn utilization(
        &self,
        maps: &crate::analysis::OperandIndexing,
        target: &[i64],
        count: impl FnOnce() -> Option<crate::analysis::utilization::Utilization>,
    ) -> Option<crate::analysis::utilization::Utilization> {
        let kept = lock(&self.utilization)
            .iter()
            .find(|(m, t, _)| t == target && m == maps)
            .map(|(_, _, u)| *u);
        if let Some(u) = kept {
            return u;
        }
        let u = count();
        let mut recent = lock(&self.utilization);
        if recent.len() >= UTILIZATION_KEPT {
            recent.pop_front();
        }
        recent.push_back((maps.clone(), target.to_vec(), u));
        u
    }

    /// See [`ModuleAnswers`].
    pub fn with_module_answers(mut self, when: ModuleAnswers) -> Self {
        self.module_answers = when;
        self
    }

    /// See [`Snapshot::with_module_memo`].
    pub fn with_module_memo(mut self, memo: Arc<ModuleMemo>) -> Self {
        self.module_memo = Some(memo);
        self
    }

    /// A request on a document of at most `bytes` computes the module-wide answers it
    /// needs at once, in [`ModuleAnswers::Background`] too (the server: see
    /// [`SMALL_DOCUMENT_BYTES`]).
    pub fn with_answers_now_below(mut self, bytes: usize) -> Self {
        self.answers_now_below = bytes;
        self
    }

    /// This version's key for [`ModuleMemo`].
    fn key(&self) -> u64 {
        *self
            .key
            .get_or_init(|| super::module_wide::key(&self.document))
    }

    /// The snapshot of a conversion (StableHLO): its functions are what the user
    /// wrote, not fused yet, so hover and inlay hints compose each function's maps
    /// from its result as they do a fused computation's from the fusion's output.
    pub fn with_composed_functions(mut self) -> Self {
        self.functions_compose = true;
        self
    }

    /// See [`Self::with_composed_functions`].
    pub fn functions_compose(&self) -> bool {
        self.functions_compose
    }

    /// Names the file (its last path component) for the commands a hover suggests.
    pub fn with_file_name(mut self, name: &str) -> Self {
        if !name.is_empty() {
            self.file_name = name.into();
        }
        self
    }

    /// Places the document on disk (its folder holds XLA's files of a dump).
    pub fn with_path(mut self, path: Option<&std::path::Path>) -> Self {
        self.path = path.map(Arc::from);
        self
    }

    /// Where the document is on disk, when it is a file.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// The file's name ("FILE" when unnamed).
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The whole text, joined from the chunks once per snapshot.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| self.document.syntax().text())
    }

    /// The chunks of this version.
    pub fn syntax(&self) -> &SyntaxDocument {
        self.document.syntax()
    }

    /// The version in model terms (chunks, units, diagnostics).
    pub fn document(&self) -> &Arc<model::Document> {
        &self.document
    }

    /// Formats a document of `from_bytes` or more once, in the background and ahead
    /// of any request, so that the first formatting request (format-on-save)
    /// prints only what was edited since ([`crate::format::Known`]): printing all
    /// of a 588 MiB dump takes 2 s. Once per document, or until a version formats
    /// (one with a syntax error is refused at once); whether it ran.
    pub fn format_ahead(&self, from_bytes: usize) -> bool {
        use std::sync::atomic::Ordering;
        let Some(memo) = &self.module_memo else {
            return false;
        };
        if self.document.syntax().len() < from_bytes
            || memo.formatted_ahead.swap(true, Ordering::SeqCst)
        {
            return false;
        }
        let formatted = super::pool::run_in_background(|| {
            crate::format::edits(&self.document, None, None, &memo.formatted).is_ok()
        });
        if !formatted {
            memo.formatted_ahead.store(false, Ordering::SeqCst);
        }
        true
    }

    /// The edits formatting this version ([`crate::format::edits`]), or the part
    /// `range` touches: a document's versions print again only the computations
    /// an edit made since the last formatting ([`crate::format::Known`]).
    pub fn format_edits(
        &self,
        style: Option<crate::format::Style>,
        range: Option<std::ops::Range<usize>>,
    ) -> Result<Vec<model::TextEdit>, crate::format::Refusal> {
        let fresh = crate::format::Known::default();
        let known = self.module_memo.as_ref().map_or(&fresh, |m| &m.formatted);
        crate::format::edits(&self.document, style, range, known)
    }

    /// The HLO model of this version: the module index; computations build on access.
    pub fn model(&self) -> &HloFile {
        self.document.file()
    }

    /// The analysis' module view of module `module` of [`Self::model`]: the one a
    /// request in progress holds, else a new one. Its computations are converted when
    /// first reached, or taken from the last [`VIEWS_KEPT`] converted, and the others
    /// are dropped with the view when no request holds it: a version lives for as long
    /// as nobody edits, and keeping the view of every fusion hovered was 14.5 MiB of
    /// the server's peak on a 58 MiB dump. A request that asks for it several times
    /// holds it from its start: the view lives while the returned value does.
    pub fn analysis_module(&self, module: ModuleId) -> Arc<crate::analysis::Module<'static>> {
        let mut held = lock(&self.analysis);
        let count = self.model().modules.len();
        if held.len() != count {
            held.resize_with(count, std::sync::Weak::new);
        }
        if let Some(view) = held[module.index()].upgrade() {
            return view;
        }
        let recent = self.recent_views.get_or_init(|| {
            (0..count)
                .map(|_| Arc::new(crate::analysis::view::Recent::new(VIEWS_KEPT)))
                .collect()
        });
        let view = Arc::new(crate::analysis::view::lazy_through(
            self.document.clone(),
            module.index(),
            recent[module.index()].clone(),
        ));
        held[module.index()] = Arc::downgrade(&view);
        view
    }

    /// How many computation views this version holds now: those of a view a request
    /// holds and the last converted.
    pub fn views_held(&self) -> usize {
        let held: Vec<_> = lock(&self.analysis)
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .collect();
        let recent: usize = self
            .recent_views
            .get()
            .map_or(0, |r| r.iter().map(|r| r.len()).sum());
        recent + held.iter().map(|m| m.converted()).sum::<usize>()
    }

    /// The maps from every output of fused computation `computation` of module
    /// `module` to each of its instructions (see [`FusedMaps`]), computed on first use
    /// (again when it was not used for a while: see [`FUSED_KEPT`]).
    pub fn fused_maps(&self, module: ModuleId, computation: ComputationId) -> Arc<FusedMaps> {
        let m = self.model().module(module);
        let c = m.computation(computation);
        let at = (module, computation);
        let known = lock(&self.fused).keys.get(&at).cloned();
        let key = known.unwrap_or_else(|| {
            let key: Option<Arc<[u8]>> = model::nameless::computation_key(m, c).map(Into::into);
            lock(&self.fused).keys.insert(at, key.clone());
            key
        });
        if let Some(text) = key {
            let memo = lock(&self.fused).memo(FusedKey::Text(text));
            let kept = memo.get_or_compute(|| self.compute_fused(at));
            if kept.shareable || kept.owner == at {
                return kept.maps.clone();
            }
        }
        let memo = lock(&self.fused).memo(FusedKey::Place(module, computation));
        memo.get_or_compute(|| self.compute_fused(at)).maps.clone()
    }

    /// What reaches instructions `targets` of fused computation `computation` of
    /// `module` from each of its outputs: the maps of [`Self::fused_maps`] when this
    /// version keeps them, else made for the targets alone (the instructions that
    /// read them: a few dozen of a fusion of 500) and not kept. A hover reads one
    /// instruction's maps, and each hover on a fusion not seen yet made its maps to
    /// every instruction: 2-3 ms on the largest fusions of a transformer step.
    pub fn fused_maps_reaching(
        &self,
        module: ModuleId,
        computation: ComputationId,
        targets: &[usize],
    ) -> Arc<FusedMaps> {
        let at = (module, computation);
        if let Some(kept) = self.kept_fused(at) {
            return kept;
        }
        let view = self.analysis_module(module);
        let c = computation.index();
        let within = view
            .get(c)
            .map(|comp| comp.users_closure(targets))
            .unwrap_or_default();
        let outputs = crate::analysis::fusion::grouped_from_every_output_within(&view, c, &within);
        Arc::new(FusedMaps {
            outputs,
            complete: Some(within),
        })
    }

    /// The maps of [`Self::fused_maps`] for `at` if this version has them already
    /// (nothing is computed; the key is known only once they were asked for).
    fn kept_fused(&self, at: (ModuleId, ComputationId)) -> Option<Arc<FusedMaps>> {
        let recent = lock(&self.fused);
        let text = recent.keys.get(&at)?.clone();
        let keys = [text.map(FusedKey::Text), Some(FusedKey::Place(at.0, at.1))];
        keys.into_iter().flatten().find_map(|key| {
            let (_, memo, _) = recent.entries.iter().find(|e| e.0 == key)?;
            let kept = memo.get()?;
            (kept.shareable || kept.owner == at).then(|| kept.maps.clone())
        })
    }

    /// The maps of the fused computation at `at`.
    fn compute_fused(&self, at: (ModuleId, ComputationId)) -> KeptFused {
        let view = self.analysis_module(at.0);
        let outputs = crate::analysis::fusion::grouped_from_every_output(&view, at.1.index());
        let maps = FusedMaps {
            outputs,
            complete: None,
        };
        KeptFused {
            owner: at,
            shareable: !maps.belong_to_their_computation(),
            maps: Arc::new(maps),
        }
    }

    /// The memory answer of module `module`: XLA's, read from beside the file when the
    /// document is one dump's single module and the files name its instructions, else
    /// the estimate from the text ([`crate::memory::analyze_in`]: `None` without an entry
    /// and for a module XLA has not compiled).
    pub fn memory(&self, module: ModuleId) -> Option<Arc<crate::memory::Report>> {
        let all = self.memory.get_or_init(|| {
            let memo = self.module_memo.as_ref();
            if let Some(kept) = memo.and_then(|memo| memo.reports(self.key())) {
                return kept;
            }
            if let Some(memo) = memo {
                memo.make_room();
            }
            // Every computation is read: built in parallel first.
            self.document.build_all();
            let reports: Reports = Arc::new(
                (0..self.model().modules.len())
                    .map(|m| {
                        crate::memory::analyze_in(self.model(), ModuleId(m as u32), self.path())
                            .map(Arc::new)
                    })
                    .collect(),
            );
            // A version given up (a newer one arrived) has no complete answers to keep.
            let complete = crate::budget::current().cut().is_none();
            if let Some(memo) = memo.filter(|_| complete) {
                memo.keep_reports(self.key(), reports.clone());
            }
            reports
        });
        all.get(module.index()).cloned().flatten()
    }

    /// The memory findings of this version (the copies live at each module's peak,
    /// [`crate::memory::diagnostics`]), by the chunk they are shown in.
    pub fn module_findings(&self) -> Findings {
        self.findings
            .get_or_init(|| {
                self.memory(ModuleId(0));
                let reports = self.memory.get().cloned().unwrap_or_default();
                let found: Findings =
                    Arc::new(super::module_wide::findings(self.model(), &reports));
                if let Some(memo) = &self.module_memo {
                    memo.keep_findings(self.key(), &self.document, &found);
                }
                found
            })
            .clone()
    }

    /// [`Self::module_findings`] as far as they are known now: computed on demand, or
    /// in the background once ready; until then the last version's, where the
    /// computations they are shown in are unchanged ([`ModuleMemo::carried`]).
    pub fn ready_module_findings(&self) -> Findings {
        if let Some(found) = self.findings.get() {
            return found.clone();
        }
        // Not for a small document either: the diagnostics never wait for them.
        if self.module_answers == ModuleAnswers::OnDemand {
            return self.module_findings();
        }
        match &self.module_memo {
            Some(memo) => Arc::new(memo.carried(&self.document, Some(self.key()))),
            None => Findings::default(),
        }
    }

    /// Whether the memory answer is being computed in the background and a hover
    /// or lens must do without it for now (it says so, and the server asks the
    /// editor to refresh once it is ready).
    pub fn memory_pending(&self) -> bool {
        !self.answers_now() && self.memory.get().is_none()
    }

    /// Whether the stack-frame tables are being read in the background (see
    /// [`Self::memory_pending`]).
    pub fn stack_frames_pending(&self) -> bool {
        !self.answers_now() && self.frames.get().is_none()
    }

    /// Whether a request computes the module-wide answers it needs: on demand, and
    /// for a document small enough that they take milliseconds (the first hover after
    /// opening a small dump has every section).
    fn answers_now(&self) -> bool {
        self.module_answers == ModuleAnswers::OnDemand
            || self.document.syntax().len() <= self.answers_now_below
    }

    /// How many times each computation of `module` runs per step.
    pub fn executions(&self, module: ModuleId) -> Arc<Vec<crate::loops::Executions>> {
        let all = self.executions.get_or_init(|| {
            self.model()
                .modules
                .iter()
                .map(|m| Arc::new(crate::loops::executions(m)))
                .collect()
        });
        all.get(module.index()).cloned().unwrap_or_default()
    }

    /// Each `custom_call_target="..."` the text writes, with how often, in
    /// first-written order: a scan of the whole text, once per version (completion in
    /// every other open document asks for it).
    pub fn custom_call_targets(&self) -> Targets {
        self.custom_call_targets
            .get_or_init(|| super::completion::written_targets(self).into())
            .clone()
    }

    /// What XLA's SPMD partitioner will insert in module `module`
    /// ([`crate::sharding::predict`]): a walk of the whole module, made once per
    /// version for every hover that shows it.
    pub fn prediction(&self, module: ModuleId) -> Arc<crate::sharding::predict::Prediction> {
        let all = self.predictions.get_or_init(|| {
            (0..self.model().modules.len())
                .map(|_| OnceLock::new())
                .collect()
        });
        let predict = || {
            Arc::new(crate::sharding::predict::predict(
                self.model().module(module),
            ))
        };
        match all.get(module.index()) {
            Some(kept) => kept.get_or_init(predict).clone(),
            None => predict(),
        }
    }

    /// [`Self::memory`] when a hover or a lens may show it: at once on demand, else
    /// once [`Self::prepare_module_answers`] has computed it (`None` until then).
    pub fn ready_memory(&self, module: ModuleId) -> Option<Arc<crate::memory::Report>> {
        if self.answers_now() {
            return self.memory(module);
        }
        self.memory.get()?.get(module.index()).cloned()?
    }

    /// [`Self::stack_frames`] when a hover may show them (see [`Self::ready_memory`]).
    pub fn ready_stack_frames(
        &self,
        module: ModuleId,
    ) -> Option<Arc<crate::model::stack_frames::StackFrameIndex>> {
        if self.answers_now() {
            return Some(self.stack_frames(module));
        }
        self.frames.get()?.get(module.index()).cloned()
    }

    /// Computes the answers that need a whole module ([`ModuleAnswers`]) of every
    /// module, so that hovers and lenses show them from now on. Cheap once the
    /// version is checked (the checks build every computation, in parallel).
    /// Returns whether the memory estimate was computed here: not when a request
    /// computed it, nor when a version with the same buffers had (the server times
    /// only computed ones, see `lsp::diagnostics`).
    pub fn prepare_module_answers(&self) -> bool {
        let remembered = self.module_answers_remembered();
        // Each computes every module's at once.
        super::pool::run_in_background(|| {
            self.stack_frames(ModuleId(0));
            self.memory(ModuleId(0));
            self.module_findings();
        });
        !remembered
    }

    /// Whether this version's memory estimate is at hand without computing it: a
    /// request computed it, or a version with the same buffers did (an undo back to
    /// it). Asking makes those kept answers the most recently used.
    pub fn module_answers_remembered(&self) -> bool {
        self.memory.get().is_some()
            || (self.module_memo.as_ref()).is_some_and(|memo| memo.reports(self.key()).is_some())
    }

    /// Whether [`Self::prepare_module_answers`] (or a request) has computed them.
    pub fn module_answers_ready(&self) -> bool {
        self.memory.get().is_some() && self.frames.get().is_some() && self.findings.get().is_some()
    }

    /// The stack-frame tables of module `module` (empty when it has none).
    pub fn stack_frames(
        &self,
        module: ModuleId,
    ) -> Arc<crate::model::stack_frames::StackFrameIndex> {
        let all = self.frames.get_or_init(|| {
            let memo = self.module_memo.as_ref();
            if let Some(kept) = memo.and_then(|memo| memo.frames(self.key())) {
                return kept;
            }
            let frames: Frames = Arc::new(
                (0..self.model().modules.len())
                    .map(|m| Arc::new(super::source::tables(self, ModuleId(m as u32))))
                    .collect(),
            );
            if let Some(memo) = memo {
                memo.keep_frames(self.key(), frames.clone());
            }
            frames
        });
        all.get(module.index()).cloned().unwrap_or_default()
    }

    /// Every diagnostic of this version in library terms, computed once: what `hlo-lsp
    /// check` reports ([`crate::checks`]), so that editor and CLI agree and code actions
    /// see the same fixes. Computations unchanged since an earlier version reuse its
    /// findings.
    pub fn diagnostics(&self) -> Arc<Vec<model::Diagnostic>> {
        self.diagnostics.get_or_compute(|| {
            self.filled_checks()
                .diagnostics(&self.document, &self.ready_module_findings())
        })
    }

    /// Each chunk's share of the diagnostics, once the checks of every computation are
    /// computed (once per snapshot, on threads of their own: [`super::pool`]), for the
    /// publisher, which renders them per computation.
    pub fn check_parts(&self) -> Vec<Part<'_>> {
        self.filled_checks().parts(&self.document)
    }

    /// The checks of every computation, computed: what the publisher reads through
    /// [`Self::checked`] block by block (see `lsp::rendered`).
    pub fn filled_checks(&self) -> &Checked {
        self.checks_filled
            .get_or_compute(|| super::pool::run_checks(|| self.checked.fill(&self.document)));
        &self.checked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(module: u32, computation: usize) -> FusedKey {
        FusedKey::Place(ModuleId(module), ComputationId(computation as u32))
    }

    #[test]
    fn the_fused_maps_used_longest_ago_are_dropped_first() {
        let mut recent = RecentFused::default();
        let first = recent.memo(place(0, 0));
        for k in 1..FUSED_KEPT {
            recent.memo(place(0, k));
        }
        // Used again: now the most recent.
        assert!(Arc::ptr_eq(&first, &recent.memo(place(0, 0))));
        let second = recent.memo(place(0, 1));
        recent.memo(place(0, 2));
        recent.memo(place(1, 0));
        assert_eq!(recent.entries.len(), FUSED_KEPT);
        // (0, 3) was the oldest: dropped, and made anew when asked again.
        assert!(recent.entries.iter().all(|e| e.0 != place(0, 3)));
        assert!(Arc::ptr_eq(&first, &recent.memo(place(0, 0))));
        assert!(Arc::ptr_eq(&second, &recent.memo(place(0, 1))));
    }

    /// A module of `count` fusions, each calling a fused computation of its own.
    fn fusions(count: usize) -> String {
        let mut text = String::from("HloModule m\n\n");
        for k in 0..count {
            text += &format!(
                "%fused_{k} (p.{k}: f32[16,8]) -> f32[16,8] {{\n  %p.{k} = f32[16,8]{{1,0}} parameter(0)\n  ROOT %e.{k} = f32[16,8]{{1,0}} exponential(%p.{k})\n}}\n\n"
            );
        }
        text += "ENTRY %main (x: f32[16,8]) -> f32[16,8] {\n  %x = f32[16,8]{1,0} parameter(0)\n";
        for k in 0..count {
            let operand = if k == 0 {
                "%x".to_string()
            } else {
                format!("%f{}", k - 1)
            };
            let root = if k + 1 == count { "ROOT " } else { "" };
            text += &format!(
                "  {root}%f{k} = f32[16,8]{{1,0}} fusion({operand}), kind=kLoop, calls=%fused_{k}\n"
            );
        }
        text + "}\n"
    }

    /// A large document is formatted once ahead of any request: its versions
    /// remember what prints as written, and later versions do not format again
    /// (unless it was refused).
    #[test]
    fn a_document_is_formatted_ahead_once() {
        let text = fusions(4);
        let document = Arc::new(model::Document::parse(&text));
        let memo = Arc::new(ModuleMemo::default());
        let version = |document: Arc<model::Document>| {
            let checked = Arc::new(Checked::new(&document));
            HloSnapshot::new(document, checked).with_module_memo(memo.clone())
        };
        // A version with a syntax error is refused, and the next one tries again.
        let broken = format!("{text}\n%broken {{\n  %x = f32[ parameter(0)\n}}\n");
        let broken = version(Arc::new(model::Document::parse(&broken)));
        assert!(broken.format_ahead(0));
        assert_eq!(memo.formatted.len(), 0);
        let first = version(document.clone());
        assert!(
            !first.format_ahead(text.len() + 1),
            "smaller than the size given"
        );
        assert!(first.format_ahead(text.len()));
        // The four fused computations; the entry is printed every time.
        assert_eq!(memo.formatted.len(), 4);
        let (edited, _) = document.edited(0, 0, "\n");
        assert!(
            !version(Arc::new(edited)).format_ahead(0),
            "once per document"
        );
        let alone = HloSnapshot::new(document.clone(), Arc::new(Checked::new(&document)));
        assert!(
            !alone.format_ahead(0),
            "a snapshot without versions has no memory"
        );
    }

    #[test]
    fn hovers_keep_the_views_of_the_computations_asked_about_last_only() {
        use crate::ide::{config::Config, hover};
        let text = fusions(3 * VIEWS_KEPT);
        let document = Arc::new(model::Document::parse(&text));
        let checked = Arc::new(Checked::new(&document));
        let snapshot = HloSnapshot::new(document, checked);
        for k in 0..3 * VIEWS_KEPT {
            let at = text.find(&format!("%e.{k} =")).unwrap() + 1;
            let shown = hover::hover(
                &snapshot,
                at,
                &Config::default(),
                crate::hover::Detail::Summary,
            );
            assert!(shown.is_some(), "no hover on %e.{k}");
        }
        // Each hover converted its fused computation (and ENTRY, the fusion's caller):
        // no request holds the view now, so only the last few are left.
        let held = snapshot.views_held();
        assert!(held <= VIEWS_KEPT, "{held} views held after the hovers");
        // While a request holds the view, every request shares it, and what the
        // last requests converted is not converted again.
        let view = snapshot.analysis_module(ModuleId(0));
        assert!(Arc::ptr_eq(&view, &snapshot.analysis_module(ModuleId(0))));
        let last = format!("fused_{}", 3 * VIEWS_KEPT - 1);
        let id = snapshot
            .model()
            .module(ModuleId(0))
            .computation_by_name(&last);
        let at = id.expect("the last fused computation").index();
        let address = |view: &crate::analysis::Module| {
            view.computation(at) as *const crate::analysis::Computation
        };
        let before = address(&view);
        drop(view);
        assert!(snapshot.views_held() > 0);
        assert_eq!(before, address(&snapshot.analysis_module(ModuleId(0))));
    }

    #[test]
    fn a_utilization_is_counted_once_per_maps_and_extents() {
        use crate::analysis::OperandIndexing;
        let document = Arc::new(model::Document::parse(COPIES));
        let checked = Arc::new(Checked::new(&document));
        let snapshot = HloSnapshot::new(document, checked);
        let counted = std::cell::Cell::new(0);
        let count = || {
            counted.set(counted.get() + 1);
            None
        };
        let maps = OperandIndexing::default();
        snapshot.utilization(&maps, &[16, 8], count);
        snapshot.utilization(&maps, &[16, 8], count);
        assert_eq!(counted.get(), 1);
        snapshot.utilization(&maps, &[8, 16], count);
        assert_eq!(counted.get(), 2);
        for k in 0..UTILIZATION_KEPT as i64 {
            snapshot.utilization(&maps, &[k, 1], || None);
        }
        // The oldest were dropped: counted again.
        snapshot.utilization(&maps, &[16, 8], count);
        assert_eq!(counted.get(), 3);
    }

    /// Two copies of an elementwise fusion and two of a dynamic slice whose offset
    /// the fusion computes, under other names.
    const COPIES: &str = r#"HloModule m

%fused_exp.one (param_0.one: f32[16,8]) -> f32[16,8] {
  %param_0.one = f32[16,8]{1,0} parameter(0)
  ROOT %exponential.one = f32[16,8]{1,0} exponential(%param_0.one)
}

%fused_exp.two (param_0.two: f32[16,8]) -> f32[16,8] {
  %param_0.two = f32[16,8]{1,0} parameter(0)
  ROOT %exponential.two = f32[16,8]{1,0} exponential(%param_0.two), metadata={op_name="b"}
}

%fused_slice.one (param_0.ds1: f32[16,8], param_1.ds1: s32[]) -> f32[2,8] {
  %param_0.ds1 = f32[16,8]{1,0} parameter(0)
  %param_1.ds1 = s32[] parameter(1)
  %constant.ds1 = s32[] constant(1)
  %offset.ds1 = s32[] add(%param_1.ds1, %constant.ds1)
  %zero.ds1 = s32[] constant(0)
  ROOT %slice.ds1 = f32[2,8]{1,0} dynamic-slice(%param_0.ds1, %offset.ds1, %zero.ds1), dynamic_slice_sizes={2,8}
}

%fused_slice.two (param_0.ds2: f32[16,8], param_1.ds2: s32[]) -> f32[2,8] {
  %param_0.ds2 = f32[16,8]{1,0} parameter(0)
  %param_1.ds2 = s32[] parameter(1)
  %constant.ds2 = s32[] constant(1)
  %offset.ds2 = s32[] add(%param_1.ds2, %constant.ds2)
  %zero.ds2 = s32[] constant(0)
  ROOT %slice.ds2 = f32[2,8]{1,0} dynamic-slice(%param_0.ds2, %offset.ds2, %zero.ds2), dynamic_slice_sizes={2,8}
}

ENTRY %main (x: f32[16,8], i: s32[]) -> f32[2,8] {
  %x = f32[16,8]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %e1 = f32[16,8]{1,0} fusion(%x), kind=kLoop, calls=%fused_exp.one
  %e2 = f32[16,8]{1,0} fusion(%e1), kind=kLoop, calls=%fused_exp.two
  %s1 = f32[2,8]{1,0} fusion(%e2, %i), kind=kLoop, calls=%fused_slice.one
  ROOT %s2 = f32[2,8]{1,0} fusion(%e2, %i), kind=kLoop, calls=%fused_slice.two
}
"#;

    #[test]
    fn copies_share_their_fused_maps_unless_the_maps_name_their_instructions() {
        use crate::analysis::operand_indexing::RuntimeSource;
        let document = Arc::new(model::Document::parse(COPIES));
        let checked = Arc::new(Checked::new(&document));
        let snapshot = HloSnapshot::new(document, checked);
        let m = snapshot.model().module(model::ModuleId(0));
        let id = |name: &str| m.computation_by_name(name).expect(name);
        let maps = |name: &str| snapshot.fused_maps(ModuleId(0), id(name));
        assert!(Arc::ptr_eq(&maps("fused_exp.one"), &maps("fused_exp.two")));
        // Each slice's offset is read from its own `add`: not shared, and each names its own.
        assert!(!Arc::ptr_eq(
            &maps("fused_slice.one"),
            &maps("fused_slice.two")
        ));
        for (name, label) in [
            ("fused_slice.one", "offset.ds1"),
            ("fused_slice.two", "offset.ds2"),
        ] {
            let fused = maps(name);
            let sources: Vec<(usize, String)> = fused
                .outputs
                .iter()
                .flatten()
                .flat_map(|r| &r.maps)
                .flat_map(|(_, m)| &m.runtime_vars)
                .filter_map(|v| match &v.source {
                    RuntimeSource::Instruction {
                        computation, label, ..
                    } => Some((*computation, label.clone())),
                    RuntimeSource::Operand(_) => None,
                })
                .collect();
            assert!(!sources.is_empty(), "{name} reads a runtime offset");
            assert!(
                sources
                    .iter()
                    .all(|(c, l)| *c == id(name).index() && l.contains(label)),
                "{name}: {sources:?}"
            );
        }
    }
}
