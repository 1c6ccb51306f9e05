//! Back to the source: the hover line saying where an instruction comes from
//! (`metadata={source_file=... source_line=...}`, or the Python stack of its
//! `stack_frame_id` through the module's stack-frame tables), and document links from
//! `source_file` values, `stack_frame_id`s and the `FileNames` / `FileLocations`
//! tables to the files, when they exist in the workspace.
//!
//! The same for MLIR: the `Source:` line of an op from its `loc(...)` and links
//! from the files its locations name ([`mlir_hover_line`], [`mlir_document_links`]).
//!
//! Reading metadata and tables is [`crate::model::metadata`] and
//! [`crate::model::stack_frames`]; finding files is [`crate::dump::source_path`].

use std::path::{Path, PathBuf};

use super::snapshot::{HloSnapshot, MlirSnapshot};
use crate::dump::source_path::SourceFinder;
use crate::mlir::MlirFile;
use crate::model::metadata::{self, OpMetadata};
use crate::model::stack_frames::{format_stack, Frame, StackFrameIndex};
use crate::model::{ComputationRef, Instruction, ModuleId};
use crate::syntax::ChunkKind;

/// Frames a hover shows before "… N more".
const HOVER_FRAMES: usize = 3;

/// Most links one document gets (a large JAX dump has a frame on every instruction).
pub const MAX_LINKS: usize = 5000;

/// The stack-frame tables of module `module` of the snapshot (the table chunks inside
/// the module's text).
pub fn tables(snapshot: &HloSnapshot, module: ModuleId) -> StackFrameIndex {
    let Some(m) = snapshot.model().modules.get(module.index()) else {
        return StackFrameIndex::default();
    };
    StackFrameIndex::from_tables(
        snapshot
            .syntax()
            .chunks()
            .iter()
            .filter(|c| c.kind() == ChunkKind::Table && m.range.contains(&c.start))
            .map(|c| (c.start, c.text())),
    )
}

/// `Source: model.py:42 in attention ← train.py:10 in step` for an instruction with
/// source metadata; `None` without.
pub fn hover_line(
    snapshot: &HloSnapshot,
    module: ModuleId,
    computation: ComputationRef,
    instruction: &Instruction,
) -> Option<String> {
    let attribute = instruction.attribute("metadata")?;
    let metadata = OpMetadata::parse(computation.src(attribute.value_range));
    // Left out until the tables are read ([`HloSnapshot::ready_stack_frames`]).
    let stack = match metadata.stack_frame_id {
        Some(_) if snapshot.stack_frames_pending() => {
            return Some("Source: reading the module's stack frames…".to_string());
        }
        Some(id) => snapshot.ready_stack_frames(module)?.stack(id),
        None => Vec::new(),
    };
    let text = if !stack.is_empty() {
        format_stack(&stack, HOVER_FRAMES)
    } else {
        let file = metadata.source_file.clone()?;
        Frame {
            file: Some(file),
            line: metadata.source_line,
            ..Frame::default()
        }
        .short()
    };
    Some(format!("Source: {text}"))
}

/// A link from bytes of the document to a file found on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct DocumentLink {
    pub range: std::ops::Range<usize>,
    pub path: PathBuf,
    /// The line to open it at (1-based).
    pub line: Option<u32>,
    /// The file as the document names it, with the line: `model.py:42`.
    pub tooltip: String,
}

/// A link to `file` at `line` from `range`, when the file is found.
fn found_link(
    finder: &mut SourceFinder,
    range: std::ops::Range<usize>,
    file: &str,
    line: Option<u32>,
) -> Option<DocumentLink> {
    let path = finder.find(file)?;
    Some(DocumentLink {
        range,
        path,
        line,
        tooltip: match line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_string(),
        },
    })
}

/// The links of the document: `source_file="..."` and `stack_frame_id=N` in metadata,
/// the entries of `FileNames` and `FileLocations`; only to files found on disk, under
/// `roots` or beside the document (in `folder`). In text order.
pub fn document_links(
    snapshot: &HloSnapshot,
    roots: &[PathBuf],
    folder: Option<&Path>,
) -> Vec<DocumentLink> {
    let mut finder = SourceFinder::new(roots, folder);
    let mut links = Vec::new();
    // Adds a link when the file is found; true once the document has all it may get.
    let link = |links: &mut Vec<DocumentLink>,
                finder: &mut SourceFinder,
                range: std::ops::Range<usize>,
                file: &str,
                line: Option<u32>|
     -> bool {
        if links.len() >= MAX_LINKS {
            return true;
        }
        links.extend(found_link(finder, range, file, line));
        false
    };
    'modules: for (k, module) in snapshot.model().modules.iter().enumerate() {
        let index = snapshot.stack_frames(ModuleId(k as u32));
        let before_tables = links.len();
        for entry in index.file_names.values() {
            if link(
                &mut links,
                &mut finder,
                entry.range.clone(),
                &entry.value,
                None,
            ) {
                break 'modules;
            }
        }
        for (&id, entry) in &index.file_locations {
            if let Some(Frame {
                file: Some(file),
                line,
                ..
            }) = index.location(id)
            {
                if link(&mut links, &mut finder, entry.range.clone(), &file, line) {
                    break 'modules;
                }
            }
        }
        let chunks: Vec<_> = snapshot
            .syntax()
            .chunks()
            .iter()
            .filter(|c| c.kind() == ChunkKind::Computation && module.range.contains(&c.start))
            .collect();
        // A table file on disk has linked above (every found `FileNames` entry does).
        let tables_link = links.len() > before_tables;
        if !tables_link && !source_files_found(&chunks, &mut finder) {
            continue;
        }
        for chunk in chunks {
            for (block, metadata) in metadata::scan(chunk.text()) {
                let at = chunk.start + block.start;
                if let (Some(file), Some(range)) =
                    (&metadata.source_file, &metadata.source_file_range)
                {
                    let range = at + range.start..at + range.end;
                    if link(&mut links, &mut finder, range, file, metadata.source_line) {
                        break 'modules;
                    }
                }
                let leaf = metadata.stack_frame_id.and_then(|id| index.innermost(id));
                if let (
                    Some(Frame {
                        file: Some(file),
                        line,
                        ..
                    }),
                    Some(range),
                ) = (leaf, &metadata.stack_frame_range)
                {
                    let range = at + range.start..at + range.end;
                    if link(&mut links, &mut finder, range, &file, line) {
                        break 'modules;
                    }
                }
            }
        }
    }
    links.sort_by_key(|l| l.range.start);
    links
}

/// Whether a file some `source_file=` of `chunks` names is on disk (escaped names
/// are left to the metadata parse: true). With no stack-frame table file found
/// either, no instruction's metadata can link: a dump read away from its sources
/// names a handful of files and finds none, and its instructions' metadata is then
/// not parsed (a 616 MB dump: 2.5 s for no link).
fn source_files_found(chunks: &[crate::syntax::Placed], finder: &mut SourceFinder) -> bool {
    const KEY: &str = "source_file=";
    let key = memchr::memmem::Finder::new(KEY);
    let mut asked = rustc_hash::FxHashSet::default();
    for chunk in chunks {
        let text = chunk.text();
        for at in key.find_iter(text.as_bytes()) {
            // As the metadata parse reads it: a string, or a bare token.
            let rest = &text[at + KEY.len()..];
            let written = match rest.strip_prefix('"') {
                Some(quoted) => &quoted[..quoted.find(['"', '\n']).unwrap_or(quoted.len())],
                None => {
                    &rest[..rest
                        .find(|c: char| c.is_ascii_whitespace() || c == '}' || c == ',')
                        .unwrap_or(rest.len())]
                }
            };
            if written.contains('\\') || asked.insert(written) && finder.find(written).is_some() {
                return true;
            }
        }
    }
    false
}

/// `Source: model.py:8 in softmax ← model.py:12 in <module>` for the MLIR op whose
/// header is `op` (from its `loc(...)`: aliases, call sites and names followed, as
/// [`crate::mlir::location`] reads them); `None` when it names no file.
pub fn mlir_hover_line(src: &str, file: &MlirFile, op: &std::ops::Range<usize>) -> Option<String> {
    let op = file.ops.iter().find(|o| o.range == *op)?;
    let text = crate::mlir::stablehlo::view::view(src, file, op).location?;
    let frames = crate::mlir::location::frames(src, file, &text);
    (!frames.is_empty()).then(|| format!("Source: {}", format_stack(&frames, HOVER_FRAMES)))
}

/// The links of an MLIR document: every `"file":line:col` of its locations whose
/// file is found (under `roots` or beside the document, in `folder`), in text order.
pub fn mlir_document_links(
    snapshot: &MlirSnapshot,
    roots: &[PathBuf],
    folder: Option<&Path>,
) -> Vec<DocumentLink> {
    let analysis = snapshot.mlir();
    let mut finder = SourceFinder::new(roots, folder);
    crate::mlir::location::file_lines(snapshot.text(), &analysis.file)
        .into_iter()
        .filter_map(|f| found_link(&mut finder, f.range, &f.file, f.line))
        .take(MAX_LINKS)
        .collect()
}
