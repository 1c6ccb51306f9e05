//! A constant's literal against its shape, as XLA's parser checks it
//! (`HloParserImpl::ParseDenseLiteral`, `CheckParsedValueIsInRange`,
//! `SetValueInLiteralHelper`): braces nested as deep as the rank with as many
//! elements as each dimension says, every value within the element type's range, a
//! NaN payload only where the type has room for it. Messages use XLA's wording.
//!
//! Only reads: the model keeps a literal as its text. A literal elided by the printer
//! (`{...}`) is not checked.

use std::ops::Range;

use super::shape::{ArrayShape, PrimitiveType};

/// What is wrong with a literal: where (relative to its text) and XLA's message.
pub type LiteralError = (Range<usize>, String);

/// Checks `text`, the literal of a constant of array shape `shape`.
pub fn check(shape: &ArrayShape, text: &str) -> Result<(), LiteralError> {
    if text.contains("...") || shape.dims.iter().any(|&d| d < 0) {
        return Ok(());
    }
    let rank = shape.dims.len();
    let mut nest = 0usize;
    let mut seen = vec![0i64; rank];
    let tokens = Tokens { text, at: 0 };
    for (token, range) in tokens {
        match token {
            "{" => {
                nest += 1;
                if nest > rank {
                    return Err((
                        range,
                        format!("expects nested array in rank {rank}, but sees larger"),
                    ));
                }
                if nest > 1 {
                    seen[nest - 2] += 1;
                    if seen[nest - 2] > shape.dims[nest - 2] {
                        return Err((
                            range,
                            format!(
                                "expects {} elements in the {}th element, but sees more",
                                shape.dims[nest - 2],
                                index(&seen[..nest - 2])
                            ),
                        ));
                    }
                }
            }
            "}" => {
                if nest == 0 {
                    return Err((range, "unexpected '}' token".into()));
                }
                nest -= 1;
                if seen[nest] != shape.dims[nest] {
                    return Err((
                        range,
                        format!(
                            "expects {} elements in the {}th element, but sees {}",
                            shape.dims[nest],
                            index(&seen[..nest]),
                            seen[nest]
                        ),
                    ));
                }
                seen[nest] = 0;
            }
            value => {
                if rank > 0 {
                    if nest != rank {
                        return Err((
                            range,
                            format!("expects nested array in rank {rank}, but sees {nest}"),
                        ));
                    }
                    seen[rank - 1] += 1;
                    if seen[rank - 1] > shape.dims[rank - 1] {
                        return Err((
                            range,
                            format!(
                                "expects {} elements on the minor-most dimension, but sees more",
                                shape.dims[rank - 1]
                            ),
                        ));
                    }
                }
                check_value(&shape.element, value).map_err(|m| (range, m))?;
            }
        }
    }
    Ok(())
}

/// `[0,2]`: the index of the sub-array being read, as XLA prints it.
fn index(seen: &[i64]) -> String {
    let parts: Vec<String> = seen.iter().map(|n| (n - 1).to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// The tokens of a literal: `{`, `}` and values (`1.5`, `-inf`, `nan(0x3)`, `true`,
/// `(1, 2)`); commas, blanks and comments skipped.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (&'a str, Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(self.at)? {
                b' ' | b'\t' | b'\n' | b'\r' | b',' => self.at += 1,
                b'/' if bytes.get(self.at + 1) == Some(&b'*') => {
                    self.at = self.text[self.at + 2..]
                        .find("*/")
                        .map_or(bytes.len(), |i| self.at + 2 + i + 2);
                }
                _ => break,
            }
        }
        let start = self.at;
        let end = match bytes[start] {
            b'{' | b'}' => start + 1,
            b'(' => self.text[start..]
                .find(')')
                .map_or(bytes.len(), |i| start + i + 1),
            _ => {
                let mut end = start;
                while end < bytes.len()
                    && !matches!(
                        bytes[end],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b'{' | b'}'
                    )
                {
                    // `nan(0x3)`: the payload belongs to the value.
                    if bytes[end] == b'(' {
                        end = self.text[end..].find(')').map_or(bytes.len(), |i| end + i);
                    }
                    end += 1;
                }
                end.min(bytes.len())
            }
        };
        self.at = end;
        Some((&self.text[start..end], start..end))
    }
}

/// One value of element type `element`, within its range.
fn check_value(element: &PrimitiveType, value: &str) -> Result<(), String> {
    let type_name = element.name().to_ascii_uppercase();
    let out_of_range =
        || format!("value {value} is out of range for literal's primitive type {type_name}");
    if let Some(rest) = value.strip_prefix('(') {
        if !matches!(element, PrimitiveType::C64 | PrimitiveType::C128) {
            return Err(
                "unexpected '(' in literal. Parens are only valid for complex literals".into(),
            );
        }
        if rest.trim_start().starts_with('(') {
            return Err("expect floating-point value for real part of complex number".into());
        }
    }
    if let Some((lo, hi)) = integer_range(element) {
        return match value.parse::<i128>() {
            // XLA reads an int64 and converts it: a negative value wraps around for an
            // unsigned type (so `u64[] constant(-1)` is the largest u64).
            Ok(v) if lo == 0 && v < 0 && v >= i128::from(i64::MIN) => {
                let wrapped = v + (1i128 << 64);
                if wrapped > hi {
                    Err(format!("{} namely [{lo}, {hi}]", out_of_range()))
                } else {
                    Ok(())
                }
            }
            Ok(v) if v < lo || v > hi => Err(format!("{} namely [{lo}, {hi}]", out_of_range())),
            _ => Ok(()),
        };
    }
    if let Some(inner) = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
        let component = match element {
            PrimitiveType::C64 => PrimitiveType::F32,
            PrimitiveType::C128 => PrimitiveType::F64,
            _ => return Ok(()),
        };
        for (part, v) in ["real", "imaginary"].iter().zip(inner.split(',')) {
            let v = v.trim();
            if check_float(&component, v).is_err() {
                return Err(format!(
                    "{part} part {v} is out of range for literal's primitive type {type_name}"
                ));
            }
        }
        return Ok(());
    }
    match check_float(element, value) {
        Err(FloatError::Range) => Err(out_of_range()),
        Err(FloatError::Payload { payload, mask }) => Err(match mask {
            Some(mask) => format!(
                "tries to set NaN payload 0x{payload:x} to a literal of {type_name}, but the \
                 NaN payload is out of range (0x{mask:x})"
            ),
            None => format!(
                "tries to set NaN payload 0x{payload:x} to a literal of {type_name}, but {} \
                 does not support payloads",
                element.name()
            ),
        }),
        Ok(()) => Ok(()),
    }
}

/// The values an integer type holds.
fn integer_range(element: &PrimitiveType) -> Option<(i128, i128)> {
    use PrimitiveType::*;
    let (signed, bits) = match element {
        S1 => (true, 1),
        S2 => (true, 2),
        S4 => (true, 4),
        S8 => (true, 8),
        S16 => (true, 16),
        S32 => (true, 32),
        S64 => (true, 64),
        U1 => (false, 1),
        U2 => (false, 2),
        U4 => (false, 4),
        U8 => (false, 8),
        U16 => (false, 16),
        U32 => (false, 32),
        U64 => (false, 64),
        _ => return None,
    };
    Some(if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

enum FloatError {
    Range,
    /// A NaN payload the type cannot hold; `mask` is the largest it can (`None`: the
    /// type has no payloads).
    Payload {
        payload: u64,
        mask: Option<u64>,
    },
}

/// A floating-point type's largest finite value, the half unit in the last place
/// there (a value at least `max + half` rounds past it, as XLA's cast does), and its
/// NaN payload bits, its mantissa's (`None`: no payloads).
fn float_limits(element: &PrimitiveType) -> Option<(f64, f64, Option<u32>)> {
    use PrimitiveType::*;
    Some(match element {
        F16 => (65504.0, 16.0, Some(10)),
        Bf16 => (3.389_531_389_251_535_5e38, 2f64.powi(119), Some(7)),
        F32 => (f64::from(f32::MAX), 2f64.powi(103), Some(23)),
        F64 => (f64::MAX, 0.0, Some(52)),
        F8E5M2 => (57344.0, 4096.0, Some(2)),
        F8E4M3 => (240.0, 8.0, Some(3)),
        F8E3M4 => (15.5, 0.25, Some(4)),
        F8E4M3Fn => (448.0, 16.0, None),
        F8E4M3B11Fnuz => (30.0, 1.0, None),
        F8E4M3Fnuz => (240.0, 8.0, None),
        F8E5M2Fnuz => (57344.0, 4096.0, None),
        F4E2M1Fn => (6.0, 1.0, None),
        _ => return None,
    })
}

fn check_float(element: &PrimitiveType, value: &str) -> Result<(), FloatError> {
    let Some((max, half, payload_bits)) = float_limits(element) else {
        return Ok(());
    };
    let unsigned = value.trim_start_matches(['-', '+']);
    if let Some(payload) = unsigned
        .strip_prefix("nan(")
        .and_then(|p| p.strip_suffix(')'))
    {
        let digits = payload.trim_start_matches("0x");
        let Ok(payload) = u64::from_str_radix(digits, 16) else {
            return Ok(());
        };
        let mask = payload_bits.map(|bits| (1u64 << bits) - 1);
        return match mask {
            Some(mask) if payload <= mask => Ok(()),
            _ => Err(FloatError::Payload { payload, mask }),
        };
    }
    if unsigned.starts_with("inf") || unsigned.starts_with("nan") {
        return Ok(());
    }
    match value.parse::<f64>() {
        Ok(v) if !v.is_finite() || (half > 0.0 && v.abs() >= max + half) => Err(FloatError::Range),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(element: PrimitiveType, dims: &[i64]) -> ArrayShape {
        ArrayShape::new(element, dims.to_vec())
    }

    #[test]
    fn nesting_follows_the_rank() {
        let f2 = shape(PrimitiveType::F32, &[2, 3]);
        assert!(check(&f2, "{{1, 2, 3}, {4, 5, 6}}").is_ok());
        assert!(check(&f2, "{...}").is_ok());
        let e = check(&f2, "{1, 2, 3, 4, 5, 6}").unwrap_err();
        assert!(
            e.1.contains("expects nested array in rank 2, but sees 1"),
            "{e:?}"
        );
        let e = check(&shape(PrimitiveType::F32, &[2]), "{1,{2}}").unwrap_err();
        assert!(e.1.contains("but sees larger"), "{e:?}");
        let e = check(
            &shape(PrimitiveType::F32, &[2, 3, 2]),
            "{{{1, 2}, {3, 4}, {5, 6}, {7, 8}}}",
        )
        .unwrap_err();
        assert!(
            e.1.contains("expects 3 elements in the [0]th element"),
            "{e:?}"
        );
    }

    #[test]
    fn parens_only_hold_a_complex_value() {
        let f32 = shape(PrimitiveType::F32, &[]);
        let (_, why) = check(&f32, "((1))").unwrap_err();
        assert!(
            why.contains("Parens are only valid for complex literals"),
            "{why}"
        );
        let s32 = shape(PrimitiveType::S32, &[2]);
        assert!(check(&s32, "{(1), 2}").is_err());
        let c64 = shape(PrimitiveType::C64, &[]);
        assert!(check(&c64, "(1, 0)").is_ok());
        let (_, why) = check(&c64, "((1, 0))").unwrap_err();
        assert!(why.contains("real part"), "{why}");
    }

    #[test]
    fn values_stay_in_range() {
        let scalar = |t| shape(t, &[]);
        assert!(check(&scalar(PrimitiveType::U4), "15").is_ok());
        assert!(check(&scalar(PrimitiveType::U4), "16").is_err());
        assert!(check(&scalar(PrimitiveType::S4), "-9").is_err());
        assert!(check(&scalar(PrimitiveType::F16), "-65520").is_err());
        assert!(check(&scalar(PrimitiveType::F16), "65519").is_ok());
        assert!(check(&scalar(PrimitiveType::F64), "1.8e308").is_err());
        assert!(check(&scalar(PrimitiveType::F32), "-inf").is_ok());
        let e = check(&shape(PrimitiveType::Bf16, &[1]), "{nan(0x3ff)}").unwrap_err();
        assert!(e.1.contains("tries to set NaN payload 0x3ff"), "{e:?}");
        assert!(check(&shape(PrimitiveType::Bf16, &[1]), "{nan(0x7f)}").is_ok());
        assert!(check(&shape(PrimitiveType::F32, &[1]), "{nan(0x3ff)}").is_ok());
        assert!(check(&scalar(PrimitiveType::U64), "-1").is_ok());
        assert!(check(&scalar(PrimitiveType::U32), "-1").is_err());
    }
}
