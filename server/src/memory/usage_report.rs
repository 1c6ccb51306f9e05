//! XLA's `*-memory-usage-report.txt`: per memory space the total bytes of its
//! allocations (`Total bytes: 112656 (110.0KiB)`). The tables under it repeat what the
//! buffer assignment says and are not read.

use super::Note;

/// One memory space's total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceTotal {
    /// `Memory Space: default (color=0)`: `default`.
    pub space: String,
    pub total_bytes: u64,
}

/// A whole file, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsageReport {
    pub spaces: Vec<SpaceTotal>,
    pub notes: Vec<Note>,
}

impl UsageReport {
    pub fn parse(text: &str, file: &str) -> UsageReport {
        let mut out = UsageReport::default();
        let mut space = String::from("default");
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("Memory Space: ") {
                space = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or("default")
                    .to_string();
            } else if let Some(rest) = line.strip_prefix("Total bytes: ") {
                match rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                    Some(total_bytes) => out.spaces.push(SpaceTotal {
                        space: space.clone(),
                        total_bytes,
                    }),
                    None => out.notes.push(Note {
                        file: Some(file.to_string()),
                        line: Some(i + 1),
                        message: format!("unreadable total: {line}"),
                    }),
                }
            }
        }
        out
    }

    /// The bytes of every memory space together.
    pub fn total_bytes(&self) -> u64 {
        self.spaces.iter().map(|s| s.total_bytes).sum()
    }
}
