//! A computation's memory over its schedule, laid out for a picture: the total bytes
//! live at each step (the curve whose top is the peak), and one row per buffer with
//! its live range, the buffers live at the peak first, then the largest, capped so
//! that a 50,000-instruction schedule stays drawable ("… N more"). What someone out
//! of memory looks at: when the peak happens, and which buffers stand in it.
//!
//! Plain data ([`Timeline`]), drawn as SVG by [`svg`] and sent to editors as JSON by
//! [`Timeline::to_json`]; the computation is the ENTRY (the whole schedule) or one
//! that runs in it (a while body: its steps, with what its callers keep live).

pub mod svg;

use std::ops::Range;

use serde_json::{json, Value};

use super::source::source_line;
use super::{Buffer, Report, Source};
use crate::model::stack_frames::StackFrameIndex;
use crate::model::{Module, Shape};

/// Rows drawn before "… N more".
pub const DEFAULT_ROWS: usize = 40;

/// One buffer's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub instruction: String,
    pub shape_index: String,
    /// Its shape without layout (the tuple element at `shape_index`), if known.
    pub shape: Option<String>,
    pub bytes: u64,
    /// Inclusive steps of the flattened schedule, as XLA writes them.
    pub start: u64,
    pub end: u64,
    pub at_peak: bool,
    /// Its allocation and offset: values sharing them are one buffer under several
    /// names (a loop's carried value).
    pub place: Option<(u64, u64)>,
    /// `file.py:LINE` of the user's program, when the metadata says.
    pub source: Option<String>,
    /// The instruction's name in the document, for a click to jump to.
    pub range: Option<Range<usize>>,
}

/// A peak: the step, the bytes live then and at whose instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelinePeak {
    pub time: u64,
    pub bytes: u64,
    pub instruction: Option<String>,
    /// Buffers (values with bytes) live then.
    pub buffers: usize,
}

/// A computation's memory over its steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    pub source: Source,
    pub computation: String,
    /// Its steps in the flattened schedule (all of it for ENTRY).
    pub steps: Range<u64>,
    /// Bytes live at each step of `steps` (index 0 is `steps.start`).
    pub curve: Vec<u64>,
    /// The top of the curve (its earliest step): the most memory live at once.
    pub peak: Option<TimelinePeak>,
    /// XLA's live-range "peak" line (`Live ranges at T (peak)`, or the estimate's,
    /// found the same way) when it is not the heap's peak: XLA's count takes
    /// each value by itself (a loop's carried value once per name) and a buffer that
    /// ends at a step as still live when the next one starts, so its "peak" can miss
    /// the most memory (tests/data/memory/outer_broadcast: a 384 KiB temporary, a
    /// 5 KiB "peak").
    pub reported: Option<TimelinePeak>,
    pub rows: Vec<Row>,
    /// Buffers live in the steps that got no row, and their bytes.
    pub more: usize,
    pub more_bytes: u64,
}

/// The timeline of computation `computation` of `module` (ENTRY when it is the
/// entry, else the steps its span covers); `None` when it does not run in the
/// report's schedule (a fused computation) or the schedule is empty.
pub fn lay_out(
    report: &Report,
    module: &Module,
    computation: &str,
    frames: &StackFrameIndex,
    max_rows: usize,
) -> Option<Timeline> {
    let is_entry = module
        .entry_computation()
        .is_some_and(|c| c.model().name == computation);
    let (steps, reported) = if is_entry {
        (
            0..report.schedule.len() as u64,
            report.xla_live_range_peak.clone(),
        )
    } else {
        let span = report.spans.iter().find(|s| s.computation == computation)?;
        (span.times.clone(), report.peak_in(computation))
    };
    if steps.is_empty() {
        return None;
    }
    let inside: Vec<usize> = (0..report.buffers.len())
        .filter(|&i| report.buffers[i].bytes > 0 && overlaps(&report.buffers[i], &steps))
        .collect();
    let (curve, peak) = match &report.heap {
        // The heap as XProf counts it, and the peak the lens and hover name.
        Some(heap) => {
            let curve: Vec<u64> = steps.clone().map(|t| heap.at(t)).collect();
            let own = if is_entry {
                report.peak.clone()
            } else {
                report.peak_in(computation)
            };
            let peak = own.map(|p| TimelinePeak {
                time: p.time,
                bytes: p.bytes,
                instruction: p
                    .instruction
                    .clone()
                    .or_else(|| report.instruction_at(p.time).map(str::to_string)),
                buffers: p.live.len(),
            });
            (curve, peak)
        }
        None => {
            let curve = curve(&report.buffers, &inside, &steps);
            let peak = top(report, &inside, &curve, steps.start);
            (curve, peak)
        }
    };
    let reported = if report.heap.is_some() {
        is_entry
            .then(|| report.xla_live_range_peak.clone())
            .flatten()
    } else {
        reported
    };
    let order = row_order(report, &inside, peak.as_ref().map(|p| p.time));
    let rows: Vec<Row> = order
        .iter()
        .take(max_rows)
        .map(|&(i, at_peak)| row(&report.buffers[i], at_peak, module, frames))
        .collect();
    let rest = &order[rows.len()..];
    let reported = reported
        .map(|p| TimelinePeak {
            time: p.time,
            bytes: p.bytes,
            instruction: report.instruction_at(p.time).map(str::to_string),
            buffers: p
                .live
                .iter()
                .filter(|&&i| report.buffers[i].bytes > 0)
                .count(),
        })
        .filter(|r| {
            peak.as_ref()
                .is_none_or(|p| (p.time, p.bytes) != (r.time, r.bytes))
        });
    Some(Timeline {
        source: report.source,
        computation: computation.to_string(),
        curve,
        peak,
        reported,
        rows,
        more: rest.len(),
        more_bytes: rest.iter().map(|&(i, _)| report.buffers[i].bytes).sum(),
        steps,
    })
}

fn overlaps(b: &Buffer, steps: &Range<u64>) -> bool {
    b.start < steps.end && b.end >= steps.start
}

/// The curve's top, its earliest step, with how many buffers are live then.
fn top(report: &Report, inside: &[usize], curve: &[u64], first: u64) -> Option<TimelinePeak> {
    let bytes = curve.iter().copied().max().filter(|&b| b > 0)?;
    let time = first + curve.iter().position(|&b| b == bytes)? as u64;
    Some(TimelinePeak {
        time,
        bytes,
        instruction: report.instruction_at(time).map(str::to_string),
        buffers: inside
            .iter()
            .filter(|&&i| report.buffers[i].live_at(time))
            .count(),
    })
}

/// The buffers of `inside` in row order, each with whether it is live at the peak:
/// those live at `peak` first, then the rest, each part largest first (the earliest,
/// then the name, among equals).
fn row_order(report: &Report, inside: &[usize], peak: Option<u64>) -> Vec<(usize, bool)> {
    let b = &report.buffers;
    let mut order: Vec<(usize, bool)> = inside
        .iter()
        .map(|&i| (i, peak.is_some_and(|t| b[i].live_at(t))))
        .collect();
    order.sort_by(|&(x, px), &(y, py)| {
        py.cmp(&px)
            .then(b[y].bytes.cmp(&b[x].bytes))
            .then(b[x].start.cmp(&b[y].start))
            .then(b[x].instruction.cmp(&b[y].instruction))
            .then(x.cmp(&y))
    });
    order
}

/// Bytes live at each step of `steps`: a buffer holds memory from its start to its
/// end, both included, and values that share a place (an allocation and offset: a
/// while loop's tuple elements, its body's parameter, the value it carries) count
/// once while any of them is live: they are one buffer. By differences: linear in
/// steps, `n log n` in buffers.
fn curve(buffers: &[Buffer], inside: &[usize], steps: &Range<u64>) -> Vec<u64> {
    let n = (steps.end - steps.start) as usize;
    let mut delta = vec![0i128; n + 1];
    for (bytes, times) in places(buffers, inside, steps) {
        for t in times {
            delta[(t.start - steps.start) as usize] += bytes as i128;
            delta[(t.end - steps.start) as usize] -= bytes as i128;
        }
    }
    let mut live = 0i128;
    delta[..n]
        .iter()
        .map(|d| {
            live += d;
            live.max(0) as u64
        })
        .collect()
}

/// Each place's size and the steps it holds memory (half-open, within `steps`, the
/// overlapping live ranges of its values merged); a value without a place is one.
fn places(buffers: &[Buffer], inside: &[usize], steps: &Range<u64>) -> Vec<(u64, Vec<Range<u64>>)> {
    let mut by_place: rustc_hash::FxHashMap<(u64, u64, u64), Vec<Range<u64>>> =
        rustc_hash::FxHashMap::default();
    let mut out = Vec::new();
    for &i in inside.iter().filter(|&&i| overlaps(&buffers[i], steps)) {
        let b = &buffers[i];
        let times = b.start.max(steps.start)..b.end.min(steps.end - 1) + 1;
        match (b.allocation, b.offset) {
            (Some(a), Some(o)) => by_place.entry((a, o, b.bytes)).or_default().push(times),
            _ => out.push((b.bytes, vec![times])),
        }
    }
    for ((_, _, bytes), mut times) in by_place {
        times.sort_by_key(|t| t.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(times.len());
        for t in times {
            match merged.last_mut() {
                Some(last) if t.start <= last.end => last.end = last.end.max(t.end),
                _ => merged.push(t),
            }
        }
        out.push((bytes, merged));
    }
    out
}

fn row(b: &Buffer, at_peak: bool, module: &Module, frames: &StackFrameIndex) -> Row {
    let found = module.find_instruction(&b.instruction).map(|(c, i)| {
        let c = module.computation(c);
        let instruction = c.instruction(i);
        (
            element(&instruction.shape, &b.shape_index).map(Shape::logical_text),
            c.abs(instruction.name_range),
        )
    });
    Row {
        instruction: b.instruction.to_string(),
        shape_index: b.shape_index.to_string(),
        shape: found.as_ref().and_then(|(s, _)| s.clone()),
        bytes: b.bytes,
        start: b.start,
        end: b.end,
        at_peak,
        place: b.allocation.zip(b.offset),
        source: source_line(module, frames, &b.instruction),
        range: found.map(|(_, r)| r),
    }
}

/// The sub-shape at `index` (`{}`, `{1}`, `{1,0}`) of `shape`.
fn element<'s>(shape: &'s Shape, index: &str) -> Option<&'s Shape> {
    let inner = index.trim_start_matches('{').trim_end_matches('}');
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .try_fold(shape, |s, k| s.tuple_element(k.parse().ok()?))
}

impl Row {
    /// `%name` or `%name{1}`.
    pub fn label(&self) -> String {
        match self.shape_index.as_str() {
            "{}" => format!("%{}", self.instruction),
            index => format!("%{}{index}", self.instruction),
        }
    }
}

fn peak_json(p: &TimelinePeak) -> Value {
    json!({
        "time": p.time,
        "bytes": p.bytes,
        "instruction": p.instruction,
        "buffers": p.buffers,
    })
}

impl Timeline {
    /// The most bytes live at one step.
    pub fn curve_max(&self) -> u64 {
        self.curve.iter().copied().max().unwrap_or(0)
    }

    /// The timeline for an editor: every row with its place in the document made by
    /// `range` (the server's LSP range), and the SVG to show.
    pub fn to_json(&self, range: impl Fn(&Range<usize>) -> Value) -> Value {
        json!({
            "computation": self.computation,
            "source": self.source.as_str(),
            "source_note": self.source.describe(),
            "steps": [self.steps.start, self.steps.end],
            "peak": self.peak.as_ref().map(peak_json),
            "reported_peak": self.reported.as_ref().map(peak_json),
            "rows": self.rows.iter().map(|r| json!({
                "instruction": r.instruction,
                "shape_index": r.shape_index,
                "shape": r.shape,
                "bytes": r.bytes,
                "live": [r.start, r.end],
                "at_peak": r.at_peak,
                "allocation": r.place.map(|p| p.0),
                "offset": r.place.map(|p| p.1),
                "source": r.source,
                "range": r.range.as_ref().map(&range),
            })).collect::<Vec<_>>(),
            "more": self.more,
            "more_bytes": self.more_bytes,
            "svg": svg::to_svg(self),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(name: &str, bytes: u64, start: u64, end: u64) -> Buffer {
        Buffer {
            instruction: name.into(),
            shape_index: "{}".into(),
            bytes,
            start,
            end,
            allocation: None,
            offset: None,
        }
    }

    #[test]
    fn the_curve_counts_both_ends_and_clips_to_the_steps() {
        let buffers = [
            buffer("a", 4, 0, 2),
            buffer("b", 8, 2, 5),
            buffer("c", 1, 6, 9),
        ];
        assert_eq!(
            curve(&buffers, &[0, 1, 2], &(0..10)),
            [4, 4, 12, 8, 8, 8, 1, 1, 1, 1]
        );
        assert_eq!(curve(&buffers, &[0, 1, 2], &(2..4)), [12, 8]);
    }

    #[test]
    fn values_sharing_a_place_count_once() {
        let placed = |name, start, end| Buffer {
            allocation: Some(0),
            offset: Some(0),
            ..buffer(name, 8, start, end)
        };
        // A loop's carried value under three names: one place of 8 bytes.
        let buffers = [
            placed("init", 0, 2),
            placed("phi", 2, 4),
            placed("out", 4, 5),
            buffer("x", 1, 1, 1),
        ];
        assert_eq!(curve(&buffers, &[0, 1, 2, 3], &(0..6)), [8, 9, 8, 8, 8, 8]);
    }

    #[test]
    fn a_shape_index_picks_the_tuple_element() {
        let f = Shape::array(crate::model::PrimitiveType::F32, vec![2]);
        let t = Shape::Tuple(vec![f.clone(), Shape::Tuple(vec![f.clone()])]);
        assert_eq!(element(&t, "{}"), Some(&t));
        assert_eq!(element(&t, "{1,0}"), Some(&f));
        assert_eq!(element(&t, "{7}"), None);
    }
}
