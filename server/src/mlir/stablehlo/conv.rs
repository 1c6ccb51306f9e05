//! `stablehlo.convolution` as HLO's convolution attributes: the dimension numbers
//! as `dim_labels` (`[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]` is `b01f_oi01->b01f`),
//! the window from the pretty `window = {stride = ..., pad = ...}` or the generic
//! `window_strides`/`padding`/... attributes (its size from the kernel's spatial
//! extents), and the group counts.

use super::view::{ints, OpView};
use crate::mlir::types::parse_type;

/// The HLO attributes of the convolution `v`; `None` when its dimension numbers
/// cannot be read.
pub fn attributes(v: &OpView) -> Option<Vec<String>> {
    let numbers = v
        .attr("dim_numbers")
        .or_else(|| v.attr("dimension_numbers"))?;
    let [input, kernel, output] = labels(numbers)?;
    let rank = input.len().checked_sub(2)?;
    let rhs = v.operand_types.get(1).and_then(|t| parse_type(t))?;
    let size: Vec<i64> = (0..rank)
        .map(|k| {
            let at = kernel.find(char::from_digit(k as u32, 10)?)?;
            rhs.dims.get(at).copied().flatten()
        })
        .collect::<Option<_>>()?;
    let window = v.attr("window").unwrap_or("");
    let read = |pretty: &str, generic: &str| {
        sub_value(window, pretty)
            .map(ints)
            .or_else(|| v.attr(generic).map(ints))
            .filter(|d| !d.is_empty())
    };
    let ones = vec![1; rank];
    let stride = read("stride", "window_strides").unwrap_or(ones.clone());
    let lhs = read("lhs_dilate", "lhs_dilation").unwrap_or(ones.clone());
    let rhs_dilate = read("rhs_dilate", "rhs_dilation").unwrap_or(ones);
    let pad = read("pad", "padding").unwrap_or(vec![0; 2 * rank]);
    let reversal: Vec<i64> = sub_value(window, "reverse")
        .or_else(|| v.attr("window_reversal"))
        .map(|r| {
            r.split([',', '[', ']', ':', ' '])
                .filter_map(|w| match w.trim() {
                    "true" => Some(1),
                    "false" => Some(0),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let join = |d: &[i64]| {
        let parts: Vec<String> = d.iter().map(i64::to_string).collect();
        parts.join("x")
    };
    let pads: Vec<String> = (0..rank)
        .map(|k| {
            let at = |i: usize| pad.get(i).copied().unwrap_or(0);
            format!("{}_{}", at(2 * k), at(2 * k + 1))
        })
        .collect();
    let mut window = format!(
        "window={{size={} stride={} pad={} lhs_dilate={} rhs_dilate={}",
        join(&size),
        join(&stride),
        pads.join("x"),
        join(&lhs),
        join(&rhs_dilate)
    );
    if reversal.len() == rank && reversal.contains(&1) {
        window.push_str(&format!(" rhs_reversal={}", join(&reversal)));
    }
    window.push('}');
    let mut out = vec![window, format!("dim_labels={input}_{kernel}->{output}")];
    for key in ["feature_group_count", "batch_group_count"] {
        let count = v.attr(key).map(ints).and_then(|d| d.first().copied());
        if let Some(n) = count.filter(|&n| n != 1) {
            out.push(format!("{key}={n}"));
        }
    }
    Some(out)
}

/// The three label strings of `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (inside
/// `#stablehlo.conv<...>` or not).
fn labels(numbers: &str) -> Option<[String; 3]> {
    let lists: Vec<String> = numbers
        .split('[')
        .skip(1)
        .map(|part| {
            let inner = part.split(']').next().unwrap_or("");
            inner
                .split(',')
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .concat()
        })
        .collect();
    match lists.as_slice() {
        [a, b, c] if [a, b, c].iter().all(|l| l.len() >= 2) => {
            Some([a.clone(), b.clone(), c.clone()])
        }
        _ => None,
    }
}

/// The text of `key = ...` inside a pretty `{k = v, ...}` dictionary, brackets
/// balanced.
fn sub_value<'a>(dict: &'a str, key: &str) -> Option<&'a str> {
    let mut at = 0;
    while let Some(i) = dict[at..].find(key) {
        let s = at + i;
        at = s + key.len();
        let before = dict[..s].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = dict[at..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let mut depth = 0i32;
        for (k, c) in rest.char_indices() {
            match c {
                '[' | '(' | '<' => depth += 1,
                ']' | ')' | '>' => depth -= 1,
                ',' | '}' if depth == 0 => return Some(&rest[..k]),
                _ => {}
            }
            if depth < 0 {
                return Some(&rest[..k]);
            }
        }
        return Some(rest);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_window_values() {
        assert_eq!(
            labels("[b, 0, 1, f]x[i, 0, 1, o]->[b, 0, 1, f]"),
            Some(["b01f".into(), "i01o".into(), "b01f".into()])
        );
        let w = "{stride = [2, 1], pad = [[0, 1], [2, 2]], lhs_dilate = [1, 1]}";
        assert_eq!(sub_value(w, "stride"), Some("[2, 1]"));
        assert_eq!(sub_value(w, "pad"), Some("[[0, 1], [2, 2]]"));
        assert_eq!(ints(sub_value(w, "pad").unwrap()), [0, 1, 2, 2]);
        assert_eq!(sub_value(w, "rhs_dilate"), None);
    }
}
