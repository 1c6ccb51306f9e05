//! Attribute values XLA prints from what it parsed rather than as written: a window
//! (`window_util::ToString`: fields in a fixed order, default ones left out), a slice
//! (`[start:limit:stride]`, the stride always written), values equal to XLA's default
//! that it does not print at all (`feature_group_count=1`), and the header's
//! `entry_computation_layout` and `allow_spmd_*` lists.

use std::borrow::Cow;

use super::shape_text;
use crate::model::{PrimitiveType, Shape};

/// Whether XLA prints nothing for `key=value` on `opcode` (the value is its default).
pub fn is_default(opcode: &str, key: &str, value: &str) -> bool {
    match key {
        "feature_group_count" | "batch_group_count" => value == "1",
        // Async wrappers name their computation only on the start.
        "calls" => matches!(opcode, "async-update" | "async-done"),
        // The parser checks `mode=` against the replica groups and keeps nothing
        // of it: no printer writes it back.
        "mode" => true,
        _ => false,
    }
}

/// Attributes XLA prints on `opcode` even when they are not written, with the
/// value they then hold: a broadcast's dimensions, a dot's contracting dimensions
/// (`DotDimensionNumbersToString` writes both lists, empty or not; an async
/// `dot-start` prints the dot it wraps).
pub fn always_printed(opcode: &str) -> &'static [(&'static str, &'static str)] {
    match opcode {
        "dot" | "dot-start" => &[
            ("lhs_contracting_dims", "{}"),
            ("rhs_contracting_dims", "{}"),
        ],
        // `HloBroadcastInstruction` writes its dimensions, empty for a scalar.
        "broadcast" => &[("dimensions", "{}")],
        _ => &[],
    }
}

/// `value` of `key` as XLA prints it (borrowed when that is as written).
pub fn canonical<'v>(key: &str, value: &'v str) -> Cow<'v, str> {
    let printed = match key {
        "window" => window(value),
        "slice" => slice(value),
        "frontend_attributes" => frontend_attributes(value),
        "result_accuracy" => result_accuracy(value),
        "metadata" => metadata(value),
        _ => None,
    };
    match printed {
        Some(printed) if printed != value => Cow::Owned(printed),
        _ => Cow::Borrowed(value),
    }
}

/// `{b="x", a="{{1,0}}"}` as `FrontendAttributesToString` writes it: keys sorted,
/// no blanks, a value that reads as a braced dictionary unquoted, any other
/// quoted with C escapes.
fn frontend_attributes(value: &str) -> Option<String> {
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let after = after.trim_start();
        let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
            let end = closing_quote(quoted)?;
            (unescape(&quoted[..end])?, &quoted[end + 1..])
        } else {
            let end = braced_end(after)?;
            (after[..end].to_string(), &after[end..])
        };
        pairs.push((key.trim().to_string(), value));
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    pairs.sort();
    let printed: Vec<String> = pairs
        .into_iter()
        .map(|(k, v)| match reads_as_dict(&v) {
            true => format!("{k}={v}"),
            false => format!("{k}=\"{}\"", c_escape(&v)),
        })
        .collect();
    Some(format!("{{{}}}", printed.join(",")))
}

/// `{op_name="a", source_line=3}` as `OpMetadataToString` writes it: XLA's
/// field order, one blank between fields, empty strings and zeros left out. A
/// field it does not know keeps the value as written (`None`).
fn metadata(value: &str) -> Option<String> {
    const ORDER: &[&str] = &[
        "op_type",
        "op_name",
        "source_file",
        "source_line",
        "source_end_line",
        "source_column",
        "source_end_column",
        "profile_type",
        "deduplicated_name",
        "scheduling_name",
        "stack_frame_id",
        "metadata_payload",
    ];
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?;
    // (rank, key, value, quoted): borrowed, and written once into one string
    // (every instruction of a dump has metadata).
    let mut fields: Vec<(usize, &str, &str, bool)> = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim();
        let rank = ORDER.iter().position(|k| *k == key)?;
        let after = after.trim_start();
        let (field, after) = if let Some(quoted) = after.strip_prefix('"') {
            let end = closing_quote(quoted)?;
            let text = &quoted[..end];
            (
                (!text.is_empty()).then_some((text, true)),
                &quoted[end + 1..],
            )
        } else if after.starts_with('{') {
            let end = braced_end(after)?;
            let braced = &after[..end];
            ((braced != "{}").then_some((braced, false)), &after[end..])
        } else {
            let end = after
                .find(|c: char| c.is_whitespace() || c == ',')
                .unwrap_or(after.len());
            let number = &after[..end];
            (
                (number.parse::<i64>().ok()? != 0).then_some((number, false)),
                &after[end..],
            )
        };
        if let Some((text, quoted)) = field {
            fields.push((rank, key, text, quoted));
        }
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    fields.sort_by_key(|(rank, ..)| *rank);
    let mut out = String::with_capacity(value.len());
    out.push('{');
    for (k, (_, key, text, quoted)) in fields.into_iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        out.push_str(key);
        out.push('=');
        let quote = if quoted { "\"" } else { "" };
        out.push_str(quote);
        out.push_str(text);
        out.push_str(quote);
    }
    out.push('}');
    Some(out)
}

/// The index of the `"` that closes a string whose opening quote is already eaten.
fn closing_quote(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (k, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(k),
            _ => escaped = false,
        }
    }
    None
}

/// The names of an instruction list `{%a, %b}` (`control-predecessors`), without
/// their `%`: `["a", "b"]`.
pub(super) fn instruction_names(value: &str) -> Vec<&str> {
    value
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .map(|n| n.trim().trim_start_matches('%'))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The length of the braced value `text` starts with (`{...}` with nested braces).
pub(super) fn braced_end(text: &str) -> Option<usize> {
    if !text.starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    for (k, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `LexesAsJsonDict`, as far as the printer's choice goes: braces around the
/// whole value, balanced.
fn reads_as_dict(value: &str) -> bool {
    braced_end(value) == Some(value.len())
}

/// A quoted string's escapes read (`\"`, `\\`, `\n`, `\t`).
fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            other => other,
        });
    }
    Some(out)
}

/// `absl::CEscape`: quotes, backslashes and control characters escaped.
fn c_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            _ => out.push(c),
        }
    }
    out
}

/// `{tolerance={rtol=0.5, atol=1.0, ulps=2}}` as XLA prints the `Tolerance` proto
/// (`ResultAccuracyToleranceToString`): its fields in their proto order (`atol`,
/// `rtol`, `ulps`), zeros left out, no blanks, numbers in their shortest form.
fn result_accuracy(value: &str) -> Option<String> {
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let fields = inner
        .strip_prefix("tolerance")?
        .trim_start()
        .strip_prefix('=')?
        .trim()
        .strip_prefix('{')?
        .strip_suffix('}')?;
    let mut values: Vec<(usize, String)> = Vec::new();
    for field in fields.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let (key, number) = field.split_once('=')?;
        let rank = ["atol", "rtol", "ulps"]
            .iter()
            .position(|k| *k == key.trim())?;
        let number: f64 = number.trim().parse().ok()?;
        if number != 0.0 {
            values.push((rank, format!("{}={}", key.trim(), shortest(number))));
        }
    }
    values.sort();
    let printed: Vec<String> = values.into_iter().map(|(_, v)| v).collect();
    Some(format!("{{tolerance={{{}}}}}", printed.join(",")))
}

/// A double as protobuf's text format writes it (`SimpleDtoa`): `%.15g`, or
/// `%.17g` when that does not read back as the same number.
fn shortest(value: f64) -> String {
    let short = format_g(value, 15);
    match short.parse::<f64>() {
        Ok(v) if v == value => short,
        _ => format_g(value, 17),
    }
}

/// C's `%.<precision>g`: `precision` significant digits, trailing zeros dropped,
/// scientific (`6.554e+04`) when the exponent is below -4 or not below `precision`.
pub fn format_g(value: f64, precision: usize) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .into();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let precision = precision.max(1);
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

/// `1.500` as `1.5`, `2.000` as `2`; text without a `.` as it is.
fn trim_zeros(number: &str) -> &str {
    if !number.contains('.') {
        return number;
    }
    number.trim_end_matches('0').trim_end_matches('.')
}

/// A constant's literal with each number written as XLA's literal printer writes
/// it (`LiteralBase::ToString`): an integer wrapped into its type's range, a float
/// rounded to its type and printed by `RoundTripFpToString`. Only arrays of one
/// real element type (`None` otherwise, and for a literal elided as `{...}`):
/// everything but the numbers is kept as written.
pub fn literal(shape: &Shape, written: &str) -> Option<String> {
    let element = &shape.as_array()?.element;
    if written.contains("...") || element.is_complex() {
        return None;
    }
    let integral = element.is_integral();
    let bits = element.bit_width()?;
    if !integral && !element.is_floating() {
        return None;
    }
    let mut out = String::with_capacity(written.len());
    let bytes = written.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        // `/*i0=1*/`, the index annotations XLA writes, are kept whole.
        if c == b'/' && bytes.get(at + 1) == Some(&b'*') {
            let end = written[at..].find("*/").map_or(bytes.len(), |k| at + k + 2);
            out.push_str(&written[at..end]);
            at = end;
            continue;
        }
        if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' {
            let end = number_end(bytes, at);
            let token = &written[at..end];
            let printed = match integral {
                true => integer(token, bits, element.name().starts_with('u')),
                false => float(token, element),
            };
            out.push_str(&printed.unwrap_or_else(|| token.to_string()));
            at = end;
            continue;
        }
        let end = written[at..]
            .char_indices()
            .nth(1)
            .map_or(bytes.len(), |(k, _)| at + k);
        out.push_str(&written[at..end]);
        at = end;
    }
    Some(out)
}

/// Where the number starting at `start` ends.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start + 1;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent_sign = (c == b'-' || c == b'+') && matches!(bytes[end - 1], b'e' | b'E');
        if !(c.is_ascii_alphanumeric() || c == b'.' || exponent_sign) {
            break;
        }
        end += 1;
    }
    end
}

/// An integer of `bits` bits as XLA holds it: read as a 64-bit value and cast.
fn integer(token: &str, bits: u32, unsigned: bool) -> Option<String> {
    let value: i128 = token.parse().ok()?;
    if bits == 0 || bits > 64 {
        return None;
    }
    let modulus = 1i128 << bits;
    let wrapped = value.rem_euclid(modulus);
    let value = if !unsigned && wrapped >= modulus / 2 {
        wrapped - modulus
    } else {
        wrapped
    };
    Some(value.to_string())
}

/// A float of type `element` as `RoundTripFpToString` prints it: `f32` with 6
/// digits when they read back as the same float, else 9; `f64` with 15, else 17;
/// the narrower types (`bf16`, `f16`) with their `max_digits10` (4, 5).
fn float(token: &str, element: &PrimitiveType) -> Option<String> {
    let value: f64 = token.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    Some(match element {
        PrimitiveType::F64 => {
            let short = format_g(value, 15);
            match short.parse::<f64>() {
                Ok(v) if v == value => short,
                _ => format_g(value, 17),
            }
        }
        PrimitiveType::F32 => {
            let value = value as f32;
            let short = format_g(f64::from(value), 6);
            match short.parse::<f32>() {
                Ok(v) if v == value => short,
                _ => format_g(f64::from(value), 9),
            }
        }
        PrimitiveType::Bf16 => format_g(round_to(value as f32 as f64, 8, -126)?, 4),
        PrimitiveType::F16 => format_g(round_to(value, 11, -14)?, 5),
        _ => return None,
    })
}

/// `value` rounded (to nearest, ties to even) to a binary float with `digits`
/// significant bits whose smallest normal exponent is `min_exponent`; `None` when
/// it overflows (XLA's parser refuses that value).
fn round_to(value: f64, digits: i32, min_exponent: i32) -> Option<f64> {
    if value == 0.0 {
        return Some(value);
    }
    let exponent = value.abs().log2().floor() as i32;
    let quantum = 2f64.powi(exponent.max(min_exponent) - digits + 1);
    let rounded = (value / quantum).round_ties_even() * quantum;
    rounded.is_finite().then_some(rounded)
}

/// `{size=3x3 pad=1_1x1_1 stride=2x2}` in XLA's field order, fields that hold only
/// their default left out.
fn window(value: &str) -> Option<String> {
    const ORDER: &[(&str, &str)] = &[
        ("size", ""),
        ("stride", "1"),
        ("pad", "0_0"),
        ("lhs_dilate", "1"),
        ("rhs_dilate", "1"),
        ("rhs_reversal", "0"),
    ];
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let mut fields = Vec::new();
    for item in inner.split_whitespace() {
        let (k, v) = item.split_once('=')?;
        let rank = ORDER.iter().position(|(name, _)| *name == k)?;
        fields.push((rank, k, v));
    }
    fields.sort_by_key(|(rank, _, _)| *rank);
    let kept: Vec<String> = fields
        .into_iter()
        .filter(|(rank, _, v)| {
            let default = ORDER[*rank].1;
            default.is_empty() || v.split('x').any(|d| d != default)
        })
        .map(|(_, k, v)| format!("{k}={v}"))
        .collect();
    Some(format!("{{{}}}", kept.join(" ")))
}

/// `{[0:3], [0:4:2]}` as `{[0:3:1], [0:4:2]}`: XLA writes every stride when one is
/// not 1, and none otherwise (`HloSliceInstruction`'s printer).
fn slice(value: &str) -> Option<String> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let mut dims: Vec<(String, String, String)> = Vec::new();
    for part in inner.split(']') {
        let part = part.trim().trim_start_matches(',').trim();
        if part.is_empty() {
            continue;
        }
        let body: String = part.strip_prefix('[')?.split_whitespace().collect();
        let fields: Vec<&str> = body.split(':').collect();
        let stride = match fields.len() {
            2 => "1",
            3 => fields[2],
            _ => return None,
        };
        dims.push((fields[0].into(), fields[1].into(), stride.into()));
    }
    let strided = dims.iter().any(|(_, _, stride)| stride != "1");
    let printed: Vec<String> = dims
        .into_iter()
        .map(|(start, limit, stride)| match strided {
            true => format!("[{start}:{limit}:{stride}]"),
            false => format!("[{start}:{limit}]"),
        })
        .collect();
    Some(format!("{{{}}}", printed.join(", ")))
}

/// The order XLA prints the attributes of one group in, where a group's members may
/// be written in any order (`DotDimensionNumbersToString`, a convolution's
/// `PrintExtraAttributesImpl`).
pub const GROUPS: &[&[&str]] = &[
    &[
        "lhs_batch_dims",
        "lhs_contracting_dims",
        "rhs_batch_dims",
        "rhs_contracting_dims",
    ],
    &[
        "window",
        "dim_labels",
        "feature_group_count",
        "batch_group_count",
    ],
];

/// Puts the members of each of [`GROUPS`] in the group's order, in the places they
/// hold in `keys` (the other attributes stay where they are).
pub fn order_groups<V: Clone>(attributes: &mut [(&str, V)]) {
    for group in GROUPS {
        let slots: Vec<usize> = (0..attributes.len())
            .filter(|&i| group.contains(&attributes[i].0))
            .collect();
        let mut members: Vec<(&str, V)> = slots.iter().map(|&i| attributes[i].clone()).collect();
        members.sort_by_key(|(k, _)| group.iter().position(|g| g == k));
        for (slot, member) in slots.into_iter().zip(members) {
            attributes[slot] = member;
        }
    }
}

/// A header attribute's value as XLA prints it.
pub fn header(key: &str, value: &str) -> String {
    match key {
        "entry_computation_layout" => entry_layout(value).unwrap_or_else(|| value.to_string()),
        "input_output_alias" => aliases(value).unwrap_or_else(|| value.to_string()),
        "frontend_attributes" => frontend_attributes(value).unwrap_or_else(|| value.to_string()),
        "allow_spmd_sharding_propagation_to_parameters"
        | "allow_spmd_sharding_propagation_to_output"
            if !value.starts_with('{') =>
        {
            format!("{{{value}}}")
        }
        _ => value.to_string(),
    }
}

/// `{ {1}: (0, {1}), {0}: (0, {0}, must-alias) }` as
/// `HloInputOutputAliasConfig::ToShortString` writes it: the outputs in their
/// shape tree's order, indices without blanks, every alias with its kind
/// (`may-alias` when none is written).
fn aliases(value: &str) -> Option<String> {
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut entries: Vec<(Vec<i64>, String)> = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let end = rest.find('}')?;
        let output = index_list(rest.get(..=end)?)?;
        let after = rest[end + 1..].trim_start().strip_prefix(':')?.trim_start();
        let close = after.find(')')?;
        let alias = after.strip_prefix('(')?.get(..close - 1)?;
        let (number, after_number) = alias.split_once(',')?;
        let index_end = after_number.find('}')?;
        let parameter_index = index_list(after_number[..=index_end].trim())?;
        let kind = after_number[index_end + 1..]
            .trim()
            .trim_start_matches(',')
            .trim();
        let kind = if kind.is_empty() { "may-alias" } else { kind };
        let number: i64 = number.trim().parse().ok()?;
        entries.push((
            output.clone(),
            format!(
                "{}: ({number}, {}, {kind})",
                join_index(&output),
                join_index(&parameter_index)
            ),
        ));
        rest = after[close + 1..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let printed: Vec<String> = entries.into_iter().map(|(_, e)| e).collect();
    Some(format!("{{ {} }}", printed.join(", ")))
}

/// `{0, 1}` as `[0, 1]`.
fn index_list(text: &str) -> Option<Vec<i64>> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().ok())
        .collect()
}

/// `ShapeIndex::ToString`: `{0,1}`.
fn join_index(index: &[i64]) -> String {
    let parts: Vec<String> = index.iter().map(i64::to_string).collect();
    format!("{{{}}}", parts.join(","))
}

/// `{(f32[8] , s32[])  ->  f32[8]}` as `{(f32[8]{0}, s32[])->f32[8]{0}}`.
fn entry_layout(value: &str) -> Option<String> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let (params, result) = inner.rsplit_once("->")?;
    Some(format!(
        "{{{}->{}}}",
        shape_text::canonical(params, true)?,
        shape_text::canonical(result, true)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_prints_as_xla_does_and_is_borrowed_when_it_does_already() {
        let written = r#"{source_line=3, op_name="a/b", op_type="", source_file="f.py" stack_frame_id=0 profile_type={1}}"#;
        assert_eq!(
            canonical("metadata", written),
            r#"{op_name="a/b" source_file="f.py" source_line=3 profile_type={1}}"#
        );
        let printed = r#"{op_name="jit(f)/add" source_file="x \"q\".py" source_line=12}"#;
        assert!(matches!(canonical("metadata", printed), Cow::Borrowed(_)));
        assert!(matches!(
            canonical("metadata", "{unknown=1}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn windows_and_slices_print_as_xla_does() {
        assert_eq!(
            window("{pad=1_1 size=1}").as_deref(),
            Some("{size=1 pad=1_1}")
        );
        assert_eq!(
            window("{size=2x2 stride=1x1 pad=0_0x0_0}").as_deref(),
            Some("{size=2x2}")
        );
        assert_eq!(
            slice("{[0:3], [0:4:2]}").as_deref(),
            Some("{[0:3:1], [0:4:2]}")
        );
        assert_eq!(slice("{[0:3:1], [0:4]}").as_deref(), Some("{[0:3], [0:4]}"));
        assert_eq!(
            entry_layout("{(f32[8,16]) -> f32[8]}").as_deref(),
            Some("{(f32[8,16]{1,0})->f32[8]{0}}")
        );
    }
}
