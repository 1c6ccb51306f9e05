//! Completion in StableHLO text: op names after `=` (or at a statement's start) and
//! the SSA values defined above the cursor in its function (`%0`, `%arg0`, `%x#1`).
//!
//! Read from the text around the cursor, as for HLO: a half-typed op does not parse.

use super::completion::{Completion, Item, ItemKind, Options, MAX_ITEMS};
use super::typing::is_word_byte;

/// StableHLO's ops (the specification's list), `func` and `chlo` ones users type.
const OPS: &[&str] = &[
    "abs",
    "add",
    "after_all",
    "all_gather",
    "all_reduce",
    "all_to_all",
    "and",
    "atan2",
    "batch_norm_grad",
    "batch_norm_inference",
    "batch_norm_training",
    "bitcast_convert",
    "broadcast",
    "broadcast_in_dim",
    "case",
    "cbrt",
    "ceil",
    "cholesky",
    "clamp",
    "collective_broadcast",
    "collective_permute",
    "compare",
    "complex",
    "composite",
    "concatenate",
    "constant",
    "convert",
    "convolution",
    "cosine",
    "count_leading_zeros",
    "custom_call",
    "divide",
    "dot",
    "dot_general",
    "dynamic_broadcast_in_dim",
    "dynamic_conv",
    "dynamic_gather",
    "dynamic_iota",
    "dynamic_pad",
    "dynamic_reshape",
    "dynamic_slice",
    "dynamic_update_slice",
    "einsum",
    "exponential",
    "exponential_minus_one",
    "fft",
    "floor",
    "gather",
    "get_dimension_size",
    "get_tuple_element",
    "if",
    "imag",
    "infeed",
    "iota",
    "is_finite",
    "log",
    "log_plus_one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "optimization_barrier",
    "or",
    "outfeed",
    "pad",
    "partition_id",
    "popcnt",
    "power",
    "real",
    "real_dynamic_slice",
    "recv",
    "reduce",
    "reduce_precision",
    "reduce_scatter",
    "reduce_window",
    "remainder",
    "replica_id",
    "reshape",
    "return",
    "reverse",
    "rng",
    "rng_bit_generator",
    "round_nearest_afz",
    "round_nearest_even",
    "rsqrt",
    "scatter",
    "select",
    "select_and_scatter",
    "send",
    "set_dimension_size",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sine",
    "slice",
    "sort",
    "sqrt",
    "subtract",
    "tan",
    "tanh",
    "torch_index_select",
    "transpose",
    "triangular_solve",
    "tuple",
    "uniform_dequantize",
    "uniform_quantize",
    "while",
    "xor",
];

/// How far back the values in scope are looked for (bytes).
const SCOPE_BYTES: usize = 1 << 20;

pub fn complete(text: &str, offset: usize, _: Options) -> Option<Completion> {
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && (is_word_byte(bytes[start - 1]) || bytes[start - 1] == b'#') {
        start -= 1;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..start].trim_end();
    if start > 0 && bytes[start - 1] == b'%' {
        return Some(values(text, start - 1, offset, line_start));
    }
    let quoted = start > 0 && bytes[start - 1] == b'"';
    let statement_start = before.is_empty() || before.ends_with('=') || quoted;
    if !statement_start {
        return None;
    }
    let typed = &text[start..offset];
    let dialect = typed.split_once('.').map(|(d, _)| d);
    let items = OPS
        .iter()
        .map(|op| format!("stablehlo.{op}"))
        .chain(["func.return", "func.call", "chlo.erf", "chlo.top_k"].map(String::from))
        .filter(|name| dialect.is_none_or(|d| name.starts_with(d)))
        .map(|name| Item {
            label: name.clone(),
            kind: ItemKind::MlirOp,
            detail: None,
            documentation: None,
            insert: name,
            snippet: false,
        })
        .collect();
    Some(Completion {
        replace: start..offset,
        items,
        incomplete: false,
    })
}

/// The values defined above `percent` in its function, nearest first.
fn values(text: &str, percent: usize, offset: usize, line_start: usize) -> Completion {
    let from = text[..line_start]
        .rfind("func.func")
        .unwrap_or(line_start.saturating_sub(SCOPE_BYTES));
    let from = (from..=line_start)
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(line_start);
    let scope = &text[from..line_start];
    let mut found: Vec<(String, String)> = Vec::new();
    let bytes = scope.as_bytes();
    for at in memchr::memchr_iter(b'%', bytes) {
        let mut end = at + 1;
        while end < bytes.len() && is_word_byte(bytes[end]) {
            end += 1;
        }
        if end == at + 1 {
            continue;
        }
        let name = &scope[at..end];
        let after = scope[end..].trim_start();
        let line_start = scope[..at].rfind('\n').map_or(0, |i| i + 1);
        // `%a : type` after an `=` is an operand's type, not a block argument.
        let in_op = scope[line_start..at].contains('=');
        let (names, detail) = if let Some(rest) = after.strip_prefix(':').filter(|_| !in_op) {
            let rest = rest.trim_start();
            match rest.bytes().take_while(u8::is_ascii_digit).count() {
                // `%x:2 = ...`: two results, `%x#0` and `%x#1`.
                n if n > 0 && rest[n..].trim_start().starts_with('=') => {
                    let count: usize = rest[..n].parse().unwrap_or(0).min(64);
                    (
                        (0..count).map(|k| format!("{name}#{k}")).collect(),
                        String::new(),
                    )
                }
                _ => (vec![name.to_string()], type_after(rest)),
            }
        } else if after.starts_with('=') && !after.starts_with("==") {
            (vec![name.to_string()], type_of_definition(&scope[end..]))
        } else {
            continue;
        };
        for n in names {
            found.retain(|(f, _)| *f != n);
            found.push((n, detail.clone()));
        }
    }
    let items: Vec<Item> = found
        .into_iter()
        .rev()
        .take(MAX_ITEMS)
        .map(|(name, detail)| Item {
            label: name.clone(),
            kind: ItemKind::MlirValue,
            detail: (!detail.is_empty()).then_some(detail),
            documentation: None,
            insert: name,
            snippet: false,
        })
        .collect();
    Completion {
        replace: percent..offset,
        incomplete: items.len() >= MAX_ITEMS,
        items,
    }
}

/// `tensor<4xf32>` at the start of `text` (a block argument's type).
fn type_after(text: &str) -> String {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return text[..=i].to_string();
                }
            }
            ',' | ')' | '\n' if depth == 0 => return text[..i].trim().to_string(),
            _ => {}
        }
    }
    String::new()
}

/// The result type at the end of a definition's line (`... : tensor<4xf32>`, or
/// after `->`).
fn type_of_definition(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let tail = line
        .rsplit_once("->")
        .map(|(_, t)| t)
        .or_else(|| line.rsplit_once(" : ").map(|(_, t)| t))
        .unwrap_or("");
    tail.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_scope() {
        let text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n  %1:2 = stablehlo.foo\n  %2 = stablehlo.multiply %";
        let c = complete(text, text.len(), Options::default()).unwrap();
        let labels: Vec<&str> = c.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["%1#1", "%1#0", "%0", "%arg0"]);
        assert_eq!(c.items[2].detail.as_deref(), Some("tensor<4xf32>"));
        assert_eq!(c.items[3].detail.as_deref(), Some("tensor<4xf32>"));
    }

    #[test]
    fn ops_after_equals() {
        let text = "  %0 = stablehlo.ad";
        let c = complete(text, text.len(), Options::default()).unwrap();
        assert!(c.items.iter().any(|i| i.label == "stablehlo.add"));
        assert_eq!(&text[c.replace], "stablehlo.ad");
    }
}
