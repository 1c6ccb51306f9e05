//! State shared between request handlers, the document actor and the diagnostics
//! worker: published snapshots, settings, the negotiated position encoding and the
//! arrival/application counters that order requests after earlier edits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::watch;
use tower_lsp_server::ls_types::Uri;

use super::position::PositionEncoding;
use super::settings::Settings;
use super::snapshot::Snapshot;
use crate::budget::Budget;

/// Shared server state. Cheap to clone (`Arc` inside where it matters).
#[derive(Debug)]
pub struct Workspace {
    snapshots: RwLock<HashMap<Uri, Arc<Snapshot>>>,
    /// Arrival number of the latest text-sync notification per document.
    latest_arrival: Mutex<HashMap<Uri, u64>>,
    /// Number of text-sync notifications received (assigned in wire order).
    arrived: AtomicU64,
    /// Arrival number of the latest text-sync notification applied, per document
    /// (documents are applied in parallel, each in order).
    applied: Mutex<HashMap<Uri, u64>>,
    /// Bumped after every application: wakes the requests waiting for one.
    applications: watch::Sender<u64>,
    pub settings: RwLock<Settings>,
    encoding: RwLock<PositionEncoding>,
    /// `initialize` has been answered: text sync may start.
    pub initialized: AtomicBool,
    /// The budgets of requests running on each document: cancelled when an edit
    /// makes their answers stale (see [`Self::register_work`]).
    work: Mutex<HashMap<Uri, Vec<(u64, Budget)>>>,
    /// Numbers the registrations in `work`.
    next_work: AtomicU64,
    /// `shutdown` was requested: decides the exit code on `exit`.
    pub shutdown_requested: AtomicBool,
    /// The client accepts server-initiated `window/workDoneProgress/create`.
    pub client_supports_progress: AtomicBool,
    /// The client inserts completion snippets (`dimensions={$1}`).
    pub client_supports_snippets: AtomicBool,
    /// The workspace folders (from `initialize`): where source files and dumps are
    /// looked for.
    pub roots: RwLock<Vec<std::path::PathBuf>>,
    /// The HLO files of the workspace folders, indexed in the background.
    pub index: super::workspace_index::WorkspaceIndex,
    /// The client accepts `workspace/codeLens/refresh` (sent when a pass history is built).
    pub client_supports_code_lens_refresh: AtomicBool,
    /// The pass histories of the dump directories whose snapshots are shown.
    pub pass_histories: super::pass_history::PassHistories,
    /// The XProf profiles read, and which one each document shows.
    pub profiles: super::profiles::Profiles,
}

impl Default for Workspace {
    fn default() -> Self {
        Self {
            snapshots: RwLock::default(),
            latest_arrival: Mutex::default(),
            arrived: AtomicU64::new(0),
            applied: Mutex::default(),
            applications: watch::channel(0).0,
            settings: RwLock::default(),
            encoding: RwLock::default(),
            initialized: AtomicBool::new(false),
            work: Mutex::default(),
            next_work: AtomicU64::new(0),
            shutdown_requested: AtomicBool::new(false),
            client_supports_progress: AtomicBool::new(false),
            client_supports_snippets: AtomicBool::new(false),
            roots: RwLock::default(),
            index: Default::default(),
            client_supports_code_lens_refresh: AtomicBool::new(false),
            pass_histories: Default::default(),
            profiles: Default::default(),
        }
    }
}

impl Workspace {
    /// Assigns the next arrival number to a text-sync notification for `uri`.
    pub fn arrive(&self, uri: &Uri) -> u64 {
        let sequence = self.arrived.fetch_add(1, Ordering::SeqCst) + 1;
        lock(&self.latest_arrival).insert(uri.clone(), sequence);
        sequence
    }

    /// What a request must wait for to see every text-sync notification that
    /// arrived before it: on its document only when it names one, else on all.
    pub fn arrivals(&self, uri: Option<&Uri>) -> Vec<(Uri, u64)> {
        let latest = lock(&self.latest_arrival);
        match uri {
            Some(uri) => latest
                .get(uri)
                .map(|&sequence| vec![(uri.clone(), sequence)])
                .unwrap_or_default(),
            None => latest.iter().map(|(u, &s)| (u.clone(), s)).collect(),
        }
    }

    /// Marks notification `sequence` of `uri` as applied (called in arrival order
    /// per document).
    pub fn mark_applied(&self, uri: &Uri, sequence: u64) {
        {
            let mut applied = lock(&self.applied);
            let entry = applied.entry(uri.clone()).or_default();
            *entry = (*entry).max(sequence);
        }
        self.applications.send_modify(|n| *n += 1);
    }

    /// Waits until every notification in `arrivals` has been applied.
    pub async fn wait_applied(&self, arrivals: &[(Uri, u64)]) {
        let done = || {
            let applied = lock(&self.applied);
            arrivals
                .iter()
                .all(|(uri, sequence)| applied.get(uri).is_some_and(|a| a >= sequence))
        };
        let mut receiver = self.applications.subscribe();
        while !done() {
            // The sender lives as long as `self`: this ends only by a new application.
            if receiver.changed().await.is_err() {
                return;
            }
        }
    }

    /// Registers the budget of a request on `uri` until the returned guard drops;
    /// the next [`Self::publish`] or [`Self::remove`] of `uri` cancels it.
    pub fn register_work(self: &Arc<Self>, uri: &Uri, budget: &Budget) -> WorkRegistration {
        let id = self.next_work.fetch_add(1, Ordering::Relaxed);
        lock(&self.work)
            .entry(uri.clone())
            .or_default()
            .push((id, budget.clone()));
        WorkRegistration {
            workspace: self.clone(),
            uri: uri.clone(),
            id,
        }
    }

    /// Cancels the registered work on `uri`: its answers are stale.
    fn cancel_work(&self, uri: &Uri) {
        if let Some(running) = lock(&self.work).remove(uri) {
            for (_, budget) in running {
                budget.cancel();
            }
        }
    }

    pub fn publish(&self, snapshot: Arc<Snapshot>) {
        self.cancel_work(&snapshot.uri);
        let old = write(&self.snapshots).insert(snapshot.uri.clone(), snapshot);
        crate::ide::reaper::release(old);
    }

    /// Removes the snapshot of `uri` on its close (notification `sequence`), unless
    /// a later re-open already published a newer one.
    pub fn remove(&self, uri: &Uri, sequence: u64) {
        let mut snapshots = write(&self.snapshots);
        if snapshots.get(uri).is_some_and(|s| s.sequence > sequence) {
            return;
        }
        self.cancel_work(uri);
        let old = snapshots.remove(uri);
        drop(snapshots);
        crate::ide::reaper::release(old);
    }

    pub fn snapshot(&self, uri: &Uri) -> Option<Arc<Snapshot>> {
        read(&self.snapshots).get(uri).cloned()
    }

    /// All open snapshots (for workspace-wide requests).
    pub fn snapshots(&self) -> Vec<Arc<Snapshot>> {
        read(&self.snapshots).values().cloned().collect()
    }

    /// True once a text-sync notification newer than `snapshot` has arrived.
    pub fn is_stale(&self, snapshot: &Snapshot) -> bool {
        lock(&self.latest_arrival)
            .get(&snapshot.uri)
            .is_some_and(|&latest| latest != snapshot.sequence)
    }

    pub fn encoding(&self) -> PositionEncoding {
        *read(&self.encoding)
    }

    pub fn set_encoding(&self, encoding: PositionEncoding) {
        *write(&self.encoding) = encoding;
    }

    pub fn roots(&self) -> Vec<std::path::PathBuf> {
        read(&self.roots).clone()
    }

    pub fn settings(&self) -> Settings {
        read(&self.settings).clone()
    }
}

/// Keeps a request's budget registered (see [`Workspace::register_work`]).
pub struct WorkRegistration {
    workspace: Arc<Workspace>,
    uri: Uri,
    id: u64,
}

impl Drop for WorkRegistration {
    fn drop(&mut self) {
        let mut work = lock(&self.workspace.work);
        if let Some(running) = work.get_mut(&self.uri) {
            running.retain(|(id, _)| *id != self.id);
            if running.is_empty() {
                work.remove(&self.uri);
            }
        }
    }
}

pub use crate::ide::memo::lock;

pub fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poison| poison.into_inner())
}

pub fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poison| poison.into_inner())
}
