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
