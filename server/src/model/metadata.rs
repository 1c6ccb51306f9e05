//! An instruction's `metadata={...}`: where it came from. XLA prints
//! `op_name="jit(f)/add" source_file="model.py" source_line=42 stack_frame_id=3` (and
//! `op_type`, `source_end_line`, `source_column`, `source_end_column`,
//! `deduplicated_name`, `scheduling_name`, ... which are kept as read but not used).
//!
//! The block is read on its own (the grammar keeps it as one coarse token), tolerantly:
//! unknown keys are skipped, a broken value ends the reading with what was read so far.

use std::ops::Range;

/// What `metadata={...}` says about an instruction's origin. Ranges are relative to
/// the text given to [`OpMetadata::parse`] (the `{...}` block).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpMetadata {
    pub op_name: Option<String>,
    pub op_type: Option<String>,
    pub source_file: Option<String>,
    /// The `"..."` value of `source_file`, quotes included.
    pub source_file_range: Option<Range<usize>>,
    pub source_line: Option<u32>,
    pub source_column: Option<u32>,
    /// Index into the module's `StackFrames` table (JAX dumps; see
    /// [`super::stack_frames`]).
    pub stack_frame_id: Option<u32>,
    /// The value of `stack_frame_id`.
    pub stack_frame_range: Option<Range<usize>>,
}

impl OpMetadata {
    /// Reads a `{key=value ...}` block (the braces may be missing).
    pub fn parse(block: &str) -> OpMetadata {
        let mut m = OpMetadata::default();
        let bytes = block.as_bytes();
        let mut p = 0;
        while p < bytes.len() {
            while p < bytes.len()
                && (bytes[p].is_ascii_whitespace() || matches!(bytes[p], b'{' | b','))
            {
                p += 1;
            }
            let key_start = p;
            while p < bytes.len() && (bytes[p].is_ascii_alphanumeric() || bytes[p] == b'_') {
                p += 1;
            }
            let key = &block[key_start..p];
            if key.is_empty() || bytes.get(p) != Some(&b'=') {
                break;
            }
            p += 1;
            let Some((value, range)) = value_at(block, p) else {
                break;
            };
            p = range.end;
            m.set(key, value, range);
        }
        m
    }

    fn set(&mut self, key: &str, value: String, range: Range<usize>) {
        let number = || value.parse::<u32>().ok();
        match key {
            "op_name" => self.op_name = Some(value),
            "op_type" => self.op_type = Some(value),
            "source_file" => {
                self.source_file_range = Some(range);
                self.source_file = Some(value);
            }
            "source_line" => self.source_line = number(),
            "source_column" => self.source_column = number(),
            "stack_frame_id" => {
                self.stack_frame_id = number();
                self.stack_frame_range = self.stack_frame_id.map(|_| range);
            }
            _ => {}
        }
    }

    /// Whether the block says anything about the source.
    pub fn has_source(&self) -> bool {
        self.source_file.is_some() || self.stack_frame_id.is_some()
    }
}

/// A value at `p`: a `"..."` string (escapes decoded) or a bare token up to the next
/// blank or `}`; with its range (a string's includes the quotes).
fn value_at(text: &str, p: usize) -> Option<(String, Range<usize>)> {
    let bytes = text.as_bytes();
    if bytes.get(p) == Some(&b'"') {
        let (value, end) = string_at(text, p)?;
        return Some((value, p..end));
    }
    let end = p + bytes[p..]
        .iter()
        .position(|&b| b.is_ascii_whitespace() || b == b'}' || b == b',')
        .unwrap_or(bytes.len() - p);
    (end > p).then(|| (text[p..end].to_string(), p..end))
}

/// The string starting with the quote at `p`, decoded (`\"`, `\\`, `\n`, `\t`), and
/// the offset after its closing quote; `None` when it does not close on its line.
pub fn string_at(text: &str, p: usize) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = text[p + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, p + 1 + i + 1)),
            '\n' => return None,
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}

/// The `metadata={...}` blocks of a text (a computation's chunk), as `(range of the
/// block, metadata)`: a byte scan that needs no parse, for whole-document requests
/// (document links) on dumps of any size.
pub fn scan(text: &str) -> impl Iterator<Item = (Range<usize>, OpMetadata)> + '_ {
    const KEY: &str = "metadata={";
    let mut from = 0;
    std::iter::from_fn(move || loop {
        let found = from + text.get(from..)?.find(KEY)?;
        let start = found + KEY.len() - 1;
        from = start + 1;
        let preceded_by_name = found > 0 && {
            let b = text.as_bytes()[found - 1];
            b.is_ascii_alphanumeric() || b == b'_'
        };
        if preceded_by_name {
            continue;
        }
        let Some(end) = block_end(text, start) else {
            continue;
        };
        from = end;
        return Some((start..end, OpMetadata::parse(&text[start..end])));
    })
}

/// The offset after the `}` closing the block that opens at `start` (strings
/// respected); `None` when it does not close on its line.
fn block_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut p = start;
    while p < bytes.len() {
        match bytes[p] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(p + 1);
                }
            }
            b'"' => p = string_at(text, p)?.1 - 1,
            // XLA prints an instruction on one line: a block still open there is broken.
            b'\n' => return None,
            _ => {}
        }
        p += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_sources_and_frames() {
        let block = r#"{op_type="Add" op_name="jit(f)/add \"x\"" source_file="/src/model.py" source_line=42 source_end_line=43 stack_frame_id=3}"#;
        let m = OpMetadata::parse(block);
        assert_eq!(m.op_name.as_deref(), Some("jit(f)/add \"x\""));
        assert_eq!(m.op_type.as_deref(), Some("Add"));
        assert_eq!(m.source_file.as_deref(), Some("/src/model.py"));
        assert_eq!(
            &block[m.source_file_range.clone().unwrap()],
            "\"/src/model.py\""
        );
        assert_eq!(m.source_line, Some(42));
        assert_eq!(m.stack_frame_id, Some(3));
        assert_eq!(&block[m.stack_frame_range.unwrap()], "3");
    }

    #[test]
    fn broken_blocks_keep_what_was_read() {
        let m = OpMetadata::parse(r#"{op_name="a" source_line=x7 source_file="unclosed}"#);
        assert_eq!(m.op_name.as_deref(), Some("a"));
        assert_eq!(m.source_line, None);
        assert_eq!(m.source_file, None);
        assert_eq!(OpMetadata::parse(""), OpMetadata::default());
        assert_eq!(OpMetadata::parse("{}"), OpMetadata::default());
        assert_eq!(OpMetadata::parse("{=}"), OpMetadata::default());
    }

    #[test]
    fn scanning_finds_every_block_outside_strings() {
        let text = r#"  %a = f32[] add(%x, %y), metadata={op_name="m={" stack_frame_id=2}
  %b = f32[] negate(%a), custom_metadata={op_name="no"}, metadata={source_file="f.py" source_line=3}
"#;
        let found: Vec<_> = scan(text).collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].1.stack_frame_id, Some(2));
        assert_eq!(found[1].1.source_line, Some(3));
        assert!(text[found[1].0.clone()].starts_with("{source_file"));
    }
}
