//! Time as XLA's cost model keeps it: `absl::Duration`, whose resolution is a
//! quarter of a nanosecond. A time made from a floating-point number of seconds
//! or nanoseconds is rounded to the nearest quarter nanosecond, sums and
//! differences are exact, and an overflow (or a division by zero bandwidth) is
//! the infinite duration. XLA's tests compare these values after
//! `absl::ToInt64Microseconds`, which truncates: keeping the same ticks keeps
//! small kernels (tens of nanoseconds) on the same side of each truncation.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Ticks per second: absl's `kTicksPerSecond` (4 per nanosecond).
const TICKS_PER_SECOND: i64 = 4_000_000_000;
const TICKS_PER_NANOSECOND: i64 = 4;

/// A non-negative span of time in quarter nanoseconds, or infinite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    /// Quarter nanoseconds; `i64::MAX` is infinite.
    ticks: i64,
}

impl Duration {
    pub const ZERO: Duration = Duration { ticks: 0 };
    /// `absl::InfiniteDuration()`: what XLA returns for a kernel it will not run
    /// (a tile that spills registers), and what any sum with it gives.
    pub const INFINITE: Duration = Duration { ticks: i64::MAX };

    /// `absl::Seconds(double)`: rounded to the nearest tick.
    pub fn from_secs_f64(seconds: f64) -> Duration {
        if seconds.is_nan() || seconds <= 0.0 {
            return Duration::ZERO;
        }
        if !seconds.is_finite() || seconds >= (i64::MAX / TICKS_PER_SECOND) as f64 {
            return Duration::INFINITE;
        }
        // As absl: whole seconds exactly, the fraction rounded to a tick.
        let whole = seconds.trunc();
        let fraction = ((seconds - whole) * TICKS_PER_SECOND as f64).round() as i64;
        Duration {
            ticks: (whole as i64) * TICKS_PER_SECOND + fraction,
        }
    }

    /// `absl::Nanoseconds(double)`.
    pub fn from_nanos_f64(nanos: f64) -> Duration {
        Duration::from_secs_f64(nanos / 1e9)
    }

    /// `absl::Microseconds(n)`.
    pub const fn from_micros(micros: i64) -> Duration {
        Duration {
            ticks: micros * 1000 * TICKS_PER_NANOSECOND,
        }
    }

    /// `absl::Nanoseconds(n)`.
    pub const fn from_nanos(nanos: i64) -> Duration {
        Duration {
            ticks: nanos * TICKS_PER_NANOSECOND,
        }
    }

    pub fn is_infinite(self) -> bool {
        self.ticks == i64::MAX
    }

    /// `absl::ToDoubleSeconds`.
    pub fn as_secs_f64(self) -> f64 {
        if self.is_infinite() {
            return f64::INFINITY;
        }
        self.ticks as f64 / TICKS_PER_SECOND as f64
    }

    /// `absl::ToDoubleNanoseconds`.
    pub fn as_nanos_f64(self) -> f64 {
        if self.is_infinite() {
            return f64::INFINITY;
        }
        self.ticks as f64 / TICKS_PER_NANOSECOND as f64
    }

    /// `absl::ToDoubleMicroseconds`.
    pub fn as_micros_f64(self) -> f64 {
        self.as_nanos_f64() / 1e3
    }

    /// `absl::ToInt64Microseconds`: truncated toward zero, as XLA's tests compare.
    pub fn whole_micros(self) -> i64 {
        if self.is_infinite() {
            return i64::MAX;
        }
        self.ticks / (1000 * TICKS_PER_NANOSECOND)
    }

    /// `absl::ToInt64Milliseconds`.
    pub fn whole_millis(self) -> i64 {
        if self.is_infinite() {
            return i64::MAX;
        }
        self.ticks / (1_000_000 * TICKS_PER_NANOSECOND)
    }

    /// `absl::ToInt64Seconds`.
    pub fn whole_secs(self) -> i64 {
        if self.is_infinite() {
            return i64::MAX;
        }
        self.ticks / TICKS_PER_SECOND
    }

    /// `duration * factor`, rounded to a tick (absl's `operator*(Duration, double)`).
    pub fn mul_f64(self, factor: f64) -> Duration {
        if self.is_infinite() {
            return if factor > 0.0 {
                Duration::INFINITE
            } else {
                Duration::ZERO
            };
        }
        let ticks = self.ticks as f64 * factor;
        if ticks.is_nan() || ticks <= 0.0 {
            Duration::ZERO
        } else if ticks >= i64::MAX as f64 {
            Duration::INFINITE
        } else {
            Duration {
                ticks: ticks.round() as i64,
            }
        }
    }

    /// `duration * n`.
    pub fn mul_i64(self, n: i64) -> Duration {
        if n <= 0 {
            return Duration::ZERO;
        }
        Duration {
            ticks: self.ticks.checked_mul(n).unwrap_or(i64::MAX),
        }
    }
}

impl Duration {
    /// `duration / n` (absl's integer division: truncated to a tick).
    pub fn div_i64(self, n: i64) -> Duration {
        if self.is_infinite() || n <= 0 {
            return if n <= 0 { Duration::INFINITE } else { self };
        }
        Duration {
            ticks: self.ticks / n,
        }
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, other: Duration) -> Duration {
        Duration {
            ticks: self.ticks.saturating_add(other.ticks),
        }
    }
}

impl AddAssign for Duration {
    fn add_assign(&mut self, other: Duration) {
        *self = *self + other;
    }
}

impl Sub for Duration {
    type Output = Duration;
    /// Never below zero; infinite minus anything finite stays infinite.
    fn sub(self, other: Duration) -> Duration {
        if self.is_infinite() {
            return self;
        }
        Duration {
            ticks: self.ticks.saturating_sub(other.ticks).max(0),
        }
    }
}

impl fmt::Display for Duration {
    /// `53.1 µs`, `1.20 ms`, `2.93 s`, `inf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_infinite() {
            return f.write_str("inf");
        }
        let ns = self.as_nanos_f64();
        if ns < 1e3 {
            write!(f, "{ns:.2} ns")
        } else if ns < 1e6 {
            write!(f, "{:.2} µs", ns / 1e3)
        } else if ns < 1e9 {
            write!(f, "{:.2} ms", ns / 1e6)
        } else {
            write!(f, "{:.2} s", ns / 1e9)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_quarter_nanoseconds_and_truncates_like_absl() {
        // 11.08 ns rounds to 11.0, 5.21 ns to 5.25.
        assert_eq!(Duration::from_nanos_f64(11.08).as_nanos_f64(), 11.0);
        assert_eq!(Duration::from_nanos_f64(5.2077).as_nanos_f64(), 5.25);
        assert_eq!(Duration::from_secs_f64(1.999e-6).whole_micros(), 1);
        assert_eq!(Duration::from_micros(3).whole_micros(), 3);
        assert!(Duration::from_secs_f64(f64::INFINITY).is_infinite());
        assert!((Duration::INFINITE + Duration::from_micros(1)).is_infinite());
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(
            Duration::from_micros(2).mul_f64(0.5),
            Duration::from_micros(1)
        );
        assert_eq!(
            Duration::from_micros(1).mul_i64(3),
            Duration::from_micros(3)
        );
        assert_eq!(
            Duration::from_micros(1) - Duration::from_micros(2),
            Duration::ZERO
        );
        assert_eq!(Duration::from_secs_f64(2932.5).whole_secs(), 2932);
        assert_eq!(Duration::from_nanos(7).div_i64(2).as_nanos_f64(), 3.5);
        assert_eq!(Duration::from_nanos(1800).whole_micros(), 1);
    }
}
