//! StableHLO types as HLO shapes: `tensor<4x8xf32>` is `f32[4,8]{1,0}`, `tensor<i1>`
//! is `pred[]`, `!stablehlo.token` is `token[]`, `tuple<...>` a tuple shape. Layouts
//! are XLA's default (major to minor), as JAX's HLO prints them.

use crate::mlir::types::parse_type;

/// The HLO spelling of an MLIR element type (`i32` → `s32`, `i1` → `pred`).
pub fn element(mlir: &str) -> Option<String> {
    let e = mlir.trim();
    let out = match e {
        "i1" => "pred".to_string(),
        "index" => "s64".to_string(),
        "bf16" | "f16" | "f32" | "f64" => e.to_string(),
        "complex<f32>" => "c64".to_string(),
        "complex<f64>" => "c128".to_string(),
        _ => {
            if let Some(bits) = e.strip_prefix("ui") {
                format!("u{bits}")
            } else if let Some(bits) = e.strip_prefix("si") {
                format!("s{bits}")
            } else if let Some(bits) = e.strip_prefix('i') {
                format!("s{bits}")
            } else if e.starts_with("f8E") || e.starts_with("f4E") || e.starts_with("f6E") {
                e.to_ascii_lowercase()
            } else {
                return None;
            }
        }
    };
    let bits_ok = out
        .trim_start_matches(['s', 'u'])
        .bytes()
        .all(|b| b.is_ascii_alphanumeric());
    bits_ok.then_some(out)
}

/// The HLO shape of a type's text; `None` when it is not a tensor, token or tuple.
pub fn shape(mlir: &str) -> Option<String> {
    let t = mlir.trim();
    if t == "!stablehlo.token" || t == "!mhlo.token" {
        return Some("token[]".to_string());
    }
    if let Some(inner) = t.strip_prefix("tuple<").and_then(|r| r.strip_suffix('>')) {
        let parts: Option<Vec<String>> = split_top(inner).iter().map(|p| shape(p)).collect();
        return Some(format!("({})", parts?.join(", ")));
    }
    if !t.starts_with("tensor<") {
        return element(t).map(|e| format!("{e}[]"));
    }
    let ty = parse_type(t)?;
    let element = element(&ty.element)?;
    let dims: Vec<String> = ty
        .dims
        .iter()
        .map(|d| d.map_or("?".to_string(), |v| v.to_string()))
        .collect();
    let layout: Vec<String> = (0..ty.dims.len()).rev().map(|d| d.to_string()).collect();
    let layout = if dims.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", layout.join(","))
    };
    Some(format!("{element}[{}]{layout}", dims.join(",")))
}

/// `shape` with the minor-to-major layout `layout` (`f32[2,3]{0,1}`); unchanged
/// when the layout does not fit its rank.
pub fn with_layout(shape: &str, layout: &[i64]) -> String {
    let Some((dims, _)) = shape.split_once(']') else {
        return shape.to_string();
    };
    let rank = dims.split_once('[').map_or(0, |(_, d)| {
        d.split(',').filter(|x| !x.trim().is_empty()).count()
    });
    if rank != layout.len() || rank == 0 {
        return shape.to_string();
    }
    let parts: Vec<String> = layout.iter().map(i64::to_string).collect();
    format!("{dims}]{{{}}}", parts.join(","))
}

/// Splits `a, b<c, d>, (e, f)` at its top-level commas.
pub fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(shape("tensor<4x8xf32>").as_deref(), Some("f32[4,8]{1,0}"));
        assert_eq!(shape("tensor<i1>").as_deref(), Some("pred[]"));
        assert_eq!(shape("tensor<?x3xui8>").as_deref(), Some("u8[?,3]{1,0}"));
        assert_eq!(
            shape("tuple<tensor<2xi32>, tensor<f32>>").as_deref(),
            Some("(s32[2]{0}, f32[])")
        );
        assert_eq!(shape("!stablehlo.token").as_deref(), Some("token[]"));
        assert_eq!(shape("memref<2xf32>"), None);
        assert_eq!(with_layout("f32[2,3]{1,0}", &[0, 1]), "f32[2,3]{0,1}");
        assert_eq!(with_layout("f32[]", &[0]), "f32[]");
    }
}
