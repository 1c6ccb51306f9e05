//! The peak of the heap as XProf's memory viewer computes it (XProf's
//! `ConvertHloProtoToPreprocessResult`, `xprof/convert/hlo_proto_to_memory_visualization_utils.cc`):
//! the number JAX users check when a program runs out of memory.
//!
//! The rule: the allocations held for the whole run ("indefinite": entry parameters,
//! constants, outputs) count all along, and on top of them the temporaries of the heap
//! simulator's allocation as its trace allocates and frees them; the peak is the first
//! time the total is highest, and the instruction named there (XProf's `peak_op`) is
//! the one whose value's allocation raised the heap to it.
//!
//! Two ways to the same number:
//! * [`from_trace`]: the `.hlo.pb` beside the dump has the trace itself; it is replayed
//!   event by event with XProf's reference counting (a shared value holds its canonical
//!   buffer until the last sharer is freed);
//! * [`from_buffers`]: without it, the trace is rebuilt from the buffer assignment and
//!   live ranges (XLA's files, or the estimate's): the heap simulator allocates a
//!   value at the start of its live range and frees it after its end, so the heap at a
//!   step is what the allocation's live values occupy, values at one offset whose
//!   ranges meet (a value written in place over its operand, a loop's carried value)
//!   counting once.
//!
//! Measured against XProf 2.24.2 on the 23 programs with XProf's numbers in
//! tests/data (profiles/, memory_xprof/): thread-local allocations (a reducer's
//! scalars, on the stack on CPU) are not counted among the indefinite ones.

use rustc_hash::FxHashMap;

use super::proto::{EventKind, HloProto};
use super::{Allocation, Buffer};

/// Where the heap came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapSource {
    /// The heap simulator's trace in the `.hlo.pb` beside the dump.
    Trace,
    /// The buffer assignment and live ranges (XLA's text files, or the estimate's).
    Buffers,
}

/// The heap's peak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapPeak {
    /// The first step of the schedule where the heap is highest (0 with no temps).
    pub step: u64,
    pub bytes: u64,
    /// The instruction whose value's allocation raised the heap to the peak (XProf's
    /// `peak_op`); none when no temporary is ever live.
    pub instruction: Option<String>,
}

/// The heap over the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heap {
    pub source: HeapSource,
    /// The allocations held for the whole run: entry parameters, constants, outputs.
    pub indefinite: u64,
    /// Bytes of temporaries live at each step of the schedule.
    pub temps: Vec<u64>,
    pub peak: HeapPeak,
}

impl Heap {
    /// The heap at step `t`: the indefinite allocations and the temps live then.
    pub fn at(&self, t: u64) -> u64 {
        self.indefinite + self.temps.get(t as usize).copied().unwrap_or(0)
    }
}

/// XProf's "indefinite" allocation: live for the whole run (thread-local ones left
/// out, as XProf 2.24.2 counts).
pub fn is_indefinite(a: &Allocation) -> bool {
    let k = &a.kind;
    k.color == 0 && (k.parameter.is_some() || k.constant || k.maybe_live_out)
}

/// An allocation the heap simulator fills: the default memory space's, neither
/// indefinite nor thread-local.
fn is_heap(a: &Allocation) -> bool {
    a.kind.color == 0 && !is_indefinite(a) && !a.kind.thread_local
}

/// The heap rebuilt from `allocations` and the values' live ranges (`buffers`) over
/// a schedule of `steps` steps.
pub fn from_buffers(allocations: &[Allocation], buffers: &[Buffer], steps: usize) -> Heap {
    let indefinite = allocations
        .iter()
        .filter(|a| is_indefinite(a))
        .map(|a| a.size)
        .sum();
    let heap: Vec<u64> = allocations
        .iter()
        .filter(|a| is_heap(a))
        .map(|a| a.index)
        .collect();
    // A tuple's table of pointers sits in the heap's allocation but is not in the
    // heap simulator's trace (XLA lays tuples out apart): XProf never counts it.
    let tables: std::collections::HashSet<(&str, &str)> = allocations
        .iter()
        .flat_map(|a| &a.values)
        .filter(|v| v.shape.starts_with('('))
        .map(|v| (&*v.instruction, &*v.shape_index))
        .collect();
    let traced: Vec<&Buffer> = buffers
        .iter()
        .filter(|b| !tables.contains(&(&*b.instruction, &*b.shape_index)))
        .collect();
    let clusters = clusters(&traced, &heap);
    let steps = steps.max(
        clusters
            .iter()
            .map(|c| c.end as usize + 1)
            .max()
            .unwrap_or(0),
    );
    let mut delta = vec![0i128; steps + 1];
    for c in &clusters {
        delta[c.start as usize] += i128::from(c.bytes);
        delta[c.end as usize + 1] -= i128::from(c.bytes);
    }
    let mut live = 0i128;
    let temps: Vec<u64> = delta[..steps]
        .iter()
        .map(|d| {
            live += d;
            live.max(0) as u64
        })
        .collect();
    let top = temps.iter().copied().max().unwrap_or(0);
    let step = temps.iter().position(|&b| b == top).unwrap_or(0) as u64;
    // The last value allocated at the peak's step that took new memory (the
    // simulator allocates a step's values by their end, so the longest-lived last).
    let instruction = (top > 0)
        .then(|| {
            clusters
                .iter()
                .filter(|c| c.start == step)
                .max_by(|a, b| (a.end, &a.instruction).cmp(&(b.end, &b.instruction)))
                .map(|c| c.instruction.clone())
        })
        .flatten();
    Heap {
        source: HeapSource::Buffers,
        indefinite,
        peak: HeapPeak {
            step,
            bytes: indefinite + top,
            instruction,
        },
        temps,
    }
}

/// A stretch of steps over which one place (allocation and offset) of the heap holds
/// memory: the values there whose live ranges meet, the first of them named.
struct Cluster {
    start: u64,
    end: u64,
    bytes: u64,
    instruction: String,
}

fn clusters(buffers: &[&Buffer], heap: &[u64]) -> Vec<Cluster> {
    let mut by_place: FxHashMap<(u64, u64), Vec<&Buffer>> = FxHashMap::default();
    for &b in buffers.iter().filter(|b| b.bytes > 0) {
        if let (Some(a), Some(o)) = (b.allocation, b.offset) {
            if heap.contains(&a) {
                by_place.entry((a, o)).or_default().push(b);
            }
        }
    }
    let mut out = Vec::new();
    for (_, mut values) in by_place {
        values.sort_by(|a, b| {
            (a.start, a.end, &a.instruction).cmp(&(b.start, b.end, &b.instruction))
        });
        let mut current: Option<Cluster> = None;
        for b in values {
            match &mut current {
                Some(c) if b.start <= c.end => {
                    c.end = c.end.max(b.end);
                    c.bytes = c.bytes.max(b.bytes);
                }
                _ => {
                    out.extend(current.take());
                    current = Some(Cluster {
                        start: b.start,
                        end: b.end,
                        bytes: b.bytes,
                        instruction: b.instruction.to_string(),
                    });
                }
            }
        }
        out.extend(current);
    }
    out.sort_by(|a, b| (a.start, a.end, &a.instruction).cmp(&(b.start, b.end, &b.instruction)));
    out
}

/// The peak XProf's memory viewer shows for an `HloProto`, replayed from its heap
/// simulator trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracePeak {
    /// The indefinite allocations' bytes.
    pub indefinite: u64,
    /// The heap's highest, indefinite allocations included.
    pub bytes: u64,
    /// The instruction of the event that first reached it (XProf's `peak_op`).
    pub instruction: Option<String>,
    /// Its place among the trace's events (XProf's `peakHeapSizePosition`).
    pub position: usize,
}

/// A value of the proto, as the viewer knows it.
struct Value {
    size: u64,
    color: i64,
    allocation: i64,
}

/// XProf's memory viewer on `proto` (memory space 0): `None` when the proto has no
/// buffer assignment.
pub fn from_trace(proto: &HloProto) -> Option<TracePeak> {
    let assignment = proto.buffer_assignment.as_ref()?;
    let module = proto.hlo_module.as_ref()?;
    let defined: std::collections::HashSet<i64> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.id))
        .collect();
    let logical: FxHashMap<i64, (u64, i64, bool)> = assignment
        .logical_buffers
        .iter()
        .map(|b| {
            let at = b.defined_at.as_ref().map_or(-1, |d| d.instruction_id);
            (b.id, (b.size.max(0) as u64, b.color, defined.contains(&at)))
        })
        .collect();
    // The values the viewer knows: those assigned to an allocation whose instruction
    // the module has.
    let mut values: FxHashMap<i64, Value> = FxHashMap::default();
    for a in &assignment.buffer_allocations {
        for assigned in &a.assigned {
            if let Some(&(size, color, true)) = logical.get(&assigned.logical_buffer_id) {
                values.insert(
                    assigned.logical_buffer_id,
                    Value {
                        size,
                        color,
                        allocation: a.index,
                    },
                );
            }
        }
    }
    let indefinite_kind = |a: &super::proto::BufferAllocationProto| {
        a.is_entry_computation_parameter || a.is_constant || a.maybe_live_out
    };
    let indefinite = assignment
        .buffer_allocations
        .iter()
        .filter(|a| a.color == 0 && indefinite_kind(a))
        .filter(|a| {
            a.assigned
                .iter()
                .any(|x| values.get(&x.logical_buffer_id).is_some_and(|v| v.size > 0))
        })
        .map(|a| a.size.max(0) as u64)
        .sum();
    let trace = pick_trace(assignment, &values, &|a| {
        a.color == 0 && !indefinite_kind(a) && !a.is_thread_local
    });
    let Some(trace) = trace else {
        return Some(TracePeak {
            indefinite,
            bytes: indefinite,
            instruction: None,
            position: 0,
        });
    };
    let (peak, position, instruction) = replay(trace, &values);
    Some(TracePeak {
        indefinite,
        bytes: indefinite + peak,
        instruction,
        position,
    })
}

/// The trace XProf reads for memory space 0: the one whose first event's value is in
/// a heap allocation (the lowest such allocation), else the one with most events of
/// the space's values.
fn pick_trace<'a>(
    assignment: &'a super::proto::BufferAssignmentProto,
    values: &FxHashMap<i64, Value>,
    heap: &dyn Fn(&super::proto::BufferAllocationProto) -> bool,
) -> Option<&'a super::proto::HeapSimulatorTrace> {
    let traces = &assignment.heap_simulator_traces;
    let mut by_allocation: FxHashMap<i64, usize> = FxHashMap::default();
    for (i, t) in traces.iter().enumerate() {
        let first = t.events.first().and_then(|e| values.get(&e.buffer_id));
        if let Some(v) = first {
            by_allocation.insert(v.allocation, i);
        }
    }
    let mut heaps: Vec<&super::proto::BufferAllocationProto> = assignment
        .buffer_allocations
        .iter()
        .filter(|a| heap(a) && by_allocation.contains_key(&a.index))
        .collect();
    heaps.sort_by_key(|a| a.index);
    if let Some(a) = heaps.first() {
        return traces.get(by_allocation[&a.index]);
    }
    traces
        .iter()
        .map(|t| {
            let n = t
                .events
                .iter()
                .filter(|e| values.get(&e.buffer_id).is_some_and(|v| v.color == 0))
                .count();
            (n, t)
        })
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, _)| *n)
        .map(|(_, t)| t)
}

/// The trace replayed as XProf does: an allocation adds its value's size, a share
/// adds its canonical value's size when that was not held, a free releases the
/// canonical value when its last holder goes. The highest heap, its event's place
/// and instruction (the first event that reached it).
fn replay(
    trace: &super::proto::HeapSimulatorTrace,
    values: &FxHashMap<i64, Value>,
) -> (u64, usize, Option<String>) {
    let mut canonical: FxHashMap<i64, i64> = FxHashMap::default();
    let mut holders: FxHashMap<i64, i64> = FxHashMap::default();
    let root = |canonical: &FxHashMap<i64, i64>, mut id: i64| {
        // A share chain is as long as a loop's carried values; a cycle (a broken
        // file) stops after as many steps as there are values.
        for _ in 0..=canonical.len() {
            match canonical.get(&id) {
                Some(&next) if next != id => id = next,
                _ => break,
            }
        }
        id
    };
    let size = |id: i64| values.get(&id).map_or(0, |v| v.size);
    let (mut heap, mut peak, mut position, mut instruction) = (0i128, 0i128, 0, None);
    for (k, event) in trace.events.iter().enumerate() {
        if !values.contains_key(&event.buffer_id) {
            continue;
        }
        let raised = match EventKind::try_from(event.kind) {
            Ok(EventKind::Alloc) => {
                let r = root(&canonical, event.buffer_id);
                *holders.entry(r).or_default() += 1;
                heap += i128::from(size(r));
                true
            }
            Ok(EventKind::Free) => {
                let r = root(&canonical, event.buffer_id);
                let held = holders.entry(r).or_default();
                *held -= 1;
                if *held == 0 {
                    heap -= i128::from(size(r));
                }
                false
            }
            Ok(EventKind::ShareWith) => {
                if !values.contains_key(&event.share_with_canonical_id) {
                    continue;
                }
                canonical.insert(event.buffer_id, event.share_with_canonical_id);
                let r = root(&canonical, event.share_with_canonical_id);
                let held = holders.entry(r).or_default();
                *held += 1;
                if *held == 1 {
                    heap += i128::from(size(r));
                    true
                } else {
                    false
                }
            }
            Err(_) => false,
        };
        if raised && heap > peak {
            peak = heap;
            position = k;
            instruction = Some(event.instruction_name.clone());
        }
    }
    (peak.max(0) as u64, position, instruction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::AllocationKind;

    fn buffer(name: &str, bytes: u64, start: u64, end: u64, offset: u64) -> Buffer {
        Buffer {
            instruction: name.into(),
            shape_index: "{}".into(),
            bytes,
            start,
            end,
            allocation: Some(1),
            offset: Some(offset),
        }
    }

    #[test]
    fn values_at_one_offset_whose_ranges_meet_count_once_and_tuple_tables_never() {
        let allocations = [
            Allocation {
                index: 0,
                size: 100,
                kind: AllocationKind {
                    parameter: Some(0),
                    ..AllocationKind::default()
                },
                values: Vec::new(),
            },
            Allocation {
                index: 1,
                size: 64,
                kind: AllocationKind::default(),
                values: vec![crate::memory::AssignedValue {
                    id: 9,
                    instruction: "t".into(),
                    shape_index: "{}".into(),
                    phi: false,
                    offset: 48,
                    size: 16,
                    shape: "(f32[2], f32[2])".into(),
                }],
            },
        ];
        // `b` written in place over `a`; `c` beside them; `d` reuses `c`'s place later.
        let buffers = [
            buffer("a", 8, 1, 3, 0),
            buffer("b", 8, 3, 5, 0),
            buffer("c", 16, 2, 4, 32),
            buffer("d", 16, 6, 6, 32),
            buffer("t", 16, 0, 7, 48),
        ];
        let heap = from_buffers(&allocations, &buffers, 8);
        assert_eq!(heap.temps, [0, 8, 24, 24, 24, 8, 16, 0]);
        assert_eq!(heap.indefinite, 100);
        assert_eq!(heap.peak.step, 2);
        assert_eq!(heap.peak.bytes, 124);
        assert_eq!(heap.peak.instruction.as_deref(), Some("c"));
    }
}
