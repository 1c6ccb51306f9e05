//! A tolerant tokenizer of MLIR text: every byte ends up in some token (or in
//! skipped whitespace/comments), nothing fails.
//!
//! The one structural decision made here: a dialect form `name<...>` (types such
//! as `tensor<1x56xf16>`, attributes such as `affine_map<(d0) -> (d0)>`,
//! `dense<1>`, `#xla.indexing_map<"...">`) is ONE [`TokKind::Angle`] token, the
//! `<...>` balanced with `->`, `>=` and `<=` and strings respected. The reader
//! above then never has to tell a comparison from a type bracket, and map text
//! arrives whole for the algebra's own parser.

use std::ops::Range;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// Bare identifier or keyword, dots allowed: `linalg.generic`, `ins`, `f32`, `x`.
    Ident,
    /// `%name`, `%0`, `%0:2` (the count is a separate `:` + `Int`), `%1#0`.
    Value,
    /// `#name` attribute alias or dialect attribute without `<...>`.
    Hash,
    /// `!name` type alias or dialect type without `<...>`.
    Bang,
    /// `@name` or `@"quoted"` symbol.
    Symbol,
    /// `^bb0`.
    Block,
    /// `head<...>` with the brackets balanced; `head` may start with `#` or `!`.
    Angle,
    Int,
    Float,
    Str,
    /// `...`: an elided part of an excerpt.
    Ellipsis,
    Arrow,
    /// Any other single punctuation character (`(`, `)`, `[`, `]`, `{`, `}`, `,`, `:`, `=`, ...).
    Punct,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokKind,
    pub range: Range<usize>,
    /// True when a newline separates this token from the previous one (or it is the first).
    pub line_start: bool,
}

impl Token {
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.range.clone()]
    }
}

/// Tokenizes `src`; `//` comments and whitespace are skipped.
pub fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut newline = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            newline = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        let kind = lex_one(src, &mut i);
        // Never loop without progress, even on a byte no rule consumed.
        if i == start {
            i = next_char_boundary(src, start);
        }
        out.push(Token {
            kind,
            range: start..i,
            line_start: newline,
        });
        newline = false;
    }
    out
}

fn next_char_boundary(src: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < src.len() && !src.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// Bytes after the first of a bare identifier or a `%`/`#`/`^`/`@` name (MLIR's
/// `bare-id` and `suffix-id` without `-`, which only legacy names use).
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$'
}

fn lex_one(src: &str, i: &mut usize) -> TokKind {
    let b = src.as_bytes();
    let c = b[*i];
    match c {
        b'"' => {
            skip_string(b, i);
            TokKind::Str
        }
        b'%' | b'^' => {
            *i += 1;
            while *i < b.len() && is_name_byte(b[*i]) {
                *i += 1;
            }
            // `%1#0`: result number of a multi-result op.
            if c == b'%'
                && b.get(*i) == Some(&b'#')
                && b.get(*i + 1).is_some_and(u8::is_ascii_digit)
            {
                *i += 1;
                while *i < b.len() && b[*i].is_ascii_digit() {
                    *i += 1;
                }
            }
            if c == b'%' {
                TokKind::Value
            } else {
                TokKind::Block
            }
        }
        b'@' => {
            *i += 1;
            if b.get(*i) == Some(&b'"') {
                skip_string(b, i);
            } else {
                while *i < b.len() && is_name_byte(b[*i]) {
                    *i += 1;
                }
            }
            TokKind::Symbol
        }
        b'#' | b'!' => {
            *i += 1;
            while *i < b.len() && is_name_byte(b[*i]) {
                *i += 1;
            }
            if b.get(*i) == Some(&b'<') {
                skip_angle(b, i);
                TokKind::Angle
            } else if c == b'#' {
                TokKind::Hash
            } else {
                TokKind::Bang
            }
        }
        b'.' if src[*i..].starts_with("...") => {
            *i += 3;
            TokKind::Ellipsis
        }
        b'-' if b.get(*i + 1) == Some(&b'>') => {
            *i += 2;
            TokKind::Arrow
        }
        b'0'..=b'9' => lex_number(b, i),
        b'-' if b.get(*i + 1).is_some_and(u8::is_ascii_digit) => {
            *i += 1;
            lex_number(b, i)
        }
        c if c.is_ascii_alphabetic() || c == b'_' => {
            while *i < b.len() && is_name_byte(b[*i]) {
                *i += 1;
            }
            // Any identifier directly followed by `<` opens a dialect form
            // (`tensor<`, `memref<`, `affine_map<`, `dense<`, `strided<`, ...).
            if b.get(*i) == Some(&b'<') {
                skip_angle(b, i);
                return TokKind::Angle;
            }
            TokKind::Ident
        }
        _ => {
            *i = next_char_boundary(src, *i);
            TokKind::Punct
        }
    }
}

fn lex_number(b: &[u8], i: &mut usize) -> TokKind {
    if b[*i] == b'0'
        && matches!(b.get(*i + 1), Some(b'x'))
        && b.get(*i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        *i += 2;
        while *i < b.len() && b[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        return TokKind::Int;
    }
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    let mut float = false;
    if b.get(*i) == Some(&b'.') && b.get(*i + 1) != Some(&b'.') {
        float = true;
        *i += 1;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if matches!(b.get(*i), Some(b'e' | b'E')) {
            let mut j = *i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if b.get(j).is_some_and(u8::is_ascii_digit) {
                *i = j;
                while *i < b.len() && b[*i].is_ascii_digit() {
                    *i += 1;
                }
            }
        }
    }
    if float {
        TokKind::Float
    } else {
        TokKind::Int
    }
}

fn skip_string(b: &[u8], i: &mut usize) {
    *i += 1;
    while *i < b.len() {
        match b[*i] {
            b'\\' => *i += 2,
            b'"' => {
                *i += 1;
                return;
            }
            b'\n' => return, // unterminated: stop at the line end
            _ => *i += 1,
        }
    }
    *i = (*i).min(b.len());
}

/// Skips a balanced `<...>` starting at `b[*i] == b'<'`. Stops at the end of the
/// text when unbalanced (an excerpt), or before a `{`/`}`/`;` at depth 1 that
/// cannot be part of a type, so one broken type does not swallow the file.
fn skip_angle(b: &[u8], i: &mut usize) {
    // The opening `<` always opens, even when `=` follows (`l<=>`): read as the
    // comparison `<=`, the `>` after it closed a level never opened.
    let start = *i;
    let mut depth = 1usize;
    *i += 1;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                skip_string(b, i);
                continue;
            }
            b'-' if b.get(*i + 1) == Some(&b'>') => *i += 1,
            b'>' if b.get(*i + 1) == Some(&b'=') => *i += 1,
            b'<' if b.get(*i + 1) == Some(&b'=') => *i += 1,
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    *i += 1;
                    return;
                }
            }
            b'\n' if *i > start && line_is_blank_or_op(b, *i + 1) => return,
            _ => {}
        }
        *i += 1;
    }
}

/// True when the line starting at `at` looks like a new statement (`%x =`), so an
/// unclosed `<` does not eat following operations.
fn line_is_blank_or_op(b: &[u8], mut at: usize) -> bool {
    while at < b.len() && (b[at] == b' ' || b[at] == b'\t') {
        at += 1;
    }
    at >= b.len() || b[at] == b'%' || b[at] == b'\n' || b[at] == b'}' || b[at] == b'#'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokKind, &str)> {
        tokenize(src)
            .into_iter()
            .map(|t| (t.kind, &src[t.range]))
            .collect()
    }

    #[test]
    fn an_angle_opened_by_less_or_equal_closes_at_its_greater() {
        // Found by the `mlir` fuzz target: `<=` right after an identifier was read
        // as a comparison, so the `>` closed a level never opened (an overflow,
        // and in release a form that swallowed the rest of the line).
        assert_eq!(
            kinds("l<=> 3\n%y = f"),
            [
                (TokKind::Angle, "l<=>"),
                (TokKind::Int, "3"),
                (TokKind::Value, "%y"),
                (TokKind::Punct, "="),
                (TokKind::Ident, "f"),
            ]
        );
    }

    #[test]
    fn dialect_forms_are_one_token() {
        let src =
            "%0 = tensor.empty() : tensor<1x?x56xf16> // c\n#m = affine_map<(d0) -> (d0 >= 0)>";
        let k = kinds(src);
        assert!(k.contains(&(TokKind::Angle, "tensor<1x?x56xf16>")));
        assert!(k.contains(&(TokKind::Angle, "affine_map<(d0) -> (d0 >= 0)>")));
        assert!(k.contains(&(TokKind::Hash, "#m")));
        assert!(k.contains(&(TokKind::Ident, "tensor.empty")));
        assert!(!k.iter().any(|(_, t)| t.contains("//")));
    }

    #[test]
    fn xla_indexing_map_attribute() {
        let src = r#"#a = #xla.indexing_map<"(d0) -> (d0 * 2), domain: d0 in [0, 3]">"#;
        let k = kinds(src);
        assert_eq!(k[2], (TokKind::Angle, &src[5..]));
    }

    #[test]
    fn values_with_result_numbers_and_counts() {
        let k = kinds("%2:7 = x %3#1, ... -> ^bb0");
        assert_eq!(k[0], (TokKind::Value, "%2"));
        assert_eq!(k[1], (TokKind::Punct, ":"));
        assert_eq!(k[2], (TokKind::Int, "7"));
        assert!(k.contains(&(TokKind::Value, "%3#1")));
        assert!(k.contains(&(TokKind::Ellipsis, "...")));
        assert!(k.contains(&(TokKind::Block, "^bb0")));
    }

    #[test]
    fn unclosed_angle_stops_at_next_statement() {
        let src = "%0 = tensor.empty() : tensor<1x2\n%1 = arith.addf";
        let k = kinds(src);
        assert!(k.contains(&(TokKind::Value, "%1")));
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        for s in [
            "<", "\"", "#", "%", "@\"", "é<>", "0x", "1.", "-", "a<\n", ">>>", "....",
        ] {
            let _ = tokenize(s);
        }
    }
}
