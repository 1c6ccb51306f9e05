//! Which pass made an instruction: the history of every instruction across a dump
//! directory written with `--xla_dump_hlo_pass_re=.*`, where XLA writes the module
//! after every pass that changed it (and at the start of every pipeline), one file
//! per step ([`super::naming`]).
//!
//! Per module: the snapshots in XLA's order, and per instruction (keyed by
//! computation and name; [`walk`] tells apart a name XLA gave again) the snapshot
//! that introduced it (or `before_optimizations`), each later snapshot whose pass
//! changed its line (metadata ignored), and the one whose pass removed it, with the
//! fusion it went into or the instruction that took its place.
//!
//! [`passes`] finds, for one instruction, the snapshots around each pass of its story
//! and its line in each.
//!
//! Built for 300 snapshots of a 2 MB module in well under three seconds: each file
//! is read once by a byte scan ([`scan`]), files are read in parallel batches (the
//! memory held is a batch's text), and a step compares only the computations whose
//! hash changed.

pub mod passes;
pub mod scan;
pub mod story;
mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::naming::{self, DumpName, Stage};
use scan::{hash, scan};

/// One file of a module's dumps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub file: PathBuf,
    pub stage: Stage,
}

impl Snapshot {
    pub fn step(&self) -> Option<u64> {
        match self.stage {
            Stage::Pass { step, .. } | Stage::DuringPass { step, .. } => Some(step),
            _ => None,
        }
    }

    /// The pass as XLA writes it in the file name (`layout-assignment` from
    /// `after_layout-assignment`), or `before_optimizations` / `after_optimizations`.
    pub fn pass(&self) -> &str {
        match &self.stage {
            Stage::BeforeOptimizations => "before_optimizations",
            Stage::AfterOptimizations => "after_optimizations",
            Stage::Pass { after, .. } => after,
            Stage::DuringPass { pass, .. } => pass,
            Stage::Other(what) => what,
        }
    }

    /// The file's name.
    pub fn file_name(&self) -> String {
        self.file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// `layout-assignment (step 47)`, `the start of pipeline simplification (step 6)`,
    /// `before optimizations`.
    pub fn label(&self) -> String {
        match &self.stage {
            Stage::Pass {
                step,
                pipeline,
                after,
                ..
            } if after == "pipeline-start" => {
                format!("the start of pipeline {pipeline} (step {step})")
            }
            Stage::Pass { step, after, .. } => format!("{after} (step {step})"),
            Stage::DuringPass { step, pass, what } => format!("{pass} (step {step}, {what})"),
            other => other.describe(),
        }
    }
}

/// Where an instruction went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The first snapshot without it.
    pub snapshot: usize,
    /// The fusion its pass made or changed that took its place.
    pub fused_into: Option<String>,
    /// Else the instruction its users read instead (or the new root).
    pub replaced_by: Option<String>,
}

impl Removal {
    fn at(snapshot: usize) -> Removal {
        Removal {
            snapshot,
            fused_into: None,
            replaced_by: None,
        }
    }
}

/// One instruction's life, in snapshot indices of its module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionHistory {
    pub computation: Arc<str>,
    pub name: String,
    pub opcode: String,
    /// The first snapshot with it (0 is usually before optimizations).
    pub introduced: usize,
    /// The snapshots whose pass changed its line, in order.
    pub changed: Vec<usize>,
    pub removed: Option<Removal>,
    opcode_hash: u64,
    line_hash: u64,
}

/// The history of one module of a directory.
#[derive(Debug, Clone, Default)]
pub struct ModuleHistory {
    pub module_id: u64,
    /// As the file names write it (`jit_step`).
    pub module: String,
    pub snapshots: Vec<Snapshot>,
    /// In the order they appeared (snapshot, then text order).
    pub instructions: Vec<InstructionHistory>,
    /// Files that could not be read (their snapshots compare as absent).
    pub unreadable: Vec<String>,
    /// (computation, name) hashes → instructions of that key, oldest first.
    by_key: FxHashMap<(u64, u64), Vec<u32>>,
    /// Modification times of the files when they were read.
    stamps: Vec<Option<SystemTime>>,
}

/// The files of one module, in XLA's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleFiles {
    pub module_id: u64,
    pub module: String,
    pub snapshots: Vec<Snapshot>,
}

/// The HLO text dumps of `dir` (not its subfolders), by module.
pub fn modules(dir: &Path) -> std::io::Result<Vec<ModuleFiles>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    naming::order(&mut paths);
    let mut by_id: BTreeMap<u64, ModuleFiles> = BTreeMap::new();
    for path in paths {
        let Some(name) = DumpName::parse(&path).filter(|d| d.is_hlo_text(&path)) else {
            continue;
        };
        let files = by_id.entry(name.module_id).or_insert_with(|| ModuleFiles {
            module_id: name.module_id,
            module: name.module_name.clone(),
            snapshots: Vec::new(),
        });
        files.snapshots.push(Snapshot {
            file: path,
            stage: name.stage,
        });
    }
    Ok(by_id.into_values().collect())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl ModuleHistory {
    /// Reads the module's files (in parallel batches) and follows its instructions;
    /// `progress(done, total)` is called after each batch.
    pub fn build(files: &ModuleFiles, progress: &(dyn Fn(usize, usize) + Sync)) -> ModuleHistory {
        let total = files.snapshots.len();
        let batch = rayon::current_num_threads().max(1) * 4;
        let mut walk = walk::Walk::default();
        let mut history = ModuleHistory {
            module_id: files.module_id,
            module: files.module.clone(),
            snapshots: files.snapshots.clone(),
            ..ModuleHistory::default()
        };
        let mut before = None;
        for (b, chunk) in files.snapshots.chunks(batch).enumerate() {
            let read: Vec<_> = chunk
                .par_iter()
                .map(|s| {
                    let stamp = modified(&s.file);
                    let text = super::read_text(&s.file).map_err(|e| e.to_string());
                    (stamp, text.map(|t| (scan(&t), t)))
                })
                .collect();
            for (j, (stamp, scanned)) in read.into_iter().enumerate() {
                history.stamps.push(stamp);
                match scanned {
                    Ok((now, text)) => {
                        walk.step(b * batch + j, before.as_ref(), &now, &text);
                        before = Some(now);
                    }
                    Err(e) => history.unreadable.push(e),
                }
            }
            progress((b * batch + chunk.len()).min(total), total);
        }
        history.instructions = walk.tracks;
        for (t, i) in history.instructions.iter().enumerate() {
            let key = (hash(i.computation.as_bytes()), hash(i.name.as_bytes()));
            history.by_key.entry(key).or_default().push(t as u32);
        }
        history
    }

    /// The snapshot of `file`, if it is one of this module's.
    pub fn snapshot_of(&self, file: &Path) -> Option<usize> {
        self.snapshots.iter().position(|s| s.file == file)
    }

    /// The instruction `name` of `computation` as it is in snapshot `snapshot`.
    pub fn at(
        &self,
        snapshot: usize,
        computation: &str,
        name: &str,
    ) -> Option<&InstructionHistory> {
        let key = (hash(computation.as_bytes()), hash(name.as_bytes()));
        self.by_key
            .get(&key)?
            .iter()
            .map(|&t| &self.instructions[t as usize])
            .find(|i| {
                i.introduced <= snapshot && i.removed.as_ref().is_none_or(|r| r.snapshot > snapshot)
            })
    }

    /// Whether a file was changed, added or removed since the history was built.
    pub fn is_stale(&self, files: &ModuleFiles) -> bool {
        files.snapshots != self.snapshots
            || self
                .snapshots
                .iter()
                .zip(&self.stamps)
                .any(|(s, stamp)| modified(&s.file) != *stamp)
    }

    /// The instructions alive in the last snapshot.
    pub fn last_alive(&self) -> usize {
        self.instructions
            .iter()
            .filter(|i| i.removed.is_none())
            .count()
    }
}

/// Every module of a directory.
#[derive(Debug, Clone, Default)]
pub struct DirectoryHistory {
    pub modules: Vec<ModuleHistory>,
}

impl DirectoryHistory {
    /// Builds the history of every module of `dir`.
    pub fn build(dir: &Path) -> std::io::Result<DirectoryHistory> {
        let modules = modules(dir)?
            .iter()
            .map(|files| ModuleHistory::build(files, &|_, _| {}))
            .collect();
        Ok(DirectoryHistory { modules })
    }

    /// The module named `query` (`jit_step`), or of id `query` (`4`, `0004`,
    /// `module_0004`).
    pub fn module(&self, query: &str) -> Option<&ModuleHistory> {
        let id = query.strip_prefix("module_").unwrap_or(query);
        self.modules.iter().find(|m| m.module == query).or_else(|| {
            let id: u64 = id.parse().ok()?;
            self.modules.iter().find(|m| m.module_id == id)
        })
    }

    /// The module with the most instructions at the end (a JAX dump holds small
    /// helper modules beside the program's).
    pub fn main_module(&self) -> Option<&ModuleHistory> {
        self.modules
            .iter()
            .max_by_key(|m| (m.last_alive(), m.snapshots.len()))
    }
}
