//! Every real HLO file in the test data (XLA samples and JAX dumps) builds with no
//! error diagnostics, and the model holds what the text says: one instruction per
//! `name = ... opcode(...)` line, resolved operands, called computations found.

use std::path::PathBuf;

use hlo_lsp::model::{self, codes, Opcode, Severity, Shape};

fn data_files() -> Vec<PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
    let mut files = Vec::new();
    for dir in ["samples/xla", "jax"] {
        for entry in std::fs::read_dir(format!("{root}/{dir}")).expect("test data directory") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "hlo") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(
        files.len() >= 25,
        "expected the XLA samples and JAX dumps, found {}",
        files.len()
    );
    files
}

/// Warnings we accept on real files, each for a genuine reason.
const EXPECTED_WARNINGS: &[(&str, &str)] = &[
    // XLA's print_indexing lit test passes an s32[1024] operand to an s32[] parameter.
    (
        "xla__tools__print_indexing_test.hlo",
        codes::CALL_SHAPE_MISMATCH,
    ),
];

#[test]
fn real_files_build_without_errors() {
    for path in data_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = model::parse_hlo(&text);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for d in &file.diagnostics {
            let allowed = d.severity != Severity::Error
                && EXPECTED_WARNINGS
                    .iter()
                    .any(|(f, c)| *f == name && *c == d.code);
            assert!(
                allowed,
                "{name}: unexpected {:?} {} at {:?}: {}",
                d.severity, d.code, d.range, d.message
            );
        }
        assert!(!file.modules.is_empty(), "{name}: no module");
        for m in &file.modules {
            assert!(m.entry.is_some(), "{name}: a module without computations");
            for c in m.computations() {
                assert!(c.root.is_some(), "{name}: `{}` has no root", c.name);
                for i in &c.model().instructions {
                    assert!(
                        !i.opcode.is_unknown(),
                        "{name}: unknown opcode {}",
                        i.opcode
                    );
                    assert!(
                        i.operands.iter().all(|o| o.target.is_some()),
                        "{name}: unresolved operand of {}",
                        i.name
                    );
                    assert!(
                        i.called.iter().all(|called| m.resolve(called).is_some()),
                        "{name}: unresolved call in {}",
                        i.name
                    );
                    if !i.synthetic {
                        assert_eq!(
                            &text[c.abs(i.name_range)].trim_start_matches('%'),
                            &&*i.name,
                            "{name}: name range"
                        );
                    }
                    assert_eq!(
                        &text[c.abs(i.opcode_range)],
                        i.opcode.name(),
                        "{name}: opcode range"
                    );
                    if !i.synthetic {
                        assert!(
                            !matches!(*i.shape, Shape::Invalid),
                            "{name}: {} has no shape",
                            i.name
                        );
                    }
                }
            }
        }
    }
}

/// Counts instruction lines in the text (`name = shape opcode(` at the start of a
/// line) and compares with the model, so no instruction is silently lost.
#[test]
fn no_instruction_is_lost() {
    for path in data_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = model::parse_hlo(&text);
        let expected = text
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.starts_with("//") && !l.starts_with("HloModule"))
            .filter(|l| {
                let l = l.strip_prefix("ROOT ").unwrap_or(l);
                let Some((lhs, rhs)) = l.split_once(" =") else {
                    return false;
                };
                let is_name = !lhs.is_empty()
                    && lhs
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || b"%_.-".contains(&c));
                is_name && (rhs.is_empty() || rhs.starts_with(' '))
            })
            .count();
        let built = file
            .modules
            .iter()
            .flat_map(|m| m.computations())
            .flat_map(|c| &c.model().instructions)
            .filter(|i| !i.synthetic)
            .count();
        assert_eq!(built, expected, "{}", path.display());
    }
}

#[test]
fn fusions_are_indexed_as_callers() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/samples/xla/xla__tools__print_indexing_test.hlo"
    ))
    .unwrap();
    let file = model::parse_hlo(&text);
    let m = &file.modules[0];
    let fused = m.computation_by_name("fused_computation").unwrap();
    let callers = m.callers_of(fused);
    assert_eq!(callers.len(), 1);
    let entry = m.entry_computation().unwrap();
    assert_eq!(entry.name, "main");
    let (caller, fusion) = m.caller(&callers[0]).unwrap();
    assert_eq!(caller.id, entry.id);
    assert_eq!(&*fusion.name, "fusion");
    assert_eq!(fusion.opcode, Opcode::Fusion);
    assert_eq!(fusion.attrs().fusion_kind.as_deref(), Some("kLoop"));
    assert_eq!(
        m.called_computation(fusion, "calls").unwrap().name,
        "fused_computation"
    );
    let fc = m.computation(fused);
    assert_eq!(fc.parameters.len(), 3);
    assert_eq!(&*fc.root_instruction().unwrap().name, "result");
    assert_eq!(fc.users(fc.instruction_by_name("mul").unwrap().id).len(), 2);
}
