//! What `GpuHloCostAnalysis::HandleCustomCall` records: a cuBLAS Lt GEMM counts
//! its dot's flops and a cuDNN convolution its convolution's, each writing only
//! its real output (the scratch workspace in the result tuple is not counted);
//! XLA's call markers cost nothing; any other custom call is opaque to XLA (it
//! records -1, "unknown", for its flops and bytes) unless its backend config
//! carries a `cost_estimate_json` with `flops` and `bytes_accessed`, which JAX
//! writes for Triton kernels (`ExtractCustomCallCostEstimate`).

use crate::model::{ComputationRef, Instruction};

use super::{operand_shape, shape_size, Analysis, InstructionCost, FMA_FLOPS};

/// cuBLAS Lt targets (`IsCublasLtGemm`).
const CUBLAS_LT: &[&str] = &[
    "__cublas$lt$matmul",
    "__cublas$lt$matmul$f8",
    "__cublas$lt$matmul$mx",
    "__cublas$lt$groupedMatmul",
];

/// cuDNN convolution targets (`IsCustomCallToDnnConvolution`).
const CUDNN_CONVOLUTION: &[&str] = &[
    "__cudnn$convForward",
    "__cudnn$convForwardGraph",
    "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter",
    "__cudnn$convBiasActivationForward",
];

/// Markers of an outlinable block (`kCallMarkerBeforeTarget`, `...AfterTarget`).
const CALL_MARKERS: &[&str] = &[
    "__xla_internal_call_marker_before",
    "__xla_internal_call_marker_after",
];

/// `CustomCallCostEstimate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostEstimate {
    pub flops: Option<i64>,
    pub bytes_accessed: Option<i64>,
}

impl Analysis<'_, '_> {
    /// `HandleCustomCall` on `cost`, which holds the defaults.
    pub(super) fn custom_call(
        &self,
        c: ComputationRef<'_>,
        instr: &Instruction,
        cost: &mut InstructionCost,
    ) {
        let target = instr.custom_call_target().unwrap_or("");
        let real_output = match &*instr.shape {
            crate::model::Shape::Tuple(elements) => elements.first(),
            other => Some(other),
        };
        if CUBLAS_LT.contains(&target) {
            cost.flops = gemm_flops(c, instr);
            let output = real_output.map_or(0, shape_size);
            cost.bytes_accessed += output - cost.output_bytes;
            cost.output_bytes = output;
        } else if CUDNN_CONVOLUTION.contains(&target) {
            cost.flops = super::convolution_flops(c, instr);
            if instr.shape.is_tuple() {
                let output = real_output.map_or(0, shape_size);
                cost.bytes_accessed += output - cost.output_bytes;
                cost.output_bytes = output;
            }
        } else if CALL_MARKERS.contains(&target) {
            cost.flops = 0;
            cost.bytes_accessed = 0;
            cost.output_bytes = 0;
            cost.operand_bytes.iter_mut().for_each(|b| *b = 0);
        } else {
            // XLA: -1 for everything. The sizes stay so the performance model
            // can still time the call; `unknown_flops` and `bytes_accessed`
            // say what XLA says.
            cost.unknown_flops = true;
            cost.flops = 0;
            cost.bytes_accessed = -1;
            if let Some(estimate) = instr
                .attrs()
                .backend_config_text
                .as_deref()
                .map(raw_backend_config)
                .and_then(|raw| cost_estimate(&raw))
            {
                if let Some(flops) = estimate.flops {
                    cost.flops = flops;
                    cost.unknown_flops = false;
                }
                if let Some(bytes) = estimate.bytes_accessed {
                    cost.bytes_accessed = bytes;
                }
            }
        }
    }
}

/// `GetDotFlops` of a GEMM custom call: its backend config's
/// `gemm_backend_config.dot_dimension_numbers` on operand 0 and the real output.
fn gemm_flops(c: ComputationRef<'_>, instr: &Instruction) -> i64 {
    let Some(config) = instr.attrs().backend_config() else {
        return 0;
    };
    let contracting =
        &config["gemm_backend_config"]["dot_dimension_numbers"]["lhs_contracting_dimensions"];
    let lhs = operand_shape(c, instr, 0).as_array();
    let reduction: i64 = contracting
        .as_array()
        .map(|dims| {
            dims.iter()
                .filter_map(|d| match d {
                    serde_json::Value::String(s) => s.parse::<usize>().ok(),
                    other => other.as_u64().and_then(|d| usize::try_from(d).ok()),
                })
                .map(|d| lhs.and_then(|a| a.dims.get(d)).copied().unwrap_or(1))
                .product()
        })
        .unwrap_or(1);
    let output = match &*instr.shape {
        crate::model::Shape::Tuple(elements) => elements.first(),
        other => Some(other),
    };
    let elements = output.map_or(0, super::elements);
    FMA_FLOPS * elements * reduction
}

/// The backend config as XLA keeps it (`raw_backend_config_string`): the text
/// of `backend_config="..."` with its escapes undone (`absl::CUnescape`), or the
/// braces of `backend_config={...}` as written.
pub fn raw_backend_config(written: &str) -> String {
    let written = written.trim();
    match written.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => c_unescape(inner),
        None => written.to_string(),
    }
}

/// C escapes: `\"`, `\\`, `\n`, ..., `\xHH`, octal `\ooo`, `\uXXXX`.
fn c_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut take_digits = |radix: u32, max: usize, first: Option<char>| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max {
                match chars.peek() {
                    Some(d) if d.is_digit(radix) => digits.push(*d),
                    _ => break,
                }
                chars.next();
            }
            u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            'x' | 'X' => take_digits(16, 2, None),
            'u' => take_digits(16, 4, None),
            'U' => take_digits(16, 8, None),
            '0'..='7' => take_digits(8, 3, Some(e)),
            other => Some(other),
        };
        out.extend(decoded);
    }
    out
}

/// `ExtractCustomCallCostEstimate`: `flops` and `bytes_accessed` from a raw
/// backend config that mentions `cost_estimate_json`, however the quotes
/// around the keys are escaped; negative numbers are ignored.
pub fn cost_estimate(raw: &str) -> Option<CostEstimate> {
    if !raw.contains("cost_estimate_json") {
        return None;
    }
    let estimate = CostEstimate {
        flops: number_after(raw, "flops").filter(|&v| v >= 0),
        bytes_accessed: number_after(raw, "bytes_accessed").filter(|&v| v >= 0),
    };
    (estimate.flops.is_some() || estimate.bytes_accessed.is_some()).then_some(estimate)
}

/// The quote of a key or value as XLA's pattern accepts it: `"`, `22`, `x22`,
/// `u0022`, `u00000022` (any case of the letter), after an optional backslash.
const QUOTES: &[&str] = &[
    "\"",
    "22",
    "x22",
    "X22",
    "u0022",
    "U0022",
    "u00000022",
    "U00000022",
];

/// `key<quote>? \s* [=:] \s* <quote>? (-?[0-9]+)` at the first place it matches
/// (`RE2::PartialMatch` with `CostRegexPattern(key)`); `None` when the number
/// does not fit `i64`.
fn number_after(raw: &str, key: &str) -> Option<i64> {
    let mut from = 0;
    while let Some(at) = raw[from..].find(key) {
        let start = from + at + key.len();
        if let Some(digits) = after_key(&raw[start..]) {
            return digits.parse().ok();
        }
        from = from + at + 1;
    }
    None
}

/// The number the pattern captures right after a key, trying every way the
/// optional quotes may be written.
fn after_key(rest: &str) -> Option<&str> {
    for after_quote in optional_quote(rest) {
        let s = after_quote.trim_start();
        let Some(s) = s.strip_prefix(['=', ':']) else {
            continue;
        };
        let s = s.trim_start();
        for value in optional_quote(s) {
            let sign = usize::from(value.starts_with('-'));
            let digits = value[sign..].bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                return Some(&value[..sign + digits]);
            }
        }
    }
    None
}

/// `s` with each way of skipping `(?:\\)?(?:"|22|...)?`, the longest first.
fn optional_quote(s: &str) -> Vec<&str> {
    let mut out = vec![];
    let unslashed = [s.strip_prefix('\\'), Some(s)];
    for t in unslashed.into_iter().flatten() {
        for q in QUOTES {
            if let Some(after) = t.strip_prefix(q) {
                out.push(after);
            }
        }
        out.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_escape_of_the_quotes_is_read() {
        for written in [
            r#""{cost_estimate_json = \"{\\\"flops\\\": 123456, \\\"bytes_accessed\\\": 654321}\"}""#,
            r#""{cost_estimate_json = \"{\\x22flops\\x22: 123456, \\x22bytes_accessed\\x22: 654321}\"}""#,
            r#""{cost_estimate_json = \"{\\u0022flops\\u0022: 123456, \\u0022bytes_accessed\\u0022: 654321}\"}""#,
            r#""{cost_estimate_json = \"{\\22flops\\22: 123456, \\22bytes_accessed\\22: 654321}\"}""#,
            r#"{cost_estimate_json = "{flops = 123456, bytes_accessed = 654321}"}"#,
        ] {
            let raw = raw_backend_config(written);
            assert_eq!(
                cost_estimate(&raw),
                Some(CostEstimate {
                    flops: Some(123456),
                    bytes_accessed: Some(654321)
                }),
                "{written} -> {raw}"
            );
        }
        let raw = raw_backend_config(r#""{cost_estimate_json = \"{\\\"flops\\\": 7}\"}""#);
        assert_eq!(
            cost_estimate(&raw),
            Some(CostEstimate {
                flops: Some(7),
                bytes_accessed: None
            })
        );
        assert_eq!(
            cost_estimate(r#"{"flops": 7}"#),
            None,
            "no cost_estimate_json"
        );
        assert_eq!(
            cost_estimate(r#"{cost_estimate_json="{\"flops\": -3}"}"#),
            None,
            "negative numbers are not estimates"
        );
    }
}
