//! XLA's interpolators over measured points (`xla/service/gpu/model/interpolator.h`):
//! a value looked up at the measured point nearest the query. Points are
//! integer coordinates (bytes, devices); values are integers (bytes per second).

use std::collections::HashMap;

/// `InterpolatorBase::Norm2`: the squared euclidean distance. XLA reads the
/// measured coordinate through an `int` (32 bits) and sums in 64 bits with
/// wrap-around; both are kept so the same neighbour wins.
fn norm2<const N: usize>(measured: &[i64; N], query: &[i64; N]) -> i64 {
    let mut distance = 0i64;
    for (m, q) in measured.iter().zip(query) {
        let d = i64::from(*m as i32).wrapping_sub(*q);
        distance = distance.wrapping_add(d.wrapping_mul(d));
    }
    distance
}

/// `EuclideanNNInterpolator`: the value of the nearest measured point; of
/// points at the same distance, the first added.
#[derive(Clone, Debug, Default)]
pub struct NearestNeighbour<const N: usize> {
    points: Vec<([i64; N], i64)>,
}

impl<const N: usize> NearestNeighbour<N> {
    pub fn add(&mut self, point: [i64; N], value: i64) {
        self.points.push((point, value));
    }

    /// `None` when nothing was measured.
    pub fn eval(&self, query: [i64; N]) -> Option<i64> {
        let mut best: Option<i64> = None;
        let mut min = u64::MAX;
        for (point, value) in &self.points {
            // XLA compares the signed distance with an unsigned minimum.
            let distance = norm2(point, &query) as u64;
            if distance < min {
                min = distance;
                best = Some(*value);
            }
        }
        best
    }
}

/// How [`Complement`] rounds one coordinate before the look-up: to the nearer
/// of the neighbouring multiples of a power of two (`next_context`), or of the
/// neighbouring powers of two (`next_power_context`), then clamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Round to multiples of this power of two (XLA's `-1`: no).
    pub multiple_of: Option<i64>,
    /// Round to powers of two.
    pub power_of_two: bool,
    pub min: i64,
    pub max: i64,
}

/// `EuclideanComplementInterpolator`: the query rounded on each axis to the
/// grid the measurements were taken on, then looked up exactly. A measured
/// point added twice keeps the later value. XLA aborts when the rounded point
/// was not measured; this gives `None`.
#[derive(Clone, Debug)]
pub struct Complement<const N: usize> {
    axes: [Axis; N],
    values: HashMap<[i64; N], i64>,
}

impl<const N: usize> Complement<N> {
    pub fn new(axes: [Axis; N]) -> Complement<N> {
        Complement {
            axes,
            values: HashMap::new(),
        }
    }

    pub fn add(&mut self, point: [i64; N], value: i64) {
        self.values.insert(point, value);
    }

    /// The point the query is looked up at.
    pub fn grid_point(&self, query: [i64; N]) -> [i64; N] {
        let mut point = query;
        for (p, axis) in point.iter_mut().zip(&self.axes) {
            let n = *p;
            let mut rounded = n;
            if let Some(m) = axis.multiple_of {
                rounded = closest(n, n & !(m - 1), (n + m) & !(m - 1));
            }
            if axis.power_of_two {
                rounded = closest(n, prev_power_of_two(n), next_power_of_two(n));
            }
            *p = rounded.min(axis.max).max(axis.min);
        }
        point
    }

    pub fn eval(&self, query: [i64; N]) -> Option<i64> {
        self.values.get(&self.grid_point(query)).copied()
    }
}

/// The nearer of `prev` and `next`; a tie goes to `next`.
fn closest(n: i64, prev: i64, next: i64) -> i64 {
    if n.wrapping_sub(prev) < next.wrapping_sub(n) {
        prev
    } else {
        next
    }
}

/// `NextPowerOfTwo`: the smallest power of two at least `n` (1 for 0).
pub fn next_power_of_two(n: i64) -> i64 {
    if n == 0 {
        return 1;
    }
    let mut v = n.wrapping_sub(1);
    for shift in [1, 2, 4, 8, 16, 32] {
        v |= v >> shift;
    }
    v.wrapping_add(1)
}

/// `PrevPowerOfTwo`: the largest power of two at most `n`, for `n >= 1`.
pub fn prev_power_of_two(n: i64) -> i64 {
    next_power_of_two((n >> 1) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_point_wins_and_ties_go_to_the_first() {
        let mut nn = NearestNeighbour::<2>::default();
        assert_eq!(nn.eval([1, 1]), None);
        nn.add([1024, 2], 512);
        nn.add([1024, 4], 2048);
        nn.add([2048, 2], 1024);
        // (1032, 3) is as far from (1024, 2) as from (1024, 4).
        assert_eq!(nn.eval([1032, 3]), Some(512));
        assert_eq!(nn.eval([1900, 2]), Some(1024));
    }

    #[test]
    fn the_complement_rounds_to_the_nearer_power_of_two_then_clamps() {
        let axis = Axis {
            multiple_of: None,
            power_of_two: true,
            min: 1024,
            max: 1 << 30,
        };
        let mut c = Complement::new([axis]);
        c.add([1024], 1);
        c.add([2048], 2);
        assert_eq!(c.grid_point([1280]), [1024]);
        assert_eq!(c.grid_point([1536]), [2048]);
        assert_eq!(c.grid_point([4]), [1024]);
        assert_eq!(c.grid_point([3 << 30]), [1 << 30]);
        assert_eq!(c.eval([1500]), Some(1));
        assert_eq!(c.eval([4096]), None);
        assert_eq!((prev_power_of_two(1), next_power_of_two(1)), (1, 1));
        assert_eq!((prev_power_of_two(5), next_power_of_two(5)), (4, 8));
    }
}
