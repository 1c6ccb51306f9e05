//! What a memory answer holds, whichever its [`Source`]: the allocations, the four
//! totals, every buffer's live range over the flattened schedule, and the peak with
//! the buffers live at it. The CLI, hover, lenses and diagnostics all read this.

use std::ops::Range;
use std::sync::Arc;

use super::live_range::LiveRanges;
use super::viewer::{self, Heap, HeapSource, TracePeak};
use super::{Allocation, BufferAssignment, Note, Source, Totals};

/// One value with its place and live range (times in the flattened schedule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Shared with the schedule and the allocations: a report is kept for each of the
    /// last versions, and a large module has tens of thousands of buffers.
    pub instruction: Arc<str>,
    pub shape_index: Arc<str>,
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
    /// The instruction that made it, when it is not simply the one scheduled at
    /// `time` (XProf's `peak_op`: the value whose allocation raised the heap).
    pub instruction: Option<String>,
}

/// Steps of a peak that lasts, looked at by [`Report::peak_steps`].
pub const MAX_PEAK_STEPS: usize = 32;

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
    pub schedule: Vec<Arc<str>>,
    pub spans: Vec<Span>,
    pub buffers: Vec<Buffer>,
    /// The peak users see: the heap's, as XProf's memory viewer computes it
    /// ([`Report::heap`]).
    pub peak: Option<Peak>,
    /// The heap over the schedule (XProf's rule, [`super::viewer`]).
    pub heap: Option<Heap>,
    /// XLA's live-range file's own "peak" line (`Live ranges at T (peak)`), or for
    /// the estimate the same count over its live ranges: each value by itself, a
    /// buffer that ends at a step still live when the next starts, the outputs only
    /// from when they are written.
    pub xla_live_range_peak: Option<Peak>,
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
                        .find(|v| {
                            *v.instruction == *r.instruction && *v.shape_index == *r.shape_index
                        })
                        .map(|v| (a.index, v))
                });
                Buffer {
                    instruction: r.instruction.as_str().into(),
                    shape_index: r.shape_index.as_str().into(),
                    bytes: placed.map(|(_, v)| v.size).unwrap_or(0),
                    start: r.start,
                    end: r.end,
                    allocation: placed.map(|(a, _)| a),
                    offset: placed.map(|(_, v)| v.offset),
                }
            })
            .collect::<Vec<_>>();
        let xla_live_range_peak = xla_peak(&ranges, &buffers).or_else(|| peak_of(&buffers, None));
        let mut report = Report {
            source: Source::BufferAssignment,
            totals,
            allocations: assignment.allocations,
            schedule: ranges.schedule.iter().map(|n| n.as_str().into()).collect(),
            spans: Vec::new(),
            buffers,
            peak: None,
            heap: None,
            xla_live_range_peak,
            notes,
        };
        report.measure_heap(None);
        report
    }

    /// Fills [`Report::heap`] and [`Report::peak`] by XProf's rule: from the heap
    /// simulator's trace when `trace` (read from the `.hlo.pb`) is given, else
    /// rebuilt from the allocations and live ranges. A trace whose peak instruction
    /// the schedule does not name keeps the rebuilt step.
    pub fn measure_heap(&mut self, trace: Option<&TracePeak>) {
        if self.schedule.is_empty() && self.buffers.is_empty() {
            self.heap = None;
            self.peak = self.xla_live_range_peak.clone();
            return;
        }
        let mut heap = viewer::from_buffers(&self.allocations, &self.buffers, self.schedule.len());
        if let Some(trace) = trace {
            heap.source = HeapSource::Trace;
            heap.indefinite = trace.indefinite;
            heap.peak.bytes = trace.bytes;
            heap.peak.instruction = trace.instruction.clone();
            let step = trace
                .instruction
                .as_ref()
                .and_then(|name| self.schedule.iter().position(|s| **s == **name));
            if let Some(step) = step {
                heap.peak.step = step as u64;
            }
        }
        let live = self.held_at(heap.peak.step);
        self.peak = Some(Peak {
            time: heap.peak.step,
            bytes: heap.peak.bytes,
            live,
            instruction: heap.peak.instruction.clone(),
        });
        self.heap = Some(heap);
    }

    /// What holds the heap at step `t`, largest first: each temporary live then (one
    /// per place), and for each allocation held for the whole run its largest value
    /// (as XProf's memory viewer lists them), the one live then among equals.
    fn held_at(&self, t: u64) -> Vec<usize> {
        let heap: Vec<u64> = self
            .allocations
            .iter()
            .filter(|a| !viewer::is_indefinite(a) && !a.kind.thread_local && a.kind.color == 0)
            .map(|a| a.index)
            .collect();
        let mut places: rustc_hash::FxHashMap<(u64, u64), usize> = Default::default();
        let mut out: Vec<usize> = Vec::new();
        for (i, b) in self.buffers.iter().enumerate() {
            let (Some(a), Some(o)) = (b.allocation, b.offset) else {
                continue;
            };
            if b.bytes == 0 || !b.live_at(t) || !heap.contains(&a) {
                continue;
            }
            match places.get(&(a, o)) {
                Some(&j) if self.buffers[j].bytes >= b.bytes => {}
                _ => {
                    places.insert((a, o), i);
                }
            }
        }
        out.extend(places.into_values());
        for a in self.allocations.iter().filter(|a| viewer::is_indefinite(a)) {
            out.extend(self.representative(a, t));
        }
        let b = &self.buffers;
        out.sort_by(|&x, &y| {
            b[y].bytes
                .cmp(&b[x].bytes)
                .then_with(|| b[x].instruction.cmp(&b[y].instruction))
                .then_with(|| b[x].shape_index.cmp(&b[y].shape_index))
        });
        out
    }

    /// The steps where the heap stands at its peak (the first [`MAX_PEAK_STEPS`]): a
    /// peak can last while a loop copies the value it still holds.
    pub fn peak_steps(&self) -> Vec<u64> {
        let Some(peak) = &self.peak else {
            return Vec::new();
        };
        match &self.heap {
            Some(heap) => (peak.time..heap.temps.len() as u64)
                .filter(|&t| heap.at(t) == peak.bytes)
                .take(MAX_PEAK_STEPS)
                .collect(),
            None => vec![peak.time],
        }
    }

    /// Every buffer live at step `t` with bytes, one per place (allocation and
    /// offset) where several share it, largest first.
    pub fn live_at(&self, t: u64) -> Vec<usize> {
        let mut places: rustc_hash::FxHashMap<(u64, u64), usize> = Default::default();
        let mut out = Vec::new();
        for (i, b) in self.buffers.iter().enumerate() {
            if b.bytes == 0 || !b.live_at(t) {
                continue;
            }
            match (b.allocation, b.offset) {
                (Some(a), Some(o)) => match places.get(&(a, o)) {
                    Some(&j) if self.buffers[j].bytes >= b.bytes => {}
                    _ => {
                        places.insert((a, o), i);
                    }
                },
                _ => out.push(i),
            }
        }
        out.extend(places.into_values());
        let b = &self.buffers;
        out.sort_by(|&x, &y| {
            b[y].bytes
                .cmp(&b[x].bytes)
                .then_with(|| b[x].instruction.cmp(&b[y].instruction))
                .then_with(|| x.cmp(&y))
        });
        out
    }

    /// The value that stands for allocation `a` (held for the whole run) at step `t`:
    /// of its largest values that are not a loop's phi, the last one made by `t`
    /// (the first one made when none is yet).
    fn representative(&self, a: &Allocation, t: u64) -> Option<usize> {
        let phi: std::collections::HashSet<(&str, &str)> = a
            .values
            .iter()
            .filter(|v| v.phi)
            .map(|v| (&*v.instruction, &*v.shape_index))
            .collect();
        let members: Vec<usize> = (0..self.buffers.len())
            .filter(|&i| {
                let b = &self.buffers[i];
                b.allocation == Some(a.index)
                    && b.bytes > 0
                    && !phi.contains(&(&*b.instruction, &*b.shape_index))
            })
            .collect();
        let largest = members.iter().map(|&i| self.buffers[i].bytes).max()?;
        let largest: Vec<usize> = members
            .into_iter()
            .filter(|&i| self.buffers[i].bytes == largest)
            .collect();
        let made = largest
            .iter()
            .copied()
            .filter(|&i| self.buffers[i].start <= t)
            .max_by_key(|&i| (self.buffers[i].start, std::cmp::Reverse(i)));
        made.or_else(|| {
            largest
                .iter()
                .copied()
                .min_by_key(|&i| (self.buffers[i].start, i))
        })
    }

    /// The instruction at the peak (XProf's `peak_op`).
    pub fn peak_at(&self) -> Option<&str> {
        let peak = self.peak.as_ref()?;
        match &peak.instruction {
            Some(name) => Some(name),
            None if self.heap.is_some() => None,
            None => self.schedule.get(peak.time as usize).map(|n| &**n),
        }
    }

    /// The instruction of XLA's live-range "peak" line.
    pub fn xla_live_range_peak_at(&self) -> Option<&str> {
        let peak = self.xla_live_range_peak.as_ref()?;
        self.schedule.get(peak.time as usize).map(|n| &**n)
    }

    /// The buffers of `instruction` (one per shape index).
    pub fn buffers_of<'a>(&'a self, instruction: &'a str) -> impl Iterator<Item = &'a Buffer> {
        self.buffers
            .iter()
            .filter(move |b| *b.instruction == *instruction)
    }

    /// The peak within a computation's span (a while body's own peak): the heap's
    /// highest step there, counting everything held then, the loop's callers'
    /// buffers included.
    pub fn peak_in(&self, computation: &str) -> Option<Peak> {
        let span = self.spans.iter().find(|s| s.computation == computation)?;
        let Some(heap) = &self.heap else {
            return peak_of(&self.buffers, Some(span.times.clone()));
        };
        if span.times.is_empty() {
            return None;
        }
        let mut best = span.times.start;
        for t in span.times.clone() {
            if heap.at(t) > heap.at(best) {
                best = t;
            }
        }
        Some(Peak {
            time: best,
            bytes: heap.at(best),
            live: self.held_at(best),
            instruction: None,
        })
    }

    /// The name of time `t`'s instruction.
    pub fn instruction_at(&self, t: u64) -> Option<&str> {
        self.schedule.get(t as usize).map(|n| &**n)
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
                .position(|b| *b.instruction == *p.instruction && *b.shape_index == *p.shape_index)
        })
        .collect();
    Some(Peak {
        time,
        bytes: ranges.peak.iter().map(|p| p.bytes).sum(),
        live,
        instruction: None,
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
        instruction: None,
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
