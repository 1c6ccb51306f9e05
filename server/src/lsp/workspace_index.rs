//! Background indexing of the workspace's HLO files (see [`crate::dump::index`]):
//! after `initialized`, the files under the workspace folders are found and indexed
//! off the async runtime, with `$/progress`, so that workspace symbols find the
//! computations and fusions of files no editor has opened (a dump directory of
//! `module_0042.jit_step.*.txt` files). Open documents answer for themselves: their
//! indexed entries are ignored while they are open. A file changed on disk since it was
//! indexed (saved after an edit, a dump written again) is indexed again when a query
//! reads it; a file created later is found by a query too, the folders being walked
//! again at most once per [`REWALK`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tower_lsp_server::ls_types::Uri;

use super::outbox::Outbox;
use super::progress::ProgressTask;
use super::workspace::{read, write, Workspace};
use crate::dump::index::{discover, symbols, IndexedSymbol, Limits};

/// The symbols of one file on disk.
#[derive(Debug)]
pub struct IndexedFile {
    pub uri: Uri,
    pub path: PathBuf,
    /// The file's modification time when it was read.
    pub modified: Option<SystemTime>,
    pub symbols: Vec<IndexedSymbol>,
}

impl IndexedFile {
    /// Reads and indexes `path`; `None` when it cannot be read as text.
    pub fn read(path: &Path) -> Option<IndexedFile> {
        let uri = Uri::from_file_path(path)?;
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let Ok(text) = std::fs::read_to_string(path) else {
            tracing::info!("not indexed (unreadable or not UTF-8): {}", path.display());
            return None;
        };
        Some(IndexedFile {
            uri,
            path: path.to_path_buf(),
            modified,
            symbols: symbols(&text),
        })
    }

    fn is_stale(&self) -> bool {
        let now = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        now != self.modified
    }
}

/// The workspace folders are walked for new files at most this often (queries walk
/// them; a walk of 5,000 files costs milliseconds).
pub const REWALK: Duration = Duration::from_secs(1);

/// The files indexed so far.
#[derive(Debug, Default)]
pub struct WorkspaceIndex {
    files: RwLock<Vec<Arc<IndexedFile>>>,
    /// Set when the first indexing is over: until then it finds new files itself.
    complete: AtomicBool,
    /// When the folders were last walked.
    walked: Mutex<Option<Instant>>,
}

impl WorkspaceIndex {
    /// The files indexed so far (cheap: shared).
    pub fn files(&self) -> Vec<Arc<IndexedFile>> {
        read(&self.files).clone()
    }

    /// The files indexed so far, those changed on disk since read again (blocking: a
    /// `stat` per file). A file that can no longer be read is dropped.
    pub fn fresh_files(&self) -> Vec<Arc<IndexedFile>> {
        let stale: Vec<PathBuf> = self
            .files()
            .iter()
            .filter(|f| f.is_stale())
            .map(|f| f.path.clone())
            .collect();
        if !stale.is_empty() {
            let again: Vec<(PathBuf, Option<Arc<IndexedFile>>)> = stale
                .into_iter()
                .map(|path| {
                    let file = IndexedFile::read(&path).map(Arc::new);
                    (path, file)
                })
                .collect();
            // In place: the background indexing may be adding files meanwhile.
            let mut files = write(&self.files);
            for (path, file) in again {
                if let Some(k) = files.iter().position(|f| f.path == path) {
                    match file {
                        Some(file) => files[k] = file,
                        None => {
                            files.remove(k);
                        }
                    }
                }
            }
        }
        self.files()
    }

    /// Indexes the files created under `roots` since the folders were last walked
    /// (blocking). Does nothing before the first indexing is over or within
    /// [`REWALK`] of the last walk.
    pub fn add_new_files(&self, roots: &[PathBuf]) {
        if roots.is_empty() || !self.complete.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(mut walked) = self.walked.lock() {
            if walked.is_some_and(|t| t.elapsed() < REWALK) {
                return;
            }
            *walked = Some(Instant::now());
        }
        let known: HashSet<PathBuf> = self.files().iter().map(|f| f.path.clone()).collect();
        let found = discover(roots, &Limits::default());
        for (path, _) in found.files.iter().filter(|(p, _)| !known.contains(p)) {
            if let Some(file) = IndexedFile::read(path) {
                self.add(file);
            }
        }
    }

    fn add(&self, file: IndexedFile) {
        write(&self.files).push(Arc::new(file));
    }

    /// The first indexing is over: later walks add what it did not see.
    fn finish(&self) {
        if let Ok(mut walked) = self.walked.lock() {
            *walked = Some(Instant::now());
        }
        self.complete.store(true, Ordering::SeqCst);
    }
}

/// Starts indexing the workspace folders in the background (nothing without folders).
pub fn spawn(workspace: Arc<Workspace>, outbox: Outbox) {
    let roots = workspace.roots();
    if roots.is_empty() {
        return;
    }
    tokio::task::spawn_blocking(move || build(&workspace, &outbox, &roots));
}

/// How many progress reports a run sends at most.
const REPORTS: usize = 20;

fn build(workspace: &Workspace, outbox: &Outbox, roots: &[PathBuf]) {
    let found = discover(roots, &Limits::default());
    let progress_enabled = workspace.client_supports_progress.load(Ordering::SeqCst);
    let mut progress = ProgressTask::begin(
        outbox,
        progress_enabled && !found.files.is_empty(),
        "Indexing HLO files".into(),
    );
    let total = found.files.len();
    let mut computations = 0;
    for (k, (path, _)) in found.files.iter().enumerate() {
        if workspace.shutdown_requested.load(Ordering::SeqCst) {
            return;
        }
        if let (Some(progress), true) = (&progress, k % total.div_ceil(REPORTS).max(1) == 0) {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            progress.report(
                format!("{k}/{total} {name}"),
                (k * 100 / total.max(1)) as u32,
            );
        }
        let Some(file) = IndexedFile::read(path) else {
            continue;
        };
        computations += file
            .symbols
            .iter()
            .filter(|s| s.kind == crate::dump::index::IndexedKind::Computation)
            .count();
        workspace.index.add(file);
    }
    let mut summary = format!("{total} files, {computations} computations");
    if !found.too_large.is_empty() {
        summary.push_str(&format!(
            ", {} over {} MiB skipped",
            found.too_large.len(),
            Limits::default().max_file_bytes >> 20
        ));
    }
    if found.truncated {
        summary.push_str(", more files not indexed");
    }
    workspace.index.finish();
    tracing::info!("workspace index: {summary}");
    if let Some(progress) = progress.as_mut() {
        progress.set_end_message(summary);
    }
}
