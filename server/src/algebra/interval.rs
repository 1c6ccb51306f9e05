//! Inclusive integer intervals and the interval arithmetic the simplifier uses to
//! bound sub-expressions.
//!
//! Arithmetic is done in `i128` and an interval whose bound does not fit `i64`
//! widens to [`Interval::FULL`]: a conservative answer is always sound, a wrapped
//! one never is.

use std::fmt;

/// A closed interval `[lo, hi]` of integers. `lo > hi` means empty (infeasible).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

impl Interval {
    /// Every representable value: the answer when nothing better is known.
    pub const FULL: Interval = Interval {
        lo: i64::MIN,
        hi: i64::MAX,
    };

    pub const fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo, hi }
    }

    /// The interval holding exactly `v`.
    pub const fn point(v: i64) -> Interval {
        Interval { lo: v, hi: v }
    }

    pub fn is_feasible(&self) -> bool {
        self.lo <= self.hi
    }

    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    pub fn contains(&self, v: i64) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// `true` when every value of `other` lies in `self`.
    pub fn contains_interval(&self, other: &Interval) -> bool {
        self.lo <= other.lo && other.hi <= self.hi
    }

    pub fn intersect(&self, other: &Interval) -> Interval {
        Interval {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    pub fn union(&self, other: &Interval) -> Interval {
        Interval {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    /// Number of values, saturating (an empty interval has 0).
    pub fn size(&self) -> u128 {
        if self.lo > self.hi {
            0
        } else {
            (self.hi as i128 - self.lo as i128 + 1) as u128
        }
    }

    /// Builds an interval from `i128` bounds, widening to FULL on overflow.
    fn from_wide(lo: i128, hi: i128) -> Interval {
        match (i64::try_from(lo), i64::try_from(hi)) {
            (Ok(lo), Ok(hi)) => Interval { lo, hi },
            _ => Interval::FULL,
        }
    }

    fn is_full_side(&self) -> bool {
        self.lo == i64::MIN || self.hi == i64::MAX
    }

    pub fn add(&self, other: &Interval) -> Interval {
        if self.is_full_side() || other.is_full_side() {
            return Interval::FULL;
        }
        Interval::from_wide(
            self.lo as i128 + other.lo as i128,
            self.hi as i128 + other.hi as i128,
        )
    }

    pub fn neg(&self) -> Interval {
        Interval::from_wide(-(self.hi as i128), -(self.lo as i128))
    }

    pub fn mul(&self, other: &Interval) -> Interval {
        if (self.is_full_side() && *other != Interval::point(0))
            || (other.is_full_side() && *self != Interval::point(0))
        {
            if self.is_point() && self.lo == 1 {
                return *other;
            }
            if other.is_point() && other.lo == 1 {
                return *self;
            }
            return Interval::FULL;
        }
        let c = [
            self.lo as i128 * other.lo as i128,
            self.lo as i128 * other.hi as i128,
            self.hi as i128 * other.lo as i128,
            self.hi as i128 * other.hi as i128,
        ];
        Interval::from_wide(*c.iter().min().unwrap(), *c.iter().max().unwrap())
    }

    /// Floor division. A divisor interval containing 0 gives FULL (the zero point
    /// itself is undefined, the rest is unbounded in general); so does an empty
    /// divisor (nothing sensible is known about an infeasible domain).
    pub fn floor_div(&self, other: &Interval) -> Interval {
        if other.contains(0) || !other.is_feasible() || self.is_full_side() {
            return Interval::FULL;
        }
        // In i64: no bound is `i64::MIN` and no divisor is 0, so no quotient
        // overflows (the simplifier asks this for every division's range, and
        // an `i128` division is a library call).
        let corners = [
            floor_div(self.lo, other.lo),
            floor_div(self.lo, other.hi),
            floor_div(self.hi, other.lo),
            floor_div(self.hi, other.hi),
        ];
        match corners {
            [Some(a), Some(b), Some(c), Some(d)] => {
                Interval::new(a.min(b).min(c).min(d), a.max(b).max(c).max(d))
            }
            _ => Interval::FULL,
        }
    }

    /// Ceiling division, `-floor(-a / b)`.
    pub fn ceil_div(&self, other: &Interval) -> Interval {
        self.neg().floor_div(other).neg()
    }

    /// Floor modulo: the result has the sign of the divisor.
    pub fn modulo(&self, other: &Interval) -> Interval {
        if other.contains(0) || !other.is_feasible() || self.is_full_side() {
            return Interval::FULL;
        }
        if other.is_point() {
            // In i64, as in `floor_div`.
            let c = other.lo;
            let one_bucket =
                floor_div(self.lo, c).is_some_and(|q| floor_div(self.hi, c) == Some(q));
            if one_bucket {
                // One bucket: the modulo is `x - q*c`, monotone in x.
                if let (Some(lo), Some(hi)) = (floor_mod(self.lo, c), floor_mod(self.hi, c)) {
                    return Interval::new(lo, hi);
                }
            }
        }
        if other.lo > 0 {
            let mut hi = other.hi as i128 - 1;
            if self.lo >= 0 {
                hi = hi.min(self.hi as i128);
            }
            Interval::from_wide(0, hi)
        } else {
            let mut lo = other.lo as i128 + 1;
            if self.hi <= 0 {
                lo = lo.max(self.lo as i128);
            }
            Interval::from_wide(lo, 0)
        }
    }

    pub fn min(&self, other: &Interval) -> Interval {
        Interval {
            lo: self.lo.min(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    pub fn max(&self, other: &Interval) -> Interval {
        Interval {
            lo: self.lo.max(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

/// Floor division of i64 values; `None` on division by zero or overflow. In i64
/// (not through `i128`, a library call): point evaluation runs this per domain
/// point, and the simplifier for every division's range.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Ceiling division of i64 values; `None` on division by zero or overflow.
pub fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    })
}

/// Floor modulo (sign of the divisor, as in Python, XLA and MLIR); `None` on
/// division by zero.
pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
    if b == -1 {
        // Every integer is a multiple of -1 (and `i64::MIN % -1` would overflow).
        return Some(0);
    }
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_semantics_match_python() {
        assert_eq!(floor_div(7, -3), Some(-3));
        assert_eq!(floor_mod(7, -3), Some(-2));
        assert_eq!(floor_div(-7, 3), Some(-3));
        assert_eq!(floor_mod(-7, 3), Some(2));
        assert_eq!(ceil_div(7, 3), Some(3));
        assert_eq!(ceil_div(-7, 3), Some(-2));
        assert_eq!(floor_div(i64::MIN, -1), None);
        assert_eq!(floor_div(1, 0), None);
    }

    /// Floor division on wide integers (no overflow possible for i64 inputs):
    /// the exact forms the i64 ones are checked against.
    fn floor_div_wide(a: i128, b: i128) -> i128 {
        let q = a / b;
        if (a % b != 0) && ((a < 0) != (b < 0)) {
            q - 1
        } else {
            q
        }
    }

    fn mod_wide(a: i128, b: i128) -> i128 {
        a - b * floor_div_wide(a, b)
    }

    /// [`Interval::floor_div`] computed in `i128`.
    fn wide_floor_div(x: Interval, y: Interval) -> Interval {
        if y.contains(0) || !y.is_feasible() || x.is_full_side() {
            return Interval::FULL;
        }
        let corners = [(x.lo, y.lo), (x.lo, y.hi), (x.hi, y.lo), (x.hi, y.hi)]
            .map(|(a, b)| floor_div_wide(a as i128, b as i128));
        Interval::from_wide(
            *corners.iter().min().unwrap(),
            *corners.iter().max().unwrap(),
        )
    }

    /// `x mod c` computed in `i128` when `x` lies in one bucket of `c`.
    fn wide_one_bucket_modulo(x: Interval, c: i64) -> Option<Interval> {
        let (lo, hi, c) = (x.lo as i128, x.hi as i128, c as i128);
        let one_bucket =
            c != 0 && !x.is_full_side() && floor_div_wide(lo, c) == floor_div_wide(hi, c);
        one_bucket.then(|| Interval::from_wide(mod_wide(lo, c), mod_wide(hi, c)))
    }

    /// Values where floor and truncation differ, and the ends of i64.
    fn edge() -> impl proptest::strategy::Strategy<Value = i64> {
        use proptest::prelude::*;
        prop_oneof![
            -20i64..20,
            Just(i64::MIN),
            Just(i64::MIN + 1),
            Just(i64::MAX),
            Just(i64::MAX - 1),
            any::<i64>(),
        ]
    }

    proptest::proptest! {
        /// The i64 division and modulo agree with the exact (i128) forms the
        /// interval arithmetic uses, including overflow and division by zero.
        #[test]
        fn scalar_division_matches_the_wide_form(a in edge(), b in edge()) {
            let exact = |v: Option<i128>| v.and_then(|v| i64::try_from(v).ok());
            let (wa, wb) = (a as i128, b as i128);
            let nonzero = (b != 0).then_some(());
            proptest::prop_assert_eq!(floor_div(a, b), exact(nonzero.map(|_| floor_div_wide(wa, wb))));
            proptest::prop_assert_eq!(ceil_div(a, b), exact(nonzero.map(|_| -floor_div_wide(-wa, wb))));
            proptest::prop_assert_eq!(floor_mod(a, b), exact(nonzero.map(|_| mod_wide(wa, wb))));
        }
    }

    proptest::proptest! {
        /// Interval division and the one-bucket modulo, computed in i64, give
        /// what the same corners give in i128, at the ends of i64 too.
        #[test]
        fn interval_division_matches_the_wide_form(a in edge(), b in edge(), c in edge(), d in edge()) {
            let x = Interval::new(a.min(b), a.max(b));
            for y in [Interval::new(c.min(d), c.max(d)), Interval::point(c)] {
                proptest::prop_assert_eq!(x.floor_div(&y), wide_floor_div(x, y));
            }
            if let Some(modulo) = wide_one_bucket_modulo(x, c) {
                proptest::prop_assert_eq!(x.modulo(&Interval::point(c)), modulo);
            }
        }
    }

    #[test]
    fn interval_mod_one_bucket() {
        assert_eq!(
            Interval::new(53, 71).modulo(&Interval::point(42)),
            Interval::new(11, 29)
        );
        assert_eq!(
            Interval::new(-5, -1).modulo(&Interval::point(5)),
            Interval::new(0, 4)
        );
        assert_eq!(
            Interval::new(43, 50).modulo(&Interval::point(42)),
            Interval::new(1, 8)
        );
    }

    #[test]
    fn overflow_widens() {
        let big = Interval::new(0, i64::MAX - 1);
        assert_eq!(big.add(&Interval::point(5)), Interval::FULL);
    }
}
