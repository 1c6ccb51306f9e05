//! XLA's default heap algorithm for temp buffers: `GlobalDecreasingSizeBestFitHeap`,
//! run twice (buffers sorted by size, then by lifetime: kSpatial; by lifetime, then
//! size: kTemporal) with the smaller heap kept, as `ChooseBestHeapAlgorithm` does.
//! Each buffer in turn gets the smallest free gap, among the buffers placed so far
//! that are live at the same time, that holds it (the lowest such on ties); none
//! fitting, it goes above them all.

/// A buffer to place: live over `start..=end` (times of the flattened schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
    pub size: u64,
}

/// Where each interval went and the heap's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Offsets, by the index of the interval given.
    pub offsets: Vec<u64>,
    pub heap_size: u64,
}

/// The smaller of XLA's two orders.
pub fn best_fit(intervals: &[Interval], alignment: u64) -> Placement {
    let spatial = place(intervals, alignment, |i| {
        (
            std::cmp::Reverse(i.size),
            std::cmp::Reverse(i.end - i.start),
        )
    });
    let temporal = place(intervals, alignment, |i| {
        (
            std::cmp::Reverse(i.end - i.start),
            std::cmp::Reverse(i.size),
        )
    });
    if temporal.heap_size < spatial.heap_size {
        temporal
    } else {
        spatial
    }
}

fn align(offset: u64, alignment: u64) -> u64 {
    offset.div_ceil(alignment.max(1)) * alignment.max(1)
}

fn place<K: Ord>(
    intervals: &[Interval],
    alignment: u64,
    key: impl Fn(&Interval) -> K,
) -> Placement {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by(|&a, &b| key(&intervals[a]).cmp(&key(&intervals[b])).then(a.cmp(&b)));
    let mut offsets = vec![0u64; intervals.len()];
    let mut placed = vec![false; intervals.len()];
    let by_time = ByTime::new(intervals);
    let mut heap_size = 0;
    let mut busy: Vec<(u64, u64)> = Vec::new();
    let mut meeting: Vec<usize> = Vec::new();
    for i in order {
        let me = intervals[i];
        meeting.clear();
        by_time.meeting(me.start, me.end, &mut meeting);
        busy.clear();
        busy.extend(
            meeting
                .iter()
                .filter(|&&j| placed[j])
                .map(|&j| (offsets[j], offsets[j] + intervals[j].size)),
        );
        busy.sort_unstable();
        let offset = best_gap(&busy, me.size, alignment);
        offsets[i] = offset;
        heap_size = heap_size.max(offset + me.size);
        placed[i] = true;
    }
    Placement { offsets, heap_size }
}

/// The intervals by start time, with the latest end under each node of a segment tree
/// over that order: the intervals that meet a time range are found by descending only
/// into nodes whose latest end reaches it, so each query costs what it reports times
/// log n. (Asking every interval placed so far made a module of tens of thousands of
/// temps quadratic.)
struct ByTime {
    /// Interval indices, by start.
    order: Vec<usize>,
    starts: Vec<u64>,
    /// Leaves at `size..size + order.len()`: each leaf's end; inner nodes the
    /// latest end below them.
    latest_end: Vec<u64>,
    size: usize,
}

impl ByTime {
    fn new(intervals: &[Interval]) -> ByTime {
        let mut order: Vec<usize> = (0..intervals.len()).collect();
        order.sort_by_key(|&i| intervals[i].start);
        let size = order.len().next_power_of_two().max(1);
        let mut latest_end = vec![0u64; 2 * size];
        for (k, &i) in order.iter().enumerate() {
            latest_end[size + k] = intervals[i].end;
        }
        for node in (1..size).rev() {
            latest_end[node] = latest_end[2 * node].max(latest_end[2 * node + 1]);
        }
        ByTime {
            starts: order.iter().map(|&i| intervals[i].start).collect(),
            order,
            latest_end,
            size,
        }
    }

    /// Appends to `out` every interval live at some time in `start..=end`.
    fn meeting(&self, start: u64, end: u64, out: &mut Vec<usize>) {
        // Those starting by `end` are a prefix; among them, those ending at `start`
        // or later.
        let prefix = self.starts.partition_point(|&s| s <= end);
        if prefix == 0 {
            return;
        }
        let mut stack = vec![(1usize, 0usize, self.size)];
        while let Some((node, from, to)) = stack.pop() {
            if from >= prefix || self.latest_end[node] < start {
                continue;
            }
            if to - from == 1 {
                out.push(self.order[from]);
                continue;
            }
            let middle = (from + to) / 2;
            stack.push((2 * node + 1, middle, to));
            stack.push((2 * node, from, middle));
        }
    }
}

/// The offset of the smallest free gap between `busy` chunks (sorted) that holds
/// `size`; else the first aligned offset above them all.
fn best_gap(busy: &[(u64, u64)], size: u64, alignment: u64) -> u64 {
    let mut best: Option<(u64, u64)> = None; // (gap size, offset)
    let mut free_from = 0u64;
    for &(start, end) in busy {
        let offset = align(free_from, alignment);
        if start > offset && start - offset >= size {
            let gap = start - offset;
            if best.is_none_or(|(g, _)| gap < g) {
                best = Some((gap, offset));
            }
        }
        free_from = free_from.max(end);
    }
    best.map(|(_, offset)| offset)
        .unwrap_or_else(|| align(free_from, alignment))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The segment tree's answer is the plain scan's, on random intervals.
    #[test]
    fn meeting_is_every_interval_that_meets_the_range() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for count in [0usize, 1, 2, 3, 17, 100] {
            let intervals: Vec<Interval> = (0..count)
                .map(|_| {
                    let start = next(50);
                    Interval {
                        start,
                        end: start + next(20),
                        size: 1,
                    }
                })
                .collect();
            let by_time = ByTime::new(&intervals);
            for _ in 0..50 {
                let start = next(70);
                let end = start + next(10);
                let mut found = Vec::new();
                by_time.meeting(start, end, &mut found);
                found.sort_unstable();
                let expected: Vec<usize> = (0..count)
                    .filter(|&i| intervals[i].start <= end && start <= intervals[i].end)
                    .collect();
                assert_eq!(found, expected);
            }
        }
    }

    #[test]
    fn disjoint_lifetimes_share_and_overlapping_ones_stack() {
        let iv = |start, end, size| Interval { start, end, size };
        let p = best_fit(&[iv(0, 2, 100), iv(3, 5, 100), iv(1, 4, 10)], 64);
        assert_eq!(p.offsets[0], p.offsets[1]);
        assert_eq!(p.heap_size, 128 + 10);
    }

    #[test]
    fn the_smallest_gap_that_fits_is_taken() {
        let iv = |start, end, size| Interval { start, end, size };
        // 0..64 and 128..192 busy around a 64-byte gap; a 512-byte gap above 256
        // closes at 768.
        let p = best_fit(
            &[
                iv(0, 9, 64),
                iv(0, 9, 64),
                iv(0, 9, 64),
                iv(0, 2, 64),
                iv(3, 9, 32),
            ],
            64,
        );
        assert!(p.heap_size <= 256, "{p:?}");
    }
}
