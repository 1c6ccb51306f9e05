//! The workspace's HLO files, found and indexed without opening them: which files
//! qualify (`*.hlo`, `*.hlo.txt`, XLA's `module_*.txt` HLO dumps), within a size cap,
//! and the computations and fusions each defines, so that a workspace symbol search
//! finds them before an editor opens the file.
//!
//! Indexing a file splits it into chunks (a byte scan, no parse) and reads the
//! computation names from the chunks' outlines and the fusions from their instruction
//! lines: about the cost of reading the file.

use std::path::{Path, PathBuf};

use super::naming::DumpName;
use crate::syntax::{ChunkKind, SyntaxDocument};

/// How much of a workspace is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Larger files are skipped (and reported).
    pub max_file_bytes: u64,
    /// At most this many files are indexed.
    pub max_files: usize,
    /// Folders deeper than this below a root are not visited.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 64 << 20,
            max_files: 5000,
            max_depth: 16,
        }
    }
}

/// Whether a file name is one the index reads.
pub fn is_hlo_path(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if name.ends_with(".hlo") || name.ends_with(".hlo.txt") {
        return true;
    }
    DumpName::parse(path).is_some_and(|d| d.is_hlo_text(path))
}

/// What [`discover`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Files to index with their sizes, in XLA's dump order within each folder.
    pub files: Vec<(PathBuf, u64)>,
    /// Files over [`Limits::max_file_bytes`].
    pub too_large: Vec<PathBuf>,
    /// More files than [`Limits::max_files`] were found.
    pub truncated: bool,
}

/// Folders never visited (version control, build output, dependencies).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", "__pycache__"];

/// The HLO files under `roots`, without those that `.gitignore` (also `.ignore`,
/// `.git/info/exclude`, git's global excludes, and ignore files above a root) exclude,
/// whether or not the folder is in a git repository. Hidden folders and
/// [`SKIPPED_DIRS`] are never visited. Order: each folder's files in XLA's dump order
/// ([`super::naming::order`]), then its subfolders by name, depth first.
pub fn discover(roots: &[PathBuf], limits: &Limits) -> Discovery {
    let mut found = Discovery::default();
    for root in roots {
        if found.truncated {
            break;
        }
        visit(root, limits, &mut found);
    }
    found
}

fn visit(root: &Path, limits: &Limits, found: &mut Discovery) {
    let walk = ignore::WalkBuilder::new(root)
        // Hidden folders are skipped below; hidden files are read as before.
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        // Files in folders `max_depth` below the root are still read.
        .max_depth(Some(limits.max_depth + 1))
        // The walker visits entries in this order: a folder's files first (dump
        // order), then its subfolders by name.
        .sort_by_file_path(|a, b| match (a.is_dir(), b.is_dir()) {
            (false, false) => super::naming::compare(a, b),
            (true, true) => a.cmp(b),
            (a_dir, _) => a_dir.cmp(&!a_dir),
        })
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let skipped = entry
                .file_name()
                .to_str()
                .is_none_or(|n| n.starts_with('.') || SKIPPED_DIRS.contains(&n));
            entry.depth() == 0 || !is_dir || !skipped
        })
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) || !is_hlo_path(entry.path()) {
            continue;
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        let path = entry.into_path();
        if size > limits.max_file_bytes {
            found.too_large.push(path);
        } else if found.files.len() >= limits.max_files {
            found.truncated = true;
            return;
        } else {
            found.files.push((path, size));
        }
    }
}

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexedKind {
    Computation,
    /// An instruction with opcode `fusion`.
    Fusion,
}

/// A computation or fusion of an indexed file, where its name is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedSymbol {
    /// Without `%`.
    pub name: String,
    pub kind: IndexedKind,
    /// The module (for a computation) or computation (for a fusion) holding it.
    pub container: String,
    /// 0-based line of the name.
    pub line: u32,
    /// Column of the name (as written, with `%`) in bytes and in UTF-16 code units.
    pub utf8_column: u32,
    pub utf16_column: u32,
    /// Length of the name as written (ASCII: bytes = UTF-16 units).
    pub len: u32,
}

/// The computations and fusions of an HLO text.
pub fn symbols(text: &str) -> Vec<IndexedSymbol> {
    let doc = SyntaxDocument::parse(text);
    let mut found: Vec<(usize, usize, String, IndexedKind, String)> = Vec::new();
    let mut module = String::new();
    for chunk in doc.chunks() {
        match chunk.kind() {
            ChunkKind::Header => {
                if let Some(name) = &chunk.outline().name {
                    module = name.name.to_string();
                }
            }
            ChunkKind::Computation => {
                let Some(name) = &chunk.outline().name else {
                    continue;
                };
                let computation = name.name.to_string();
                found.push((
                    chunk.start + name.start as usize,
                    (name.end - name.start) as usize,
                    computation.clone(),
                    IndexedKind::Computation,
                    module.clone(),
                ));
                for (at, len, fusion) in fusions(chunk.text()) {
                    found.push((
                        chunk.start + at,
                        len,
                        fusion,
                        IndexedKind::Fusion,
                        computation.clone(),
                    ));
                }
            }
            _ => {}
        }
    }
    place(text, found)
}

/// Instruction lines `[ROOT] %name = shape fusion(...)` of a computation's text:
/// (offset of the name, its length as written, the name without `%`).
fn fusions(text: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let indent = line.len() - line.trim_start().len();
        let rest = &line[indent..];
        let (rest, skipped) = match rest.strip_prefix("ROOT ") {
            Some(r) => (r.trim_start(), rest.len() - r.trim_start().len()),
            None => (rest, 0),
        };
        let Some(eq) = rest.find(" = ") else { continue };
        let written = rest[..eq].trim_end();
        if written.is_empty() || written.contains(char::is_whitespace) {
            continue;
        }
        // The opcode follows the shape: ` fusion(` before any attribute.
        let definition = &rest[eq + 3..];
        let head = definition.split("), ").next().unwrap_or(definition);
        if !head.contains(" fusion(") {
            continue;
        }
        let name = written.strip_prefix('%').unwrap_or(written).to_string();
        found.push((start + indent + skipped, written.len(), name));
    }
    found
}

/// Lines and columns of the found names, in one pass over the text.
fn place(
    text: &str,
    mut found: Vec<(usize, usize, String, IndexedKind, String)>,
) -> Vec<IndexedSymbol> {
    found.sort_by_key(|f| f.0);
    let mut symbols = Vec::with_capacity(found.len());
    let (mut line, mut line_start, mut scanned) = (0u32, 0usize, 0usize);
    for (at, len, name, kind, container) in found {
        for (i, b) in text.as_bytes()[scanned..at].iter().enumerate() {
            if *b == b'\n' {
                line += 1;
                line_start = scanned + i + 1;
            }
        }
        scanned = at;
        let prefix = &text[line_start..at];
        symbols.push(IndexedSymbol {
            name,
            kind,
            container,
            line,
            utf8_column: prefix.len() as u32,
            utf16_column: prefix.encode_utf16().count() as u32,
            len: len as u32,
        });
    }
    symbols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_computations_and_fusions_with_positions() {
        let text = "HloModule m\n\n%fused (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p), metadata={op_name=\"x = y fusion(z)\"}\n}\n\nENTRY %main (a: f32[4]) -> (f32[4], f32[4]) {\n  %a = f32[4] parameter(0)\n  %f.1 = f32[4] fusion(%a), kind=kLoop, calls=%fused\n  ROOT t = (f32[4], f32[4]) fusion(%a, %f.1), kind=kLoop, calls=%fused\n}\n";
        let found = symbols(text);
        let seen: Vec<_> = found
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.kind,
                    s.container.as_str(),
                    s.line,
                    s.utf8_column,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("fused", IndexedKind::Computation, "m", 2, 0),
                ("main", IndexedKind::Computation, "m", 7, 6),
                ("f.1", IndexedKind::Fusion, "main", 9, 2),
                ("t", IndexedKind::Fusion, "main", 10, 7),
            ]
        );
        assert_eq!(found[2].len, 4);
    }

    #[test]
    fn file_names_that_hold_hlo() {
        for yes in [
            "a.hlo",
            "b.hlo.txt",
            "module_0001.jit_f.before_optimizations.txt",
            "module_0001.jit_f.0003.p.after_x.before_y.txt",
        ] {
            assert!(is_hlo_path(Path::new(yes)), "{yes}");
        }
        for no in [
            "a.txt",
            "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
            "module_0001.jit_f.ir-no-opt.ll",
            "a.mlir",
        ] {
            assert!(!is_hlo_path(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn discovery_respects_the_limits() {
        let dir = std::env::temp_dir().join(format!("hlo-lsp-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("dumps")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/x.hlo"), "HloModule hidden\n").unwrap();
        std::fs::write(
            dir.join("dumps/module_0002.jit_f.before_optimizations.txt"),
            "HloModule f\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("dumps/module_0010.jit_g.before_optimizations.txt"),
            "HloModule g\n",
        )
        .unwrap();
        std::fs::write(dir.join("big.hlo"), "x".repeat(100)).unwrap();
        std::fs::write(dir.join("notes.txt"), "no").unwrap();
        let limits = Limits {
            max_file_bytes: 50,
            ..Limits::default()
        };
        let found = discover(std::slice::from_ref(&dir), &limits);
        let names: Vec<_> = found
            .files
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "module_0002.jit_f.before_optimizations.txt",
                "module_0010.jit_g.before_optimizations.txt"
            ]
        );
        assert_eq!(found.too_large, [dir.join("big.hlo")]);
        let one = discover(
            std::slice::from_ref(&dir),
            &Limits {
                max_files: 1,
                ..limits
            },
        );
        assert!(one.truncated);
        assert_eq!(one.files.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Files and folders a `.gitignore` excludes are skipped (also outside a git
    /// repository, and with `!` exceptions and nested files); the order stays a
    /// folder's files in dump order, then its subfolders by name.
    #[test]
    fn discovery_skips_what_gitignore_excludes() {
        let dir = std::env::temp_dir().join(format!("hlo-lsp-ignore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["a/b", "a/c", "build", "z"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let write = |rel: &str, text: &str| std::fs::write(dir.join(rel), text).unwrap();
        write(".gitignore", "build/\n*.tmp.hlo\n!keep.tmp.hlo\n");
        write("a/.gitignore", "c/\n");
        for rel in [
            "module_0010.jit_g.before_optimizations.txt",
            "module_0002.jit_f.before_optimizations.txt",
            "x.hlo",
            "scratch.tmp.hlo",
            "keep.tmp.hlo",
            "build/out.hlo",
            "a/b/inner.hlo",
            "a/c/ignored.hlo",
            "a/top.hlo",
            "z/last.hlo",
        ] {
            write(rel, "HloModule m\n");
        }
        let found = discover(std::slice::from_ref(&dir), &Limits::default());
        let names: Vec<String> = found
            .files
            .iter()
            .map(|(p, _)| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "module_0002.jit_f.before_optimizations.txt",
                "module_0010.jit_g.before_optimizations.txt",
                "keep.tmp.hlo",
                "x.hlo",
                "a/top.hlo",
                "a/b/inner.hlo",
                "z/last.hlo",
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
