//! The pass histories ([`crate::dump::history`]) of the dump directories whose
//! snapshots the editor shows: built once per module of a directory, off the async
//! runtime, with `$/progress`, then kept in step with the files. A lens or hover
//! request that finds none yet (or finds the files changed, added or removed since it
//! was built) starts a build and answers with what it has; when the build is done the
//! client is asked to refresh its code lenses. The files are looked at again at most
//! once per [`RECHECK`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::outbox::{Outbox, Outgoing};
use super::progress::ProgressTask;
use super::workspace::Workspace;
use crate::dump::history::{self, ModuleFiles, ModuleHistory};
use crate::dump::naming::{DumpName, Stage};

/// How often a directory's files are compared with the history built from them.
pub const RECHECK: Duration = Duration::from_secs(1);

/// The histories built or being built, by (directory, module id).
#[derive(Debug, Default)]
pub struct PassHistories {
    entries: Mutex<HashMap<(PathBuf, u64), Entry>>,
}

#[derive(Debug, Default)]
struct Entry {
    ready: Option<Arc<ModuleHistory>>,
    building: bool,
    checked: Option<Instant>,
}

/// The history of the module `path` is a snapshot of, with its index, when `path`
/// is a dump of a directory with pass snapshots and the history is built. Starts a
/// build when there is none or the files changed (`outbox` reports its progress).
pub fn history_of(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    path: &Path,
) -> Option<(Arc<ModuleHistory>, usize)> {
    let name = DumpName::parse(path).filter(|d| d.is_hlo_text(path))?;
    let key = (path.parent()?.to_path_buf(), name.module_id);
    let mut entries = workspace
        .pass_histories
        .entries
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let entry = entries.entry(key.clone()).or_default();
    if !entry.building && entry.checked.is_none_or(|t| t.elapsed() >= RECHECK) {
        entry.checked = Some(Instant::now());
        let files = pass_files(&key.0, key.1)?;
        if entry.ready.as_ref().is_none_or(|h| h.is_stale(&files)) {
            entry.building = true;
            spawn_build(workspace.clone(), outbox.cloned(), key.0.clone(), files);
        }
    }
    let ready = entry.ready.clone()?;
    let snapshot = ready.snapshot_of(path)?;
    Some((ready, snapshot))
}

/// [`history_of`] the file a document snapshot was opened from.
pub fn for_snapshot(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    snapshot: &super::snapshot::Snapshot,
) -> Option<(Arc<ModuleHistory>, usize)> {
    let path = snapshot.uri.to_file_path()?;
    history_of(workspace, outbox, &path)
}

/// The files of module `id` in `dir`, when it has pass snapshots.
fn pass_files(dir: &Path, id: u64) -> Option<ModuleFiles> {
    let files = history::modules(dir)
        .ok()?
        .into_iter()
        .find(|m| m.module_id == id)?;
    let passes = files
        .snapshots
        .iter()
        .any(|s| matches!(s.stage, Stage::Pass { .. } | Stage::DuringPass { .. }));
    passes.then_some(files)
}

fn spawn_build(
    workspace: Arc<Workspace>,
    outbox: Option<Outbox>,
    dir: PathBuf,
    files: ModuleFiles,
) {
    std::thread::spawn(move || {
        let enabled = workspace.client_supports_progress.load(Ordering::SeqCst);
        let title = format!("Pass history of {}", files.module);
        let mut progress = outbox
            .as_ref()
            .and_then(|o| ProgressTask::begin(o, enabled, title));
        let report = |done: usize, total: usize| {
            if let Some(p) = &progress {
                p.report(
                    format!("{done}/{total} snapshots"),
                    (done * 100 / total.max(1)) as u32,
                );
            }
        };
        let built = ModuleHistory::build(&files, &report);
        let summary = format!(
            "{} snapshots, {} instructions followed",
            built.snapshots.len(),
            built.instructions.len()
        );
        tracing::info!(
            "pass history of {} in {}: {summary}",
            files.module,
            dir.display()
        );
        if let Some(p) = progress.as_mut() {
            p.set_end_message(summary);
        }
        {
            let mut entries = workspace
                .pass_histories
                .entries
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let entry = entries.entry((dir, files.module_id)).or_default();
            entry.ready = Some(Arc::new(built));
            entry.building = false;
            entry.checked = Some(Instant::now());
        }
        drop(progress);
        let refresh = workspace
            .client_supports_code_lens_refresh
            .load(Ordering::SeqCst);
        if let (Some(outbox), true) = (outbox, refresh) {
            outbox.post(Outgoing::RefreshCodeLenses);
        }
    });
}
