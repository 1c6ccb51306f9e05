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

/// Shared server state. Cheap to clone (`Arc` inside where it matters).
#[derive(Debug)]
pub struct Workspace {
    snapshots: RwLock<HashMap<Uri, Arc<Snapshot>>>,
    /// Arrival number of the latest text-sync notification per document.
    latest_arrival: Mutex<HashMap<Uri, u64>>,
    /// Number of text-sync notifications received (assigned in wire order).
    arrived: AtomicU64,
    /// Number of text-sync notifications fully applied; requests wait on it.
    applied: watch::Sender<u64>,
    pub settings: RwLock<Settings>,
    encoding: RwLock<PositionEncoding>,
    /// `initialize` has been answered: text sync may start.
    pub initialized: AtomicBool,
    /// `shutdown` was requested: decides the exit code on `exit`.
    pub shutdown_requested: AtomicBool,
    /// The client accepts server-initiated `window/workDoneProgress/create`.
    pub client_supports_progress: AtomicBool,
    /// The workspace folders (from `initialize`): where source files and dumps are
    /// looked for.
    pub roots: RwLock<Vec<std::path::PathBuf>>,
}

impl Default for Workspace {
    fn default() -> Self {
        Self {
            snapshots: RwLock::default(),
            latest_arrival: Mutex::default(),
            arrived: AtomicU64::new(0),
            applied: watch::channel(0).0,
            settings: RwLock::default(),
            encoding: RwLock::default(),
            initialized: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            client_supports_progress: AtomicBool::new(false),
            roots: RwLock::default(),
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

    /// How many text-sync notifications have arrived so far.
    pub fn arrived(&self) -> u64 {
        self.arrived.load(Ordering::SeqCst)
    }

    /// Marks notification `sequence` as applied (called in arrival order).
    pub fn mark_applied(&self, sequence: u64) {
        self.applied.send_replace(sequence);
    }

    /// Waits until every text-sync notification up to `sequence` has been applied.
    pub async fn wait_applied(&self, sequence: u64) {
        let mut receiver = self.applied.subscribe();
        // The sender lives as long as `self`, so this only ends when the value is reached.
        let _ = receiver.wait_for(|&applied| applied >= sequence).await;
    }

    pub fn publish(&self, snapshot: Arc<Snapshot>) {
        let old = write(&self.snapshots).insert(snapshot.uri.clone(), snapshot);
        super::reaper::release(old);
    }

    pub fn remove(&self, uri: &Uri) {
        let old = write(&self.snapshots).remove(uri);
        super::reaper::release(old);
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

/// Locks ignoring poison: a panicking request is caught and must not wedge the server.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

pub fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poison| poison.into_inner())
}

pub fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poison| poison.into_inner())
}
