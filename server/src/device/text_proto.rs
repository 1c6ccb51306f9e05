//! A small, tolerant reader of protobuf text format: enough for the
//! `GpuTargetConfig` / `GpuDeviceInfoProto` files XLA dumps
//! (`*.gpu_target_config.pbtxt`) and ships (`xla/tools/hlo_opt/gpu_specs/*.txtpb`).
//!
//! It knows no schema: a message is a list of fields, each a scalar token or a
//! nested message. What a field means is decided by the caller
//! ([`super::target_config`]). Accepted: `key: value`, `key { ... }`,
//! `key: { ... }`, `key < ... >`, `#` comments, `,` or `;` between fields,
//! quoted strings with C escapes (adjacent strings concatenate), and `[ext]`
//! keys. Every error names the byte offset where the input stopped making
//! sense; no input panics.

use std::fmt;

/// One field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number, identifier (`true`, an enum name) or the unquoted text of a
    /// string, with the byte offset of its first character.
    Scalar {
        text: String,
        quoted: bool,
        at: usize,
    },
    /// A nested message.
    Message(Message),
}

/// A message: its fields in file order (a repeated field appears once per value).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Message {
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    /// Byte offset of the field's name.
    pub at: usize,
    pub value: Value,
}

/// Why the text could not be read, and where (byte offset into the input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextProtoError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for TextProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for TextProtoError {}

impl Message {
    /// The last value of a field (proto semantics for a non-repeated field).
    pub fn get(&self, name: &str) -> Option<&Field> {
        self.fields.iter().rev().find(|f| f.name == name)
    }
}

/// Reads a whole text-format message.
pub fn parse(text: &str) -> Result<Message, TextProtoError> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    let message = reader.message(None)?;
    Ok(message)
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl Reader<'_> {
    fn error<T>(&self, at: usize, message: impl Into<String>) -> Result<T, TextProtoError> {
        Err(TextProtoError {
            offset: at,
            message: message.into(),
        })
    }

    /// Skips whitespace and `#` comments.
    fn skip_blank(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if b == b'#' {
                while let Some(&c) = self.bytes.get(self.pos) {
                    if c == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blank();
        self.bytes.get(self.pos).copied()
    }

    /// Fields up to `close` (or the end of input for the top level).
    fn message(&mut self, close: Option<u8>) -> Result<Message, TextProtoError> {
        let mut message = Message::default();
        loop {
            match (self.peek(), close) {
                (None, None) => return Ok(message),
                (None, Some(c)) => {
                    return self.error(self.pos, format!("expected '{}' before the end", c as char))
                }
                (Some(b), Some(c)) if b == c => {
                    self.pos += 1;
                    return Ok(message);
                }
                (Some(b @ (b',' | b';')), _) => {
                    // Separators between fields are optional.
                    let _ = b;
                    self.pos += 1;
                }
                _ => message.fields.push(self.field()?),
            }
        }
    }

    fn field(&mut self) -> Result<Field, TextProtoError> {
        let at = self.pos;
        let name = self.name()?;
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                match self.peek() {
                    Some(open @ (b'{' | b'<')) => {
                        self.pos += 1;
                        let value = self.nested(open)?;
                        Ok(Field { name, at, value })
                    }
                    Some(b'[') => self.error(self.pos, "lists ([...]) are not supported"),
                    _ => {
                        let value = self.scalar()?;
                        Ok(Field { name, at, value })
                    }
                }
            }
            Some(open @ (b'{' | b'<')) => {
                self.pos += 1;
                let value = self.nested(open)?;
                Ok(Field { name, at, value })
            }
            Some(_) => self.error(self.pos, format!("expected ':' or '{{' after {name:?}")),
            None => self.error(self.pos, format!("expected a value for {name:?}")),
        }
    }

    fn nested(&mut self, open: u8) -> Result<Value, TextProtoError> {
        if self.depth >= MAX_DEPTH {
            return self.error(self.pos, "messages nested too deep");
        }
        self.depth += 1;
        let close = if open == b'{' { b'}' } else { b'>' };
        let message = self.message(Some(close))?;
        self.depth -= 1;
        Ok(Value::Message(message))
    }

    /// A field name: an identifier, or `[extension.name]`.
    fn name(&mut self) -> Result<String, TextProtoError> {
        let start = self.pos;
        if self.bytes.get(self.pos) == Some(&b'[') {
            let end = self.bytes[start..]
                .iter()
                .position(|&b| b == b']')
                .map(|i| start + i + 1);
            return match end {
                Some(end) => {
                    self.pos = end;
                    Ok(self.text[start..end].to_string())
                }
                None => self.error(start, "unclosed '[' in a field name"),
            };
        }
        while let Some(&b) = self.bytes.get(self.pos) {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.pos == start {
            let found = self.text[start..].chars().next().unwrap_or(' ');
            return self.error(start, format!("expected a field name, found {found:?}"));
        }
        Ok(self.text[start..self.pos].to_string())
    }

    /// A number, identifier or (possibly concatenated) quoted string.
    fn scalar(&mut self) -> Result<Value, TextProtoError> {
        let at = self.pos;
        match self.bytes.get(self.pos) {
            Some(b'"' | b'\'') => {
                let mut text = String::new();
                while let Some(q @ (b'"' | b'\'')) = self.peek() {
                    self.pos += 1;
                    self.string_body(q, &mut text)?;
                }
                Ok(Value::Scalar {
                    text,
                    quoted: true,
                    at,
                })
            }
            Some(_) => {
                while let Some(&b) = self.bytes.get(self.pos) {
                    if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.') {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                if self.pos == at {
                    let found = self.text[at..].chars().next().unwrap_or(' ');
                    return self.error(at, format!("expected a value, found {found:?}"));
                }
                Ok(Value::Scalar {
                    text: self.text[at..self.pos].to_string(),
                    quoted: false,
                    at,
                })
            }
            None => self.error(at, "expected a value before the end"),
        }
    }

    /// The rest of a string after its opening quote `q`, appended to `out`.
    fn string_body(&mut self, q: u8, out: &mut String) -> Result<(), TextProtoError> {
        let open = self.pos - 1;
        let mut raw: Vec<u8> = Vec::new();
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.error(open, "unterminated string");
            };
            self.pos += 1;
            match b {
                b'\n' => return self.error(open, "unterminated string (newline inside)"),
                _ if b == q => break,
                b'\\' => {
                    let Some(&e) = self.bytes.get(self.pos) else {
                        return self.error(open, "unterminated string");
                    };
                    self.pos += 1;
                    match e {
                        b'n' => raw.push(b'\n'),
                        b't' => raw.push(b'\t'),
                        b'r' => raw.push(b'\r'),
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.bytes.get(self.pos) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            raw.push((v & 0xff) as u8);
                        }
                        other => raw.push(other),
                    }
                }
                _ => raw.push(b),
            }
        }
        out.push_str(&String::from_utf8_lossy(&raw));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_messages_comments_and_strings() {
        let m = parse(
            "# header\na { b: 1 c: -2.5e3, d: \"x\\\"y\" 'z' }\ne: true; f < g: h >\n[ext.k]: 3",
        )
        .unwrap();
        let Value::Message(a) = &m.get("a").unwrap().value else {
            panic!()
        };
        assert_eq!(a.fields.len(), 3);
        match &a.get("d").unwrap().value {
            Value::Scalar { text, quoted, .. } => {
                assert_eq!(text, "x\"yz");
                assert!(quoted);
            }
            _ => panic!(),
        }
        match &a.get("c").unwrap().value {
            Value::Scalar { text, .. } => assert_eq!(text, "-2.5e3"),
            _ => panic!(),
        }
        assert!(m.get("f").is_some());
        assert!(m.get("[ext.k]").is_some());
    }

    #[test]
    fn errors_are_positioned() {
        let e = parse("a { b: 1").unwrap_err();
        assert_eq!(e.offset, 8);
        let e = parse("a: \"open").unwrap_err();
        assert_eq!(e.offset, 3);
        let e = parse("a b").unwrap_err();
        assert_eq!(e.offset, 2);
        let e = parse("a: }").unwrap_err();
        assert_eq!(e.offset, 3);
        let e = parse("}").unwrap_err();
        assert_eq!(e.offset, 0);
        let deep = "a {".repeat(100);
        assert!(parse(&deep).is_err());
        // Never panics on arbitrary bytes, including multi-byte characters.
        for s in ["é", "a: é", "a { é }", "[", "a: '\\", "a: '\\1", "\u{0}"] {
            let _ = parse(s);
        }
    }
}
