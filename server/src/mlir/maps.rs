//! The map attributes of MLIR text, decoded with the algebra: `affine_map<...>`
//! (dimensions and symbols without bounds), `affine_set<...>` (a map with no
//! results whose constraints are the set's), and XLA's
//! `#xla.indexing_map<"...">` (an indexing map with its domain).

use std::ops::Range;

use crate::algebra::{Expr, IndexingMap, Interval};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    AffineMap,
    AffineSet,
    /// `#xla.indexing_map<"...">` (also the older `#xla_gpu.indexing_map`).
    XlaIndexingMap,
}

impl MapKind {
    /// The kind of a `head<...>` token, from its head; `None` for other forms.
    pub fn of_head(head: &str) -> Option<MapKind> {
        match head {
            "affine_map" => Some(MapKind::AffineMap),
            "affine_set" => Some(MapKind::AffineSet),
            "#xla.indexing_map" | "#xla_gpu.indexing_map" => Some(MapKind::XlaIndexingMap),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MapKind::AffineMap => "affine_map",
            MapKind::AffineSet => "affine_set",
            MapKind::XlaIndexingMap => "xla.indexing_map",
        }
    }
}

/// A decoding failure: a byte offset into the document and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapError {
    pub offset: usize,
    pub message: String,
}

/// Decodes the text of a `head<...>` token that starts at byte `start` of the
/// document, so that errors carry document offsets.
pub fn decode(kind: MapKind, text: &str, start: usize) -> Result<IndexingMap, MapError> {
    match kind {
        MapKind::AffineMap => IndexingMap::parse_affine_map(text).map_err(|e| MapError {
            offset: start + e.offset,
            message: e.message,
        }),
        MapKind::AffineSet => decode_affine_set(text, start),
        MapKind::XlaIndexingMap => decode_xla(text, start),
    }
}

fn decode_xla(text: &str, start: usize) -> Result<IndexingMap, MapError> {
    let open = text.find("<\"").ok_or_else(|| MapError {
        offset: start,
        message: "expected `<\"` around the indexing map text".into(),
    })?;
    let body_start = open + 2;
    let close = text
        .rfind("\">")
        .filter(|&c| c >= body_start)
        .ok_or_else(|| MapError {
            offset: start + text.len(),
            message: "expected `\">` closing the indexing map text".into(),
        })?;
    let body = &text[body_start..close];
    IndexingMap::parse(body).map_err(|e| MapError {
        offset: start + body_start + e.offset,
        message: e.message,
    })
}

/// `affine_set<(d0)[s0] : (d0 - s0 >= 0, d0 == 0)>`: every constraint becomes an
/// expression of an `affine_map` with the same header, parsed by the algebra, and
/// then a domain constraint (`>= 0` as `[0, max]`, `== 0` as `[0, 0]`).
fn decode_affine_set(text: &str, start: usize) -> Result<IndexingMap, MapError> {
    let err = |at: usize, m: &str| MapError {
        offset: start + at,
        message: m.into(),
    };
    let inner_start = text.find('<').ok_or_else(|| err(0, "expected `<`"))? + 1;
    let inner_end = text
        .rfind('>')
        .filter(|&e| e >= inner_start)
        .ok_or_else(|| err(text.len(), "expected `>`"))?;
    let inner = &text[inner_start..inner_end];
    let colon = top_level_find(inner, ':')
        .ok_or_else(|| err(inner_start, "expected `:` after the set's dimensions"))?;
    let header = &inner[..colon];
    let body = inner[colon + 1..].trim();
    let body_off = inner_start
        + colon
        + 1
        + (inner[colon + 1..].len() - inner[colon + 1..].trim_start().len());
    let list = body
        .strip_prefix('(')
        .and_then(|b| b.strip_suffix(')'))
        .ok_or_else(|| err(body_off, "expected `(` constraints `)`"))?;
    let mut exprs = Vec::new();
    let mut kinds = Vec::new();
    for part in split_top_level(list) {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        let (lhs, rhs, eq) = if let Some(i) = p.find(">=") {
            (&p[..i], &p[i + 2..], false)
        } else if let Some(i) = p.find("==") {
            (&p[..i], &p[i + 2..], true)
        } else if let Some(i) = p.find("<=") {
            (&p[i + 2..], &p[..i], false)
        } else {
            return Err(err(
                body_off,
                "expected `>= 0` or `== 0` in an affine_set constraint",
            ));
        };
        exprs.push(format!("({}) - ({})", lhs.trim(), rhs.trim()));
        kinds.push(eq);
    }
    let as_map = format!("affine_map<{} -> ({})>", header.trim(), exprs.join(", "));
    let parsed = IndexingMap::parse_affine_map(&as_map).map_err(|e| MapError {
        offset: start + inner_start,
        message: format!("in affine_set: {}", e.message),
    })?;
    let mut set = IndexingMap::new(
        parsed.dims().to_vec(),
        parsed.range_vars().to_vec(),
        parsed.runtime_vars().to_vec(),
        vec![],
        vec![],
    );
    for (e, eq) in parsed.results().iter().zip(kinds) {
        let hi = if eq { 0 } else { i64::MAX };
        set.add_constraint(e.clone(), Interval::new(0, hi));
    }
    Ok(set)
}

fn top_level_find(s: &str, needle: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            c if c == needle && depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// Splits at commas outside parentheses and brackets.
pub fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut last = 0;
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        // `->`, `>=` and `<=` are operators, not brackets.
        let operator = (c == '>' && (b.get(i + 1) == Some(&b'=') || (i > 0 && b[i - 1] == b'-')))
            || (c == '<' && b.get(i + 1) == Some(&b'='));
        match c {
            _ if operator => {}
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[last..i]);
                last = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[last..]);
    out
}

/// The byte range of the map text inside a token (the quoted text of an XLA map,
/// else the whole token) for hover and error positions.
pub fn body_range(kind: MapKind, token: Range<usize>, text: &str) -> Range<usize> {
    if kind == MapKind::XlaIndexingMap {
        if let (Some(o), Some(c)) = (text.find("<\""), text.rfind("\">")) {
            if c >= o + 2 {
                return token.start + o + 2..token.start + c;
            }
        }
    }
    token
}

/// True when `e` is exactly dimension `d` (a bare loop variable).
pub fn is_bare_dim(e: &Expr) -> Option<usize> {
    match e {
        Expr::Var(v) if v.kind == crate::algebra::VarKind::Dim => Some(v.index),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_set_constraints_are_the_domain() {
        let set = decode(
            MapKind::AffineSet,
            "affine_set<(d0)[s0] : (d0 - 2 >= 0, -d0 + 9 >= 0, d0 - s0 == 0)>",
            0,
        )
        .unwrap();
        assert_eq!(set.results().len(), 0);
        assert_eq!(set.constraints().len(), 3);
        // d0 in [2, 9] and d0 == s0: check by evaluation over a box.
        for d in -3..15 {
            for s in -3..15 {
                let inside = (2..=9).contains(&d) && d == s;
                assert_eq!(set.contains_point(&[d], &[s], &[]), inside, "d={d} s={s}");
            }
        }
    }

    #[test]
    fn xla_map_errors_point_into_the_quoted_text() {
        let text = r#"#xla.indexing_map<"(d0) -> (d0 +), domain: d0 in [0, 3]">"#;
        let e = decode(MapKind::XlaIndexingMap, text, 100).unwrap_err();
        assert!(e.offset > 100 + 19 && e.offset < 100 + text.len(), "{e:?}");
        let ok = decode(
            MapKind::XlaIndexingMap,
            r#"#xla.indexing_map<"(d0) -> (d0 * 2), domain: d0 in [0, 3]">"#,
            0,
        )
        .unwrap();
        assert_eq!(ok.dims()[0].bounds, Interval::new(0, 3));
    }

    #[test]
    fn malformed_sets_are_errors_not_panics() {
        for t in [
            "affine_set<",
            "affine_set<(d0)>",
            "affine_set<(d0) : d0 >= 0>",
            "affine_set<(d0) : (d0 > 1)>",
            "affine_set<>",
        ] {
            assert!(decode(MapKind::AffineSet, t, 0).is_err(), "{t}");
        }
    }
}
