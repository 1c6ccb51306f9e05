//! Which file a profile path means.
//!
//! `jax.profiler.trace(DIR)` and TensorFlow's profiler write an XProf logdir:
//! `DIR/plugins/profile/<run>/<host>.xplane.pb` (and `<host>.trace.json.gz`), one
//! `<run>` folder per capture, named by its time (`2026_11_28_07_58_36`). A path may
//! be the logdir (or any folder above a `plugins/profile/<run>/`: the newest run is
//! read, and [`Source::note`] says which and how many there were), a run folder, or
//! one file. In a run, the `.xplane.pb` is read before the trace: it holds every
//! event in picoseconds, where the trace viewer's JSON is capped at five million
//! events (TSL's `GetTraceViewerMaxEvents`).

use std::path::{Path, PathBuf};

use super::ProfileError;

/// The two formats of a profile file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `*.xplane.pb`: an `XSpace` protobuf.
    XPlane,
    /// `*.trace.json.gz` or `*.trace.json`: a Chrome trace.
    TraceJson { gzip: bool },
}

impl Format {
    /// `xplane`, `trace.json.gz`, `trace.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::XPlane => "xplane",
            Format::TraceJson { gzip: true } => "trace.json.gz",
            Format::TraceJson { gzip: false } => "trace.json",
        }
    }
}

/// The file a profile path meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub file: PathBuf,
    pub format: Format,
    /// The run folder's name, when the file is in `plugins/profile/<run>/`.
    pub run: Option<String>,
    /// What was chosen among others: "the newest of 3 runs", "host vm, 1 of 2".
    pub note: Option<String>,
}

/// How deep a folder is searched for `plugins/profile/<run>/` folders.
const MAX_DEPTH: usize = 8;
/// How many folders the search looks into at most (a workspace may be large).
const MAX_FOLDERS: usize = 20_000;

/// The profile file `path` means (see the module's doc).
pub fn locate(path: &Path) -> Result<Source, ProfileError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| ProfileError::Io(format!("cannot read {}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Ok(Source {
            file: path.to_path_buf(),
            format: format_of(path)?,
            run: run_name(path),
            note: None,
        });
    }
    if let Some(source) = in_run(path, None)? {
        return Ok(source);
    }
    let runs = runs_under(path);
    let count = runs.len();
    for run in &runs {
        let note = (count > 1).then(|| format!("the newest of {count} runs"));
        if let Some(source) = in_run(run, note)? {
            return Ok(source);
        }
    }
    Err(ProfileError::NoProfile(format!(
        "{}: no profile in it (an XProf logdir has plugins/profile/<run>/<host>.xplane.pb \
         or <host>.trace.json.gz{})",
        path.display(),
        if count > 0 {
            format!("; its {count} run folder(s) hold neither")
        } else {
            String::new()
        }
    )))
}

/// The format a file's name says, else its first bytes.
fn format_of(path: &Path) -> Result<Format, ProfileError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if name.ends_with(".pb") {
        return Ok(Format::XPlane);
    }
    if name.ends_with(".json.gz") {
        return Ok(Format::TraceJson { gzip: true });
    }
    if name.ends_with(".json") {
        return Ok(Format::TraceJson { gzip: false });
    }
    let mut head = [0u8; 2];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| ProfileError::Io(format!("cannot read {}: {e}", path.display())))?;
    Ok(match &head[..n] {
        [0x1f, 0x8b] => Format::TraceJson { gzip: true },
        [b'{' | b'[', ..] => Format::TraceJson { gzip: false },
        _ => Format::XPlane,
    })
}

/// `<run>` when `file` is in `.../plugins/profile/<run>/`.
fn run_name(file: &Path) -> Option<String> {
    let run = file.parent()?;
    is_run_folder(run).then(|| run.file_name()?.to_str().map(str::to_string))?
}

fn is_run_folder(dir: &Path) -> bool {
    let parent = dir.parent();
    let grand = parent.and_then(Path::parent);
    parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == "profile")
        && grand
            .and_then(Path::file_name)
            .is_some_and(|n| n == "plugins")
}

/// The profile file of a run folder: the first host's `.xplane.pb`, else its trace.
fn in_run(dir: &Path, note: Option<String>) -> Result<Option<Source>, ProfileError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ProfileError::Io(format!("cannot read {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for (suffix, format) in [
        (".xplane.pb", Format::XPlane),
        (".trace.json.gz", Format::TraceJson { gzip: true }),
        (".trace.json", Format::TraceJson { gzip: false }),
    ] {
        let hosts: Vec<&PathBuf> = files
            .iter()
            .filter(|p| p.to_str().is_some_and(|s| s.ends_with(suffix)))
            .collect();
        let Some(first) = hosts.first() else { continue };
        let mut notes: Vec<String> = note.clone().into_iter().collect();
        if hosts.len() > 1 {
            let host = first
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(suffix))
                .unwrap_or_default();
            notes.push(format!(
                "host {host}, the first of {} (name another host's file to read it)",
                hosts.len()
            ));
        }
        return Ok(Some(Source {
            file: (*first).clone(),
            format,
            run: is_run_folder(dir)
                .then(|| dir.file_name().and_then(|n| n.to_str()).map(str::to_string))
                .flatten(),
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }));
    }
    Ok(None)
}

/// The `plugins/profile/<run>/` folders near a dump in folder `dump_dir`, where an
/// editor looks for the profile of a dump without being told: under `dump_dir`
/// first, then under each folder above it up to `top` (the workspace folder that
/// holds the dump), the nearest first and, at one distance, the newest first. A
/// logdir inside the dump folder (`jax.profiler.trace(dump_dir / "profile")`) and
/// one beside it in the workspace (`exp/dump/`, `exp/profile/`) are both found; a
/// run is listed once. Without a `top` that holds the dump, only `dump_dir` is
/// searched: its parent may be `/tmp` or a home folder.
pub fn runs_near(dump_dir: &Path, top: Option<&Path>) -> Vec<PathBuf> {
    let top = top
        .filter(|t| dump_dir.starts_with(t))
        .map_or_else(|| dump_dir.to_path_buf(), Path::to_path_buf);
    let mut found: Vec<PathBuf> = Vec::new();
    let mut level = Some(dump_dir);
    while let Some(dir) = level {
        for run in runs_under(dir) {
            if !found.contains(&run) {
                found.push(run);
            }
        }
        if dir == top {
            break;
        }
        level = dir.parent();
    }
    found
}

/// Every `plugins/profile/<run>/` folder under `root`, the newest first: by name when
/// every run is named by its time (XProf's `YYYY_MM_DD_HH_MM_SS`), else by the time
/// the folder was written.
fn runs_under(root: &Path) -> Vec<PathBuf> {
    let mut runs = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        seen += 1;
        if seen > MAX_FOLDERS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if is_run_folder(&path) {
                runs.push(path);
            } else if depth < MAX_DEPTH
                && !entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with('.'))
            {
                stack.push((path, depth + 1));
            }
        }
    }
    let timed = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
    };
    if runs.iter().all(timed) {
        runs.sort_by(|a, b| b.file_name().cmp(&a.file_name()).then(a.cmp(b)));
    } else {
        let written = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        runs.sort_by(|a, b| written(b).cmp(&written(a)).then(a.cmp(b)));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hlo-lsp-locate-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_logdir_means_its_newest_run_and_the_xplane_first() {
        let dir = temp("logdir");
        for run in ["2026_01_01_00_00_00", "2026_02_01_00_00_00"] {
            let folder = dir.join("plugins/profile").join(run);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("vm.trace.json.gz"), b"").unwrap();
            std::fs::write(folder.join("vm.xplane.pb"), b"").unwrap();
        }
        let source = locate(&dir).unwrap();
        assert_eq!(source.format, Format::XPlane);
        assert_eq!(source.run.as_deref(), Some("2026_02_01_00_00_00"));
        assert_eq!(source.note.as_deref(), Some("the newest of 2 runs"));
        let file = dir.join("plugins/profile/2026_01_01_00_00_00/vm.trace.json.gz");
        let source = locate(&file).unwrap();
        assert_eq!(source.format, Format::TraceJson { gzip: true });
        assert_eq!(source.run.as_deref(), Some("2026_01_01_00_00_00"));
    }

    #[test]
    fn runs_near_a_dump_are_found_inside_then_beside_it_nearest_first() {
        let dir = temp("near");
        let dump = dir.join("exp/dump");
        std::fs::create_dir_all(&dump).unwrap();
        let run = |logdir: &Path, name: &str| {
            let folder = logdir.join("plugins/profile").join(name);
            std::fs::create_dir_all(&folder).unwrap();
            folder
        };
        let beside = run(&dir.join("exp/profile"), "2026_03_01_00_00_00");
        let inside_old = run(&dump.join("trace"), "2026_01_01_00_00_00");
        let inside_new = run(&dump.join("trace"), "2026_02_01_00_00_00");
        let outside = run(&dir.join("elsewhere"), "2026_04_01_00_00_00");
        assert_eq!(
            runs_near(&dump, Some(&dir.join("exp"))),
            vec![inside_new.clone(), inside_old.clone(), beside.clone()]
        );
        assert!(runs_near(&dump, Some(&dir)).contains(&outside));
        // Without a workspace folder that holds the dump, only the dump's folder.
        assert_eq!(
            runs_near(&dump, None),
            vec![inside_new.clone(), inside_old.clone()]
        );
        assert_eq!(
            runs_near(&dump, Some(Path::new("/nowhere"))),
            vec![inside_new, inside_old]
        );
    }

    #[test]
    fn an_empty_logdir_is_one_clear_error() {
        let dir = temp("empty");
        std::fs::create_dir_all(dir.join("plugins/profile/2026_01_01_00_00_00")).unwrap();
        let e = locate(&dir).unwrap_err().to_string();
        assert!(e.contains("no profile in it"), "{e}");
        assert!(e.contains("1 run folder(s) hold neither"), "{e}");
    }
}
