//! The conformance vectors copied from XLA's tests (`tests/data/conformance/xla/`,
//! attribution in its README), read as JSON lines.

use serde_json::Value;

/// Every record of `tests/data/conformance/xla/NAME` (JSON lines; blank lines skipped).
pub fn xla_records(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../tests/data/conformance/xla/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

/// Runs `check` on every record (a panic counts as a failure), prints each failure
/// with its reason and the count, and fails when fewer than `floor` pass: the floor
/// only goes up as more records pass.
pub fn run_with_floor(
    records: &[Value],
    floor: usize,
    check: impl Fn(&Value) -> Result<(), String> + std::panic::RefUnwindSafe,
) {
    let mut passed = 0;
    for record in records {
        let name = record["name"].as_str().unwrap_or("?");
        let outcome = std::panic::catch_unwind(|| check(record))
            .unwrap_or_else(|_| Err("panicked".to_string()));
        match outcome {
            Ok(()) => passed += 1,
            Err(why) => eprintln!("FAIL {name}: {why}"),
        }
    }
    eprintln!("{passed} of {} records pass", records.len());
    assert!(
        passed >= floor,
        "{passed} records pass, fewer than the floor {floor}"
    );
}
