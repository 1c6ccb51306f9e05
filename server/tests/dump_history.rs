//! The history of instructions across pass-by-pass dumps (`dump::history`) against
//! two independent readings of the same files: `expected.json`, written by
//! `tests/data/pass_dumps/make_history.py` from its own reading of the dumps of six
//! JAX programs, and the model's parse of every snapshot (`model::parse_hlo`), which
//! must show each instruction exactly where its history says it lived and changed.

use std::path::{Path, PathBuf};

use hlo_lsp::dump::diff::{
    compare_computation, compare_files, definition, render_changes, restrict,
};
use hlo_lsp::dump::history::passes::{passes, Event, Found, Place};
use hlo_lsp::dump::history::{story, DirectoryHistory, ModuleHistory};
use hlo_lsp::model::parse_hlo;
use rustc_hash::FxHashMap;

const PROGRAMS: &[&str] = &[
    "transformer_block",
    "mlp_train_step",
    "attention_backward",
    "layer_norm_backward",
    "conv_backward",
    "scan",
];

fn dir(program: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/pass_dumps")
        .join(program)
}

fn history(program: &str) -> ModuleHistory {
    let dir = DirectoryHistory::build(&dir(program)).expect("dump directory");
    assert_eq!(dir.modules.len(), 1, "{program}: one module kept");
    dir.modules.into_iter().next().unwrap()
}

/// Every instruction of the after-optimizations module: introduced and changed in
/// the snapshots the script found.
#[test]
fn agrees_with_the_script_on_six_programs() {
    for program in PROGRAMS {
        let module = history(program);
        let text = std::fs::read_to_string(dir(program).join("expected.json")).unwrap();
        let expected: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        let last = module.snapshots.len() - 1;
        assert_eq!(module.last_alive(), expected.len(), "{program}");
        for e in &expected {
            let (c, name) = (
                e["computation"].as_str().unwrap(),
                e["name"].as_str().unwrap(),
            );
            let i = module
                .at(last, c, name)
                .unwrap_or_else(|| panic!("{program}: {c}/{name} not followed"));
            assert_eq!(i.opcode, e["opcode"].as_str().unwrap(), "{program} {name}");
            let file = |k: usize| module.snapshots[k].file_name();
            assert_eq!(
                file(i.introduced),
                e["introduced_in"],
                "{program} {c}/{name}"
            );
            let changed: Vec<String> = i.changed.iter().map(|&k| file(k)).collect();
            assert_eq!(
                serde_json::json!(changed),
                e["changed_in"],
                "{program} {c}/{name}"
            );
        }
    }
}

/// (computation, name) → (opcode, definition with `ROOT`, without metadata) of one
/// snapshot, by the model's parse.
fn parsed(path: &Path) -> FxHashMap<(String, String), (String, String)> {
    let file = parse_hlo(&std::fs::read_to_string(path).unwrap());
    let mut found = FxHashMap::default();
    for module in &file.modules {
        for c in module.computations() {
            for i in c.model().instructions.iter().filter(|i| !i.synthetic) {
                let line = format!("{} {}", i.is_root, definition(c, i));
                found.insert(
                    (c.name.clone(), i.name.to_string()),
                    (i.opcode.to_string(), line),
                );
            }
        }
    }
    found
}

/// Every instruction followed (removed ones too) lives, unbroken and with its
/// opcode, from its introduction to its removal, changes exactly where its
/// definition does, and is absent (or another opcode) just before and just after.
#[test]
fn every_life_matches_the_models_parse_of_each_snapshot() {
    for program in PROGRAMS {
        let module = history(program);
        let snapshots: Vec<_> = module.snapshots.iter().map(|s| parsed(&s.file)).collect();
        let mut alive_somewhere = 0;
        for i in &module.instructions {
            let key = (i.computation.to_string(), i.name.clone());
            let end = i.removed.as_ref().map_or(snapshots.len(), |r| r.snapshot);
            let same_opcode = |k: usize| {
                snapshots[k]
                    .get(&key)
                    .is_some_and(|(op, _)| *op == i.opcode)
            };
            assert!(
                (i.introduced..end).all(same_opcode),
                "{program}: {key:?} not alive throughout"
            );
            assert!(
                i.introduced == 0 || !same_opcode(i.introduced - 1),
                "{program}: {key:?} existed before"
            );
            assert!(
                end == snapshots.len() || !same_opcode(end),
                "{program}: {key:?} still there"
            );
            let changed: Vec<usize> = (i.introduced + 1..end)
                .filter(|&k| snapshots[k][&key].1 != snapshots[k - 1][&key].1)
                .collect();
            assert_eq!(changed, i.changed, "{program}: {key:?}");
            alive_somewhere += 1;
        }
        // Every instruction of every snapshot is some instruction's life.
        for (k, s) in snapshots.iter().enumerate() {
            for (c, name) in s.keys() {
                assert!(
                    module.at(k, c, name).is_some(),
                    "{program}: {c}/{name} at {k}"
                );
            }
        }
        assert!(alive_somewhere > 50, "{program}");
    }
}

/// The fusion pass removes what it fused: each removal names the fusion the
/// instruction went into.
#[test]
fn fused_instructions_name_their_fusion() {
    let module = history("mlp_train_step");
    let fused: Vec<String> = module
        .instructions
        .iter()
        .filter(|i| {
            i.removed
                .as_ref()
                .is_some_and(|r| module.snapshots[r.snapshot].pass() == "fusion")
        })
        .map(|i| story::story(&module, i))
        .collect();
    insta::assert_snapshot!(fused.concat());
}

/// The line `place` points at, and the text at its columns, read from its file.
fn at_place(place: &Place) -> (String, String) {
    let text = std::fs::read_to_string(&place.file).unwrap();
    let line = text.lines().nth(place.line).unwrap_or_default().to_string();
    let word = line
        .get(place.columns.clone())
        .unwrap_or_default()
        .to_string();
    (line, word)
}

/// `place` is the line where `name` is defined in its file.
fn defines(place: &Place, name: &str) -> bool {
    let (line, word) = at_place(place);
    let head = line.trim_start().trim_start_matches("ROOT ");
    word == name && head.starts_with(&format!("%{name} = "))
}

/// For every instruction followed, each pass of its story opens on the snapshots just
/// before and after it, at lines that are (read from the files themselves) its own
/// definition where it lives, and what took its place where it does not.
#[test]
fn each_pass_opens_the_snapshots_around_it_at_the_instruction() {
    let (mut steps, mut instead) = (0, 0);
    for program in PROGRAMS {
        let module = history(program);
        for i in &module.instructions {
            let found = passes(&module, i);
            let expected: Vec<(Event, usize)> = std::iter::once((Event::Introduced, i.introduced))
                .chain(i.changed.iter().map(|&k| (Event::Changed, k)))
                .chain(i.removed.as_ref().map(|r| (Event::Removed, r.snapshot)))
                .collect();
            let got: Vec<(Event, usize)> = found.iter().map(|s| (s.event, s.snapshot)).collect();
            assert_eq!(got, expected, "{program} {}", i.name);
            for s in &found {
                let what = format!("{program} %{} {}", i.name, s.label);
                assert_eq!(s.after.file, module.snapshots[s.snapshot].file, "{what}");
                match &s.before {
                    None => assert_eq!(s.snapshot, 0, "{what}"),
                    Some(b) => {
                        assert_eq!(b.snapshot, s.snapshot - 1, "{what}");
                        assert_eq!(b.file, module.snapshots[s.snapshot - 1].file, "{what}");
                    }
                }
                let before = s.before.as_ref();
                match s.event {
                    Event::Introduced => {
                        assert!(defines(&s.after, &i.name), "{what}");
                        assert!(
                            before.is_none_or(|b| b.found != Found::Instruction),
                            "{what}"
                        );
                    }
                    Event::Changed => {
                        let b = before.unwrap();
                        assert!(defines(b, &i.name) && defines(&s.after, &i.name), "{what}");
                        assert_ne!(at_place(b).0, at_place(&s.after).0, "{what}");
                    }
                    Event::Removed => {
                        assert!(defines(before.unwrap(), &i.name), "{what}");
                        assert_ne!(s.after.found, Found::Instruction, "{what}");
                    }
                }
                for place in before.into_iter().chain([&s.after]) {
                    match &place.found {
                        Found::Instead(other) => {
                            assert!(defines(place, other), "{what}: {other}");
                            instead += 1;
                        }
                        Found::Computation => {
                            assert_eq!(at_place(place).1, *i.computation, "{what}")
                        }
                        Found::Instruction | Found::File => {}
                    }
                }
                steps += 1;
            }
        }
    }
    assert!(
        steps > 1000 && instead > 50,
        "{steps} steps, {instead} stand-ins"
    );
}

/// What one pass did to an instruction's computation: the fusion pass's diff of the
/// MLP step's entry, cut down to it and the fused computations its new lines call.
#[test]
fn a_pass_diff_keeps_the_instructions_computation() {
    let module = history("mlp_train_step");
    let last = module.snapshots.len() - 1;
    let entry = module
        .instructions
        .iter()
        .find(|i| i.name == "broadcast_maximum_fusion" && i.removed.is_none())
        .unwrap();
    assert!(module.at(last, &entry.computation, &entry.name).is_some());
    let introduced = &passes(&module, entry)[0];
    let read = |p: &Place| parse_hlo(&std::fs::read_to_string(&p.file).unwrap());
    let (a, b) = (
        read(introduced.before.as_ref().unwrap()),
        read(&introduced.after),
    );
    let whole = &compare_files(&a, &b)[0];
    let cut = restrict(whole, &entry.computation);
    // Comparing only that computation gives the same answer.
    assert_eq!(
        compare_computation(&a, &b, &entry.computation),
        std::slice::from_ref(&cut)
    );
    let names: Vec<&str> = whole.changed.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names.len(),
        1 + cut.unchanged - whole.unchanged,
        "{names:?}"
    );
    assert_eq!(cut.changed.len(), 1);
    assert_eq!(*cut.changed[0].name, *entry.computation);
    // The new fused computations stay: the new fusions' lines call them.
    assert!(!cut.added.is_empty() && cut.added.len() == whole.added.len());
    insta::assert_snapshot!(format!("{}\n{}", introduced.label, render_changes(&[cut])));
}
