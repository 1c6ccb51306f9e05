//! XLA's coalescing tests (`coalescing_analysis_test.cc`, 31 records in
//! `tests/data/conformance/xla/coalescing.jsonl`, device RTX A6000) against
//! `hlo_lsp::coalescing`: every `tiled` and `tiled_bandwidth` vector must
//! match; `emitter` and `producer_consumer_heuristic` vectors that do not are
//! listed in `KNOWN_MISSES` with the reason.

use hlo_lsp::analysis::view;
use hlo_lsp::coalescing::heuristic::{self, At};
use hlo_lsp::coalescing::{self, Device, Options, Subject};
use hlo_lsp::model;
use serde_json::Value;

/// Emitter/heuristic vectors this implementation decides differently, and why.
const KNOWN_MISSES: &[(&str, &str)] = &[];

fn records() -> Vec<Value> {
    crate::conformance_support::xla_records("coalescing.jsonl")
}

/// The actual answer of one record: coalesced per operand, or utilization per operand.
fn answer(record: &Value) -> Value {
    let text = record["hlo"].as_str().unwrap();
    let file = model::parse_hlo(text);
    let module = &file.modules[0];
    let entry = module.entry_computation().unwrap();
    let root = entry.root_instruction().unwrap();
    let v = view::borrowed(module);
    let subject = Subject::new(module, &v, entry, root).unwrap();
    let device = Device::a6000();
    match record["kind"].as_str().unwrap() {
        "producer_consumer_heuristic" => {
            let producer = root.operands[0].target.unwrap().index();
            let kind = heuristic::kind_of(&subject, &device);
            let at = |node| At {
                computation: entry.id.index(),
                node,
            };
            let h =
                heuristic::read_coalesced(&v, &kind, at(producer), Some(at(root.id.index())), 32);
            Value::from(vec![h.coalesced])
        }
        kind => {
            let sizes = record
                .get("tile_sizes")
                .and_then(Value::as_array)
                .map(|s| s.iter().map(|x| x.as_i64().unwrap()).collect());
            let report = coalescing::analyze(
                &subject,
                &Options {
                    sizes,
                    device,
                    operand: None,
                },
                None,
            );
            if kind == "tiled_bandwidth" {
                Value::from(
                    report
                        .operands
                        .iter()
                        .map(|o| o.bandwidth_utilization.unwrap_or(-1.0))
                        .collect::<Vec<_>>(),
                )
            } else {
                Value::from(
                    report
                        .operands
                        .iter()
                        .map(|o| o.coalesced)
                        .collect::<Vec<_>>(),
                )
            }
        }
    }
}

#[test]
fn xla_coalescing_vectors() {
    let mut misses = vec![];
    let mut counts = (0, 0);
    for record in records() {
        let name = record["test"].as_str().unwrap().to_string();
        let kind = record["kind"].as_str().unwrap();
        let expected = if kind == "tiled_bandwidth" {
            record["expected_bandwidth_utilization_per_operand"].clone()
        } else {
            record["expected_coalesced_per_operand"].clone()
        };
        let actual = answer(&record);
        let tiled = kind.starts_with("tiled");
        if tiled {
            counts.0 += 1;
        } else {
            counts.1 += 1;
        }
        if actual != expected {
            misses.push((name, kind.to_string(), expected, actual));
        }
    }
    assert_eq!(counts, (14, 17), "records per family");
    let tiled_misses: Vec<_> = misses.iter().filter(|m| m.1.starts_with("tiled")).collect();
    assert!(
        tiled_misses.is_empty(),
        "tiled vectors must all match: {tiled_misses:#?}"
    );
    let unexplained: Vec<_> = misses
        .iter()
        .filter(|m| !KNOWN_MISSES.iter().any(|(n, _)| *n == m.0))
        .collect();
    assert!(
        unexplained.is_empty(),
        "unexplained misses: {unexplained:#?}"
    );
    // A listed miss that now matches must leave the list.
    for (name, _) in KNOWN_MISSES {
        assert!(misses.iter().any(|m| m.0 == *name), "{name} matches now");
    }
    assert!(
        misses.len() <= 2,
        "at most 2 of the 17 emitter vectors may miss"
    );
}

#[test]
fn reasons_name_the_pattern() {
    let record = records()
        .into_iter()
        .find(|r| r["test"] == "RhsTransposedLayout")
        .unwrap();
    let text = record["hlo"].as_str().unwrap();
    let file = model::parse_hlo(text);
    let module = &file.modules[0];
    let entry = module.entry_computation().unwrap();
    let root = entry.root_instruction().unwrap();
    let v = view::borrowed(module);
    let subject = Subject::new(module, &v, entry, root).unwrap();
    let report = coalescing::analyze(&subject, &Options::default(), None);
    assert_eq!(
        report.operands[1].line(),
        "p1 f32[100,200]{0,1}: not coalesced — a warp reads stride 100 (400 B); 1/16 of each transaction used"
    );
    assert_eq!(report.operands[1].bandwidth_utilization, Some(1.0 / 16.0));
    assert_eq!(
        report.operands[0].reason,
        "a warp reads 32 consecutive elements (128 B); each transaction fully used"
    );
}
