//! One StableHLO (`mhlo`, `chlo`) op as its tokens say it, in either form: the
//! pretty `%3 = stablehlo.subtract %a, %b : tensor<4xf32>` and the generic
//! `%3 = "stablehlo.subtract"(%a, %b) : (...) -> ...`: operands, `name = value`
//! attributes (properties `<{...}>`, dictionaries, pretty keywords such as `dims =`),
//! the result types of its signature, its callee symbol, its location.

use std::ops::Range;

use super::types::split_top;
use crate::mlir::lexer::TokKind;
use crate::mlir::reader::{MlirFile, Op};

/// The dialects whose ops map onto HLO.
pub const DIALECTS: [&str; 3] = ["stablehlo", "mhlo", "chlo"];

#[derive(Clone, Debug)]
pub struct OpView {
    /// The op's name without its dialect (`broadcast_in_dim`; `call`, `return`).
    pub base: String,
    pub dialect: String,
    /// Operand uses: `(text, byte range)`, `%3#1` kept whole.
    pub operands: Vec<(String, Range<usize>)>,
    /// `name = value` pairs (value as written), properties and dictionaries alike.
    pub attrs: Vec<(String, String)>,
    /// Identifiers written in the op's pretty form outside attributes (`GT`, `FLOAT`).
    pub words: Vec<String>,
    /// The result types, as written.
    pub results: Vec<String>,
    /// The operand types of the signature, when written as `(a, b) -> r`.
    pub operand_types: Vec<String>,
    /// `@callee` of `func.call` / `stablehlo.custom_call @target`.
    pub symbol: Option<String>,
    /// The `[a:b:c, ...]` of a pretty `stablehlo.slice` (text inside the brackets).
    pub slice: Option<String>,
    /// The text of its `loc(...)`, inside the parentheses.
    pub location: Option<String>,
}

impl OpView {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The op `o` read from its own tokens (not its regions').
pub fn view(src: &str, file: &MlirFile, o: &Op) -> OpView {
    let (dialect, base) = match o.name.split_once('.') {
        Some((d, b)) => (d.to_string(), b.to_string()),
        None => (String::new(), o.name.clone()),
    };
    let toks: Vec<usize> = o.own_tokens(file).collect();
    let text = |k: usize| file.token_text(src, k);
    let kind = |k: usize| file.tokens[k].kind;
    let is = |k: usize, p: &str| kind(k) == TokKind::Punct && text(k) == p;
    let mut v = OpView {
        base,
        dialect,
        operands: vec![],
        attrs: vec![],
        words: vec![],
        results: vec![],
        operand_types: vec![],
        symbol: None,
        slice: None,
        location: None,
    };
    // Depth relative to the op; the signature starts at the last `:` at depth 0.
    let mut depth = 0i32;
    let mut signature = None;
    let mut loc = None;
    let mut p = 0;
    while p < toks.len() {
        let k = toks[p];
        let next = toks.get(p + 1).copied();
        if depth == 0 && kind(k) == TokKind::Ident && text(k) == "loc" {
            loc = Some(p);
            break;
        }
        match kind(k) {
            TokKind::Punct => match text(k) {
                "(" | "[" | "{" => {
                    if text(k) == "[" && depth == 0 && v.base == "slice" && signature.is_none() {
                        let close = matching(&toks, p, &text);
                        let inner =
                            &src[file.tokens[k].range.end..file.tokens[toks[close]].range.start];
                        v.slice = Some(inner.to_string());
                    }
                    depth += 1;
                }
                ")" | "]" | "}" => depth -= 1,
                ":" if depth == 0 => signature = Some(p),
                _ => {}
            },
            TokKind::Value if next.is_none_or(|n| !is(n, "=")) && signature.is_none() => {
                let t = text(k);
                v.operands
                    .push((t.to_string(), file.tokens[k].range.clone()));
            }
            TokKind::Symbol if v.symbol.is_none() => {
                v.symbol = Some(
                    text(k)
                        .trim_start_matches('@')
                        .trim_matches('"')
                        .to_string(),
                );
            }
            TokKind::Ident | TokKind::Str if next.is_some_and(|n| is(n, "=")) => {
                let key = text(k).trim_matches('"').to_string();
                let (value, after) = attr_value(src, file, &toks, p + 2, depth == 0);
                v.attrs.push((key, value));
                p = after;
                continue;
            }
            TokKind::Ident | TokKind::Angle if signature.is_none() => {
                v.words.push(text(k).to_string())
            }
            _ => {}
        }
        p += 1;
    }
    if let Some(l) = loc {
        let open = toks.get(l + 1).copied();
        if let Some(open) = open.filter(|&o| is(o, "(")) {
            let close = toks[matching(&toks, l + 1, &text)];
            // An unclosed `loc(` ends the op: its matching token may be the `(` itself.
            let inside = file.tokens[open].range.end..file.tokens[close].range.start;
            v.location = src.get(inside).map(str::to_string);
        }
    }
    if let Some(s) = signature {
        // The signature ends at the location, or at a keyword that introduces a
        // region (`cond`, `do`, `reducer`).
        let keyword = |q: &usize| {
            kind(toks[*q]) == TokKind::Ident
                && !crate::mlir::reader::is_builtin_type(text(toks[*q]))
        };
        let end = (s + 1..loc.unwrap_or(toks.len()))
            .find(keyword)
            .unwrap_or(loc.unwrap_or(toks.len()));
        if s + 1 < end {
            let from = file.tokens[toks[s + 1]].range.start;
            let to = file.tokens[toks[end - 1]].range.end;
            signature_types(&src[from..to], &mut v);
        }
    }
    v
}

/// The index in `toks` of the bracket closing the one at `open`.
fn matching<'a>(toks: &[usize], open: usize, text: &dyn Fn(usize) -> &'a str) -> usize {
    let mut depth = 0;
    for (q, &k) in toks.iter().enumerate().skip(open) {
        match text(k) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return q;
                }
            }
            _ => {}
        }
    }
    toks.len() - 1
}

/// The value of an attribute from token position `p`: up to a `,` or a closing
/// bracket at its depth (or the signature's `:` for a pretty attribute at depth 0).
fn attr_value(src: &str, file: &MlirFile, toks: &[usize], p: usize, top: bool) -> (String, usize) {
    let mut depth = 0i32;
    let mut q = p;
    while q < toks.len() {
        let k = toks[q];
        let t = file.token_text(src, k);
        if file.tokens[k].kind == TokKind::Punct {
            match t {
                // `window = {...} {feature_group_count = 6}`: a dictionary after a
                // pretty value is the op's own, not part of the value.
                "{" if depth == 0 && top && q > p => break,
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" if depth == 0 => break,
                ")" | "]" | "}" => depth -= 1,
                "," if depth == 0 => break,
                ":" if depth == 0 && top => break,
                ">" if depth == 0 => break,
                _ => {}
            }
        }
        // `contracting_dims = [1] x [0]`: the `x` joins the two lists.
        if depth == 0 && q > p && file.tokens[k].kind == TokKind::Ident && t != "x" {
            let prev = file.token_text(src, toks[q - 1]);
            if prev != "x" && file.tokens[k].kind == TokKind::Ident && top {
                break;
            }
        }
        q += 1;
    }
    if q == p {
        return (String::new(), q);
    }
    let from = file.tokens[toks[p]].range.start;
    let to = file.tokens[toks[q - 1]].range.end;
    (src[from..to].to_string(), q)
}

/// `(a, b) -> r`, `(a) -> (r1, r2)` or `t1, t2` (the pretty forms' types).
fn signature_types(sig: &str, v: &mut OpView) {
    let sig = sig.trim();
    if let Some((args, result)) = split_arrow(sig) {
        let args = args.trim();
        let inner = args
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .unwrap_or(args);
        v.operand_types = split_top(inner).iter().map(|s| s.to_string()).collect();
        let result = result.trim();
        let inner = if result.starts_with('(') {
            result
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or(result)
        } else {
            result
        };
        v.results = split_top(inner).iter().map(|s| s.to_string()).collect();
    } else {
        v.results = split_top(sig).iter().map(|s| s.to_string()).collect();
    }
}

/// Splits at the top-level `->`.
fn split_arrow(sig: &str) -> Option<(&str, &str)> {
    let b = sig.as_bytes();
    let mut depth = 0i32;
    for i in 0..b.len() {
        match b[i] {
            b'<' | b'(' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' | b'}' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                return Some((&sig[..i], &sig[i + 2..]))
            }
            _ => {}
        }
    }
    None
}

/// Every integer written in an attribute's value: `[0, 1]`, `array<i64: 0, 1>`,
/// `dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>`, `0 : i64`.
pub fn ints(value: &str) -> Vec<i64> {
    let v = value.trim();
    let body = if let Some(r) = v.strip_prefix("array<") {
        r.split_once(':').map_or("", |(_, r)| r)
    } else if let Some(r) = v.split(" : ").next().unwrap_or(v).strip_prefix("dense<") {
        let body = r.rsplit_once('>').map_or(r, |(a, _)| a);
        if !body.trim_start().starts_with('[') {
            return splat(body, v);
        }
        body
    } else {
        v.split(" : ").next().unwrap_or(v)
    };
    let mut out = Vec::new();
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let neg = b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        let starts = b[i].is_ascii_digit() || neg;
        let glued = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if starts && !glued {
            let s = i;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if let Ok(n) = body[s..i].parse() {
                out.push(n);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `dense<1> : tensor<2xi64>`: the one value written, as many times as the
/// tensor's type says.
fn splat(body: &str, value: &str) -> Vec<i64> {
    let Ok(n) = body.trim().parse::<i64>() else {
        return vec![];
    };
    let count = value
        .split_once(" : ")
        .and_then(|(_, t)| crate::mlir::types::parse_type(t.trim()))
        .map_or(1, |t| {
            t.dims.iter().map(|d| d.unwrap_or(1)).product::<i64>()
        });
    vec![n; count.max(0) as usize]
}

/// `[1] x [0]` (pretty dot dimensions) as its two lists.
pub fn pair(value: &str) -> (Vec<i64>, Vec<i64>) {
    match value.split_once(" x ").or_else(|| value.split_once("x")) {
        Some((a, b)) => (ints(a), ints(b)),
        None => (ints(value), vec![]),
    }
}

/// The list `key = [...]` inside a `#stablehlo.gather<...>`-like attribute.
pub fn field(attr: &str, key: &str) -> Option<Vec<i64>> {
    let mut at = 0;
    while let Some(i) = attr[at..].find(key) {
        let s = at + i;
        let before_ok = s == 0
            || !attr.as_bytes()[s - 1].is_ascii_alphanumeric() && attr.as_bytes()[s - 1] != b'_';
        let rest = attr[s + key.len()..].trim_start();
        if before_ok {
            if let Some(rest) = rest.strip_prefix('=') {
                let rest = rest.trim_start();
                let end = if rest.starts_with('[') {
                    rest.find(']').map_or(rest.len(), |e| e + 1)
                } else {
                    rest.find([',', '>']).unwrap_or(rest.len())
                };
                return Some(ints(&rest[..end]));
            }
        }
        at = s + key.len();
    }
    None
}

/// Whether an op name belongs to a dialect that maps onto HLO.
pub fn is_hlo_dialect(name: &str) -> bool {
    name.split_once('.')
        .is_some_and(|(d, _)| DIALECTS.contains(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_of_attribute_values() {
        assert_eq!(ints("[0, 1]"), [0, 1]);
        assert_eq!(ints("array<i64: 2, -1>"), [2, -1]);
        assert_eq!(
            ints("dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>"),
            [3, 0, 0, 0]
        );
        assert_eq!(ints("0 : i64"), [0]);
        assert_eq!(ints("dense<1> : tensor<2xi64>"), [1, 1]);
        assert_eq!(ints("dense<0> : tensor<i64>"), [0]);
        assert_eq!(pair("[2] x [1]"), (vec![2], vec![1]));
        assert_eq!(
            field("#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>", "index_vector_dim"),
            Some(vec![1])
        );
        assert_eq!(
            field(
                "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0]>",
                "slice_dims"
            ),
            None
        );
    }
}
