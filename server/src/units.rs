//! How sizes, rates and operation counts are written for people, the same in every
//! command, hover and lens: sizes in powers of 1024 (`KiB`, `MiB`, `GiB`, as XLA's
//! memory reports and profilers print buffers), rates as vendors quote them (`GB/s`,
//! `TB/s`, `TFLOP/s`: powers of 1000), operation counts in powers of 1000.

/// `512 B`, `3.1 KiB`, `2.0 MiB`, `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// [`bytes`] of a signed count (XLA's cost analysis counts in `int64_t`); a negative
/// count (an unknown size) is written as such.
pub fn signed_bytes(n: i64) -> String {
    match u64::try_from(n) {
        Ok(n) => bytes(n),
        Err(_) => format!("{n} B"),
    }
}

/// `63 GB/s`, `3.35 TB/s`: bytes per second in powers of 1000.
pub fn rate(bytes_per_second: f64) -> String {
    scaled(
        bytes_per_second,
        &["B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"],
    )
}

/// `12.3 GFLOP`, `8.61 TFLOP`: operations in powers of 1000.
pub fn flops(n: f64) -> String {
    scaled(n, &["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"])
}

/// `989 TFLOP/s`.
pub fn flop_rate(per_second: f64) -> String {
    scaled(
        per_second,
        &[
            "FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s",
        ],
    )
}

/// `2,674`, `0.7`, `12.5`: a number as read in a sentence, thousands grouped,
/// one decimal below 100.
pub fn grouped(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value.abs() < 100.0 {
        let one = format!("{value:.1}");
        return one.strip_suffix(".0").map(str::to_string).unwrap_or(one);
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// `value` in the largest unit (powers of 1000) that keeps it at least 1, with three
/// significant digits.
fn scaled(value: f64, units: &[&str]) -> String {
    if !value.is_finite() {
        return format!("{value} {}", units[0]);
    }
    let mut v = value;
    let mut unit = 0;
    while v.abs() >= 1000.0 && unit + 1 < units.len() {
        v /= 1000.0;
        unit += 1;
    }
    let digits = if unit == 0 || v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", units[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_and_rates_decimal() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 + 100), "3.1 KiB");
        assert_eq!(bytes(939_524_096), "896.0 MiB");
        assert_eq!(signed_bytes(-1), "-1 B");
        assert_eq!(rate(3_352_320_000_000.0), "3.35 TB/s");
        assert_eq!(rate(63e9), "63.0 GB/s");
        assert_eq!(flops(8.61e12), "8.61 TFLOP");
        assert_eq!(flop_rate(989.4e12), "989 TFLOP/s");
        assert_eq!(flops(12.0), "12 FLOP");
        assert_eq!(grouped(2673.7), "2,674");
        assert_eq!(grouped(8_208_384.0), "8,208,384");
        assert_eq!(grouped(0.7), "0.7");
        assert_eq!(grouped(12.0), "12");
    }
}
