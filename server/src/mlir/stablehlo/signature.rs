//! The entry function's signature as memory: what `@main` takes and returns, each
//! value's HLO shape and bytes. Before XLA's pipeline this is all that is known for
//! sure: XLA's `CompiledMemoryStats` counts exactly these as the arguments and the
//! outputs, while its temporaries depend on fusion and buffer assignment.

use crate::mlir::reader::{MlirFile, ValueKind};
use crate::model::shape::{parse_shape, Shape};

use super::types::{shape, split_top};

/// One argument or result of the entry function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// `%arg0`, or a result's `jax.result_info` (`result[0]`), else `#k`.
    pub name: String,
    /// Its HLO shape (`f32[4,8]{1,0}`); `None` when the type is not one.
    pub shape: Option<String>,
    /// Its bytes; `None` when a dimension is dynamic or the type unknown.
    pub bytes: Option<u64>,
    /// The result it is donated to (`tf.aliasing_output`), for an argument.
    pub aliased_output: Option<usize>,
}

/// The signature of the function XLA compiles as ENTRY.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// `main` (or the last function with a body when there is no `@main`).
    pub function: String,
    pub arguments: Vec<Part>,
    pub results: Vec<Part>,
}

impl Signature {
    /// The arguments' bytes; `None` when one of them is not known.
    pub fn argument_bytes(&self) -> Option<u64> {
        self.arguments.iter().map(|p| p.bytes).sum()
    }

    /// The results' bytes; `None` when one of them is not known.
    pub fn output_bytes(&self) -> Option<u64> {
        self.results.iter().map(|p| p.bytes).sum()
    }

    /// The bytes of the arguments donated to a result (XLA reuses their buffers).
    pub fn alias_bytes(&self) -> Option<u64> {
        self.arguments
            .iter()
            .filter(|p| p.aliased_output.is_some())
            .map(|p| p.bytes)
            .sum()
    }
}

/// The signature of `@main` in `file` (read from `src`), as XLA's importer picks the
/// entry: `@main`, else the last function with a body; `None` when there is none.
pub fn entry(src: &str, file: &MlirFile) -> Option<Signature> {
    let with_body: Vec<usize> = (0..file.funcs.len())
        .filter(|&f| !file.ops[file.funcs[f].op].regions.is_empty())
        .collect();
    let f = with_body
        .iter()
        .copied()
        .find(|&f| file.funcs[f].name == "@main")
        .or(with_body.last().copied())?;
    let func = &file.funcs[f];
    let op = &file.ops[func.op];
    let body = file.regions.get(op.regions[0])?;
    let header = src.get(func.name_range.end..body.range.start)?;
    let (args, results) = split_header(header);
    let arguments = arguments(file, op.regions[0], args);
    let results = split_top(results)
        .into_iter()
        .enumerate()
        .map(|(k, text)| result(k, text))
        .collect();
    Some(Signature {
        function: func.name.trim_start_matches('@').to_string(),
        arguments,
        results,
    })
}

/// `(%arg0: T {attrs}, ...) -> (R {attrs}, ...) attributes {...}` as its argument
/// list and its result list (without their parentheses).
pub(super) fn split_header(header: &str) -> (&str, &str) {
    let Some(open) = header.find('(') else {
        return ("", "");
    };
    let close = matching(header, open).unwrap_or(header.len());
    let args = &header[open + 1..close.min(header.len())];
    let rest = header.get(close + 1..).unwrap_or("");
    let Some(arrow) = rest.find("->") else {
        return (args, "");
    };
    let results = rest[arrow + 2..].trim_start();
    let results = match results.strip_prefix('(') {
        Some(_) => {
            let end = matching(results, 0).unwrap_or(results.len());
            &results[1..end]
        }
        // A single result type: up to `attributes` or the body.
        None => results
            .split(" attributes")
            .next()
            .unwrap_or("")
            .trim_end_matches('{')
            .trim(),
    };
    (args, results)
}

/// The index of the bracket closing the one at `open`; strings are skipped (an
/// `mhlo.sharding` string holds `<=`, which is no bracket).
fn matching(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in text.bytes().enumerate().skip(open) {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => quoted = true,
            b'(' | b'<' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && text.as_bytes()[i - 1] == b'-' => {}
            b')' | b'>' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The arguments, from the values the reader found (their types) and the header's
/// text (their attributes).
fn arguments(file: &MlirFile, region: usize, text: &str) -> Vec<Part> {
    let mut values: Vec<usize> = (0..file.values.len())
        .filter(|&v| file.values[v].region == region && file.values[v].kind == ValueKind::Argument)
        .collect();
    values.sort_by_key(|&v| file.values[v].range.start);
    let attrs: Vec<&str> = split_top(text);
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let d = &file.values[v];
            let part = attrs.get(k).copied().unwrap_or("");
            let aliased_output = attribute(part, "tf.aliasing_output")
                .and_then(|a| a.split(':').next())
                .and_then(|n| n.trim().parse().ok());
            let (shape, bytes) = shape_and_bytes(d.ty.as_deref().unwrap_or(""));
            Part {
                name: d.name.clone(),
                shape,
                bytes,
                aliased_output,
            }
        })
        .collect()
}

/// Result `k` from its text `tensor<4xf32> {jax.result_info = "result"}`.
fn result(k: usize, text: &str) -> Part {
    let ty = text.split(" {").next().unwrap_or(text).trim();
    let (shape, bytes) = shape_and_bytes(ty);
    let name = attribute(text, "jax.result_info")
        .map(|v| v.trim().trim_matches('"').to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("#{k}"));
    Part {
        name,
        shape,
        bytes,
        aliased_output: None,
    }
}

/// The value of attribute `key` in `... {key = value, other = ...}`.
fn attribute<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let open = text.find('{')?;
    let close = matching(text, open)?;
    split_top(&text[open + 1..close])
        .into_iter()
        .find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k.trim() == key).then_some(v.trim())
        })
}

/// The HLO shape of an MLIR type and its bytes (XLA's `ShapeUtil::ByteSizeOf`
/// without tuple tables: each array's elements, sub-byte types rounded up).
fn shape_and_bytes(ty: &str) -> (Option<String>, Option<u64>) {
    let Some(text) = shape(ty) else {
        return (None, None);
    };
    let bytes = parse_shape(&text).ok().and_then(|s| bytes_of(&s));
    (Some(text), bytes)
}

fn bytes_of(s: &Shape) -> Option<u64> {
    if matches!(s, Shape::Invalid) {
        return None;
    }
    s.leaves()
        .into_iter()
        .map(|a| a.bit_size().map(|bits| (bits as u64).div_ceil(8)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signature(src: &str) -> Signature {
        entry(src, &crate::mlir::read(src)).unwrap()
    }

    #[test]
    fn arguments_results_and_donations() {
        let src = "module @jit_f {\n  func.func public @main(%arg0: tensor<4x8xf32> {tf.aliasing_output = 1 : i32}, %arg1: tensor<i1>, %arg2: tensor<3xi4>) -> (tensor<4xf32> {jax.result_info = \"result[0]\"}, tensor<4x8xf32> {jax.result_info = \"result[1]\"}) {\n    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>\n    return %0, %arg0 : tensor<4xf32>, tensor<4x8xf32>\n  }\n}\n";
        let s = signature(src);
        assert_eq!(s.function, "main");
        let bytes: Vec<_> = s.arguments.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, [Some(128), Some(1), Some(2)]);
        assert_eq!(s.arguments[0].aliased_output, Some(1));
        assert_eq!(s.argument_bytes(), Some(131));
        assert_eq!(s.output_bytes(), Some(16 + 128));
        assert_eq!(s.alias_bytes(), Some(128));
        assert_eq!(s.results[1].name, "result[1]");
    }

    #[test]
    fn a_single_result_and_a_dynamic_argument() {
        let src = "func.func @main(%arg0: tensor<?x3xf32>) -> tensor<3xf32> {\n  %0 = stablehlo.constant dense<0.0> : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}\n";
        let s = signature(src);
        assert_eq!(s.arguments[0].bytes, None);
        assert_eq!(s.argument_bytes(), None);
        assert_eq!(s.output_bytes(), Some(12));
        assert_eq!(s.results[0].name, "#0");
    }
}
