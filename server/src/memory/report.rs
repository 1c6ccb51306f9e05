//! What a memory answer holds, whichever its [`Source`]: the allocations, the four
//! totals, every buffer's live range over the flattened schedule, and the peak with
//! the buffers live at it. The CLI, hover, lenses and diagnostics all read this.

use std::ops::Range;

use super::live_range::LiveRanges;
use super::{Allocation, BufferAssignment, Note, Source, Totals};

/// One value with its place and live range (times in the flattened schedule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub instruction: String,
    pub shape_index: String,
    pub bytes: u64,
    pub start: u64,
    pub end: u64,
    /// The allocation and offset it was given (by XLA, or by the estimate).
    pub allocation: Option<u64>,
    pub offset: Option<u64>,
}

impl Buffer {
    /// Whether it holds memory at time `t` (ranges are inclusive, as XLA's).
    pub fn live_at(&self, t: u64) -> bool {
        self.start <= t && t <= self.end
    }
}

/// The most memory live at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peak {
    /// The time in the schedule.
    pub time: u64,
    pub bytes: u64,
    /// Indices into [`Report::buffers`] live then, largest first.
    pub live: Vec<usize>,
}

/// A computation's place in the flattened schedule: its instructions run in
/// `times` (a while body between its loop's operands and the loop).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub computation: String,
    pub times: Range<u64>,
}

/// A whole answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub source: Source,
    pub totals: Totals,
    pub allocations: Vec<Allocation>,
    /// Instruction names by time.
    pub schedule: Vec<String>,
    pub spans: Vec<Span>,
    pub buffers: Vec<Buffer>,
    pub peak: Option<Peak>,
    pub notes: Vec<Note>,
}

impl Report {
    /// XLA's answer, from its buffer assignment and (when present) live ranges.
    pub fn from_xla(assignment: BufferAssignment, ranges: Option<LiveRanges>) -> Report {
        let totals = Totals::of(&assignment.allocations);
        let mut notes = assignment.notes.clone();
        let ranges = ranges.unwrap_or_default();
        notes.extend(ranges.notes.iter().cloned());
        let buffers = ranges
            .ranges
            .iter()
            .map(|r| {
                let placed = assignment.allocations.iter().find_map(|a| {
                    a.values
                        .iter()
                        .find(|v| v.instruction == r.instruction && v.shape_index == r.shape_index)
                        .map(|v| (a.index, v))
                });
                Buffer {
                    instruction: r.instruction.clone(),
                    shape_index: r.shape_index.clone(),
                    bytes: placed.map(|(_, v)| v.size).unwrap_or(0),
                    start: r.start,
                    end: r.end,
                    allocation: placed.map(|(a, _)| a),
                    offset: placed.map(|(_, v)| v.offset),
                }
            })
            .collect::<Vec<_>>();
        let peak = xla_peak(&ranges, &buffers).or_else(|| peak_of(&buffers, None));
        Report {
            source: Source::BufferAssignment,
            totals,
            allocations: assignment.allocations,
            schedule: ranges.schedule,
            spans: Vec::new(),
            buffers,
            peak,
            notes,
        }
    }

    /// The instruction at the peak.
    pub fn peak_at(&self) -> Option<&str> {
        let peak = self.peak.as_ref()?;
        self.schedule.get(peak.time as usize).map(String::as_str)
    }

    /// The buffers of `instruction` (one per shape index).
    pub fn buffers_of<'a>(&'a self, instruction: &'a str) -> impl Iterator<Item = &'a Buffer> {
        self.buffers
            .iter()
            .filter(move |b| b.instruction == instruction)
    }

    /// The peak within a computation's span (a while body's own peak), counting
    /// everything live then, the loop's callers' buffers included.
    pub fn peak_in(&self, computation: &str) -> Option<Peak> {
        let span = self.spans.iter().find(|s| s.computation == computation)?;
        peak_of(&self.buffers, Some(span.times.clone()))
    }

    /// The name of time `t`'s instruction.
    pub fn instruction_at(&self, t: u64) -> Option<&str> {
        self.schedule.get(t as usize).map(String::as_str)
    }
}

/// XLA's own peak (`Live ranges at T (peak)`), its values matched to buffers.
fn xla_peak(ranges: &LiveRanges, buffers: &[Buffer]) -> Option<Peak> {
    let time = ranges.peak_time?;
    if ranges.peak.is_empty() {
        return None;
    }
    let live = ranges
        .peak
        .iter()
        .filter_map(|p| {
            buffers
                .iter()
                .position(|b| b.instruction == p.instruction && b.shape_index == p.shape_index)
        })
        .collect();
    Some(Peak {
        time,
        bytes: ranges.peak.iter().map(|p| p.bytes).sum(),
        live,
    })
}

/// The time with the most bytes live (the earliest of equals), within `window` when
/// given, and what is live then, largest first (XLA's `ComputePeakMemoryMoment`).
pub fn peak_of(buffers: &[Buffer], window: Option<Range<u64>>) -> Option<Peak> {
    let mut events: Vec<(u64, bool, u64)> = Vec::with_capacity(buffers.len() * 2);
    for b in buffers {
        events.push((b.start, false, b.bytes));
        events.push((b.end + 1, true, b.bytes));
    }
    events.sort_unstable();
    let inside = |t: u64| window.as_ref().is_none_or(|w| w.contains(&t));
    let (mut live, mut best) = (0i128, None::<(u64, i128)>);
    // Each event counts as it comes, starts before ends of the same time, as XLA's
    // `ComputePeakMemoryMoment` does (so a buffer starting when others end can make
    // the peak's time).
    for &(time, is_end, bytes) in &events {
        live += if is_end {
            -(bytes as i128)
        } else {
            bytes as i128
        };
        if inside(time) && best.is_none_or(|(_, b)| live > b) {
            best = Some((time, live));
        }
    }
    if let Some(w) = &window {
        // A window that no event starts in still has what was live when it began.
        if best.is_none() && !w.is_empty() {
            best = Some((w.start, 0));
        }
    }
    let (time, _) = best?;
    let mut live: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].live_at(time))
        .collect();
    // Largest first, then by name and index (XLA's listing order).
    live.sort_by(|&a, &b| {
        let (x, y) = (&buffers[a], &buffers[b]);
        y.bytes
            .cmp(&x.bytes)
            .then_with(|| x.instruction.cmp(&y.instruction))
            .then_with(|| x.shape_index.cmp(&y.shape_index))
    });
    Some(Peak {
        time,
        bytes: live.iter().map(|&i| buffers[i].bytes).sum(),
        live,
    })
}

impl Report {
    /// Fills [`Report::spans`] from the schedule's names (XLA's files name
    /// instructions, not computations): each computation runs from its first
    /// scheduled instruction to its last.
    pub fn attach_spans(&mut self, module: &crate::model::Module) {
        self.spans = module
            .computations()
            .filter_map(|c| {
                let c = c.model();
                let mut times = self
                    .schedule
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| c.instruction_id(n).is_some())
                    .map(|(t, _)| t as u64);
                let first = times.next()?;
                let last = times.next_back().unwrap_or(first);
                Some(Span {
                    computation: c.name.clone(),
                    times: first..last + 1,
                })
            })
            .collect();
    }
}
