//! Conformance of the simplifier and the map text against XLA's and tinygrad's own
//! test vectors (tests/data/conformance, see the README there for attribution).
//!
//! Every case must be sound (equal to its reference at every point of the domain)
//! and at least as simple as the expected answer (fewer floordiv+mod nodes, then
//! fewer nodes): 260/260 tinygrad cases, 47/47 XLA expressions, 79/79 XLA maps. Serialization round trips
//! must print back exactly, ignoring whitespace. Each suite prints its score and
//! lists the cases that are not as simple.

use crate::algebra_support;

use algebra_support::{check_equivalent, data_path, map_cost, squash, Score};
use hlo_lsp::algebra::{DivSpelling, Expr, IndexingMap, Interval, PrintOptions};
use serde_json::Value;

/// Every case of every suite (issue 17).
const REQUIRED_PERCENT: f64 = 100.0;

fn lines(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(data_path(rel))
        .unwrap_or_else(|e| panic!("reading {rel}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

fn parse(text: &str) -> IndexingMap {
    IndexingMap::parse(text).unwrap_or_else(|e| panic!("parsing {text:?}: {e}"))
}

/// Builds `(dims)[symbols] -> (expr), domain: ...` from a vars table; names
/// starting with `s` are range variables when `xla_names`, everything else a
/// dimension.
fn map_text(
    vars: &serde_json::Map<String, Value>,
    constraints: &[(String, i64, i64)],
    expr: &str,
    xla_names: bool,
) -> String {
    let mut dims = Vec::new();
    let mut syms = Vec::new();
    for name in vars.keys() {
        if xla_names && name.starts_with('s') {
            syms.push(name.clone());
        } else {
            dims.push(name.clone());
        }
    }
    let mut domain: Vec<String> = dims
        .iter()
        .chain(&syms)
        .map(|n| format!("{n} in [{}, {}]", vars[n][0], vars[n][1]))
        .collect();
    domain.extend(
        constraints
            .iter()
            .map(|(e, lo, hi)| format!("{e} in [{lo}, {hi}]")),
    );
    let syms = if syms.is_empty() {
        String::new()
    } else {
        format!("[{}]", syms.join(", "))
    };
    format!(
        "({}){syms} -> ({expr}), domain: {}",
        dims.join(", "),
        domain.join(", ")
    )
}

/// Expression suites: simplify the one-result map, check it against the input,
/// and compare the result's cost with the expected expression's.
fn expression_case(score: &mut Score, name: &str, input: &str, expected: &str) {
    if std::env::var("ALGEBRA_TRACE").is_ok() {
        eprintln!("case {name}: {input}");
    }
    score.total += 1;
    let original = parse(input);
    let simplified = original.simplified();
    if let Err(e) = check_equivalent(&original, &simplified) {
        score.unsound.push(format!(
            "{name}: {e}\n    in:  {input}\n    out: {simplified}"
        ));
        return;
    }
    let expected_map = parse(expected);
    let ours = if simplified.is_known_empty() {
        (0, 0)
    } else {
        cost(&simplified.results()[0])
    };
    let theirs = cost(&expected_map.results()[0]);
    if ours > theirs {
        let got = if simplified.is_known_empty() {
            "KNOWN EMPTY".to_string()
        } else {
            simplified.expr_to_string(&simplified.results()[0], DivSpelling::FloorDiv)
        };
        let want = expected_map.expr_to_string(&expected_map.results()[0], DivSpelling::FloorDiv);
        score.not_simple.push(format!(
            "{name}: got `{got}` {ours:?}, expected `{want}` {theirs:?}"
        ));
    }
}

fn cost(e: &Expr) -> (usize, usize) {
    (e.div_mod_count(), e.node_count())
}

#[test]
fn tinygrad_symbolic_suite() {
    let mut score = Score::default();
    for case in lines("conformance/tinygrad/symbolic.jsonl") {
        let vars = case["vars"].as_object().expect("vars");
        let name = case["test"].as_str().unwrap();
        let input = map_text(vars, &[], case["expr"].as_str().unwrap(), false);
        let expected = map_text(vars, &[], case["expected_neutral"].as_str().unwrap(), false);
        expression_case(&mut score, name, &input, &expected);
    }
    let pct = score.report("tinygrad/symbolic");
    assert!(score.unsound.is_empty(), "unsound simplifications");
    assert!(
        pct >= REQUIRED_PERCENT,
        "only {pct:.1}% at least as simple as tinygrad:\n{}",
        score.not_simple.join("\n")
    );
}

#[test]
fn xla_simplifier_exprs_suite() {
    let mut score = Score::default();
    for case in lines("conformance/xla/simplifier_exprs.jsonl") {
        let vars = case["vars"].as_object().expect("vars");
        let name = case["test"].as_str().unwrap();
        let constraints: Vec<(String, i64, i64)> = case["constraints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_string(),
                    c[1].as_i64().unwrap(),
                    c[2].as_i64().unwrap(),
                )
            })
            .collect();
        let input = map_text(vars, &constraints, case["expr_xla"].as_str().unwrap(), true);
        let expected = map_text(vars, &[], case["expected"].as_str().unwrap(), true);
        expression_case(&mut score, name, &input, &expected);
    }
    let pct = score.report("xla/simplifier_exprs");
    assert!(score.unsound.is_empty(), "unsound simplifications");
    assert!(
        pct >= REQUIRED_PERCENT,
        "only {pct:.1}% at least as simple as XLA:\n{}",
        score.not_simple.join("\n")
    );
}

/// Maps XLA builds in C++ in the tests, written as text (same variables, bounds
/// and names as the C++ constructors).
fn constructed_input(test: &str, role: &str) -> Option<&'static str> {
    Some(match (test, role) {
        ("RTVar", _) => "(d0, d1)[range]{rt0, rt1} -> (d1, d0, range + rt0, rt1), domain: d0 in [0, 99], d1 in [0, 43], range in [-99, 99], rt0 in [0, 2], rt1 in [0, 7]",
        ("Composition_RTVar", "producer") => "(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 226], rt0 in [0, 0], rt1 in [0, 1], rt2 in [0, 226]",
        ("Composition_RTVar", "consumer") => "(d0, d1)[s] -> (0, d1, s), domain: d0 in [0, 0], d1 in [0, 1], s in [0, 31]",
        ("Composition_OnlyRTVars", "producer") => "(d0, d1){ps_0, ps_1} -> (d0 + ps_0, d1 + ps_1 * 4), domain: d0 in [0, 24], d1 in [0, 15], ps_0 in [0, 2], ps_1 in [0, 1]",
        ("Composition_OnlyRTVars", "consumer") => "(d0, d1){cs_0, cs_1} -> (d0 + cs_0 * 2, d1 + cs_1 * 3), domain: d0 in [0, 24], d1 in [0, 15], cs_0 in [0, 25], cs_1 in [0, 16]",
        ("RemoveUnusedSymbols_ConstraintsWithRTVars", _) => "(d0)[s0, s1, s2]{rt0, rt1} -> (d0 * 4 + s1 + rt0 - 42), domain: d0 in [0, 31], s0 in [0, 0], s1 in [0, 1], s2 in [0, 2], rt0 in [0, 3], rt1 in [0, 4]",
        ("ConvertSymbolsToDimensions", _) => "(d0)[s0, s1]{rt0, rt1} -> (d0 * 4 + s0 + s1 + 2 * rt0 + 3 * rt1 - 42), domain: d0 in [0, 31], s0 in [0, 0], s1 in [0, 1], rt0 in [0, 3], rt1 in [0, 4]",
        _ => return None,
    })
}

fn input_map(case: &Value, role: &str) -> IndexingMap {
    let test = case["test"].as_str().unwrap();
    if let Some(text) = constructed_input(test, role) {
        return parse(text);
    }
    if let Some(text) = case["input"].as_str() {
        return parse(text);
    }
    parse(
        case["inputs"][role]
            .as_str()
            .unwrap_or_else(|| panic!("{test}: no input {role}")),
    )
}

/// Applies the steps of one `simplifier.jsonl` case. Returns (reference for the
/// soundness check, our result).
fn run_map_case(case: &Value) -> (IndexingMap, IndexingMap) {
    let test = case["test"].as_str().unwrap();
    let ops: Vec<&str> = case["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    let steps: Vec<&str> = case["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    if test == "KnownEmpty_Composition" && !ops.is_empty() {
        let map = input_map(case, "indexing_map");
        let empty = input_map(case, "known_empty");
        let out = if ops[0].contains("(indexing_map, known_empty)") {
            map.compose(&empty)
        } else {
            empty.compose(&map)
        };
        return (IndexingMap::known_empty(1, 1), out);
    }
    let mut map = if ops.first() == Some(&"ComposeIndexingMaps") {
        input_map(case, "consumer").compose(&input_map(case, "producer"))
    } else {
        input_map(case, "indexing_map")
    };
    let mut reference = map.clone();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            "ComposeIndexingMaps" => {}
            "Simplify" => {
                map.simplify();
            }
            "RemoveUnusedVars" => {
                map.remove_unused_vars();
                reference = map.clone();
            }
            "RemoveUnusedSymbols" => {
                map.remove_unused_symbols();
                reference = map.clone();
            }
            "RescaleSymbols" => {
                map.rescale_symbols();
                reference = map.clone();
            }
            "ConvertRangeVariablesToDimensions" => {
                map.convert_range_vars_to_dims_at(&[0, 2]);
                reference = map.clone();
            }
            "ConvertSymbolsToDimensions" => {
                map.convert_symbols_to_dims();
                reference = map.clone();
            }
            "AddConstraint" => {
                let step = steps
                    .iter()
                    .find(|s| s.contains("AddConstraint"))
                    .copied()
                    .unwrap_or(steps[i]);
                let (expr, range) = constraint_of_step(test, step);
                map.add_constraint(expr, range);
                reference = map.clone();
            }
            other => panic!("{test}: unknown op {other}"),
        }
    }
    (reference, map)
}

/// The constraint an `AddConstraint` step adds (the C++ expression, transcribed).
fn constraint_of_step(test: &str, _step: &str) -> (Expr, Interval) {
    match test {
        "RemoveUnusedSymbols_ConstraintsWithRTVars" => (
            Expr::dim(0) * 4 + Expr::range(1) + Expr::runtime(0),
            Interval::new(24, 459),
        ),
        "ConvertSymbolsToDimensions" => (
            Expr::dim(0) * 4 + Expr::range(0) + Expr::runtime(0) * 2,
            Interval::new(24, 459),
        ),
        "Simplifier_Mod1" => ((Expr::dim(0) - 5).modulo(1), Interval::new(0, 0)),
        other => panic!("{other}: no transcription of its AddConstraint step"),
    }
}

#[test]
fn xla_simplifier_map_suite() {
    let mut score = Score::default();
    let mut printed_exactly = 0;
    for case in lines("conformance/xla/simplifier.jsonl") {
        let test = case["test"].as_str().unwrap().to_string();
        score.total += 1;
        let (reference, ours) = run_map_case(&case);
        if let Err(e) = check_equivalent(&reference, &ours) {
            score.unsound.push(format!("{test}: {e}\n    out: {ours}"));
            continue;
        }
        let expected_text = case["expected"].as_str().unwrap_or("");
        let expected = if expected_text.trim().is_empty() {
            reference.clone()
        } else {
            parse(expected_text)
        };
        let slash = PrintOptions {
            div: DivSpelling::Slash,
            multiline: false,
        };
        if squash(&ours.print(&slash)) == squash(&expected.print(&slash)) {
            printed_exactly += 1;
        }
        if map_cost(&ours) > map_cost(&expected) {
            score.not_simple.push(format!(
                "{test}: got `{}` {:?}, expected `{}` {:?}",
                ours.print(&slash),
                map_cost(&ours),
                expected.print(&slash),
                map_cost(&expected)
            ));
        }
    }
    println!(
        "xla/simplifier: {printed_exactly}/{} print exactly like XLA's expected text",
        score.total
    );
    let pct = score.report("xla/simplifier");
    assert!(score.unsound.is_empty(), "unsound map operations");
    assert!(
        pct >= REQUIRED_PERCENT,
        "only {pct:.1}% at least as simple as XLA:\n{}",
        score.not_simple.join("\n")
    );
}

#[test]
fn xla_serialization_round_trips() {
    let mut failures = Vec::new();
    let cases = lines("conformance/xla/serialization.jsonl");
    let slash = PrintOptions {
        div: DivSpelling::Slash,
        multiline: true,
    };
    for case in &cases {
        let test = case["test"].as_str().unwrap();
        let expected = case["expected"].as_str().unwrap();
        let printed = match case["input"].as_str() {
            Some(input) => match IndexingMap::parse(input) {
                Ok(m) => m.print(&slash),
                Err(e) => format!("parse error {e}"),
            },
            None if test == "UndefinedMap" => IndexingMap::undefined().print(&slash),
            // Symbolic-map printer cases: the expected text itself must round-trip.
            None => match IndexingMap::parse(expected) {
                Ok(m) => m.print(&slash),
                Err(e) => format!("parse error {e}"),
            },
        };
        if squash(&printed) != squash(expected) {
            failures.push(format!(
                "{test}: printed `{printed}`, expected `{expected}`"
            ));
        }
    }
    println!(
        "suite xla/serialization: {} cases, {} round trip exactly",
        cases.len(),
        cases.len() - failures.len()
    );
    assert!(
        failures.is_empty(),
        "round trips differ:\n{}",
        failures.join("\n")
    );
}
