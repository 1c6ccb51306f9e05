//! What is being typed at a cursor in an HLO instruction: the line read by hand,
//! not from the syntax tree, because text as typed is broken (`%x = f32[4] add(%a, `
//! is an error node to tree-sitter) and completion and signature help must still
//! answer on it.
//!
//! [`Line::read`] splits one instruction line into its parts (name, shape, opcode,
//! operands, attributes) with their byte ranges, whatever is missing or unclosed;
//! [`Line::place`] says which part a cursor is in. Completion ranks by the parts
//! around the cursor too (the operands and attributes after a deleted opcode say
//! which opcode it was).

use std::ops::Range;

/// Characters of a name, an opcode, an attribute name or a bare value.
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'$')
}

/// The word touching `offset` in `text`: from the first word byte before it to
/// `offset` (what has been typed of it).
pub fn word_before(text: &str, offset: usize) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut start = offset.min(text.len());
    while start > 0 && is_word_byte(bytes[start - 1]) {
        start -= 1;
    }
    start..offset.min(text.len())
}

/// One attribute as written: `name=value`, either part possibly empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    pub name: Range<usize>,
    /// After the `=`; `None` when no `=` was written.
    pub value: Option<Range<usize>>,
}

/// An instruction line's parts, in bytes of the line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line<'a> {
    pub text: &'a str,
    pub name: Range<usize>,
    /// Where the `=` after the name is.
    pub equals: Option<usize>,
    pub shape: Range<usize>,
    pub opcode: Range<usize>,
    /// The `(` after the opcode.
    pub open: Option<usize>,
    /// The matching `)`, when written.
    pub close: Option<usize>,
    /// Each operand's text, trimmed (empty operands are kept).
    pub operands: Vec<Range<usize>>,
    pub attributes: Vec<Attr>,
}

/// Which part of an instruction line a cursor is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The instruction's name, before any `=`.
    Name,
    /// The result shape; `layout` when inside its `{...}`.
    Shape {
        layout: bool,
    },
    Opcode,
    /// Operand `index` (commas before the cursor).
    Operand {
        index: usize,
    },
    /// An attribute's name; `k` is its place among the attributes.
    AttributeName {
        k: usize,
    },
    /// Attribute `k`'s value.
    AttributeValue {
        k: usize,
    },
}

impl<'a> Line<'a> {
    /// Reads `text` (one line, without its newline). Never fails: what is missing is
    /// an empty range at the place it would start.
    pub fn read(text: &'a str) -> Line<'a> {
        let b = text.as_bytes();
        let mut line = Line {
            text,
            ..Line::default()
        };
        let mut at = skip_space(b, 0);
        if text[at..].starts_with("ROOT") && b.get(at + 4).is_some_and(u8::is_ascii_whitespace) {
            at = skip_space(b, at + 4);
        }
        let name_start = at;
        if b.get(at) == Some(&b'%') {
            at += 1;
        }
        at = skip_word(b, at);
        line.name = name_start..at;
        at = skip_space(b, at);
        if b.get(at) != Some(&b'=') {
            let end = line.name.end;
            line.shape = end..end;
            line.opcode = end..end;
            return line;
        }
        line.equals = Some(at);
        at = skip_space(b, at + 1);
        let shape_start = at;
        at = skip_shape(b, at);
        line.shape = shape_start..at;
        at = skip_space(b, at);
        let opcode_start = at;
        at = skip_word(b, at);
        line.opcode = opcode_start..at;
        if b.get(at) != Some(&b'(') {
            return line;
        }
        line.open = Some(at);
        let (operands, close) = split_list(b, at + 1, b')');
        line.operands = operands;
        line.close = close;
        if let Some(close) = close {
            line.attributes = attributes(b, close + 1);
        }
        line
    }

    /// The text of a range of the line.
    pub fn get(&self, range: &Range<usize>) -> &'a str {
        self.text.get(range.clone()).unwrap_or("")
    }

    /// The opcode as written (empty when none).
    pub fn opcode_text(&self) -> &'a str {
        self.get(&self.opcode)
    }

    /// The instruction name without its `%`.
    pub fn name_text(&self) -> &'a str {
        self.get(&self.name).trim_start_matches('%')
    }

    /// Attribute `k`'s name.
    pub fn attribute_name(&self, k: usize) -> &'a str {
        self.attributes.get(k).map_or("", |a| self.get(&a.name))
    }

    /// Attribute `k`'s value text (empty when none).
    pub fn attribute_value(&self, k: usize) -> &'a str {
        self.attributes
            .get(k)
            .and_then(|a| a.value.as_ref())
            .map_or("", |v| self.get(v))
    }

    /// Where a cursor at `at` (bytes of the line, the start of the word typed) is.
    pub fn place(&self, at: usize) -> Place {
        if self.equals.is_none_or(|e| at <= e) {
            return Place::Name;
        }
        if at <= self.shape.end && !(self.shape.is_empty() && at > self.shape.start) {
            let shape = self.get(&(self.shape.start..at));
            let layout = shape.contains(']')
                && shape
                    .rfind('{')
                    .is_some_and(|o| shape.rfind('}').is_none_or(|c| c < o));
            return Place::Shape { layout };
        }
        let Some(open) = self.open.filter(|&o| at > o) else {
            return Place::Opcode;
        };
        if self.close.is_none_or(|c| at <= c) {
            let index = self.text[open + 1..at]
                .bytes()
                .scan(0i32, |depth, c| {
                    match c {
                        b'(' | b'{' | b'[' => *depth += 1,
                        b')' | b'}' | b']' => *depth -= 1,
                        _ => {}
                    }
                    Some(c == b',' && *depth == 0)
                })
                .filter(|&comma| comma)
                .count();
            return Place::Operand { index };
        }
        let k = self
            .attributes
            .iter()
            .rposition(|a| a.name.start <= at)
            .unwrap_or(0);
        match self.attributes.get(k) {
            Some(Attr {
                value: Some(value), ..
            }) if at >= value.start => Place::AttributeValue { k },
            _ => Place::AttributeName { k },
        }
    }
}

fn skip_space(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

fn skip_word(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(|&c| is_word_byte(c)) {
        at += 1;
    }
    at
}

/// Past a balanced group opening at `at` (or to the end when unclosed).
fn skip_group(b: &[u8], at: usize) -> usize {
    let mut depth = 0i32;
    let mut i = at;
    let mut quoted = false;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b'"' => quoted = !quoted,
            b'\\' if quoted => i += 1,
            _ if quoted => {}
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth -= 1;
                if depth <= 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// Past a shape: a tuple `(...)` or `type[dims]{layout}`.
fn skip_shape(b: &[u8], at: usize) -> usize {
    if b.get(at) == Some(&b'(') {
        return skip_group(b, at);
    }
    let mut at = at;
    while b.get(at).is_some_and(u8::is_ascii_alphanumeric) {
        at += 1;
    }
    if b.get(at) == Some(&b'[') {
        at = skip_group(b, at);
        if b.get(at) == Some(&b'{') {
            at = skip_group(b, at);
        }
    }
    at
}

/// The items of a list from `at` to its `close` byte at depth 0: each trimmed, and
/// where the list closes.
fn split_list(b: &[u8], at: usize, close: u8) -> (Vec<Range<usize>>, Option<usize>) {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut start = at;
    let mut i = at;
    let trimmed = |s: usize, e: usize| {
        let s = skip_space(b, s).min(e);
        let mut e = e;
        while e > s && b[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        s..e
    };
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => quoted = !quoted,
            b'\\' if quoted => i += 1,
            _ if quoted => {}
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' if depth > 0 => depth -= 1,
            c if c == close && depth == 0 => {
                let item = trimmed(start, i);
                if !item.is_empty() || !items.is_empty() {
                    items.push(item);
                }
                return (items, Some(i));
            }
            b',' if depth == 0 => {
                items.push(trimmed(start, i));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let item = trimmed(start, b.len());
    if !item.is_empty() || !items.is_empty() {
        items.push(item);
    }
    (items, None)
}

/// `, name=value, name=value` from `at` to the end of the line.
fn attributes(b: &[u8], at: usize) -> Vec<Attr> {
    let mut out = Vec::new();
    let mut at = at;
    loop {
        at = skip_space(b, at);
        if b.get(at) != Some(&b',') {
            return out;
        }
        at = skip_space(b, at + 1);
        let name_start = at;
        at = skip_word(b, at);
        let name = name_start..at;
        let value = if b.get(at) == Some(&b'=') {
            let start = at + 1;
            let mut i = start;
            let mut depth = 0i32;
            let mut quoted = false;
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => quoted = !quoted,
                    b'\\' if quoted => i += 1,
                    _ if quoted => {}
                    b'(' | b'{' | b'[' => depth += 1,
                    b')' | b'}' | b']' => depth -= 1,
                    b',' if depth <= 0 => break,
                    _ => {}
                }
                i += 1;
            }
            let end = i.min(b.len());
            at = end;
            Some(start..end)
        } else {
            None
        };
        out.push(Attr { name, value });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(marked: &str) -> Place {
        let at = marked.find('|').expect("cursor");
        let text = marked.replacen('|', "", 1);
        let word = word_before(&text, at);
        Line::read(&text).place(word.start)
    }

    #[test]
    fn places() {
        assert_eq!(place("  %a|"), Place::Name);
        assert_eq!(place("  %a = f3|"), Place::Shape { layout: false });
        assert_eq!(place("  %a = f32[2]{|"), Place::Shape { layout: true });
        assert_eq!(place("  %a = f32[2]{0} ad|"), Place::Opcode);
        assert_eq!(
            place("  %a = f32[2]{0} |(%x), dimensions={0}"),
            Place::Opcode
        );
        assert_eq!(
            place("  %a = f32[2]{0} add(%x, |"),
            Place::Operand { index: 1 }
        );
        assert_eq!(
            place("  %a = f32[2]{0} add(|)"),
            Place::Operand { index: 0 }
        );
        assert_eq!(
            place("  %a = f32[2] broadcast(%x), |"),
            Place::AttributeName { k: 0 }
        );
        assert_eq!(
            place("  %a = f32[2] broadcast(%x), dimensions={0}, |={op_name=\"a\"}"),
            Place::AttributeName { k: 1 }
        );
        assert_eq!(
            place("  %a = f32[2] fusion(%x), kind=kLoop, calls=|, metadata={}"),
            Place::AttributeValue { k: 1 }
        );
        assert_eq!(place("ROOT %t = (f32[], s32[]) tu|"), Place::Opcode);
    }

    #[test]
    fn reads_a_whole_line() {
        let l = Line::read("  %m = f32[8]{0} multiply(%a, %b), metadata={op_name=\"x, y\"}");
        assert_eq!(l.name_text(), "m");
        assert_eq!(l.opcode_text(), "multiply");
        assert_eq!(l.operands.len(), 2);
        assert_eq!(l.attribute_name(0), "metadata");
        assert_eq!(l.attribute_value(0), "{op_name=\"x, y\"}");
    }
}
