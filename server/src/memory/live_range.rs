//! XLA's `*-live-range.txt` (`HloLiveRange::ToString`): the flattened schedule (the
//! entry's instructions with each while condition and body, call and branch laid out
//! before the instruction that runs them), the live range of every value over it, and
//! the values live at the peak.
//!
//! Unknown sections (the stack-trace breakdown, whatever a newer XLA adds) are
//! skipped; unreadable lines of known sections become [`Note`]s.

use super::Note;

/// One value's live range: `while.6{1}:27-31`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueRange {
    pub instruction: String,
    pub shape_index: String,
    pub start: u64,
    pub end: u64,
}

/// One value live at the peak: `xs.1{}: 24576 bytes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeakValue {
    pub instruction: String,
    pub shape_index: String,
    pub bytes: u64,
}

/// A whole file, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveRanges {
    /// `HloLiveRange (max N)`: the end of the schedule.
    pub max: Option<u64>,
    /// Instruction names by their time in the flattened schedule.
    pub schedule: Vec<String>,
    pub ranges: Vec<ValueRange>,
    /// `Live ranges at T (peak)`: T.
    pub peak_time: Option<u64>,
    /// The values listed under it, largest first as XLA prints them.
    pub peak: Vec<PeakValue>,
    pub notes: Vec<Note>,
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Sequence,
    Ranges,
    Peak,
}

/// `name{1,2}` → (`name`, `{1,2}`); a name without an index is `{}`.
pub(crate) fn split_index(named: &str) -> (&str, &str) {
    match named.find('{') {
        Some(at) => (&named[..at], &named[at..]),
        None => (named, "{}"),
    }
}

impl LiveRanges {
    pub fn parse(text: &str, file: &str) -> LiveRanges {
        let mut out = LiveRanges::default();
        let mut section = Section::None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if let Some(rest) = line.strip_prefix("HloLiveRange (max ") {
                out.max = rest.trim_end_matches("):").parse().ok();
                continue;
            }
            if line == "InstructionSequence:" {
                section = Section::Sequence;
                continue;
            }
            if line == "BufferLiveRange:" {
                section = Section::Ranges;
                continue;
            }
            if let Some(rest) = line.strip_prefix("Live ranges at ") {
                out.peak_time = rest.split_whitespace().next().and_then(|t| t.parse().ok());
                section = Section::Peak;
                continue;
            }
            // A header of a section this reader does not know ends the known one.
            if !raw.starts_with("    ") || line.is_empty() {
                section = Section::None;
                continue;
            }
            let read = match section {
                Section::Sequence => out.read_step(line),
                Section::Ranges => out.read_range(line),
                Section::Peak => out.read_peak(line),
                Section::None => Some(()),
            };
            if read.is_none() {
                out.notes.push(Note {
                    file: Some(file.to_string()),
                    line: Some(i + 1),
                    message: format!("unreadable live-range line: {line}"),
                });
            }
        }
        if out.schedule.is_empty() {
            out.notes.push(Note {
                file: Some(file.to_string()),
                line: None,
                message: "no instruction sequence found (not a live-range file, or cut short)"
                    .into(),
            });
        }
        out
    }

    /// `12:fusion.3`
    fn read_step(&mut self, line: &str) -> Option<()> {
        let (time, name) = line.split_once(':')?;
        let time: usize = time.parse().ok()?;
        (time == self.schedule.len()).then_some(())?;
        self.schedule.push(name.to_string());
        Some(())
    }

    /// `while.6{1}:27-31`
    fn read_range(&mut self, line: &str) -> Option<()> {
        let (named, span) = line.rsplit_once(':')?;
        let (start, end) = span.split_once('-')?;
        let (instruction, shape_index) = split_index(named);
        self.ranges.push(ValueRange {
            instruction: instruction.to_string(),
            shape_index: shape_index.to_string(),
            start: start.parse().ok()?,
            end: end.parse().ok()?,
        });
        Some(())
    }

    /// `xs.1{}: 24576 bytes (cumulative: 49152 bytes)`
    fn read_peak(&mut self, line: &str) -> Option<()> {
        let (named, rest) = line.split_once(": ")?;
        let bytes = rest.split_whitespace().next()?.parse().ok()?;
        let (instruction, shape_index) = split_index(named);
        self.peak.push(PeakValue {
            instruction: instruction.to_string(),
            shape_index: shape_index.to_string(),
            bytes,
        });
        Some(())
    }

    /// The live range of `instruction{shape_index}`.
    pub fn range_of(&self, instruction: &str, shape_index: &str) -> Option<&ValueRange> {
        self.ranges
            .iter()
            .find(|r| r.instruction == instruction && r.shape_index == shape_index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sections_and_skips_unknown_ones() {
        let text = "HloLiveRange (max 3):\n  InstructionSequence:\n    0:p\n    1:f\n    2:t\n  BufferLiveRange:\n    p{}:0-3\n    f{}:1-x\n    t{0}:2-3\n  Live ranges at 1 (peak):\n    p{}: 16 bytes (cumulative: 16 bytes)\n  Stack trace breakdown for peak usage: 16 bytes\n    main (100.0%, total: 16 bytes)\n";
        let lr = LiveRanges::parse(text, "f.txt");
        assert_eq!(lr.max, Some(3));
        assert_eq!(lr.schedule, ["p", "f", "t"]);
        assert_eq!(lr.ranges.len(), 2);
        assert_eq!(lr.range_of("t", "{0}").map(|r| r.start), Some(2));
        assert_eq!(lr.peak_time, Some(1));
        assert_eq!(lr.peak.len(), 1);
        assert_eq!(lr.notes.len(), 1, "{:?}", lr.notes);
        assert_eq!(lr.notes[0].line, Some(8));
    }
}
