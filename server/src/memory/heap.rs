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
    let mut placed: Vec<usize> = Vec::with_capacity(intervals.len());
    let mut heap_size = 0;
    for i in order {
        let me = intervals[i];
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .map(|&j| (j, intervals[j]))
            .filter(|(_, o)| o.start <= me.end && me.start <= o.end)
            .map(|(j, o)| (offsets[j], offsets[j] + o.size))
            .collect();
        busy.sort_unstable();
        let offset = best_gap(&busy, me.size, alignment);
        offsets[i] = offset;
        heap_size = heap_size.max(offset + me.size);
        placed.push(i);
    }
    Placement { offsets, heap_size }
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
