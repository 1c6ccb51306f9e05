//! Trip counts and executions on real modules: every while of the llama3
//! benchmark (XLA's `hlo_llama3_8b_bf16_activation_offloading_1x8.hlo`, 32
//! layers in each loop) gets its count, and the computations under nested
//! loops, calls and conditionals run as often as the loops around them say.

use hlo_lsp::loops::{self, Kind, Source, TripCount};
use hlo_lsp::model::{self, ComputationId, Module, Opcode};

fn sample(name: &str) -> String {
    let path = format!(
        "{}/../tests/data/samples/xla/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn computation(module: &Module, name: &str) -> ComputationId {
    module
        .computation_by_name(name)
        .unwrap_or_else(|| panic!("no computation {name}"))
}

#[test]
fn every_llama3_loop_runs_its_32_layers() {
    let text =
        sample("xla__tools__benchmarks__hlo__hlo_llama3_8b_bf16_activation_offloading_1x8.hlo");
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let analysis = loops::analyze(module);
    assert_eq!(analysis.loops.len(), 2, "two while loops in the sample");
    for l in &analysis.loops {
        let c = module.computation(l.site.computation);
        let name = &c.instruction(l.site.instruction).name;
        assert_eq!(l.trip_count.n, Some(32), "{name}: {:?}", l.trip_count);
        assert!(matches!(l.trip_count.source, Source::Analysis(_)), "{name}");
        let induction = l.trip_count.induction.expect("an induction variable");
        assert_eq!(
            (induction.tuple_index, induction.init, induction.step),
            (0, Some(0), Some(1))
        );
        assert_eq!(l.runs, 1, "{name} runs once per step");
        let body = module
            .called_computation(c.instruction(l.site.instruction), "body")
            .expect("a body");
        let condition = module
            .called_computation(c.instruction(l.site.instruction), "condition")
            .expect("a condition");
        let runs = &analysis.executions;
        assert_eq!(runs[body.id.index()].times, 32, "{name}'s body");
        assert_eq!(runs[body.id.index()].kind, Kind::Code);
        assert_eq!(runs[condition.id.index()].times, 33, "{name}'s condition");
    }
    // Every fusion called from a body runs 32 times too.
    let body = computation(module, "region_3.6_spmd");
    for instr in module.computation(body).model().instructions.iter() {
        if instr.opcode == Opcode::Fusion {
            let fused = module.called_computation(instr, "calls").expect("fused");
            let e = &analysis.executions[fused.id.index()];
            assert!(e.times >= 32, "{}: {}", fused.name, e.times);
            assert_eq!(e.kind, Kind::Fused);
        }
    }
}

const NESTED: &str = r#"HloModule nested

inner_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  y = f32[8] negate(x)
  ROOT t = (s32[], f32[8]) tuple(next, y)
}

inner_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  w = (s32[], f32[8]) while(init), condition=inner_cond, body=inner_body
  y = f32[8] get-tuple-element(w), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(next, y)
}

outer_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

opaque_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  next = s32[] custom-call(i), custom_call_target="step"
  ROOT t = (s32[], f32[8]) tuple(next, x)
}

opaque_cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

then_branch {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}

else_branch {
  x = f32[8] parameter(0)
  ROOT y = f32[8] exponential(x)
}

known_body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  b = pred[] constant(true)
  y = f32[8] conditional(b, x, x), true_computation=then_branch, false_computation=else_branch
  ROOT t = (s32[], f32[8]) tuple(i, y)
}

known_cond {
  p = (s32[], f32[8]) parameter(0)
  ROOT b = pred[] constant(true)
}

ENTRY main {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, x)
  outer = (s32[], f32[8]) while(init), condition=outer_cond, body=outer_body
  y = f32[8] get-tuple-element(outer), index=1
  init2 = (s32[], f32[8]) tuple(zero, y)
  opaque = (s32[], f32[8]) while(init2), condition=opaque_cond, body=opaque_body
  z = f32[8] get-tuple-element(opaque), index=1
  init3 = (s32[], f32[8]) tuple(zero, z)
  known = (s32[], f32[8]) while(init3), condition=known_cond, body=known_body, backend_config={"known_trip_count":{"n":"7"}}
  ROOT r = f32[8] get-tuple-element(known), index=1
}
"#;

fn count_of(module: &Module, name: &str) -> TripCount {
    let entry = module.entry_computation().expect("entry");
    let instr = entry.model().instruction_by_name(name).expect("the while");
    loops::trip_count(module, entry, instr)
}

#[test]
fn nested_loops_multiply_and_unknown_counts_say_why() {
    let file = model::parse_hlo(NESTED);
    assert!(!file.has_errors(), "{:?}", file.diagnostics);
    let module = &file.modules[0];
    let runs = loops::executions(module);
    let times = |name: &str| runs[computation(module, name).index()].times;
    assert_eq!(times("outer_body"), 10);
    assert_eq!(times("outer_cond"), 11);
    assert_eq!(times("inner_body"), 30, "3 per outer iteration");
    assert_eq!(times("inner_cond"), 40);

    // A custom call updates the counter: no analysis can count it.
    let opaque = count_of(module, "opaque");
    assert_eq!(opaque.n, None);
    let why = opaque.unknown_reason().expect("a reason");
    assert!(why.contains("custom-call `next`"), "{why}");
    let body = &runs[computation(module, "opaque_body").index()];
    assert_eq!(body.times, 1, "an unknown loop counts once");
    assert_eq!(body.unknown_loops.len(), 1);

    // The while's own backend_config wins.
    let known = count_of(module, "known");
    assert_eq!((known.n, known.source), (Some(7), Source::BackendConfig));
    assert_eq!(times("known_body"), 7);
    let then_branch = &runs[computation(module, "then_branch").index()];
    assert_eq!(then_branch.times, 7, "as if taken every time");
    assert_eq!(then_branch.branches.len(), 1);
    assert_eq!(then_branch.branches[0].index, 0);
    let known_body = module.computation(computation(module, "known_body"));
    let conditional = known_body
        .model()
        .instructions
        .iter()
        .find(|i| i.opcode == Opcode::Conditional)
        .expect("a conditional");
    let branches = loops::branches(module, conditional);
    assert_eq!(
        branches,
        vec![
            (0, computation(module, "then_branch")),
            (1, computation(module, "else_branch"))
        ]
    );
}

#[test]
fn a_condition_comparing_with_a_loop_value_is_explained() {
    let text = r#"HloModule m
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(next, n)
}
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(2)
  m = s32[] multiply(i, c)
  ROOT lt = pred[] compare(m, c), direction=LT
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
"#;
    let file = model::parse_hlo(text);
    let module = &file.modules[0];
    // XLA evaluates the condition's root from the loop variable alone, not from a
    // value computed from it, and says so; evaluated from where the condition
    // reads the variable, `i * 2 < 2` holds once.
    let entry = module.entry_computation().expect("entry");
    let w = entry.model().instruction_by_name("w").expect("w");
    let l = loops::Loop::new(module, entry, w).expect("a loop");
    let why = loops::trip_count::compute_trip_count(&l, 128)
        .expect_err("XLA's analysis gives up")
        .to_string();
    assert!(why.contains("tests `m`"), "{why}");
    let count = count_of(module, "w");
    assert_eq!(count.n, Some(1));
    assert_eq!(count.source, Source::Analysis(loops::Method::Traced));

    // `10 > i` matches no pattern (the variable is not on the left): evaluated.
    let text = text.replace("compare(m, c), direction=LT", "compare(c, i), direction=GT");
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let count = count_of(module, "w");
    assert_eq!(count.n, Some(2));
    assert_eq!(count.source, Source::Analysis(loops::Method::Evaluated));

    let text = text
        .replace(
            "compare(c, i), direction=GT",
            "compare(i, n2), direction=LT",
        )
        .replace(
            "  c = s32[] constant(2)\n",
            "  c = s32[] constant(2)\n  n2 = s32[] get-tuple-element(p), index=1\n",
        );
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let count = count_of(module, "w");
    assert_eq!(count.n, None);
    let why = count.unknown_reason().expect("a reason");
    // `i < n` with `n` the while's argument: a bound known at run time only.
    assert!(why.contains("known only at run time (`n`)"), "{why}");
}

/// Every `.txt`/`.hlo` file under `tests/data` (dumps, samples).
fn shipped_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let mut out = vec![];
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "txt" || e == "hlo") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A differential test against XLA itself: the dumps hold whiles that XLA's
/// `WhileLoopTripCountAnnotator` annotated, most of them printed after later
/// passes reshaped the loop. The analysis, which does not read the annotation,
/// finds the same trip count, induction variable, start (and step, where the
/// pattern still matches) for every one of them; and every while of every
/// shipped file is analyzed without a panic.
#[test]
fn the_analysis_agrees_with_xlas_annotations_in_the_dumps() {
    let mut annotated = 0;
    let mut whiles = 0;
    let mut counted = 0;
    let mut misses = vec![];
    for path in shipped_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.contains(" while(") {
            continue;
        }
        let file = model::parse_hlo(&text);
        for module in &file.modules {
            for c in module.computations() {
                for instr in c.model().instructions.iter() {
                    if instr.opcode != Opcode::While {
                        continue;
                    }
                    whiles += 1;
                    let Some(l) = loops::Loop::new(module, c, instr) else {
                        continue;
                    };
                    let ours = loops::count::analyzed(&l);
                    counted += usize::from(ours.n.is_some());
                    if let Some(why) = ours.unknown_reason() {
                        eprintln!("unknown: {} {}: {why}", path.display(), instr.name);
                    }
                    let Some(config) = instr.attrs().backend_config() else {
                        continue;
                    };
                    let Some(n) = config["known_trip_count"]["n"].as_str() else {
                        continue;
                    };
                    annotated += 1;
                    let field = |group: &str, key: &str| {
                        config[group][key]
                            .as_str()
                            .and_then(|k| k.parse::<i64>().ok())
                    };
                    let xla = (
                        n.parse::<u64>().ok(),
                        field("known_induction_variable", "tuple_index"),
                        field("known_init_step", "init"),
                    );
                    let induction = ours.induction;
                    let mine = (
                        ours.n,
                        induction.map(|i| i.tuple_index as i64),
                        induction.and_then(|i| i.init),
                    );
                    // The step, where the pattern still matches.
                    let step_differs = induction
                        .and_then(|i| i.step)
                        .is_some_and(|s| Some(s) != field("known_init_step", "step"));
                    if mine != xla || step_differs {
                        misses.push(format!(
                            "{} {}: ours {mine:?} {:?}, XLA {xla:?}",
                            path.display(),
                            instr.name,
                            ours.source
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{whiles} whiles, {counted} counted by the analysis, {annotated} annotated by XLA");
    assert!(misses.is_empty(), "{}", misses.join("\n"));
    assert!(annotated >= 30, "only {annotated} annotated whiles found");
}

/// Broken and hostile loops end with a reason, never a panic or a hang: a body
/// that calls itself, a missing condition, a counter that never moves, and an
/// update at the end of a chain of 5,000 additions.
#[test]
fn hostile_loops_end_with_a_reason() {
    let mut chain = String::new();
    let mut last = "i".to_string();
    for k in 0..5000 {
        chain.push_str(&format!("  a{k} = s32[] add({last}, zero)\n"));
        last = format!("a{k}");
    }
    let text = format!(
        r#"HloModule m
self_body {{
  p = (s32[]) parameter(0)
  ROOT c = (s32[]) call(p), to_apply=self_body
}}
long_body {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  zero = s32[] constant(0)
{chain}  one = s32[] constant(1)
  next = s32[] add({last}, one)
  ROOT t = (s32[]) tuple(next)
}}
stuck_body {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  zero = s32[] constant(0)
  next = s32[] add(i, zero)
  ROOT t = (s32[]) tuple(next)
}}
cond {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}}
ENTRY e {{
  zero = s32[] constant(0)
  init = (s32[]) tuple(zero)
  w1 = (s32[]) while(init), condition=cond, body=self_body
  w2 = (s32[]) while(init), condition=missing, body=stuck_body
  w3 = (s32[]) while(init), condition=cond, body=stuck_body
  ROOT w4 = (s32[]) while(init), condition=cond, body=long_body
}}
"#
    );
    let file = model::parse_hlo(&text);
    let module = &file.modules[0];
    let analysis = loops::analyze(module);
    let count = |name: &str| {
        analysis
            .loops
            .iter()
            .find(|l| {
                module
                    .computation(l.site.computation)
                    .instruction(l.site.instruction)
                    .name
                    .as_ref()
                    == name
            })
            .map(|l| l.trip_count.clone())
            .expect(name)
    };
    for name in ["w1", "w2", "w3", "w4"] {
        let c = count(name);
        assert_eq!(c.n, None, "{name}: {c:?}");
        assert!(!c.unknown_reason().unwrap_or("").is_empty(), "{name}");
    }
    // 5,000 additions of zero before the increment: XLA's analysis wants one
    // operation, and the evaluation stops before the stack does.
    assert!(count("w4")
        .unknown_reason()
        .is_some_and(|r| r.contains("not one operation")));
    assert!(count("w3")
        .unknown_reason()
        .is_some_and(|r| r.contains("129 evaluated iterations")));
    assert!(count("w2")
        .unknown_reason()
        .is_some_and(|r| r.contains("w2")));
}
