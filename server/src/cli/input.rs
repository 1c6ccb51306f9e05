//! What every analysis command does with its HLO file before it analyses anything:
//! refuse an MLIR file and a file with syntax errors, and say which module it reads
//! when the file holds several.
//!
//! A truncated or broken dump still parses (the model is built from whatever parsed),
//! so without this an analysis of it prints plausible numbers for part of a program, or
//! zeros, and exits 0. A user who trusts that is misled; the first syntax error with its
//! position, and a non-zero exit, tell them the file is not what XLA wrote.

use std::path::Path;

use crate::model::{codes, Diagnostic, Module, Severity};

/// `Err` with the file's first syntax error (`FILE:LINE:COL: syntax error: ...`) and how
/// many there are, when it has any: nothing is analysed from a broken file. MLIR read as
/// HLO is all syntax errors; it is named as what it is ([`refuse_mlir`]).
pub fn refuse_syntax_errors(
    path: &Path,
    text: &str,
    diagnostics: &[Diagnostic],
) -> Result<(), String> {
    refuse_mlir(path, text)?;
    let mut errors = diagnostics
        .iter()
        .filter(|d| d.code == codes::SYNTAX_ERROR && d.severity == Severity::Error);
    let Some(first) = errors.next() else {
        return Ok(());
    };
    let more = errors.count();
    let (line, col) = crate::syntax::line_col(text, first.range.start);
    let also = match more {
        0 => String::new(),
        n => format!(" ({n} more; `hlo-lsp check` lists them)"),
    };
    Err(format!(
        "{}:{line}:{col}: syntax error: {}{also}; nothing analysed",
        path.display(),
        first.message
    ))
}

/// `Err` when `text` is MLIR (a `.mlir` file, or MLIR content), which the commands
/// that read XLA's HLO do not read (`maps` and `memory` read MLIR themselves, before
/// they come here): read as HLO it gives only syntax errors, or empty answers. One
/// line says what to run instead.
pub fn refuse_mlir(path: &Path, text: &str) -> Result<(), String> {
    let language = crate::language::detect(&path.to_string_lossy(), None, text);
    if language != crate::language::Language::Mlir {
        return Ok(());
    }
    let dialect = if text.contains("stablehlo.") || text.contains("mhlo.") {
        "StableHLO"
    } else {
        "MLIR"
    };
    Err(format!(
        "{}: this is {dialect}, not HLO text; this command reads XLA's HLO (a dump, or JAX's `lower(...).as_text(dialect='hlo')`); `hlo-lsp mlir {}` lists its ops and their maps",
        path.display(),
        path.display()
    ))
}

/// `Err` when `text` is XLA's HLO text, which `hlo-lsp mlir` does not read: read
/// as MLIR it has no op, and the answer would be empty. One line says what to
/// run instead. Decided by the content alone: a dump is named anything.
pub fn refuse_hlo(path: &Path, text: &str) -> Result<(), String> {
    if !crate::language::says_hlo(text) {
        return Ok(());
    }
    Err(format!(
        "{}: this is HLO text, not MLIR; `hlo-lsp maps {}` prints its indexing maps",
        path.display(),
        path.display()
    ))
}

/// The one module a command that reports on a single module reads: the one `--module`
/// names (its name, or its 0-based place in the file), else the first. When the file
/// holds several and none was named, a note on stderr says which was taken and how to
/// pick another (never silently the first).
pub fn pick_module<'f>(
    path: &Path,
    text: &str,
    modules: &'f [Module],
    wanted: Option<&str>,
) -> Result<&'f Module, String> {
    if let Some(wanted) = wanted {
        return find_module(modules, wanted).ok_or_else(|| {
            format!(
                "{}: no module {wanted} (the file holds {})",
                path.display(),
                module_list(modules)
            )
        });
    }
    let first = modules
        .first()
        .ok_or_else(|| format!("{}: no HLO module", path.display()))?;
    if modules.len() > 1 {
        let (line, _) = crate::syntax::line_col(text, first.range.start);
        eprintln!(
            "hlo-lsp: note: {} holds {} modules ({}); reading the first, {} (line {line}); \
             --module NAME or --module N picks another",
            path.display(),
            modules.len(),
            module_list(modules),
            module_label(first, 0),
        );
    }
    Ok(first)
}

/// The module named `wanted`, or at 0-based index `wanted`.
pub fn find_module<'f>(modules: &'f [Module], wanted: &str) -> Option<&'f Module> {
    modules
        .iter()
        .find(|m| m.name.as_deref() == Some(wanted))
        .or_else(|| wanted.parse::<usize>().ok().and_then(|k| modules.get(k)))
}

/// `KernelReuse` or, for a module without a `HloModule` line, `module 3`.
pub fn module_label(module: &Module, index: usize) -> String {
    module
        .name
        .clone()
        .unwrap_or_else(|| format!("module {index}"))
}

/// `0: KernelReuse, 1: t, 2: KernelReuse`.
fn module_list(modules: &[Module]) -> String {
    modules
        .iter()
        .enumerate()
        .map(|(k, m)| format!("{k}: {}", module_label(m, k)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_file_is_refused_with_its_first_error() {
        let text = "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p\n}\n\nf {\n  x = f32[] parameter(0\n}\n";
        let file = crate::model::parse_hlo(text);
        let err = refuse_syntax_errors(Path::new("x.hlo"), text, &file.diagnostics).unwrap_err();
        assert!(err.starts_with("x.hlo:5:"), "{err}");
        assert!(
            err.contains("syntax error") && err.ends_with("nothing analysed"),
            "{err}"
        );
        let good = "HloModule m\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n";
        let file = crate::model::parse_hlo(good);
        assert!(refuse_syntax_errors(Path::new("x.hlo"), good, &file.diagnostics).is_ok());
    }

    #[test]
    fn modules_are_picked_by_name_or_place() {
        let text = "HloModule a\n\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n\n// -----\n\nHloModule b\n\nENTRY e {\n  ROOT p = f32[8] parameter(0)\n}\n";
        let file = crate::model::parse_hlo(text);
        assert_eq!(file.modules.len(), 2);
        let path = Path::new("x.hlo");
        let b = pick_module(path, text, &file.modules, Some("b")).unwrap();
        assert_eq!(b.name.as_deref(), Some("b"));
        let one = pick_module(path, text, &file.modules, Some("1")).unwrap();
        assert_eq!(one.name.as_deref(), Some("b"));
        let err = pick_module(path, text, &file.modules, Some("c")).unwrap_err();
        assert!(err.contains("0: a, 1: b"), "{err}");
    }
}
