//! The interpolators XLA's measured tables are read through
//! (`xla/service/gpu/model/interpolator.h`), over points of `N` integer
//! coordinates.
//!
//! * [`NearestNeighbour`] (`EuclideanNNInterpolator`): the value of the closest
//!   measured point by squared euclidean distance, the first one on a tie.
//! * [`Complement`] (`EuclideanComplementInterpolator`): the query rounded on
//!   each axis to the grid the measurements were taken on, then looked up exactly
//!   (the collective table's).
//! * [`WeightedAverage`] (`EuclideanWeightedAverageInterpolator` with the
//!   power-of-two context): on a grid whose coordinates are powers of two, the
//!   corners of the grid cell around the point (each coordinate rounded down and
//!   up to a power of two, clamped to the grid's range), averaged with weights
//!   `1 / (squared distance + 1)`. A corner missing from the grid is an error
//!   (XLA's `CHECK` fails).
//!
//! The arithmetic follows XLA's types: coordinates enter the distance as 32-bit
//! ints, weights are single precision, sums double.

use std::collections::HashMap;

/// `InterpolatorBase::Norm2`.
fn norm2<const N: usize>(a: &[i64; N], b: &[i64; N]) -> i64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = i64::from(x as i32) - y;
            d.wrapping_mul(d)
        })
        .fold(0i64, i64::wrapping_add)
}

/// `EuclideanNNInterpolator<int64_t, N>`.
#[derive(Clone, Debug, Default)]
pub struct NearestNeighbour<const N: usize> {
    plane: Vec<([i64; N], i64)>,
}

impl<const N: usize> NearestNeighbour<N> {
    pub fn add(&mut self, point: [i64; N], value: i64) {
        self.plane.push((point, value));
    }

    /// The value of the nearest point; `None` when nothing was added.
    pub fn eval(&self, point: &[i64; N]) -> Option<i64> {
        let mut best: Option<(u64, i64)> = None;
        for (p, v) in &self.plane {
            let d = norm2(p, point) as u64;
            if best.is_none_or(|(min, _)| d < min) {
                best = Some((d, *v));
            }
        }
        best.map(|(_, v)| v)
    }
}

/// `EuclideanWeightedAverageInterpolator<N>` with every dimension on a
/// power-of-two grid between `min` and `max`.
#[derive(Clone, Debug)]
pub struct WeightedAverage<const N: usize> {
    max: [i64; N],
    min: [i64; N],
    values: HashMap<[i64; N], f64>,
}

/// `NextPowerOfTwo` (0 gives 1).
pub fn next_power_of_two(n: i64) -> i64 {
    if n <= 1 {
        return 1;
    }
    let mut n = n - 1;
    for shift in [1, 2, 4, 8, 16, 32] {
        n |= n >> shift;
    }
    n + 1
}

/// `PrevPowerOfTwo`: the power of two at or below `n`.
pub fn prev_power_of_two(n: i64) -> i64 {
    next_power_of_two((n >> 1) + 1)
}

impl<const N: usize> WeightedAverage<N> {
    pub fn new(max: [i64; N], min: [i64; N]) -> WeightedAverage<N> {
        WeightedAverage {
            max,
            min,
            values: HashMap::new(),
        }
    }

    /// A measured point; a second value at the same point replaces the first.
    pub fn add(&mut self, point: [i64; N], value: f64) {
        self.values.insert(point, value);
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn clamp(&self, v: i64, dim: usize) -> i64 {
        v.max(self.min[dim]).min(self.max[dim])
    }

    /// `GetNeighbours`' convex hull, in XLA's order: the last dimension's lower
    /// then upper corner, each earlier dimension doubling the list.
    fn corners(&self, point: &[i64; N]) -> Vec<[i64; N]> {
        let mut out = vec![[0i64; N]];
        for dim in (0..N).rev() {
            let lo = self.clamp(prev_power_of_two(point[dim]), dim);
            let hi = self.clamp(next_power_of_two(point[dim]), dim);
            out = out
                .into_iter()
                .flat_map(|c| {
                    let (mut a, mut b) = (c, c);
                    a[dim] = lo;
                    b[dim] = hi;
                    [a, b]
                })
                .collect();
        }
        out
    }

    /// The weighted average of the cell's corners; `Err` names a corner the
    /// grid lacks.
    pub fn eval(&self, point: &[i64; N]) -> Result<f64, String> {
        if self.values.is_empty() {
            return Err("the interpolator has no points".into());
        }
        let (mut sum, mut total) = (0f64, 0f64);
        for corner in self.corners(point) {
            let value = self
                .values
                .get(&corner)
                .ok_or_else(|| format!("no measured point at {corner:?}"))?;
            let weight = 1.0f32 / (norm2(&corner, point) as f32 + 1.0f32);
            sum += value * f64::from(weight);
            total += f64::from(weight);
        }
        Ok(sum / total)
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

    pub fn eval(&self, query: &[i64; N]) -> Option<i64> {
        self.values.get(&self.grid_point(*query)).copied()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_round_down_and_up() {
        assert_eq!(prev_power_of_two(256), 256);
        assert_eq!(next_power_of_two(256), 256);
        assert_eq!(prev_power_of_two(300), 256);
        assert_eq!(next_power_of_two(300), 512);
        assert_eq!(prev_power_of_two(1), 1);
        assert_eq!(next_power_of_two(0), 1);
    }

    #[test]
    fn an_exact_point_is_its_value_and_between_points_is_weighted() {
        let mut w = WeightedAverage::new([8], [2]);
        w.add([2], 10.0);
        w.add([4], 20.0);
        w.add([8], 40.0);
        assert_eq!(w.eval(&[4]).unwrap(), 20.0);
        // 3 lies between 2 and 4, at distance 1 from each: the mean.
        assert_eq!(w.eval(&[3]).unwrap(), 15.0);
        // Beyond the range the clamped corner answers.
        assert_eq!(w.eval(&[64]).unwrap(), 40.0);
        let mut nn = NearestNeighbour::default();
        nn.add([0, 0], 1);
        nn.add([10, 10], 2);
        assert_eq!(nn.eval(&[6, 6]), Some(2));
        assert_eq!(nn.eval(&[5, 5]), Some(1));
    }

    #[test]
    fn the_nearest_point_wins_and_ties_go_to_the_first() {
        let mut nn = NearestNeighbour::<2>::default();
        assert_eq!(nn.eval(&[1, 1]), None);
        nn.add([1024, 2], 512);
        nn.add([1024, 4], 2048);
        nn.add([2048, 2], 1024);
        // (1032, 3) is as far from (1024, 2) as from (1024, 4).
        assert_eq!(nn.eval(&[1032, 3]), Some(512));
        assert_eq!(nn.eval(&[1900, 2]), Some(1024));
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
        assert_eq!(c.eval(&[1500]), Some(1));
        assert_eq!(c.eval(&[4096]), None);
        assert_eq!((prev_power_of_two(1), next_power_of_two(1)), (1, 1));
        assert_eq!((prev_power_of_two(5), next_power_of_two(5)), (4, 8));
    }
}
