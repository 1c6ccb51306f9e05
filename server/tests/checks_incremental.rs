//! The server's diagnostics after a sequence of edits, kept per computation across
//! versions (`checks::incremental`), must equal those of a fresh open of the final text
//! (`checks::all`): random edits inside computations and across them, renames of
//! called computations (all uses, or only the definition), signature changes,
//! computations deleted, duplicated and marked `ENTRY`.

use hlo_lsp::checks::{self, incremental::Checked};
use hlo_lsp::model::{Diagnostic, Document};
use proptest::prelude::*;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");

/// Bases whose diagnostics depend on other computations: fusions and reducers, tiled
/// fusions (tiling reads fusion and fused computation), reshape chains, a module with
/// errors across computations.
fn bases() -> Vec<String> {
    let files = [
        "jax/softmax.after.hlo",
        "jax/attention.after.hlo",
        "tiling/split_6_by_4.hlo",
        "tiling/merge_2x5_split_4.hlo",
        "refactor/chains.hlo",
        "samples/xla/xla__tools__print_indexing_test.hlo",
    ];
    let mut out: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(format!("{DATA}/{f}")).expect("test data"))
        .collect();
    out.push(
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n\
         fused {\n  p = f32[4,8] parameter(0)\n  t = f32[8,4] transpose(p), dimensions={1,0}\n  ROOT n = f32[8,4] negate(t)\n}\n\n\
         ENTRY e {\n  x = f32[4,8] parameter(0)\n  f = f32[8,4] fusion(x), kind=kLoop, calls=fused\n  z = f32[] constant(0)\n  \
         ROOT r = f32[8] reduce(f, z), dimensions={1}, to_apply=add\n}\n"
            .to_string(),
    );
    out
}

/// One edit of the text, chosen from what changes cross-computation findings.
#[derive(Debug, Clone)]
enum EditKind {
    /// Replace `len` bytes at a position (fraction of the text) with a snippet.
    Splice { at: f64, len: usize, snippet: usize },
    /// Rename the `k`-th computation: everywhere, or only its definition.
    Rename { k: usize, everywhere: bool },
    /// Change the first parameter shape of the `k`-th computation.
    Signature { k: usize },
    /// Delete the `k`-th computation.
    Delete { k: usize },
    /// Copy the `k`-th computation to the start (a duplicate name).
    Duplicate { k: usize },
    /// Mark the `k`-th computation `ENTRY` (or unmark it).
    Entry { k: usize },
}

const SNIPPETS: &[&str] = &[
    "",
    "x",
    "}",
    "{",
    "\n",
    "(",
    ")",
    ",",
    "%",
    "f32[2]",
    " = ",
    "ROOT ",
    "ENTRY ",
    "calls=%fused",
    "to_apply=add",
    "\nnew {\n  q = f32[] parameter(0)\n}\n",
    "é",
    "  y = f32[4,8] copy(p)\n",
    "dimensions={0}",
];

fn edit_kind() -> impl Strategy<Value = EditKind> {
    prop_oneof![
        4 => (0.0..1.0f64, 0..12usize, 0..SNIPPETS.len())
            .prop_map(|(at, len, snippet)| EditKind::Splice { at, len, snippet }),
        2 => (0..8usize, any::<bool>()).prop_map(|(k, everywhere)| EditKind::Rename { k, everywhere }),
        1 => (0..8usize).prop_map(|k| EditKind::Signature { k }),
        1 => (0..8usize).prop_map(|k| EditKind::Delete { k }),
        1 => (0..8usize).prop_map(|k| EditKind::Duplicate { k }),
        1 => (0..8usize).prop_map(|k| EditKind::Entry { k }),
    ]
}

/// The `k`-th computation chunk (mod the count): its byte range and name.
fn computation(doc: &Document, k: usize) -> Option<(std::ops::Range<usize>, String)> {
    let chunks: Vec<_> = doc
        .syntax()
        .chunks()
        .iter()
        .filter(|c| {
            c.outline().name.is_some() && c.kind() == hlo_lsp::syntax::ChunkKind::Computation
        })
        .collect();
    let c = chunks.get(k % chunks.len().max(1))?;
    Some((c.range(), c.outline().name.as_ref()?.name.to_string()))
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The byte edits (applied in order) that `kind` makes to `doc`'s text.
fn byte_edits(
    doc: &Document,
    text: &str,
    kind: &EditKind,
) -> Vec<(std::ops::Range<usize>, String)> {
    match *kind {
        EditKind::Splice { at, len, snippet } => {
            let start = floor_boundary(text, (at * text.len() as f64) as usize);
            let end = floor_boundary(text, start + len).max(start);
            vec![(start..end, SNIPPETS[snippet].to_string())]
        }
        EditKind::Rename { k, everywhere } => {
            let Some((range, name)) = computation(doc, k) else {
                return vec![];
            };
            let renamed = format!("{name}_r");
            // Whole-word occurrences, last first so earlier offsets stay valid.
            let mut edits: Vec<_> = text
                .match_indices(name.as_str())
                .filter(|(i, _)| {
                    let before = text[..*i].chars().last();
                    let after = text[i + name.len()..].chars().next();
                    let word = |c: Option<char>| {
                        c.is_some_and(|c| c.is_alphanumeric() || "_.-".contains(c))
                    };
                    !word(before) && !word(after)
                })
                .filter(|(i, _)| everywhere || range.contains(i))
                .map(|(i, _)| (i..i + name.len(), renamed.clone()))
                .collect();
            edits.reverse();
            edits
        }
        EditKind::Signature { k } => {
            let Some((range, _)) = computation(doc, k) else {
                return vec![];
            };
            match text[range.clone()].find("parameter(0)") {
                Some(p) => {
                    let line_start = text[..range.start + p].rfind('\n').map_or(0, |i| i + 1);
                    let line = &text[line_start..range.start + p];
                    match line.find("f32[") {
                        Some(s) => {
                            let at = line_start + s + 4;
                            vec![(at..at, "3,".to_string())]
                        }
                        None => vec![],
                    }
                }
                None => vec![],
            }
        }
        EditKind::Delete { k } => match computation(doc, k) {
            Some((range, _)) => vec![(range, String::new())],
            None => vec![],
        },
        EditKind::Duplicate { k } => match computation(doc, k) {
            Some((range, _)) => vec![(0..0, text[range].to_string())],
            None => vec![],
        },
        EditKind::Entry { k } => match computation(doc, k) {
            Some((range, _)) => {
                let body = &text[range.clone()];
                let at = range.start + body.len() - body.trim_start().len();
                if body.trim_start().starts_with("ENTRY ") {
                    vec![(at..at + 6, String::new())]
                } else {
                    vec![(at..at, "ENTRY ".to_string())]
                }
            }
            None => vec![],
        },
    }
}

/// Diagnostics in a total order, for comparing lists.
fn sorted(mut found: Vec<Diagnostic>) -> Vec<Diagnostic> {
    found.sort_by(|a, b| {
        (a.range.start, a.range.end, a.severity, a.code, &a.message).cmp(&(
            b.range.start,
            b.range.end,
            b.severity,
            b.code,
            &b.message,
        ))
    });
    found
}

fn run(base: &str, kinds: &[EditKind], check_every: bool) -> Result<(), TestCaseError> {
    let mut text = base.to_string();
    let mut doc = Document::parse(&text);
    let mut checked = Checked::new(&doc);
    // The first version's findings are computed, so later versions reuse them.
    checked.diagnostics(&doc, &checks::module_wide_of(&doc, None));
    // Made now, so that every edit carries it over by what it replaced.
    doc.fingerprint_sum();
    for kind in kinds {
        for (range, new_text) in byte_edits(&doc, &text, kind) {
            let (next, change) = doc.edited(range.start, range.end, &new_text);
            checked = checked.after(&next, &change);
            doc = next;
            text.replace_range(range, &new_text);
        }
        prop_assert_eq!(doc.syntax().text(), text.clone());
        if check_every {
            let incremental =
                sorted(checked.diagnostics(&doc, &checks::module_wide_of(&doc, None)));
            let fresh = sorted(checks::all(&Document::parse(&text)));
            prop_assert_eq!(incremental, fresh, "after {:?} the text is\n{}", kind, text);
        }
    }
    let incremental = sorted(checked.diagnostics(&doc, &checks::module_wide_of(&doc, None)));
    let fresh = sorted(checks::all(&Document::parse(&text)));
    prop_assert_eq!(incremental, fresh, "final text\n{}", text);
    // The key of the module-wide answers, carried across the edits.
    let opened = Document::parse(&text).fingerprint_sum();
    prop_assert_eq!(doc.fingerprint_sum(), opened, "final text\n{}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Checked after every edit: versions whose findings were computed feed the next.
    #[test]
    fn incremental_diagnostics_equal_a_fresh_open(
        which in 0..7usize,
        kinds in prop::collection::vec(edit_kind(), 1..8),
    ) {
        run(&bases()[which], &kinds, true)?;
    }

    /// Checked only at the end: versions in between never computed their findings.
    #[test]
    fn skipped_versions_still_equal_a_fresh_open(
        which in 0..7usize,
        kinds in prop::collection::vec(edit_kind(), 1..12),
    ) {
        run(&bases()[which], &kinds, false)?;
    }
}

/// One step of an edit storm: the proptest edits, plus edits that cross
/// computation boundaries and the re-adding of a deleted computation.
#[derive(Debug, Clone)]
enum StormEdit {
    Edit(EditKind),
    /// Replace from a point inside the `k`-th computation to a point inside the next.
    Span {
        k: usize,
        from: f64,
        to: f64,
        snippet: usize,
    },
    /// Insert a previously deleted computation again, before the `k`-th one.
    Restore {
        k: usize,
    },
    /// Insert a multi-byte character (2, 3 or 4 bytes in UTF-8; 4 is two UTF-16 units).
    Wide {
        at: f64,
        which: usize,
    },
}

const WIDE: &[&str] = &["é", "∑", "😀", "\u{200b}"];

fn storm_edit() -> impl Strategy<Value = StormEdit> {
    prop_oneof![
        10 => edit_kind().prop_map(StormEdit::Edit),
        2 => (0..8usize, 0.0..1.0f64, 0.0..1.0f64, 0..SNIPPETS.len())
            .prop_map(|(k, from, to, snippet)| StormEdit::Span { k, from, to, snippet }),
        2 => (0..8usize).prop_map(|k| StormEdit::Restore { k }),
        2 => (0.0..1.0f64, 0..WIDE.len()).prop_map(|(at, which)| StormEdit::Wide { at, which }),
    ]
}

/// The byte edits of one storm step; a deleted computation goes onto `deleted`.
fn storm_byte_edits(
    doc: &Document,
    text: &str,
    edit: &StormEdit,
    deleted: &mut Vec<String>,
) -> Vec<(std::ops::Range<usize>, String)> {
    match edit {
        StormEdit::Edit(kind) => {
            if let EditKind::Delete { k } = kind {
                if let Some((range, _)) = computation(doc, *k) {
                    deleted.push(text[range].to_string());
                }
            }
            byte_edits(doc, text, kind)
        }
        StormEdit::Span {
            k,
            from,
            to,
            snippet,
        } => {
            let (Some((a, _)), Some((b, _))) = (computation(doc, *k), computation(doc, k + 1))
            else {
                return vec![];
            };
            let start = floor_boundary(text, a.start + (from * a.len() as f64) as usize);
            let end = floor_boundary(text, b.start + (to * b.len() as f64) as usize);
            if end <= start {
                return vec![];
            }
            vec![(start..end, SNIPPETS[*snippet].to_string())]
        }
        StormEdit::Restore { k } => {
            let Some(body) = deleted.pop() else {
                return vec![];
            };
            let at = computation(doc, *k).map_or(text.len(), |(r, _)| r.start);
            vec![(at..at, body)]
        }
        StormEdit::Wide { at, which } => {
            let at = floor_boundary(text, (at * text.len() as f64) as usize);
            vec![(at..at, WIDE[*which].to_string())]
        }
    }
}

fn computation_count(doc: &Document) -> usize {
    doc.syntax()
        .chunks()
        .iter()
        .filter(|c| c.kind() == hlo_lsp::syntax::ChunkKind::Computation)
        .count()
}

/// Chunk boundaries, kinds and names: what a fresh split of the text gives.
fn outline(doc: &Document) -> Vec<(std::ops::Range<usize>, String)> {
    doc.syntax()
        .chunks()
        .iter()
        .map(|c| {
            let name = c.outline().name.as_ref().map(|n| n.name.to_string());
            (c.range(), format!("{:?} {name:?}", c.kind()))
        })
        .collect()
}

/// 2,000 random edits from one seed, diagnostics asked for after each (so every
/// version reuses the last one's findings), compared with a fresh open of the text
/// every 5 edits and at the end: chunks, syntax errors and diagnostics.
fn storm(seed: u8, base: &str) {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = storm_edit();
    let mut text = base.to_string();
    let mut doc = Document::parse(&text);
    let mut checked = Checked::new(&doc);
    let mut deleted = vec![];
    let base_computations: Vec<String> = (0..computation_count(&doc))
        .filter_map(|k| computation(&doc, k).map(|(r, _)| text[r].to_string()))
        .collect();
    for step in 1..=2000 {
        let mut edit = strategy.new_tree(&mut runner).unwrap().current();
        // Keep the module alive: a storm that cut it to nothing would test little.
        let computations = computation_count(&doc);
        if computations < 3 {
            edit = StormEdit::Restore { k: step };
            if deleted.is_empty() {
                deleted.push(base_computations[step % base_computations.len()].clone());
            }
        } else if text.len() > 4 * base.len() {
            edit = StormEdit::Edit(EditKind::Delete { k: step });
        }
        for (range, new_text) in storm_byte_edits(&doc, &text, &edit, &mut deleted) {
            let (next, change) = doc.edited(range.start, range.end, &new_text);
            checked = checked.after(&next, &change);
            doc = next;
            text.replace_range(range, &new_text);
        }
        let incremental = sorted(checked.diagnostics(&doc, &checks::module_wide_of(&doc, None)));
        if step % 5 == 0 {
            assert_eq!(doc.syntax().text(), text, "seed {seed} step {step}");
            let fresh = Document::parse(&text);
            assert_eq!(
                outline(&doc),
                outline(&fresh),
                "seed {seed} step {step}: chunks"
            );
            assert_eq!(
                doc.syntax().syntax_errors(),
                fresh.syntax().syntax_errors(),
                "seed {seed} step {step}: syntax errors"
            );
            let fresh = sorted(checks::all(&fresh));
            assert_eq!(
                incremental, fresh,
                "seed {seed} step {step} ({edit:?}), text:\n{text}"
            );
        }
    }
}

/// Issue 14.6: edit storms over several seeds and bases (8 x 2,000 edits).
#[test]
fn edit_storms_equal_a_fresh_open() {
    let bases = bases();
    for seed in 0..8u8 {
        let base = &bases[(seed as usize * 3 + 1) % bases.len()];
        storm(seed, base);
    }
}

/// More storms than the suite runs, for hunting: `HLO_STORM_SEEDS=8..64` (a range)
/// or a list `11,12`. Ignored by default (minutes per dozen seeds).
#[test]
#[ignore]
fn edit_storms_from_more_seeds() {
    let bases = bases();
    let spec = std::env::var("HLO_STORM_SEEDS").unwrap_or_else(|_| "8..16".to_string());
    let seeds: Vec<u8> = match spec.split_once("..") {
        Some((a, b)) => (a.parse().unwrap()..b.parse().unwrap()).collect(),
        None => spec.split(',').map(|s| s.trim().parse().unwrap()).collect(),
    };
    for seed in seeds {
        let base = &bases[(seed as usize * 3 + 1) % bases.len()];
        storm(seed, base);
    }
}

/// Seed 11, step 754 of the storms: an edit defines `y`, which a computation with
/// syntax errors calls in a way only the parser's error recovery sees.
#[test]
fn a_name_defined_by_an_edit_reaches_a_caller_only_the_parser_sees() {
    let text = std::fs::read_to_string(format!("{DATA}/storms/seed11_step754.hlo.txt"))
        .expect("test data");
    let doc = Document::parse(&text);
    let checked = Checked::new(&doc);
    checked.diagnostics(&doc, &checks::module_wide_of(&doc, None));
    let (next, change) = doc.edited(1081, 1082, ")");
    let incremental = sorted(
        checked
            .after(&next, &change)
            .diagnostics(&next, &checks::module_wide_of(&next, None)),
    );
    let mut edited = text.clone();
    edited.replace_range(1081..1082, ")");
    let fresh = sorted(checks::all(&Document::parse(&edited)));
    assert!(fresh.iter().any(|d| d.code == "call-arity"), "{fresh:?}");
    assert_eq!(incremental, fresh);
}

/// A computation that begins where the previous one ends (inside a line): a finding
/// elsewhere that points at its name must move with it (found by the storms).
#[test]
fn a_finding_pointing_at_a_computation_that_touches_the_previous_one_moves_with_it() {
    let text = "ENTRY e {\n  x = f32[] parameter(0)\n  )r {\n  a = f32[] parameter(0)\n}\n\nr {\n  b = f32[] parameter(0)\n}\n";
    let doc = Document::parse(text);
    let mut checked = Checked::new(&doc);
    let before = checked.diagnostics(&doc, &checks::module_wide_of(&doc, None));
    assert!(
        before.iter().any(|d| d.code == "duplicate-name"),
        "{before:?}"
    );
    let at = text.find("x =").unwrap();
    let (next, change) = doc.edited(at, at, "é");
    checked = checked.after(&next, &change);
    let mut edited = text.to_string();
    edited.insert(at, 'é');
    assert_eq!(
        sorted(checked.diagnostics(&next, &checks::module_wide_of(&next, None))),
        sorted(checks::all(&Document::parse(&edited)))
    );
}

/// A finding shown in another computation finds it by name and rank among the
/// computations of that name (`main` twice here: the tiling finding of the second
/// file's fusion points at the second `main`). Renaming the first `main` makes the
/// second one the first: the finding must be placed again (found by the server's
/// rendering test).
#[test]
fn renaming_a_computation_moves_the_rank_of_its_namesakes() {
    let files = [
        "refactor/chains.hlo",
        "samples/xla/xla__backends__gpu__codegen__triton__tests__normalization__generic_emitter_multi_tiled_dims.hlo",
    ];
    let text: String = files
        .iter()
        .map(|f| std::fs::read_to_string(format!("{DATA}/{f}")).expect("test data"))
        .collect::<Vec<_>>()
        .join("\n");
    let doc = Document::parse(&text);
    let checked = Checked::new(&doc);
    let before = checked.diagnostics(&doc, &checks::module_wide_of(&doc, None));
    assert!(
        before
            .iter()
            .any(|d| d.code == "indivisible-tile" && !d.related.is_empty()),
        "{before:?}"
    );
    let at = text.find("ENTRY %main").expect("the first main") + "ENTRY %mai".len();
    let (next, change) = doc.edited(at, at, "\n");
    let incremental = sorted(
        checked
            .after(&next, &change)
            .diagnostics(&next, &checks::module_wide_of(&next, None)),
    );
    let mut edited = text.clone();
    edited.insert(at, '\n');
    assert_eq!(incremental, sorted(checks::all(&Document::parse(&edited))));
}
