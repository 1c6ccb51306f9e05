//! The floors of the library and the direction of their arrows (ARCHITECTURE.md,
//! "Floors"): every `crate::` path in the code of a top-level module names a module it
//! may depend on. Comments are not read, so doc links may point anywhere.
//!
//! A new top-level module fails this test until it is placed in [`FLOORS`]: deciding
//! where it stands is part of adding it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What either front end may use: every library floor, the features included.
const FRONT_END_USES: &[&str] = &[
    "algebra",
    "analysis",
    "blocks",
    "budget",
    "checks",
    "coalescing",
    "cost",
    "device",
    "dump",
    "format",
    "fusible",
    "graph",
    "hover",
    "ide",
    "language",
    "loops",
    "memory",
    "mlir",
    "model",
    "profile",
    "refactor",
    "sharding",
    "syntax",
    "tiling",
    "units",
    "xml",
];

/// Each top-level module of `server/src` and the modules it may use.
const FLOORS: &[(&str, &[&str])] = &[
    // Foundations.
    ("blocks", &[]),
    ("budget", &[]),
    ("language", &[]),
    ("xml", &[]),
    ("units", &[]),
    ("syntax", &["blocks"]),
    ("algebra", &["budget"]),
    ("model", &["algebra", "blocks", "budget", "syntax"]),
    ("analysis", &["algebra", "budget", "model", "syntax"]),
    // Analyses over the model and its indexing maps. Tiling ranks candidates by a
    // read cost its caller passes in: it does not know the GPU model (coalescing).
    (
        "tiling",
        &["algebra", "analysis", "budget", "model", "syntax"],
    ),
    ("device", &["model"]),
    // While loops: trip counts and how often each computation runs.
    ("loops", &["model"]),
    (
        "coalescing",
        &[
            "algebra", "analysis", "budget", "device", "model", "syntax", "tiling",
        ],
    ),
    (
        "cost",
        &[
            "algebra",
            "analysis",
            "budget",
            "coalescing",
            "device",
            "loops",
            "model",
            "syntax",
            "tiling",
            "units",
        ],
    ),
    (
        "fusible",
        &[
            "algebra",
            "analysis",
            "budget",
            "coalescing",
            "cost",
            "device",
            "model",
            "syntax",
        ],
    ),
    (
        "refactor",
        &["algebra", "analysis", "budget", "model", "syntax"],
    ),
    // The module printed as XLA prints it (`hlo-lsp fmt`, formatting requests).
    ("format", &["model", "syntax"]),
    (
        "mlir",
        &["algebra", "analysis", "budget", "model", "syntax", "tiling"],
    ),
    (
        "dump",
        &["algebra", "analysis", "budget", "model", "syntax"],
    ),
    // What a sharding means device by device; a collective's replica groups
    // are read as the collective model reads them, and the sharding that calls
    // for it is traced back on the indexing maps.
    (
        "sharding",
        &["algebra", "analysis", "cost", "model", "units"],
    ),
    // Measured time per instruction from a profile (XProf), joined to the module;
    // the cost model's estimate beside it.
    ("profile", &["cost", "device", "dump", "model"]),
    // Memory: XLA's buffer assignment read, or estimated from the module.
    (
        "memory",
        &["budget", "dump", "model", "syntax", "units", "xml"],
    ),
    // Every finding of a document, from the analyses that report them.
    (
        "checks",
        &[
            "algebra",
            "analysis",
            "blocks",
            "budget",
            "coalescing",
            "mlir",
            "memory",
            "model",
            "refactor",
            "syntax",
            "tiling",
        ],
    ),
    // The text of a hover, laid out from analysis results.
    (
        "hover",
        &["algebra", "analysis", "budget", "coalescing", "model"],
    ),
    // The dataflow around an instruction, to draw: maps and coalescing on edges,
    // kernel times, measured times and output sizes on nodes; a StableHLO file's
    // through its translation (mlir).
    (
        "graph",
        &[
            "algebra",
            "analysis",
            "budget",
            "coalescing",
            "cost",
            "device",
            "hover",
            "memory",
            "mlir",
            "model",
            "profile",
            "syntax",
            "tiling",
            "xml",
        ],
    ),
    // Editor features on plain types: everything below, no front end.
    (
        "ide",
        &[
            "algebra",
            "analysis",
            "budget",
            "checks",
            "coalescing",
            "cost",
            "device",
            "dump",
            "format",
            "fusible",
            "graph",
            "hover",
            "language",
            "loops",
            "memory",
            "mlir",
            "model",
            "profile",
            "refactor",
            "sharding",
            "syntax",
            "tiling",
            "xml",
        ],
    ),
    // The two front ends: siblings, never each other.
    ("cli", FRONT_END_USES),
    ("lsp", FRONT_END_USES),
];

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files of a module: `name.rs`, or every file under `name/`.
fn files_of(name: &str) -> Vec<PathBuf> {
    let root = source_root();
    let single = root.join(format!("{name}.rs"));
    if single.is_file() {
        return vec![single];
    }
    let mut out = Vec::new();
    let mut stack = vec![root.join(name)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The top-level modules a file's code (not its comments) names as `crate::X`.
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                used.insert(name);
            }
        }
    }
    used
}

/// The top-level modules of the crate (what `lib.rs` declares).
fn declared_modules() -> Vec<String> {
    let lib = std::fs::read_to_string(source_root().join("lib.rs")).expect("lib.rs");
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect()
}

#[test]
fn every_module_stands_on_a_floor() {
    let placed: BTreeSet<&str> = FLOORS.iter().map(|(m, _)| *m).collect();
    let missing: Vec<String> = declared_modules()
        .into_iter()
        .filter(|m| !placed.contains(m.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "place these modules in FLOORS (tests/architecture.rs) and ARCHITECTURE.md: {missing:?}"
    );
}

#[test]
fn arrows_point_down() {
    let declared = declared_modules();
    let mut wrong = Vec::new();
    for (module, allowed) in FLOORS {
        if !declared.iter().any(|m| m == module) {
            continue; // placed ahead of its arrival
        }
        for file in files_of(module) {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for used in used_modules(&text) {
                if used != *module && !allowed.contains(&used.as_str()) {
                    let shown = file.strip_prefix(source_root()).unwrap_or(&file).display();
                    wrong.push(format!("{shown} uses crate::{used}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows against the floors:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_sees_code_not_comments() {
    let text = "use crate::model::Shape; // see crate::lsp\n/// [`crate::cli`]\nlet x = crate::algebra::Expr::dim(0);";
    let used: Vec<String> = used_modules(text).into_iter().collect();
    assert_eq!(used, ["algebra", "model"]);
}

/// The code map and the contracts it points to.
const MAPS: &[&str] = &["ARCHITECTURE.md", "docs/contracts.md"];

/// The words of the maps ([`MAPS`]) in backticks.
fn architecture_names() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text: String = MAPS
        .iter()
        .map(|m| std::fs::read_to_string(root.join(m)).expect("a map of the code"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = Vec::new();
    let mut in_code_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code_block = !in_code_block;
            continue;
        }
        if in_code_block {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            names.push(inside.to_string());
        }
    }
    names
}

/// Every item name declared in `module`'s files (functions, types, constants,
/// modules, fields and variants are all accepted as "exists").
fn declares(module: &str, name: &str) -> bool {
    let root = source_root();
    if root.join(module).join(format!("{name}.rs")).is_file()
        || root.join(module).join(name).is_dir()
    {
        return true;
    }
    files_of(module).iter().any(|file| {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        [
            "fn ", "struct ", "enum ", "const ", "mod ", "type ", "trait ", "static ", "pub ",
        ]
        .iter()
        .any(|kind| {
            text.match_indices(&format!("{kind}{name}")).any(|(at, m)| {
                let next = text[at + m.len()..].chars().next().unwrap_or(' ');
                !(next.is_ascii_alphanumeric() || next == '_')
            })
        })
    })
}

/// What ARCHITECTURE.md and docs/contracts.md name exists: a path of the repository it writes in
/// backticks, and the first two steps of a `module::item` path (`lsp::handlers`,
/// `ide::memo`) of a top-level module of the crate.
#[test]
fn the_map_names_what_exists() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let modules = declared_modules();
    let mut missing = Vec::new();
    for name in architecture_names() {
        let looks_like_path = [
            "server/",
            "tests/",
            "editors/",
            "scripts/",
            "docs/",
            "tree-sitter-hlo/",
        ]
        .iter()
        .any(|p| name.starts_with(p))
            && !name.contains(' ')
            && !name.contains('*');
        if looks_like_path && !repository.join(&name).exists() {
            missing.push(name.clone());
        }
        let mut steps = name.split("::");
        if let (Some(first), Some(second)) = (steps.next(), steps.next()) {
            let item: String = second
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.iter().any(|m| m == first) && !item.is_empty() && !declares(first, &item) {
                missing.push(name.clone());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:#?}"
    );
}
