//! The XProf profiles the editor shows beside dumps ([`crate::ide::profile`]): which
//! profile each document gets, read off the request path with `$/progress`.
//!
//! A document's profile is found without any setting: the run folders near its file
//! ([`crate::profile::locate::runs_near`]: under the dump's folder, then beside it up
//! to the workspace folder), the newest first, the first whose events name the
//! document's instructions. The `profile` setting and the `hlo-lsp.loadProfile`
//! command name one elsewhere; it comes before what is found. A lens or hover request
//! that finds no search yet (or one older than [`RECHECK`]) starts one in the
//! background and answers with what it has; when a search changes a document's
//! profile the client is asked to refresh its code lenses.
//!
//! A profile file is read once (again when it changes on disk) and only its
//! per-instruction totals are kept ([`crate::profile::Profile`]). What goes wrong is
//! said once: a profile named by the setting that cannot be read or measured another
//! program, or one found near the dump that cannot be read, is one
//! `window/showMessage`; the command answers its error instead. Reads stop at
//! shutdown, and a chosen profile's read stops when another is chosen.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};
use tower_lsp_server::ls_types::{MessageType, Uri};

use super::commands::CommandError;
use super::outbox::{Outbox, Outgoing};
use super::progress::ProgressTask;
use super::snapshot::Snapshot;
use super::workspace::{lock, Workspace};
use crate::ide;
use crate::profile::{self, Profile, ProfileError, Progress};

/// The command that loads a profile: `{ "path", "uri"? }` (or the path alone).
pub const LOAD: &str = "hlo-lsp.loadProfile";

/// How often a document's profile is looked for again (a new run, a file rewritten).
pub const RECHECK: Duration = Duration::from_secs(10);

/// How many run folders near a dump are read at most, looking for its profile.
const MAX_CANDIDATES: usize = 8;

/// How long a command waits for a search still under way.
const WAIT: Duration = Duration::from_secs(30);

/// The profiles read and chosen.
#[derive(Debug, Default)]
pub struct Profiles {
    state: Mutex<State>,
    /// Bumped when another profile is chosen: reading the one chosen before stops.
    generation: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// The profile the setting or the command named.
    chosen: Option<Chosen>,
    /// By the document's file.
    documents: HashMap<PathBuf, Doc>,
    /// Each profile file read, by path; a reader holds its lock while it reads, so
    /// that a second reader of the same file waits for the first.
    files: HashMap<PathBuf, Arc<Mutex<Option<Cached>>>>,
    /// Messages shown to the user (each once).
    shown: HashSet<String>,
}

#[derive(Debug, Clone)]
struct Chosen {
    path: PathBuf,
    by: By,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    Setting,
    Command,
}

#[derive(Debug, Default)]
struct Doc {
    using: Option<Arc<Profile>>,
    searching: bool,
    checked: Option<Instant>,
    /// What the last search found, in words (why there is no profile).
    status: String,
}

#[derive(Debug)]
struct Cached {
    stamp: Stamp,
    read: Result<Arc<Profile>, String>,
}

/// A file's modification time and length: when they change, it is read again.
type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok();
    (
        meta.as_ref().and_then(|m| m.modified().ok()),
        meta.map_or(0, |m| m.len()),
    )
}

/// The profile of the document `snapshot` shows, when one was found; starts a
/// search when there was none yet or the last is older than [`RECHECK`].
pub fn for_snapshot(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    snapshot: &Snapshot,
) -> Option<Arc<Profile>> {
    if !matches!(snapshot.ide, ide::Snapshot::Hlo(_)) {
        return None;
    }
    let path = snapshot.uri.to_file_path()?.into_owned();
    let mut state = lock(&workspace.profiles.state);
    let doc = state.documents.entry(path.clone()).or_default();
    if !doc.searching && doc.checked.is_none_or(|t| t.elapsed() >= RECHECK) {
        doc.searching = true;
        doc.checked = Some(Instant::now());
        spawn_search(
            workspace.clone(),
            outbox.cloned(),
            snapshot.uri.clone(),
            path,
        );
    }
    doc.using.clone()
}

/// [`for_snapshot`], waiting (up to [`WAIT`]) for a search under way: for commands,
/// which the user waits on anyway. With no profile, why not.
pub fn wait_for(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    snapshot: &Snapshot,
) -> Result<Arc<Profile>, String> {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(p) = for_snapshot(workspace, outbox, snapshot) {
            return Ok(p);
        }
        let path = snapshot
            .uri
            .to_file_path()
            .ok_or("the document is not a file: no profile is looked for")?
            .into_owned();
        let (searching, status) = {
            let state = lock(&workspace.profiles.state);
            match state.documents.get(&path) {
                Some(d) => (d.searching, d.status.clone()),
                None => (true, String::new()),
            }
        };
        if !searching || Instant::now() >= deadline || shutting_down(workspace) {
            return Err(match status.is_empty() {
                true => "no profile yet".to_string(),
                false => status,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `profile` setting changed: a path comes first from now on (over a profile
/// the command loaded); cleared, it no longer does (a profile the command loaded
/// stays). Every open dump looks for its profile again.
pub fn set_setting(workspace: &Arc<Workspace>, outbox: Option<&Outbox>, path: Option<PathBuf>) {
    workspace.profiles.generation.fetch_add(1, Ordering::SeqCst);
    {
        let mut state = lock(&workspace.profiles.state);
        match path {
            Some(path) => {
                state.chosen = Some(Chosen {
                    path,
                    by: By::Setting,
                })
            }
            None if state.chosen.as_ref().is_some_and(|c| c.by == By::Setting) => {
                state.chosen = None
            }
            None => {}
        }
    }
    search_open_documents(workspace, outbox);
}

/// Starts a search for every open HLO document that is a file (none already under
/// way is started twice).
fn search_open_documents(workspace: &Arc<Workspace>, outbox: Option<&Outbox>) {
    for snapshot in workspace.snapshots() {
        if !matches!(snapshot.ide, ide::Snapshot::Hlo(_)) {
            continue;
        }
        let Some(path) = snapshot.uri.to_file_path().map(|p| p.into_owned()) else {
            continue;
        };
        let mut state = lock(&workspace.profiles.state);
        let doc = state.documents.entry(path.clone()).or_default();
        if doc.searching {
            doc.checked = None; // looked for again at the next request
            continue;
        }
        doc.searching = true;
        doc.checked = Some(Instant::now());
        spawn_search(
            workspace.clone(),
            outbox.cloned(),
            snapshot.uri.clone(),
            path,
        );
    }
}

/// A place a profile may be: the chosen one (`by` the setting or the command), or a
/// run folder near the dump.
struct Candidate {
    path: PathBuf,
    by: Option<By>,
}

/// What a search concluded for a document.
struct Found {
    using: Option<Arc<Profile>>,
    status: String,
}

fn spawn_search(workspace: Arc<Workspace>, outbox: Option<Outbox>, uri: Uri, path: PathBuf) {
    std::thread::spawn(move || {
        // Walking folders and reading a profile is what no request waits for: the
        // hovers and checks go first.
        crate::ide::pool::lower_this_thread_priority();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            search(&workspace, outbox.as_ref(), &uri, &path)
        }))
        .unwrap_or_else(|_| Found {
            using: None,
            status: "looking for the profile failed (a bug: see the server's log)".into(),
        });
        let changed = {
            let mut state = lock(&workspace.profiles.state);
            let doc = state.documents.entry(path).or_default();
            let changed = match (&doc.using, &found.using) {
                (Some(a), Some(b)) => !Arc::ptr_eq(a, b),
                (None, None) => false,
                _ => true,
            };
            doc.using = found.using;
            doc.status = found.status;
            doc.searching = false;
            doc.checked = Some(Instant::now());
            changed
        };
        if changed {
            refresh_lenses(&workspace, outbox.as_ref());
        }
    });
}

fn refresh_lenses(workspace: &Workspace, outbox: Option<&Outbox>) {
    let refresh = workspace
        .client_supports_code_lens_refresh
        .load(Ordering::SeqCst);
    if let (Some(outbox), true) = (outbox, refresh) {
        outbox.post(Outgoing::RefreshCodeLenses);
    }
}

/// The chosen profile, then the run folders near the dump `path`.
fn candidates(workspace: &Workspace, path: &Path) -> Vec<Candidate> {
    let roots = workspace.roots();
    let chosen = lock(&workspace.profiles.state).chosen.clone();
    let mut out: Vec<Candidate> = chosen
        .map(|c| Candidate {
            path: resolve(&c.path, &roots),
            by: Some(c.by),
        })
        .into_iter()
        .collect();
    if let Some(dir) = path.parent() {
        let top = roots.iter().find(|r| path.starts_with(r));
        out.extend(
            profile::locate::runs_near(dir, top.map(PathBuf::as_path))
                .into_iter()
                .take(MAX_CANDIDATES)
                .map(|path| Candidate { path, by: None }),
        );
    }
    out
}

/// A path of the setting or the command: relative ones from the first workspace
/// folder.
fn resolve(path: &Path, roots: &[PathBuf]) -> PathBuf {
    match (path.is_relative(), roots.first()) {
        (true, Some(root)) => root.join(path),
        _ => path.to_path_buf(),
    }
}

/// The first candidate whose events name the instructions of document `uri`.
fn search(workspace: &Arc<Workspace>, outbox: Option<&Outbox>, uri: &Uri, path: &Path) -> Found {
    // The first reason of each kind: a chosen profile's is said at once.
    let mut unreadable: Option<String> = None;
    let mut unreadable_near: Option<String> = None;
    let mut other_programs: Option<String> = None;
    let candidates = candidates(workspace, path);
    if candidates.is_empty() {
        return Found {
            using: None,
            status: "no XProf profile (plugins/profile/<run>/) near the dump; \
                     load one with the command HLO: Load Profile or the setting profile"
                .into(),
        };
    }
    for candidate in candidates {
        if shutting_down(workspace) {
            break;
        }
        let generation = workspace.profiles.generation.load(Ordering::SeqCst);
        let cancel = candidate.by.is_some().then_some(generation);
        let read = match read(workspace, outbox, &candidate.path, cancel) {
            Ok(p) => p,
            Err(e) if candidate.by.is_some() => {
                show_once(
                    workspace,
                    outbox,
                    MessageType::ERROR,
                    format!("hlo-lsp: {e}"),
                );
                unreadable.get_or_insert(e);
                continue;
            }
            Err(e) => {
                unreadable_near.get_or_insert(e.clone());
                unreadable.get_or_insert(e);
                continue;
            }
        };
        let Some(snapshot) = workspace.snapshot(uri) else {
            return Found {
                using: None,
                status: "the document was closed".into(),
            };
        };
        let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
            break;
        };
        let joined = ide::profile::joined(hlo, &read);
        if joined.matches() {
            let status = format!("measured by {}", read.source.file.display());
            tracing::info!("{}: {status}", path.display());
            return Found {
                using: Some(read),
                status,
            };
        }
        let why = format!(
            "{}: {}",
            read.source.file.display(),
            joined.error().unwrap_or("measured another program")
        );
        // The setting's profile measuring another program is said once per file (it
        // may measure another open dump); a profile the command loaded was answered
        // for (it measured the dump the user had), and one found near the dump is only
        // another program's.
        let first_of_file = lock(&workspace.profiles.state)
            .shown
            .insert(format!("other program: {}", read.source.file.display()));
        if candidate.by == Some(By::Setting) && first_of_file {
            show_once(
                workspace,
                outbox,
                MessageType::WARNING,
                format!("hlo-lsp: {why}"),
            );
        } else {
            tracing::info!("profile for {}: {why}", path.display());
        }
        other_programs.get_or_insert(why);
    }
    // Nothing measured this document. A profile near it that cannot be read is said
    // once (the user put it there); one of other programs is only the status.
    if let (Some(e), None) = (&unreadable_near, &other_programs) {
        show_once(
            workspace,
            outbox,
            MessageType::WARNING,
            format!(
                "hlo-lsp: the profile near {} cannot be read: {e}",
                path.display()
            ),
        );
    }
    Found {
        using: None,
        status: other_programs
            .or(unreadable)
            .unwrap_or_else(|| "no profile".into()),
    }
}

fn shutting_down(workspace: &Workspace) -> bool {
    workspace.shutdown_requested.load(Ordering::SeqCst)
}

fn show_once(workspace: &Workspace, outbox: Option<&Outbox>, kind: MessageType, message: String) {
    tracing::warn!("{message}");
    let first = lock(&workspace.profiles.state)
        .shown
        .insert(message.clone());
    if let (true, Some(outbox)) = (first, outbox) {
        outbox.post(Outgoing::Show(kind, message));
    }
}

/// The profile `path` means, read once per version of its file, with `$/progress`;
/// a chosen one (`cancel`: its generation) stops when another is chosen, any at
/// shutdown.
fn read(
    workspace: &Workspace,
    outbox: Option<&Outbox>,
    path: &Path,
    cancel: Option<u64>,
) -> Result<Arc<Profile>, String> {
    let source = profile::locate::locate(path).map_err(|e| e.to_string())?;
    let stamp = stamp(&source.file);
    let slot = lock(&workspace.profiles.state)
        .files
        .entry(source.file.clone())
        .or_default()
        .clone();
    let mut cached = lock(&slot);
    if let Some(c) = cached.as_ref().filter(|c| c.stamp == stamp) {
        return c.read.clone();
    }
    let name = source
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let enabled = workspace.client_supports_progress.load(Ordering::SeqCst);
    let mut progress =
        outbox.and_then(|o| ProgressTask::begin(o, enabled, format!("Reading profile {name}")));
    let mut last = 0;
    let mut tell = |p: Progress| {
        let stop = shutting_down(workspace)
            || cancel.is_some_and(|g| g != workspace.profiles.generation.load(Ordering::SeqCst));
        let percent = (p.done * 100 / p.total.max(1)) as u32;
        if let (Some(task), true) = (&progress, percent >= last + 5) {
            last = percent;
            task.report(format!("{} of {} MB", p.done >> 20, p.total >> 20), percent);
        }
        !stop
    };
    let started = Instant::now();
    let read = profile::read_source(source, &mut tell);
    if let Some(task) = progress.as_mut() {
        task.set_end_message(match &read {
            Ok(p) => format!("{} module(s) measured", p.modules.len()),
            Err(e) => e.to_string(),
        });
    }
    drop(progress);
    match read {
        Err(ProfileError::Cancelled) => Err(ProfileError::Cancelled.to_string()),
        read => {
            let read = read.map(Arc::new).map_err(|e| e.to_string());
            if let Ok(p) = &read {
                tracing::info!(
                    "read profile {} in {:?}: {} module(s)",
                    p.source.file.display(),
                    started.elapsed(),
                    p.modules.len()
                );
            }
            *cached = Some(Cached {
                stamp,
                read: read.clone(),
            });
            read
        }
    }
}

/// Runs `hlo-lsp.loadProfile` (blocking: call it off the async runtime): reads the
/// profile `{ "path" }` names and shows it beside every open dump it measured, from now
/// on before any profile found near them. An error when it cannot be read, measured
/// none of the open dumps, or not the document `"uri"` (the one the user looks at)
/// when given: that document's reason. The answer says what it measured: `{ file,
/// format, run, note, measured_on, documents: [{ uri, modules: [{ module, executions,
/// step_us, instructions, never_ran, unmatched }] }] }`.
pub fn load(
    workspace: &Arc<Workspace>,
    outbox: Option<&Outbox>,
    arguments: &[Value],
) -> Result<Value, CommandError> {
    let invalid = |m: &str| CommandError::InvalidArguments(format!("{LOAD} {m}"));
    let (path, uri) = match arguments {
        [Value::String(path)] => (path.clone(), None),
        [object] => (
            object["path"]
                .as_str()
                .ok_or_else(|| invalid("needs { path } (a logdir, run folder or profile file)"))?
                .to_string(),
            object["uri"].as_str().map(str::to_string),
        ),
        _ => return Err(invalid("takes one object { path, uri? }")),
    };
    let uri: Option<Uri> = match uri {
        Some(u) => Some(u.parse().map_err(|_| invalid("needs a document URI"))?),
        None => None,
    };
    let path = resolve(Path::new(&path), &workspace.roots());
    let generation = workspace.profiles.generation.fetch_add(1, Ordering::SeqCst) + 1;
    let read = read(workspace, outbox, &path, Some(generation)).map_err(CommandError::Failed)?;
    if let Some(uri) = &uri {
        if workspace.snapshot(uri).is_none() {
            return Err(invalid("names a document that is not open"));
        }
    }
    // Every open HLO document it measured gets it; the error (when it measured none,
    // or not the document `uri`) is that document's reason, else the first one's.
    let mut documents = Vec::new();
    let mut measured: Vec<Arc<Snapshot>> = Vec::new();
    let mut first_error = None;
    let mut target_error = None;
    for snapshot in workspace.snapshots() {
        let ide::Snapshot::Hlo(hlo) = &snapshot.ide else {
            continue;
        };
        let joined = ide::profile::joined(hlo, &read);
        if let Some(e) = joined.error() {
            if uri.as_ref() == Some(&snapshot.uri) {
                target_error = Some(e.to_string());
            }
            first_error.get_or_insert_with(|| e.to_string());
            continue;
        }
        documents.push(json!({
            "uri": snapshot.uri.as_str(),
            "modules": joined.modules.iter().flatten().map(|m| json!({
                "module": m.module,
                "program_id": m.program_id,
                "executions": m.executions,
                "step_us": m.step_us,
                "instructions": m.instructions.len(),
                "never_ran": m.never_ran.len(),
                "unmatched": m.unmatched.len(),
            })).collect::<Vec<_>>(),
        }));
        measured.push(snapshot.clone());
    }
    let reason = match target_error {
        Some(e) => Some(e),
        None if documents.is_empty() => first_error,
        None => None,
    };
    if let Some(e) = reason {
        return Err(CommandError::Failed(format!(
            "{}: {e}",
            read.source.file.display()
        )));
    }
    if documents.is_empty() {
        return Err(CommandError::Failed(format!(
            "{}: no HLO document is open to show it beside",
            read.source.file.display()
        )));
    }
    for snapshot in &measured {
        if let Some(file) = snapshot.uri.to_file_path() {
            let mut state = lock(&workspace.profiles.state);
            let doc = state.documents.entry(file.into_owned()).or_default();
            doc.using = Some(read.clone());
            doc.status = format!("measured by {}", read.source.file.display());
            doc.checked = Some(Instant::now());
        }
    }
    lock(&workspace.profiles.state).chosen = Some(Chosen {
        path,
        by: By::Command,
    });
    refresh_lenses(workspace, outbox);
    Ok(json!({
        "file": read.source.file.display().to_string(),
        "format": read.source.format.as_str(),
        "run": read.source.run,
        "note": read.source.note,
        "measured_on": read.tier.map(|t| t.describe()),
        "documents": documents,
    }))
}
