//! XLA's dump file names, and the order XLA wrote the files in.
//!
//! `--xla_dump_to=DIR` writes `[PREFIX.]module_<id>.<module name>.<what>`, the id
//! zero-padded to four digits (more when larger), `PREFIX` a timestamp with
//! `--xla_dump_include_timestamp`. `<what>` is `before_optimizations.txt`,
//! `<step>.<pipeline>.after_<pass>.before_<pass>.txt` (with `--xla_dump_hlo_pass_re`:
//! a step counter per module; `<step>.<pass>.<what>` for a dump a pass makes of its
//! own, e.g. `copy-insertion.after_adding_copies_to_resolve_interference`),
//! `<platform>_after_optimizations.txt`, or other files
//! (buffer assignments, LLVM IR, ...). Sorted by name, `module_0010` would follow
//! `module_0009` only because of the padding, and the passes interleave with the
//! stages; [`order`] sorts by module id, then before-optimization, the passes by step,
//! after-optimization, then the rest.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::model::backend::Backend;

/// Where in the compilation a dump was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    BeforeOptimizations,
    /// Step `step` of the pass dumps: after pass `after`, before pass `before`.
    Pass {
        step: u64,
        pipeline: String,
        after: String,
        before: String,
    },
    /// Step `step`, written by pass `pass` while it runs (XLA's
    /// `DumpHloModuleDuringPassIfEnabled`): `what` says where in the pass it is.
    DuringPass {
        step: u64,
        pass: String,
        what: String,
    },
    /// `cpu_after_optimizations`, `gpu_after_optimizations`, `after_optimizations`.
    AfterOptimizations,
    /// Anything else XLA writes next to them (`...-buffer-assignment.txt`, `.ll`).
    Other(String),
}

impl Stage {
    fn rank(&self) -> u8 {
        match self {
            Stage::BeforeOptimizations => 0,
            Stage::Pass { .. } | Stage::DuringPass { .. } => 1,
            Stage::AfterOptimizations => 2,
            Stage::Other(_) => 3,
        }
    }

    /// `before optimizations`, `step 12: after fusion (before fusion-wrapper)`.
    pub fn describe(&self) -> String {
        match self {
            Stage::BeforeOptimizations => "before optimizations".into(),
            Stage::Pass {
                step,
                after,
                before,
                ..
            } => format!("step {step}: after {after} (before {before})"),
            Stage::DuringPass { step, pass, what } => format!("step {step}: {pass} ({what})"),
            Stage::AfterOptimizations => "after optimizations".into(),
            Stage::Other(what) => what.clone(),
        }
    }
}

/// A dump file name, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpName {
    pub module_id: u64,
    pub module_name: String,
    pub stage: Stage,
}

impl DumpName {
    /// Reads a file name (the last component of `path`); `None` when it is not an XLA
    /// module dump name.
    pub fn parse(path: &Path) -> Option<DumpName> {
        let name = path.file_name()?.to_str()?;
        let at = name.find("module_")?;
        // A prefix (timestamp) ends with a dot.
        if at > 0 && !name[..at].ends_with('.') {
            return None;
        }
        let rest = &name[at + "module_".len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let module_id = rest[..digits].parse().ok()?;
        let rest = rest[digits..].strip_prefix('.')?;
        let (module_name, stage) = stage(rest);
        Some(DumpName {
            module_id,
            module_name: module_name.to_string(),
            stage,
        })
    }

    /// The step of a pass dump (`None` before and after optimizations).
    pub fn step(&self) -> Option<u64> {
        match self.stage {
            Stage::Pass { step, .. } | Stage::DuringPass { step, .. } => Some(step),
            _ => None,
        }
    }

    /// Whether the file holds HLO text (not buffer assignments, IR or objects).
    pub fn is_hlo_text(&self, path: &Path) -> bool {
        let text = path.extension().is_some_and(|e| e == "txt");
        text && !matches!(self.stage, Stage::Other(_))
    }
}

/// Splits `<module name>.<what>` at the start of `<what>`.
fn stage(rest: &str) -> (&str, Stage) {
    let without_ext = rest.strip_suffix(".txt").unwrap_or(rest);
    // A pass dump: `.<4+ digits>.<pipeline>.after_<pass>.before_<pass>`.
    let parts: Vec<&str> = without_ext.split('.').collect();
    for i in 1..parts.len() {
        let step = parts[i];
        if step.len() >= 4 && step.bytes().all(|b| b.is_ascii_digit()) && i + 1 < parts.len() {
            let tail = parts[i + 1..].join(".");
            if let Some(pass) = pass_stage(step, &tail) {
                let name_end = parts[..i].iter().map(|p| p.len() + 1).sum::<usize>() - 1;
                return (&rest[..name_end], pass);
            }
        }
    }
    for (suffix, which) in [
        ("before_optimizations", Stage::BeforeOptimizations),
        ("after_optimizations", Stage::AfterOptimizations),
    ] {
        if let Some(head) = without_ext.strip_suffix(suffix) {
            // `jit_f.` or `jit_f.cpu_` before the stage.
            let head = head.strip_suffix('.').unwrap_or(head);
            let name = match head.rfind('.') {
                Some(dot) if which == Stage::AfterOptimizations && head.ends_with('_') => {
                    &head[..dot]
                }
                _ => head,
            };
            return (name, which);
        }
    }
    match rest.find('.') {
        Some(dot) => (&rest[..dot], Stage::Other(rest[dot + 1..].to_string())),
        None => (rest, Stage::Other(String::new())),
    }
}

/// `<pipeline>.after_<pass>.before_<pass>` after the step number, else
/// `<pass>.<what>` (a dump made during a pass).
fn pass_stage(step: &str, tail: &str) -> Option<Stage> {
    between_passes(step, tail).or_else(|| {
        let (pass, what) = tail.split_once('.')?;
        let step = step.parse().ok()?;
        (!pass.is_empty() && !what.is_empty()).then(|| Stage::DuringPass {
            step,
            pass: pass.to_string(),
            what: what.to_string(),
        })
    })
}

/// `<pipeline>.after_<pass>.before_<pass>` after the step number.
fn between_passes(step: &str, tail: &str) -> Option<Stage> {
    let after_at = tail.find(".after_")?;
    let pipeline = &tail[..after_at];
    let passes = &tail[after_at + ".after_".len()..];
    let (after, before) = passes.split_once(".before_")?;
    Some(Stage::Pass {
        step: step.parse().ok()?,
        pipeline: pipeline.to_string(),
        after: after.to_string(),
        before: before.to_string(),
    })
}

/// XLA's order of two dumps: module id, then stage, then pass step; names not read
/// as dumps come after, by name.
pub fn compare(a: &Path, b: &Path) -> Ordering {
    match (DumpName::parse(a), DumpName::parse(b)) {
        (Some(x), Some(y)) => x
            .module_id
            .cmp(&y.module_id)
            .then(x.stage.rank().cmp(&y.stage.rank()))
            .then_with(|| x.step().cmp(&y.step()))
            .then_with(|| a.cmp(b)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Sorts dump paths in XLA's order (see [`compare`]).
pub fn order<P: AsRef<Path>>(paths: &mut [P]) {
    paths.sort_by(|a, b| compare(a.as_ref(), b.as_ref()));
}

/// The backend XLA compiled the dump at `path` for, when neither its name nor its
/// text says (a pass-by-pass or before-optimizations dump of a CPU run carries no
/// CPU mark): the platform of its module's after-optimizations dump in the same
/// folder ([`Backend::from_siblings`]). A folder is listed once per file: the server
/// asks for every version of a document.
pub fn backend_beside(path: &Path) -> Option<Backend> {
    static SEEN: OnceLock<Mutex<rustc_hash::FxHashMap<PathBuf, Option<Backend>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some(known) = seen.lock().ok().and_then(|s| s.get(path).copied()) {
        return known;
    }
    let found = path.file_name().and_then(|n| n.to_str()).and_then(|name| {
        let entries = std::fs::read_dir(path.parent()?).ok()?;
        let names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        Backend::from_siblings(name, names.iter().map(String::as_str))
    });
    if let Ok(mut seen) = seen.lock() {
        seen.insert(path.to_path_buf(), found);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn parse(name: &str) -> DumpName {
        DumpName::parse(Path::new(name)).unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn reads_the_names_xla_writes() {
        let d = parse("module_0004.jit_step.0001.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt");
        assert_eq!(d.module_id, 4);
        assert_eq!(d.module_name, "jit_step");
        assert_eq!(
            d.stage,
            Stage::Pass {
                step: 1,
                pipeline: "HLO_passes_after_layout_assignment".into(),
                after: "fusion".into(),
                before: "fusion-wrapper".into()
            }
        );
        assert_eq!(
            d.stage.describe(),
            "step 1: after fusion (before fusion-wrapper)"
        );
        let d = parse(
            "module_0030.jit_f.0022.copy-insertion.after_adding_copies_to_resolve_interference.txt",
        );
        assert_eq!(
            (d.module_name.as_str(), d.step(), &d.stage),
            (
                "jit_f",
                Some(22),
                &Stage::DuringPass {
                    step: 22,
                    pass: "copy-insertion".into(),
                    what: "after_adding_copies_to_resolve_interference".into()
                }
            )
        );
        assert!(d.is_hlo_text(Path::new("x.txt")));
        let d = parse("module_0004.jit_step.cpu_after_optimizations.txt");
        assert_eq!(
            (d.module_name.as_str(), d.stage),
            ("jit_step", Stage::AfterOptimizations)
        );
        let d = parse("1700000000123.module_12345.jit_f.1.before_optimizations.txt");
        assert_eq!(d.module_id, 12345);
        assert_eq!(
            (d.module_name.as_str(), d.stage),
            ("jit_f.1", Stage::BeforeOptimizations)
        );
        let d = parse("module_0004.jit_step.cpu_after_optimizations-buffer-assignment.txt");
        assert!(matches!(d.stage, Stage::Other(_)));
        assert!(!d.is_hlo_text(Path::new(
            "module_0004.jit_step.cpu_after_optimizations-buffer-assignment.txt"
        )));
        assert!(DumpName::parse(Path::new("my_module_1.hlo")).is_none());
        assert!(DumpName::parse(Path::new("notes.txt")).is_none());
    }

    #[test]
    fn orders_by_module_then_stage_then_step() {
        let mut paths: Vec<PathBuf> = [
            "module_0010.jit_g.before_optimizations.txt",
            "module_0004.jit_f.gpu_after_optimizations.txt",
            "module_0004.jit_f.0010.p.after_b.before_c.txt",
            "module_0004.jit_f.0003.copy-insertion.after_adding_copies.txt",
            "module_0004.jit_f.0002.p.after_a.before_b.txt",
            "zz.hlo",
            "module_0004.jit_f.before_optimizations.txt",
            "module_0004.jit_f.gpu_after_optimizations-memory-usage-report.txt",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        order(&mut paths);
        let names: Vec<_> = paths.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "module_0004.jit_f.before_optimizations.txt",
                "module_0004.jit_f.0002.p.after_a.before_b.txt",
                "module_0004.jit_f.0003.copy-insertion.after_adding_copies.txt",
                "module_0004.jit_f.0010.p.after_b.before_c.txt",
                "module_0004.jit_f.gpu_after_optimizations.txt",
                "module_0004.jit_f.gpu_after_optimizations-memory-usage-report.txt",
                "module_0010.jit_g.before_optimizations.txt",
                "zz.hlo",
            ]
        );
    }
}
