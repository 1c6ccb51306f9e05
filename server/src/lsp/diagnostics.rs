//! Publishing diagnostics: debounced, per document, tagged with the version they
//! describe.
//!
//! Every applied change schedules its snapshot. The worker waits for a short quiet
//! period (absorbing the rest of a burst of edits, up to a maximum delay so that
//! continuous typing still refreshes), computes diagnostics for the newest snapshot
//! of each document under the panic guard, and publishes them unless an even newer
//! edit arrived meanwhile (that edit has its own job queued).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use super::guard::guarded_within;
use super::outbox::{Outbox, Outgoing};
use super::position::PositionEncoding;
use super::rendered::{self, Renderings, Style};
use super::settings::Work;
use super::snapshot::Snapshot;
use super::workspace::Workspace;
use crate::budget::{Budget, Cut};
use crate::model::{self, Severity};

/// Wait this long without a new edit before computing.
pub const QUIET_PERIOD: Duration = Duration::from_millis(5);
/// Never delay a refresh by more than this during continuous edits.
pub const MAX_DELAY: Duration = Duration::from_millis(150);

enum Job {
    Refresh(Arc<Snapshot>),
    /// The document was closed by text-sync notification number `.1`.
    Clear(Uri, u64),
}

impl Job {
    fn uri(&self) -> &Uri {
        match self {
            Self::Refresh(snapshot) => &snapshot.uri,
            Self::Clear(uri, _) => uri,
        }
    }

    fn sequence(&self) -> u64 {
        match self {
            Self::Refresh(snapshot) => snapshot.sequence,
            Self::Clear(_, sequence) => *sequence,
        }
    }
}

/// The posting side, used by the document actor.
#[derive(Debug, Clone)]
pub struct DiagnosticsScheduler {
    sender: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refresh(snapshot) => write!(f, "Refresh({:?})", snapshot.version),
            Self::Clear(uri, _) => write!(f, "Clear({})", uri.as_str()),
        }
    }
}

impl DiagnosticsScheduler {
    /// Starts the worker on the current runtime.
    pub fn start(workspace: Arc<Workspace>, outbox: Outbox) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(run(workspace, outbox, receiver));
        Self { sender }
    }

    /// Recompute diagnostics for this version (debounced).
    pub fn schedule(&self, snapshot: Arc<Snapshot>) {
        let _ = self.sender.send(Job::Refresh(snapshot));
    }

    /// The document was closed (by notification `sequence`): clear its diagnostics
    /// in the client, unless it was opened again since.
    pub fn clear(&self, uri: Uri, sequence: u64) {
        let _ = self.sender.send(Job::Clear(uri, sequence));
    }
}

/// What to publish per document after the quiet period: `None` clears.
type Pending = HashMap<Uri, Option<Arc<Snapshot>>>;

/// The scheduler's memory across bursts.
#[derive(Default)]
struct State {
    /// The newest job's notification number per document: older jobs (a close
    /// processed after a re-open) are dropped.
    newest: HashMap<Uri, u64>,
    /// The budget of the computation running for each document, cancelled when a
    /// newer version supersedes it.
    running: HashMap<Uri, Budget>,
    /// What each open document's publishing keeps across versions.
    published: HashMap<Uri, Arc<Published>>,
}

/// What the publishing of one document keeps across its versions.
#[derive(Debug, Default)]
struct Published {
    /// Its findings as the client is sent them, per computation.
    renderings: Renderings,
    /// How long its last module answers took, in microseconds (0 before the first).
    answers_took: AtomicU64,
}

/// Module answers that took at least this long wait, after the next version's
/// diagnostics, for a pause in the edits (see [`quiet_before_answers`]).
const SLOW_ANSWERS: Duration = Duration::from_millis(40);
/// The longest such wait.
const MAX_ANSWERS_QUIET: Duration = Duration::from_millis(400);

/// How long a version's module answers wait for the next edit after its diagnostics
/// are out, given how long the last ones took: as long again (at most
/// [`MAX_ANSWERS_QUIET`]) when they are slow, none when quick. The memory estimate of
/// a 60 MB dump takes 300–600 ms; started after each keystroke's diagnostics it was
/// always cut short by the next one, and it took a core from that keystroke's checks
/// (a third of the server's time while typing). A small module's answers come at once,
/// and so do answers remembered from a version with the same buffers: asking for them
/// keeps them (the text each undo comes back to), where waiting would let the next
/// keystroke pass them by, age them out, and leave the estimate to be computed again
/// at the peak of the server's memory.
fn quiet_before_answers(last: Duration, remembered: bool) -> Duration {
    if remembered || last < SLOW_ANSWERS {
        return Duration::ZERO;
    }
    last.min(MAX_ANSWERS_QUIET)
}

/// What [`Published::answers_took`] becomes (microseconds) after module answers that
/// took `took`, given `last`: only an estimate computed for this version counts, and
/// a quick one halves the last time rather than forgetting it. Answers remembered
/// from an earlier version with the same buffers come at once whatever the module
/// costs: counted, they halved a 5 s estimate to nothing within a few keystrokes that
/// undid one another, and the estimate then started after every keystroke again.
fn answers_took_after(last: u64, took: Duration, computed: bool) -> u64 {
    if !computed {
        return last;
    }
    let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    micros.max(last / 2)
}

fn absorb(workspace: &Workspace, state: &mut State, pending: &mut Pending, job: Job) {
    let newest = state.newest.entry(job.uri().clone()).or_default();
    if job.sequence() < *newest {
        return;
    }
    *newest = job.sequence();
    // A newer version of a document stops the checks of its older one.
    if let Some(stale) = state.running.remove(job.uri()) {
        stale.cancel();
    }
    match job {
        Job::Refresh(snapshot) => {
            // No deadline for the whole document: each computation's checks have
            // their own, and report what they found when it passes.
            let part = workspace.settings().time_budget(Work::Checks);
            let budget = Budget::with_part_limit(None, Some(part));
            state.running.insert(snapshot.uri.clone(), budget.clone());
            tokio::spawn(check_early(snapshot.clone(), budget));
            pending.insert(snapshot.uri.clone(), Some(snapshot));
        }
        Job::Clear(uri, _) => {
            pending.insert(uri, None);
        }
    }
}

/// Computes the checks of a new version while the quiet period runs: the cells they
/// fill are kept (the next version shares those of every computation its edit
/// leaves alone), and the publish after the quiet period finds them computed or
/// waits for them ([`crate::ide::HloSnapshot::filled_checks`] computes once per version). A
/// newer version cancels them.
async fn check_early(snapshot: Arc<Snapshot>, budget: Budget) {
    let _ = guarded_within("checks", budget, move || {
        if let crate::ide::Snapshot::Hlo(hlo) = &snapshot.ide {
            hlo.filled_checks();
        }
        crate::ide::reaper::release(snapshot);
    })
    .await;
}

async fn run(
    workspace: Arc<Workspace>,
    outbox: Outbox,
    mut receiver: mpsc::UnboundedReceiver<Job>,
) {
    let mut state = State::default();
    while let Some(job) = receiver.recv().await {
        let mut pending = Pending::new();
        absorb(&workspace, &mut state, &mut pending, job);
        let deadline = Instant::now() + MAX_DELAY;
        loop {
            let wait = QUIET_PERIOD.min(deadline.saturating_duration_since(Instant::now()));
            match tokio::time::timeout(wait, receiver.recv()).await {
                Ok(Some(job)) => absorb(&workspace, &mut state, &mut pending, job),
                Ok(None) => return,
                Err(_elapsed) => break,
            }
        }
        // Documents are checked concurrently.
        for (uri, snapshot) in pending {
            let budget = state.running.get(&uri).cloned().unwrap_or_default();
            let published = match snapshot {
                Some(_) => state.published.entry(uri.clone()).or_default().clone(),
                None => {
                    state.published.remove(&uri);
                    Arc::default()
                }
            };
            tokio::spawn(publish(
                workspace.clone(),
                outbox.clone(),
                (uri, snapshot),
                published,
                budget,
            ));
        }
    }
}

async fn publish(
    workspace: Arc<Workspace>,
    outbox: Outbox,
    (uri, snapshot): (Uri, Option<Arc<Snapshot>>),
    published: Arc<Published>,
    budget: Budget,
) {
    let Some(snapshot) = snapshot else {
        outbox.post(Outgoing::Rendered(rendered::body(&uri, None, &[]).into()));
        return;
    };
    let style = Style {
        encoding: workspace.encoding(),
        raise_uncoalesced: workspace.settings().uncoalesced_warning,
    };
    let computed = {
        let snapshot = snapshot.clone();
        let budget = budget.clone();
        let published = published.clone();
        guarded_within("diagnostics", budget, move || {
            published.renderings.notification(&snapshot, style)
        })
        .await
    };
    let Ok(notification) = computed else {
        // The guard logged the panic; keep the client's previous diagnostics.
        return;
    };
    let stale = workspace.is_stale(&snapshot) || budget.cut() == Some(Cut::Cancelled);
    if !stale {
        let sent = hash_of(&notification);
        outbox.post(Outgoing::Rendered(notification));
        let prepared = (snapshot.clone(), budget.clone());
        if prepare_module_answers(&workspace, &outbox, prepared, &published).await {
            republish(
                &workspace,
                &outbox,
                (snapshot.clone(), budget.clone()),
                published,
                (style, sent),
            )
            .await;
        }
        format_ahead(&workspace, (snapshot.clone(), budget)).await;
    }
    crate::ide::reaper::release(snapshot);
}

/// Formats a large document once, after its diagnostics and module-wide answers
/// ([`crate::ide::HloSnapshot::format_ahead`]), unless a newer version came.
async fn format_ahead(workspace: &Workspace, (snapshot, budget): (Arc<Snapshot>, Budget)) {
    if workspace.is_stale(&snapshot) || budget.cut() == Some(Cut::Cancelled) {
        return;
    }
    let uri = snapshot.uri.clone();
    let started = std::time::Instant::now();
    let ran = guarded_within("formatting ahead", budget, move || match &snapshot.ide {
        crate::ide::Snapshot::Hlo(hlo) => {
            hlo.format_ahead(crate::ide::snapshot::FORMAT_AHEAD_BYTES)
        }
        crate::ide::Snapshot::Mlir(_) => false,
    })
    .await;
    if ran == Ok(true) {
        tracing::info!(
            "{} formatted ahead in {:?}",
            uri.as_str(),
            started.elapsed()
        );
    }
}

fn hash_of(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(bytes)
}

/// Publishes the version's diagnostics again once its module-wide answers are ready,
/// when they change what was sent (`sent`: the hash of the first notification): the
/// memory findings of a version whose edit changed a shape.
async fn republish(
    workspace: &Workspace,
    outbox: &Outbox,
    (snapshot, budget): (Arc<Snapshot>, Budget),
    published: Arc<Published>,
    (style, sent): (Style, u64),
) {
    let computed = {
        let snapshot = snapshot.clone();
        guarded_within("diagnostics", budget.clone(), move || {
            published.renderings.notification(&snapshot, style)
        })
        .await
    };
    let Ok(notification) = computed else { return };
    let current = !workspace.is_stale(&snapshot) && budget.cut() != Some(Cut::Cancelled);
    if current && hash_of(&notification) != sent {
        outbox.post(Outgoing::Rendered(notification));
    }
}

/// Whether the snapshot's module answers are remembered (see
/// [`crate::ide::HloSnapshot::module_answers_remembered`]), asked on a blocking thread:
/// the first version of a file of several modules hashes its whole text.
async fn remembered(snapshot: &Arc<Snapshot>) -> bool {
    let snapshot = snapshot.clone();
    tokio::task::spawn_blocking(move || match &snapshot.ide {
        crate::ide::Snapshot::Hlo(hlo) => hlo.module_answers_remembered(),
        crate::ide::Snapshot::Mlir(_) => false,
    })
    .await
    .unwrap_or(false)
}

/// Computes the version's answers that need a whole module ([`crate::ide::ModuleAnswers`]:
/// the memory estimate and findings, the stack-frame tables) once its diagnostics are
/// out, the checks having built every computation, and asks the client for its lenses
/// again (the memory lenses appear). Hovers show them from then on. Whether they were
/// computed for the current version.
async fn prepare_module_answers(
    workspace: &Workspace,
    outbox: &Outbox,
    (snapshot, budget): (Arc<Snapshot>, Budget),
    published: &Published,
) -> bool {
    if !matches!(snapshot.ide, crate::ide::Snapshot::Hlo(_)) {
        return false;
    }
    let last = Duration::from_micros(published.answers_took.load(Ordering::Relaxed));
    let quiet = quiet_before_answers(last, remembered(&snapshot).await);
    if !quiet.is_zero() {
        tokio::time::sleep(quiet).await;
        if workspace.is_stale(&snapshot) || budget.cut() == Some(Cut::Cancelled) {
            return false;
        }
    }
    let prepared = {
        let snapshot = snapshot.clone();
        guarded_within("module answers", budget.clone(), move || {
            let started = std::time::Instant::now();
            let computed = match &snapshot.ide {
                crate::ide::Snapshot::Hlo(hlo) => hlo.prepare_module_answers(),
                crate::ide::Snapshot::Mlir(_) => false,
            };
            (started.elapsed(), computed)
        })
        .await
    };
    let Ok((took, computed)) = prepared else {
        return false;
    };
    let last = published.answers_took.load(Ordering::Relaxed);
    let took_now = match budget.cut() {
        None => answers_took_after(last, took, computed),
        Some(_) => answers_took_after_cut(last, took),
    };
    published.answers_took.store(took_now, Ordering::Relaxed);
    // Tests wait for this line (`lsp_support::Client::wait_module_answers`).
    tracing::info!(
        "module answers of {} version {} ready in {took:?}",
        snapshot.uri.as_str(),
        snapshot.version
    );
    let current = !workspace.is_stale(&snapshot) && budget.cut() != Some(Cut::Cancelled);
    if current
        && workspace
            .client_supports_code_lens_refresh
            .load(Ordering::SeqCst)
    {
        outbox.post(Outgoing::RefreshCodeLenses);
    }
    current
}

/// One library diagnostic as an LSP diagnostic (related locations in the same file).
pub fn to_lsp(
    snapshot: &Snapshot,
    diagnostic: &model::Diagnostic,
    encoding: PositionEncoding,
) -> Diagnostic {
    let severity = match diagnostic.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Information => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let related: Vec<DiagnosticRelatedInformation> = diagnostic
        .related
        .iter()
        .map(|(range, message)| DiagnosticRelatedInformation {
            location: Location::new(
                snapshot.uri.clone(),
                snapshot.range(range.clone(), encoding),
            ),
            message: message.clone(),
        })
        .collect();
    Diagnostic {
        range: snapshot.range(diagnostic.range.clone(), encoding),
        severity: Some(severity),
        code: Some(NumberOrString::String(diagnostic.code.to_string())),
        source: Some("hlo-lsp".into()),
        message: diagnostic.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}

/// What [`Published::answers_took`] becomes after module answers cut short (the next
/// edit came) after running `ran`: they take at least that long. Left alone, a first
/// estimate cut by the first keystroke left the time at zero, and every keystroke
/// after it started an estimate the next one cut.
fn answers_took_after_cut(last: u64, ran: Duration) -> u64 {
    last.max(u64::try_from(ran.as_micros()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    #[test]
    fn slow_answers_wait_for_a_pause_and_quick_ones_do_not() {
        assert_eq!(quiet_before_answers(Duration::ZERO, false), Duration::ZERO);
        assert_eq!(
            quiet_before_answers(Duration::from_millis(39), false),
            Duration::ZERO
        );
        let slow = Duration::from_millis(120);
        assert_eq!(quiet_before_answers(slow, false), slow);
        let very_slow = Duration::from_secs(5);
        assert_eq!(quiet_before_answers(very_slow, false), MAX_ANSWERS_QUIET);
        // Remembered answers are asked for at once, however slow the last estimate.
        assert_eq!(quiet_before_answers(very_slow, true), Duration::ZERO);
    }

    /// Typing a digit and undoing it alternates a new estimate with a remembered one:
    /// the remembered ones must not wear the slow estimate's time away.
    #[test]
    fn remembered_answers_leave_the_time_of_the_last_computed_ones() {
        let mut last = answers_took_after(0, Duration::from_secs(5), true);
        assert_eq!(last, 5000 * MS);
        for _ in 0..20 {
            last = answers_took_after(last, Duration::from_millis(3), false);
        }
        assert_eq!(last, 5000 * MS);
        assert_eq!(
            quiet_before_answers(Duration::from_micros(last), false),
            MAX_ANSWERS_QUIET
        );
    }

    /// The first estimate of a large module, cut by the first keystroke after 260 ms:
    /// the keystrokes after it wait for a pause rather than each starting one.
    #[test]
    fn answers_cut_short_count_as_taking_at_least_as_long() {
        let cut = answers_took_after_cut(0, Duration::from_millis(260));
        assert_eq!(cut, 260 * MS);
        assert_eq!(
            quiet_before_answers(Duration::from_micros(cut), false),
            Duration::from_millis(260)
        );
        // A run cut at once says nothing new.
        assert_eq!(answers_took_after_cut(cut, Duration::from_millis(4)), cut);
    }

    /// A module that became quick to estimate stops waiting after a few computed runs.
    #[test]
    fn quick_computed_answers_halve_the_time_until_they_no_longer_wait() {
        let mut last = 5000 * MS;
        let mut runs = 0;
        while !quiet_before_answers(Duration::from_micros(last), false).is_zero() {
            last = answers_took_after(last, Duration::from_millis(2), true);
            runs += 1;
        }
        assert_eq!(runs, 7, "5 s halves below 40 ms in 7 runs");
        let slower = answers_took_after(last, Duration::from_millis(300), true);
        assert_eq!(slower, 300 * MS, "a slow computed run counts at once");
    }
}
