//! XLA's while-loop analysis tests (`while_loop_analysis_test.cc`,
//! `while_loop_trip_count_annotator_test.cc`; 54 records in
//! `tests/data/conformance/xla/while_trip_count.jsonl`) against
//! `hlo_lsp::loops`. Each record calls the function its test calls, on the
//! module's ENTRY while, and compares what the test expects. The number that
//! pass may only go up: `PASSING` is a floor, and every record that fails is
//! printed with what is off.

use hlo_lsp::loops::{annotate, auxiliary, induction, trip_count, Loop};
use hlo_lsp::model::{self, Opcode};
use serde_json::Value;

/// Records that must pass (a floor: raise it when more pass).
const PASSING: usize = 54;

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("while_trip_count.jsonl")
}

/// `Some(n)` or `None` for a JSON number or `null`.
fn optional(expected: &Value, key: &str) -> Option<i64> {
    expected[key].as_i64()
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: T, expected: T) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {expected:?}"))
    }
}

/// The initial value a template test passes (`"s32[] 5 (literal of param.1)"`).
fn indvar_init(args: &Value) -> i64 {
    let text = args["indvar_init"].as_str().unwrap_or("");
    text.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no initial value in {text:?}"))
}

fn run(record: &Value) -> Result<(), String> {
    let text = record["hlo"].as_str().ok_or("no hlo")?;
    let file = model::parse_hlo(text);
    let module = file.modules.first().ok_or("no module")?;
    let entry = module.entry_computation().ok_or("no entry")?;
    let while_instr = entry
        .model()
        .instructions
        .iter()
        .find(|i| i.opcode == Opcode::While)
        .ok_or("no while in ENTRY")?;
    let l = Loop::new(module, entry, while_instr).ok_or("not a complete while")?;
    let function = record["function"].as_str().unwrap_or("");
    let expected = &record["expected"];
    let args = &record["args"];
    let index = || args["indvar_tuple_idx"].as_u64().unwrap_or(0) as usize;
    match function {
        "MatchTrivialLoopTripCount" => same(
            "trip count",
            trip_count::match_trivial_trip_count(&l, index(), indvar_init(args)),
            optional(expected, "trip_count"),
        ),
        "MatchTrivialLoopTripCount + MatchTrivialLoopRange" => {
            same(
                "trip count",
                trip_count::match_trivial_trip_count(&l, index(), indvar_init(args)),
                optional(expected, "trip_count"),
            )?;
            same(
                "range",
                trip_count::match_trivial_range(&l).is_some(),
                !expected["range"].is_null(),
            )
        }
        "MatchTrivialLoopRange" => {
            let range = trip_count::match_trivial_range(&l).ok_or("no range")?;
            same(
                "range (min, max, step)",
                (range.min, range.max, range.step),
                (
                    optional(expected, "range_min").unwrap_or(-1),
                    optional(expected, "range_max").unwrap_or(-1),
                    optional(expected, "range_step").unwrap_or(-1),
                ),
            )
        }
        "MatchTrivialLoopInductionStep" => same(
            "step",
            trip_count::induction_step(&l, index()),
            optional(expected, "step"),
        ),
        "ComputeWhileLoopTripCountUpperBound" => same(
            "upper bound",
            trip_count::trip_count_upper_bound(&l),
            optional(expected, "trip_count_upper_bound"),
        ),
        "ComputeWhileLoopTripCount" => same(
            "trip count",
            trip_count::compute_trip_count(&l, trip_count::MAX_BRUTE_FORCE_ITERS)
                .ok()
                .map(|(n, _)| n),
            optional(expected, "trip_count"),
        ),
        "GetLoopInductionVarTupleIdx"
        | "GetLoopInductionVarTupleIdx + ComputeWhileLoopTripCount" => {
            same(
                "induction variable",
                induction::tuple_index(&l).ok().map(|k| k as i64),
                optional(expected, "indvar_tuple_idx"),
            )?;
            if expected.get("trip_count").is_some() {
                same(
                    "trip count",
                    trip_count::compute_trip_count(&l, trip_count::MAX_BRUTE_FORCE_ITERS)
                        .ok()
                        .map(|(n, _)| n),
                    optional(expected, "trip_count"),
                )?;
            }
            Ok(())
        }
        "GetAuxiliaryLoopInductionVars" => {
            let aux = auxiliary::auxiliary_induction_vars(&l);
            same(
                "count",
                aux.len() as i64,
                optional(expected, "count").unwrap_or(-1),
            )?;
            if let Some(first) = expected["aux[0]"].as_str() {
                let k: usize = first
                    .rsplit(' ')
                    .next()
                    .and_then(|k| k.parse().ok())
                    .unwrap_or(0);
                let gte = l.body.instruction(aux[0]);
                same(
                    "aux[0]",
                    (gte.opcode.name(), gte.attrs().tuple_index),
                    ("get-tuple-element", Some(k as i32)),
                )?;
            }
            Ok(())
        }
        f if f.starts_with("WhileLoopTripCountAnnotator") => annotator(&l, expected),
        other => Err(format!("no runner for {other}")),
    }
}

/// The annotator's records: the config it writes and the constants it forwards.
fn annotator(l: &Loop<'_>, expected: &Value) -> Result<(), String> {
    let config = annotate::annotate(l);
    same(
        "changed",
        config.is_some(),
        expected["changed"].as_bool() == Some(true),
    )?;
    let Some(config) = config else { return Ok(()) };
    let object = expected.as_object().ok_or("expected is not an object")?;
    for (key, want) in object {
        let dynamic = |k: usize| config.dynamic_variables.get(k);
        let got: Option<i64> = match key.as_str() {
            "changed" => continue,
            "known_trip_count.n" => config.known_trip_count,
            "known_induction_variable.tuple_index" => Some(config.known_induction_variable as i64),
            "known_init_step.init" => config.known_init_step.map(|s| s.init),
            "known_init_step.step" => config.known_init_step.map(|s| s.step),
            "has_known_trip_count" => {
                same(
                    key,
                    config.known_trip_count.is_some(),
                    want.as_bool() == Some(true),
                )?;
                continue;
            }
            "has_known_init_step" => {
                same(
                    key,
                    config.known_init_step.is_some(),
                    want.as_bool() == Some(true),
                )?;
                continue;
            }
            "dynamic_variables_size" => Some(config.dynamic_variables.len() as i64),
            "dynamic_variables[0].tuple_index" => dynamic(0).map(|v| v.tuple_index as i64),
            "dynamic_variables[0].init" => dynamic(0).and_then(|v| v.init_step).map(|s| s.init),
            "dynamic_variables[0].step" => dynamic(0).and_then(|v| v.init_step).map(|s| s.step),
            "entry_has_s32_scalar_constant" => config.forwarded.as_ref().map(|f| f.value),
            "count_s32_scalar_constant_4_at_least" => {
                let f = config.forwarded.as_ref().ok_or("nothing forwarded")?;
                same("forwarded value", f.value, 4)?;
                let at_least = want.as_i64().unwrap_or(0) as usize;
                if f.uses.len() < at_least {
                    return Err(format!(
                        "{} uses forwarded, expected at least {at_least}",
                        f.uses.len()
                    ));
                }
                continue;
            }
            "every_dynamic_slice_operand1_is_constant" => {
                let f = config.forwarded.as_ref().ok_or("nothing forwarded")?;
                let c = l.computation;
                let all = c
                    .model()
                    .instructions
                    .iter()
                    .filter(|i| i.opcode == Opcode::DynamicSlice)
                    .all(|i| {
                        i.operands
                            .get(1)
                            .and_then(|o| o.target)
                            .is_some_and(|t| f.uses.contains(&t))
                    });
                same(key, all, want.as_bool() == Some(true))?;
                continue;
            }
            other => return Err(format!("no check for {other}")),
        };
        same(key, got, want.as_i64())?;
    }
    Ok(())
}

#[test]
fn while_loop_records_match_xla() {
    let records = records();
    assert_eq!(records.len(), 54);
    crate::conformance_support::run_with_floor(&records, PASSING, run);
}
