//! A vector whose versions share their storage: [`Blocks`].
//!
//! Each version of a document keeps one entry per computation (its unit, its checks'
//! cell), and an edit makes a new version that differs from the last in an entry or
//! two. As a `Vec` of `Arc`s each version was a copy: on a 60 MB dump every edit copied
//! 26,000 entries and touched as many reference counts scattered in memory (about 2 ms
//! of the edit, and as much again to drop the old version). Here the entries sit in
//! fixed-size blocks that versions share; a version that changes an entry copies that
//! entry's block only. Indexing stays a shift and a mask. An edit that changes the
//! number of entries (a computation added or removed) rebuilds the blocks, as rare as
//! it is cheap beside what such an edit recomputes.
//!
//! `imbl::Vector` shares its storage too, but indexing its tree took 67 ns against
//! 1 ns here (measured on 26,000 entries), and the model indexes units on every
//! computation it visits.

use std::ops::{Index, Range};
use std::sync::Arc;

use rayon::prelude::*;

/// Entries per block (a power of two): copying a block to change one entry costs
/// this many clones.
const BLOCK: usize = 64;
const SHIFT: u32 = BLOCK.trailing_zeros();

/// See the module docs.
#[derive(Debug)]
pub struct Blocks<T> {
    /// Every block holds [`BLOCK`] entries but the last, which holds the rest.
    blocks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Clone for Blocks<T> {
    fn clone(&self) -> Self {
        Blocks {
            blocks: self.blocks.clone(),
            len: self.len,
        }
    }
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> FromIterator<T> for Blocks<T> {
    fn from_iter<I: IntoIterator<Item = T>>(entries: I) -> Self {
        let mut blocks = Vec::new();
        let mut len = 0;
        let mut block = Vec::with_capacity(BLOCK);
        for entry in entries {
            block.push(entry);
            len += 1;
            if block.len() == BLOCK {
                blocks.push(Arc::new(std::mem::replace(
                    &mut block,
                    Vec::with_capacity(BLOCK),
                )));
            }
        }
        if !block.is_empty() {
            blocks.push(Arc::new(block));
        }
        Blocks { blocks, len }
    }
}

impl<T> Index<usize> for Blocks<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "index {i} out of {} entries", self.len);
        &self.blocks[i >> SHIFT][i & (BLOCK - 1)]
    }
}

/// The entries in order.
pub type Iter<'a, T> = std::iter::FlatMap<
    std::slice::Iter<'a, Arc<Vec<T>>>,
    std::slice::Iter<'a, T>,
    fn(&'a Arc<Vec<T>>) -> std::slice::Iter<'a, T>,
>;

impl<'a, T> IntoIterator for &'a Blocks<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        let entries: fn(&'a Arc<Vec<T>>) -> std::slice::Iter<'a, T> = |b| b.iter();
        self.blocks.iter().flat_map(entries)
    }
}

impl<T> Blocks<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self[i])
    }

    pub fn iter(&self) -> Iter<'_, T> {
        self.into_iter()
    }

    pub fn last(&self) -> Option<&T> {
        self.len.checked_sub(1).map(|i| &self[i])
    }

    /// The entries of block `b` (entries `b * BLOCK_LEN..`).
    pub fn block(&self, b: usize) -> &[T] {
        &self.blocks[b]
    }

    /// The number of leading entries for which `pred` holds, when it holds for a
    /// prefix (as `slice::partition_point`).
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let (mut low, mut high) = (0, self.len);
        while low < high {
            let mid = low + (high - low) / 2;
            if pred(&self[mid]) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// The entries of `range` (clamped to the entries).
    pub fn range(&self, range: Range<usize>) -> impl Iterator<Item = &T> + '_ {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        (start..end).map(move |i| &self[i])
    }
}

impl<T: Sync + Send> Blocks<T> {
    pub fn par_iter(&self) -> impl ParallelIterator<Item = &T> + '_ {
        self.blocks.par_iter().flat_map_iter(|b| b.iter())
    }
}

/// Entries per block, for callers that keep something per block: entry `i` is in
/// block `i / BLOCK_LEN`.
pub const BLOCK_LEN: usize = BLOCK;

impl<T: Sync + Send + 'static> Blocks<T> {
    /// Block `b` held as a [`BlockToken`].
    pub fn token(&self, b: usize) -> BlockToken {
        BlockToken(self.blocks[b].clone())
    }
}

/// A block of some [`Blocks`], held: two tokens are [`BlockToken::same`] exactly when
/// their versions share that block's entries (holding it keeps its address from being
/// reused). Something derived from a block's entries alone holds for any version
/// whose token is the same.
#[derive(Clone)]
pub struct BlockToken(Arc<dyn Sync + Send>);

impl BlockToken {
    pub fn same(&self, other: &BlockToken) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

impl std::fmt::Debug for BlockToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockToken({:p})", Arc::as_ptr(&self.0))
    }
}

impl<T: Clone> Blocks<T> {
    /// Puts `value` at `i` (copying its block when another version shares it).
    pub fn set(&mut self, i: usize, value: T) {
        assert!(i < self.len, "index {i} out of {} entries", self.len);
        Arc::make_mut(&mut self.blocks[i >> SHIFT])[i & (BLOCK - 1)] = value;
    }

    /// Changes the entries of `range` by `change` (copying the blocks it touches when
    /// another version shares them).
    pub fn update(&mut self, range: Range<usize>, mut change: impl FnMut(&mut T)) {
        let end = range.end.min(self.len);
        let mut i = range.start.min(end);
        while i < end {
            let block_start = i & !(BLOCK - 1);
            let stop = end.min(block_start + BLOCK);
            let block = Arc::make_mut(&mut self.blocks[i >> SHIFT]);
            for entry in &mut block[i - block_start..stop - block_start] {
                change(entry);
            }
            i = stop;
        }
    }

    /// Replaces the entries of `range` by `new` and returns the replaced ones: in
    /// place (copying the blocks it touches) when as many come as go, else by
    /// rebuilding every block.
    pub fn splice(&mut self, range: Range<usize>, new: impl IntoIterator<Item = T>) -> Vec<T> {
        assert!(range.start <= range.end && range.end <= self.len);
        let new: Vec<T> = new.into_iter().collect();
        if new.len() == range.len() {
            let removed = self.range(range.clone()).cloned().collect();
            for (i, value) in range.zip(new) {
                self.set(i, value);
            }
            return removed;
        }
        let mut all: Vec<T> = self.iter().cloned().collect();
        let removed = all.splice(range, new).collect();
        *self = all.into_iter().collect();
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of splices and sets gives what a `Vec` gives, and the version
        /// before each change keeps its entries.
        #[test]
        fn changes_match_a_vec_and_leave_older_versions_alone(
            start in 0usize..300,
            changes in proptest::collection::vec((0usize..400, 0usize..5, 0usize..5, any::<u16>()), 1..30),
        ) {
            let mut expected: Vec<u32> = (0..start as u32).collect();
            let mut blocks: Blocks<u32> = expected.iter().copied().collect();
            for (at, removed, added, value) in changes {
                let older = blocks.clone();
                let older_entries = expected.clone();
                let at = at.min(expected.len());
                let end = (at + removed).min(expected.len());
                let new: Vec<u32> = (0..added as u32).map(|k| u32::from(value) + k).collect();
                let want: Vec<u32> = expected.splice(at..end, new.clone()).collect();
                prop_assert_eq!(blocks.splice(at..end, new), want);
                prop_assert_eq!(blocks.len(), expected.len());
                prop_assert_eq!(blocks.iter().copied().collect::<Vec<_>>(), expected.clone());
                prop_assert_eq!(older.iter().copied().collect::<Vec<_>>(), older_entries);
                for (i, e) in expected.iter().enumerate() {
                    prop_assert_eq!(blocks[i], *e);
                }
                prop_assert_eq!(blocks.get(expected.len()), None);
                prop_assert_eq!(blocks.last(), expected.last());
                let (from, to) = (at / 2, (end * 2).min(expected.len()));
                blocks.update(from..to, |e| *e = e.wrapping_mul(3));
                for e in &mut expected[from..to] {
                    *e = e.wrapping_mul(3);
                }
                prop_assert_eq!(blocks.iter().copied().collect::<Vec<_>>(), expected.clone());
                let bound = u32::from(value);
                let mut sorted = expected.clone();
                sorted.sort_unstable();
                let blocks_sorted: Blocks<u32> = sorted.iter().copied().collect();
                prop_assert_eq!(
                    blocks_sorted.partition_point(|&e| e < bound),
                    sorted.partition_point(|&e| e < bound)
                );
            }
        }
    }

    /// A change of one entry copies one block: the others stay shared.
    #[test]
    fn tokens_are_the_same_exactly_for_blocks_a_change_left_alone() {
        let before: Blocks<u32> = (0..200).collect();
        let mut after = before.clone();
        after.set(70, 7);
        let same = |b| before.token(b).same(&after.token(b));
        assert_eq!(
            (0..4).map(same).collect::<Vec<_>>(),
            [true, false, true, true]
        );
        let rebuilt: Blocks<u32> = before.iter().copied().collect();
        assert!(
            !before.token(0).same(&rebuilt.token(0)),
            "equal entries, other storage"
        );
    }

    #[test]
    fn a_set_copies_one_block() {
        let a: Blocks<u32> = (0..1000).collect();
        let mut b = a.clone();
        b.set(500, 7);
        let shared = a
            .blocks
            .iter()
            .zip(&b.blocks)
            .filter(|(x, y)| Arc::ptr_eq(x, y))
            .count();
        assert_eq!(shared, a.blocks.len() - 1);
        assert_eq!((a[500], b[500]), (500, 7));
        assert_eq!(
            b.range(498..502).copied().collect::<Vec<_>>(),
            [498, 499, 7, 501]
        );
        assert_eq!(b.par_iter().count(), 1000);
    }
}
