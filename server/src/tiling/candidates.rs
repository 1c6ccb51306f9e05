//! Valid tilings of a fusion output: per dimension the candidate sizes XLA
//! considers for Triton (powers of two up to the extent, and the full extent),
//! every combination whose tile is a hyper-rectangle everywhere, ranked by the
//! holes and predicates it costs; and the valid tiling nearest to a
//! configured one (what the quick fix proposes).

use super::propagate::{FusionMaps, TilingOptions};
use super::split::TiledSpace;

/// At most this many combinations are checked; beyond it each dimension is
/// restricted to the sizes within a factor 8 of the configured one.
const MAX_COMBINATIONS: usize = 20_000;

/// One valid tiling with its costs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub sizes: Vec<i64>,
    /// Guards of indivisible splits (one per indivisible dimension).
    pub predicates: usize,
    /// Hole elements over the whole output.
    pub holes: i64,
    /// Distance to the configured sizes: sum over dimensions of
    /// `|log2(size) - log2(configured)|`, in halves of a power of two.
    pub distance: u32,
    /// Parameter reads that are not coalesced (XLA's tiled rule; 0 when the
    /// element widths are unknown).
    pub uncoalesced: usize,
}

/// Candidate sizes of one dimension of extent `n`: 1, 2, 4, ... below `n`,
/// and `n` itself.
pub fn dimension_candidates(n: i64) -> Vec<i64> {
    let mut v = vec![];
    let mut p = 1i64;
    while p < n {
        v.push(p);
        match p.checked_mul(2) {
            Some(q) => p = q,
            None => break,
        }
    }
    v.push(n.max(1));
    v
}

/// Twice `|log2(a) - log2(b)|`, rounded: the ranking distance.
fn log_distance(a: i64, b: i64) -> u32 {
    let (a, b) = (a.max(1) as f64, b.max(1) as f64);
    ((a.log2() - b.log2()).abs() * 2.0).round() as u32
}

/// The valid tilings with about the configured tile volume (within a factor
/// 4 either way: smaller tiles trivially have fewer holes, and are not an
/// alternative for the same kernel), ranked by holes, then predicates, then
/// uncoalesced reads, then distance to `configured`. `limit` caps the list.
pub fn valid_tilings(
    maps: &FusionMaps,
    configured: &[i64],
    options: TilingOptions,
    limit: usize,
) -> Vec<Candidate> {
    let target = volume(configured);
    let mut all = enumerate(maps, configured, options);
    all.retain(|c| {
        let v = volume(&c.sizes);
        v.saturating_mul(4) >= target && v <= target.saturating_mul(4)
    });
    all.sort_by(|a, b| {
        (
            a.holes,
            a.predicates,
            a.uncoalesced,
            a.distance,
            std::cmp::Reverse(volume(&a.sizes)),
        )
            .cmp(&(
                b.holes,
                b.predicates,
                b.uncoalesced,
                b.distance,
                std::cmp::Reverse(volume(&b.sizes)),
            ))
    });
    all.truncate(limit);
    all
}

/// The valid tiling nearest to `configured`, preferring tilings whose reads
/// are coalesced: fewest uncoalesced reads, then smallest distance, then fewest
/// predicates, then fewest holes, then the larger tile.
pub fn nearest_valid(
    maps: &FusionMaps,
    configured: &[i64],
    options: TilingOptions,
) -> Option<Candidate> {
    nearest_valid_where(maps, configured, options, &|_| true)
}

/// The valid tiling nearest to `configured` among those `keep` accepts (same
/// order as [`nearest_valid`]). Searched first among sizes within a factor 4
/// of the configured ones per dimension (fast enough for diagnostics on every
/// edit), then, when none qualifies there, over all candidates.
pub fn nearest_valid_where(
    maps: &FusionMaps,
    configured: &[i64],
    options: TilingOptions,
    keep: &dyn Fn(&Candidate) -> bool,
) -> Option<Candidate> {
    // Near tilings first (each size within a factor 4 of the configured one):
    // cheap enough for diagnostics on every edit; the full space only if none.
    let pick = |all: Vec<Candidate>| {
        all.into_iter().filter(|c| keep(c)).min_by_key(|c| {
            (
                c.uncoalesced,
                c.distance,
                c.predicates,
                c.holes,
                std::cmp::Reverse(volume(&c.sizes)),
            )
        })
    };
    pick(enumerate_within(maps, configured, options, Some(4)))
        .or_else(|| pick(enumerate(maps, configured, options)))
}

fn volume(sizes: &[i64]) -> i64 {
    sizes
        .iter()
        .try_fold(1i64, |a, &s| a.checked_mul(s))
        .unwrap_or(i64::MAX)
}

fn enumerate(maps: &FusionMaps, configured: &[i64], options: TilingOptions) -> Vec<Candidate> {
    enumerate_within(maps, configured, options, None)
}

/// Valid candidates; with `radius`, only sizes within `radius` half-powers of
/// two of the configured size in each dimension.
fn enumerate_within(
    maps: &FusionMaps,
    configured: &[i64],
    options: TilingOptions,
    radius: Option<u32>,
) -> Vec<Candidate> {
    let mut per_dim: Vec<Vec<i64>> = maps
        .extents
        .iter()
        .map(|&n| dimension_candidates(n))
        .collect();
    if let Some(r) = radius {
        for (d, list) in per_dim.iter_mut().enumerate() {
            let c = configured.get(d).copied().unwrap_or(1);
            list.retain(|&s| log_distance(s, c) <= r);
        }
        if per_dim.iter().any(Vec::is_empty) {
            return vec![];
        }
    }
    let count = |v: &Vec<Vec<i64>>| v.iter().try_fold(1usize, |a, d| a.checked_mul(d.len()));
    if count(&per_dim).is_none_or(|c| c > MAX_COMBINATIONS) {
        for (d, list) in per_dim.iter_mut().enumerate() {
            let c = configured.get(d).copied().unwrap_or(1);
            list.retain(|&s| log_distance(s, c) <= 6);
            if list.is_empty() {
                list.push(c.clamp(1, maps.extents[d].max(1)));
            }
        }
    }
    let mut out = vec![];
    let mut index = vec![0usize; per_dim.len()];
    loop {
        let sizes: Vec<i64> = index.iter().zip(&per_dim).map(|(&i, l)| l[i]).collect();
        if maps.satisfies_constraints(&sizes, options) {
            if let Ok(space) = TiledSpace::new(&maps.extents, &maps.blocks(&sizes, options)) {
                out.push(Candidate {
                    distance: sizes
                        .iter()
                        .zip(configured)
                        .map(|(&s, &c)| log_distance(s, c))
                        .sum(),
                    predicates: space.predicates().len(),
                    holes: space.hole_elements(),
                    uncoalesced: maps.uncoalesced_reads(&sizes, options),
                    sizes,
                });
            }
        }
        // Up to 20,000 valid ones among millions of combinations can take
        // minutes: a request out of time or cancelled takes what was found.
        if !advance(&mut index, &per_dim)
            || out.len() >= MAX_COMBINATIONS
            || crate::budget::exhausted()
        {
            return out;
        }
    }
}

fn advance(index: &mut [usize], per_dim: &[Vec<i64>]) -> bool {
    for k in (0..index.len()).rev() {
        index[k] += 1;
        if index[k] < per_dim[k].len() {
            return true;
        }
        index[k] = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_powers_of_two_and_the_extent() {
        assert_eq!(dimension_candidates(6), vec![1, 2, 4, 6]);
        assert_eq!(dimension_candidates(8), vec![1, 2, 4, 8]);
        assert_eq!(dimension_candidates(1), vec![1]);
        assert_eq!(log_distance(4, 8), 2);
        assert_eq!(log_distance(6, 4), 1);
    }
}
