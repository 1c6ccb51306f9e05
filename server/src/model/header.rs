//! The module header's attributes that have a syntax of their own:
//! `input_output_alias={ {0}: (0, {}, may-alias), ... }` and
//! `buffer_donor={ (0, {}), ... }`, read as XLA's parser reads them
//! (`HloParserImpl::ParseAliasing`, `ParseBufferDonor`, `ParseShapeIndex`), with its
//! error messages. The grammar keeps each value as one `{...}` token; this says what
//! is wrong inside.

use std::ops::Range;

use super::diagnostics::{codes, Diagnostic};

/// What is wrong in the header `text` (positions relative to it).
pub fn diagnostics(text: &str) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (key, parse) in [
        (
            "input_output_alias=",
            aliasing as fn(&mut Tokens) -> Result<(), Problem>,
        ),
        ("buffer_donor=", buffer_donor),
    ] {
        let Some(at) = find_key(text, key) else {
            continue;
        };
        let mut tokens = Tokens::new(text, at + key.len());
        if let Err((range, message)) = parse(&mut tokens) {
            found.push(Diagnostic::error(range, codes::INVALID_MODULE, message));
        }
    }
    found
}

/// Where `key` starts as an attribute of its own (not the end of a longer key).
fn find_key(text: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(key) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Some(at);
        }
        from = at + key.len();
    }
    None
}

type Problem = (Range<usize>, String);

/// `{ shape_index: (param, shape_index[, kind]), ... }`.
fn aliasing(t: &mut Tokens) -> Result<(), Problem> {
    let format = "Expected format: <output_shape_index>: (<input_param>, \
                  <input_param_shape_index>) OR <output_shape_index>: <input_param>";
    t.expect("{", "Expects '{' at the start of aliasing description")?;
    while t.peek() != "}" {
        shape_index(t)?;
        t.expect(":", format)?;
        t.expect("(", format)?;
        t.integer()?;
        t.expect(",", format)?;
        shape_index(t)?;
        if t.eat(",") {
            let (kind, range) = t.next();
            if kind != "must-alias" && kind != "may-alias" {
                return Err((
                    range,
                    "Unexpected aliasing kind; expected may-alias or must-alias".into(),
                ));
            }
        }
        t.expect(")", format)?;
        if !t.eat(",") {
            break;
        }
    }
    t.expect("}", "Expects '}' at the end of aliasing description")
}

/// `{ (param, shape_index), ... }`.
fn buffer_donor(t: &mut Tokens) -> Result<(), Problem> {
    let format = "Expected format: (<input_param>, <input_param_shape_index>)";
    t.expect("{", "Expects '{' at the start of buffer donor description")?;
    while t.peek() != "}" {
        t.expect("(", format)?;
        t.integer()?;
        t.expect(",", format)?;
        shape_index(t)?;
        t.expect(")", format)?;
        if !t.eat(",") {
            break;
        }
    }
    t.expect("}", "Expects '}' at the end of buffer donor description")
}

/// `{0, 1}` or `{}`.
fn shape_index(t: &mut Tokens) -> Result<(), Problem> {
    t.expect("{", "Expects '{' at the start of ShapeIndex")?;
    while t.peek() != "}" {
        t.integer()?;
        if !t.eat(",") {
            break;
        }
    }
    t.expect("}", "Expects '}' at the end of ShapeIndex")
}

/// XLA's lexer, for these values: punctuation, integers, names; blanks skipped.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str, at: usize) -> Self {
        Tokens { text, at }
    }

    /// The next token and its range, without taking it ("" at the end).
    fn lookahead(&self) -> (&'a str, Range<usize>) {
        let bytes = self.text.as_bytes();
        let mut start = self.at;
        while bytes.get(start).is_some_and(u8::is_ascii_whitespace) {
            start += 1;
        }
        let Some(&first) = bytes.get(start) else {
            return ("", start..start);
        };
        let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
        let end = if word(first) {
            start + bytes[start..].iter().take_while(|&&b| word(b)).count()
        } else {
            start + self.text[start..].chars().next().map_or(1, char::len_utf8)
        };
        (&self.text[start..end], start..end)
    }

    fn peek(&self) -> &'a str {
        self.lookahead().0
    }

    fn next(&mut self) -> (&'a str, Range<usize>) {
        let (token, range) = self.lookahead();
        self.at = range.end;
        (token, range)
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.peek() == token;
        if found {
            self.next();
        }
        found
    }

    fn expect(&mut self, token: &str, message: &str) -> Result<(), Problem> {
        let (got, range) = self.lookahead();
        if got != token {
            return Err((range, message.to_string()));
        }
        self.next();
        Ok(())
    }

    fn integer(&mut self) -> Result<(), Problem> {
        let (got, range) = self.lookahead();
        if got.parse::<i64>().is_err() {
            return Err((range, "expects integer".into()));
        }
        self.next();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(header: &str) -> Vec<String> {
        diagnostics(header).into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn well_formed_values_pass() {
        assert!(messages(
            "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {0}) }"
        )
        .is_empty());
        assert!(messages("HloModule m, buffer_donor={ (0, {0}), (0, {1}) }").is_empty());
        assert!(messages("HloModule m, input_output_alias={}").is_empty());
    }

    #[test]
    fn errors_say_what_xla_says() {
        let m = messages("HloModule m, input_output_alias={ {0 : (0, {0}) }");
        assert!(
            m[0].contains("Expects '}' at the end of ShapeIndex"),
            "{m:?}"
        );
        let m = messages("HloModule m, buffer_donor={ (zero, {0}) }");
        assert!(m[0].contains("expects integer"), "{m:?}");
        let m = messages("HloModule m, input_output_alias={ {0}: (0, {0}): {0, 1} }");
        assert!(
            m[0].contains("Expects '}' at the end of aliasing description"),
            "{m:?}"
        );
    }
}
