//! A batch of queries answers structurally equal fusions once
//! (`analysis::analyze_many`): every answer must equal the query's own analysis,
//! on every HLO file the tests ship and on fusions that differ only in names, and
//! a result that names an instruction of its computation is never handed to
//! another computation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hlo_lsp::analysis::{analyze, analyze_many, view, Direction, Module, Query};

use crate::analysis_support::renamed;

fn hlo_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            hlo_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "hlo") {
            out.push(path);
        }
    }
}

/// Every question about every fusion and call of `module`: each output and each
/// operand, logical and physical.
fn queries(module: &Module) -> Vec<Query> {
    let mut out = vec![];
    for (ci, c) in module.computations().enumerate() {
        for (ii, n) in c.nodes.iter().enumerate() {
            if !n.is_composite() {
                continue;
            }
            for physical_layout in [false, true] {
                let query = |direction, output_id, operand_id| Query {
                    computation: ci,
                    instruction: ii,
                    direction,
                    output_id,
                    operand_id,
                    physical_layout,
                };
                for k in 0..n.op.shape.output_count().max(1) {
                    out.push(query(Direction::OutputToInput, k, 0));
                }
                for k in 0..n.operands.len() {
                    out.push(query(Direction::InputToOutput, 0, k));
                }
            }
        }
    }
    out
}

/// Runs the batch on `text`; asserts each answer equals the query's own; returns
/// the batch's answers.
fn batch_equals_one_by_one(
    text: &str,
    what: &str,
) -> (Vec<Query>, Vec<Arc<hlo_lsp::analysis::InstructionIndexing>>) {
    let (_, modules) = view::parse(text);
    let module = &modules[0];
    let queries = queries(module);
    let answers = analyze_many(module, &queries);
    assert_eq!(answers.len(), queries.len());
    for (q, answer) in queries.iter().zip(&answers) {
        assert_eq!(**answer, analyze(module, q), "{what}: {q:?}");
    }
    (queries, answers)
}

#[test]
fn batches_answer_every_shipped_file_as_single_queries_do() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = vec![];
    hlo_files(&data, &mut files);
    files.sort();
    assert!(files.len() > 30, "{} files", files.len());
    let mut shared = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if text.len() > 400_000 {
            continue; // the benchmark dump: covered by the renamed copies below
        }
        let (_, answers) = batch_equals_one_by_one(&text, &file.display().to_string());
        shared += answers.len() - distinct(&answers);
    }
    assert!(shared > 0, "no shipped file has two equal fusions");
}

fn distinct(answers: &[Arc<hlo_lsp::analysis::InstructionIndexing>]) -> usize {
    let mut seen: Vec<*const _> = answers.iter().map(Arc::as_ptr).collect();
    seen.sort();
    seen.dedup();
    seen.len()
}

/// The benchmark transformer's first fused computations, twice under different
/// names, each called by its own fusion from the entry.
#[test]
fn renamed_copies_of_fusions_share_their_answers() {
    let text = "HloModule m
%f (p0: f32[8,16], p1: f32[16]) -> f32[16,8] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16]{0} parameter(1)
  %b = f32[8,16]{1,0} broadcast(%p1), dimensions={1}
  %a = f32[8,16]{1,0} add(%p0, %b)
  ROOT %t = f32[16,8]{1,0} transpose(%a), dimensions={1,0}
}
";
    let entry = "ENTRY %e (x: f32[8,16], y: f32[16]) -> (f32[16,8], f32[16,8]) {
  %x = f32[8,16]{1,0} parameter(0)
  %y = f32[16]{0} parameter(1)
  %one = f32[16,8]{1,0} fusion(%x, %y), kind=kLoop, calls=%f
  %two = f32[16,8]{1,0} fusion(%x, %y), kind=kLoop, calls=%f.copy
  ROOT %t = (f32[16,8]{1,0}, f32[16,8]{1,0}) tuple(%one, %two)
}
";
    let module = format!("{text}{}{entry}", renamed(&text[12..], ".copy"));
    let (queries, answers) = batch_equals_one_by_one(&module, "renamed copies");
    let one = queries.iter().position(|q| q.instruction == 2).unwrap();
    let two = queries.iter().position(|q| q.instruction == 3).unwrap();
    assert!(Arc::ptr_eq(&answers[one], &answers[two]));
}

/// A dynamic-slice whose offset an instruction of the fusion computes: its
/// runtime variable is labelled with that instruction's name, which differs
/// between the copies, so each copy is answered on its own.
#[test]
fn answers_that_name_an_instruction_are_not_shared() {
    let text = "HloModule m
%f (p0: f32[10,8], p1: s32[]) -> f32[2,8] {
  %p0 = f32[10,8]{1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %one = s32[] constant(1)
  %offset = s32[] add(%p1, %one)
  %zero = s32[] constant(0)
  ROOT %ds = f32[2,8]{1,0} dynamic-slice(%p0, %offset, %zero), dynamic_slice_sizes={2,8}
}
";
    let entry = "ENTRY %e (x: f32[10,8], i: s32[]) -> (f32[2,8], f32[2,8]) {
  %x = f32[10,8]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %a = f32[2,8]{1,0} fusion(%x, %i), kind=kLoop, calls=%f
  %b = f32[2,8]{1,0} fusion(%x, %i), kind=kLoop, calls=%f.copy
  ROOT %t = (f32[2,8]{1,0}, f32[2,8]{1,0}) tuple(%a, %b)
}
";
    let module = format!("{text}{}{entry}", renamed(&text[12..], ".copy"));
    let (queries, answers) = batch_equals_one_by_one(&module, "dynamic-slice copies");
    let first = |instruction| {
        let i = queries
            .iter()
            .position(|q| q.instruction == instruction && q.direction == Direction::OutputToInput)
            .unwrap();
        &answers[i]
    };
    assert!(first(2).names_instructions());
    assert_ne!(first(2), first(3), "the labels name different instructions");
}

/// Two fusions equal but for a constant offset (folded into the map): distinct
/// structures, distinct answers.
#[test]
fn fusions_that_differ_in_a_constant_are_not_shared() {
    let fused = |name: &str, offset: i64| {
        format!(
            "%{name} (p0: f32[10,8]) -> f32[2,8] {{
  %p0 = f32[10,8]{{1,0}} parameter(0)
  %offset = s32[] constant({offset})
  %zero = s32[] constant(0)
  ROOT %ds = f32[2,8]{{1,0}} dynamic-slice(%p0, %offset, %zero), dynamic_slice_sizes={{2,8}}
}}
"
        )
    };
    let module = format!(
        "HloModule m
{}{}ENTRY %e (x: f32[10,8]) -> (f32[2,8], f32[2,8]) {{
  %x = f32[10,8]{{1,0}} parameter(0)
  %a = f32[2,8]{{1,0}} fusion(%x), kind=kLoop, calls=%one
  %b = f32[2,8]{{1,0}} fusion(%x), kind=kLoop, calls=%three
  ROOT %t = (f32[2,8]{{1,0}}, f32[2,8]{{1,0}}) tuple(%a, %b)
}}
",
        fused("one", 1),
        fused("three", 3)
    );
    let (queries, answers) = batch_equals_one_by_one(&module, "constant offsets");
    let at = |instruction| {
        queries
            .iter()
            .position(|q| q.instruction == instruction)
            .unwrap()
    };
    assert_ne!(answers[at(1)], answers[at(2)]);
}

/// Every shipped file, every output-to-input query of its fusions and calls asked
/// under one memo (`analysis::memo`, as a graph asks them): each answer equals the
/// query's own analysis without one, and the memo keeps answers to reuse.
#[test]
fn a_memo_answers_every_shipped_file_as_single_queries_do() {
    use hlo_lsp::analysis::memo::Memo;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = vec![];
    hlo_files(&data, &mut files);
    files.sort();
    let mut kept = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if text.len() > 400_000 {
            continue;
        }
        let (_, modules) = view::parse(&text);
        let module = &modules[0];
        let memo = Memo::new();
        let queries: Vec<Query> = queries(module)
            .into_iter()
            .filter(|q| q.direction == Direction::OutputToInput)
            .collect();
        // Twice: the second round is answered from the memo.
        for _ in 0..2 {
            for q in &queries {
                let with = memo.run(|| analyze(module, q));
                assert_eq!(with, analyze(module, q), "{}: {q:?}", file.display());
            }
        }
        kept += memo.len();
    }
    assert!(kept > 100, "{kept} answers kept");
}

/// `structure::same` (two computations compared side by side, as a graph compares
/// the computations its consumers call) says what the classes of the whole module
/// say, on every pair of computations of every small shipped file and on renamed
/// copies.
#[test]
fn same_agrees_with_the_classes_of_the_whole_module() {
    use hlo_lsp::analysis::structure::{same, Classes};
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = vec![];
    hlo_files(&data, &mut files);
    files.sort();
    let (mut pairs, mut equal) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if text.len() > 200_000 {
            continue;
        }
        let body = text.find('\n').map_or("", |i| &text[i + 1..]);
        let doubled = format!("{text}\n{}", renamed(body, ".copy").replace("ENTRY ", ""));
        for text in [text.as_str(), doubled.as_str()] {
            let (_, modules) = view::parse(text);
            let module = &modules[0];
            let classes = Classes::of(module);
            let n = module.len().min(120);
            for a in 0..n {
                for b in 0..n {
                    let by_class =
                        classes.class(a).is_some() && classes.class(a) == classes.class(b);
                    assert_eq!(same(module, a, b), by_class, "{}: {a} {b}", file.display());
                    pairs += 1;
                    equal += usize::from(by_class && a != b);
                }
            }
        }
    }
    assert!(
        pairs > 10_000 && equal > 100,
        "{pairs} pairs, {equal} equal"
    );
}

/// The model's word that two computations view alike (`view::twins`, which lets
/// a graph skip viewing 31 copies of a step to compare them) is never wrong:
/// on every shipped file, every pair of computations of equal length it calls
/// twins is equal by the views' own comparison (`structure::same` on views
/// built from the model, which have no such word), and renamed copies of the
/// benchmark step's fused computations are twins.
#[test]
fn twins_in_the_model_are_equal_in_their_views() {
    use hlo_lsp::analysis::structure;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut files = vec![];
    hlo_files(&data, &mut files);
    files.sort();
    let step = std::fs::read_to_string(data.join("bench/transformer.after.hlo")).unwrap();
    let (mut twins, mut pairs) = (0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let text = match text.len() > 400_000 {
            // The benchmark dump, with a renamed copy of its fused computations.
            true => {
                let fused = &step[step.find("\n%").unwrap()..step.find("\nENTRY").unwrap()];
                format!("{text}{}", renamed(fused, ".copy"))
            }
            false => text,
        };
        let parsed = hlo_lsp::model::parse_hlo(&text);
        for m in &parsed.modules {
            let viewed = view::from_model(m);
            let len = |c: usize| viewed.computation(c).nodes.len();
            for a in 0..viewed.len() {
                for b in a..viewed.len() {
                    if len(a) != len(b) || pairs > 200_000 {
                        continue;
                    }
                    pairs += 1;
                    if view::twins(m, a, b) {
                        twins += 1;
                        assert!(
                            structure::same(&viewed, a, b),
                            "{}: {a} {b}",
                            file.display()
                        );
                    }
                }
            }
        }
    }
    assert!(twins > 100, "{twins} twins of {pairs} pairs");
}
