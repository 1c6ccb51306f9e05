//! A shape as XLA prints it, from the shape as written: XLA's
//! `ShapeUtil::PrintHumanStringWithLayout` (instruction results, operands in the long
//! form, `entry_computation_layout`) and `ShapeUtil::PrintHumanString` (a computation's
//! signature, no layouts).
//!
//! Why text, not the model's [`Shape`]: a layout carries items the model does not
//! decode (`D(...)`, `L(...)`, `#(...)`), kept in the order they were written, which is
//! the order XLA printed them in; rewriting only the spacing and the missing default
//! layouts keeps them exactly.

use crate::model::Shape;

/// The shape written as `text` printed as XLA prints it: spaces dropped inside an
/// array shape, `, ` between tuple elements, a missing layout replaced by the default
/// one (XLA's parser gives every array shape its major-to-minor layout), and a
/// scalar's empty layout not written. With `with_layout` false, layouts are left
/// out. `None` when `text` is not one shape.
pub fn canonical(text: &str, with_layout: bool) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    canonical_into(&mut out, text, with_layout)?;
    Some(out)
}

/// [`canonical`] written at the end of `out`, without a string of its own (the
/// printer writes five million shapes on a large dump); `None`, and nothing
/// written, when `text` is not one shape.
pub fn canonical_into(out: &mut String, text: &str, with_layout: bool) -> Option<()> {
    let start = out.len();
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let read = reader.shape(out, with_layout).is_some() && {
        reader.skip_space();
        reader.at == reader.text.len()
    };
    if !read {
        out.truncate(start);
    }
    read.then_some(())
}

/// The model's shape (an inferred one: nothing was written) as XLA prints it.
pub fn of_model(shape: &Shape, with_layout: bool) -> Option<String> {
    if matches!(shape, Shape::Invalid) {
        return None;
    }
    canonical(&shape.to_string(), with_layout)
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// Skips spaces and comments: the `/*index=5*/` XLA writes in a long tuple is
    /// written again where it belongs ([`Reader::tuple`]).
    fn skip_space(&mut self) {
        loop {
            while self
                .text
                .get(self.at)
                .is_some_and(|b| b.is_ascii_whitespace())
            {
                self.at += 1;
            }
            let rest = self.text.get(self.at..).unwrap_or_default();
            if !rest.starts_with(b"/*") {
                return;
            }
            match rest.windows(2).skip(2).position(|w| w == b"*/") {
                Some(end) => self.at += end + 4,
                None => return,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn shape(&mut self, out: &mut String, with_layout: bool) -> Option<()> {
        if self.peek()? == b'(' {
            return self.tuple(out, with_layout);
        }
        self.array(out, with_layout)
    }

    fn tuple(&mut self, out: &mut String, with_layout: bool) -> Option<()> {
        self.at += 1;
        out.push('(');
        if self.peek()? == b')' {
            self.at += 1;
            out.push(')');
            return Some(());
        }
        let mut index = 0;
        loop {
            self.shape(out, with_layout)?;
            index += 1;
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    out.push_str(", ");
                    // XLA's `PrintTupleShapes`: every fifth element's index.
                    if index % 5 == 0 {
                        out.push_str(&format!("/*index={index}*/"));
                    }
                }
                b')' => {
                    self.at += 1;
                    out.push(')');
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// `type[dims]{layout}`; the element type is kept as written.
    fn array(&mut self, out: &mut String, with_layout: bool) -> Option<()> {
        self.skip_space();
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.at += 1;
        }
        if self.at == start || self.peek()? != b'[' {
            return None;
        }
        out.push_str(std::str::from_utf8(&self.text[start..self.at]).ok()?);
        let dims = self.balanced(b'[', b']')?;
        let rank = if dims.is_empty() {
            0
        } else {
            dims.split(',').count()
        };
        out.push('[');
        out.push_str(&dims);
        out.push(']');
        let layout = if self.peek() == Some(b'{') {
            Some(self.balanced(b'{', b'}')?)
        } else {
            None
        };
        if with_layout {
            match layout {
                Some(l) if rank == 0 && l.is_empty() => {}
                Some(l) => {
                    out.push('{');
                    out.push_str(&l);
                    out.push('}');
                }
                None if rank > 0 => {
                    let dims: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
                    out.push('{');
                    out.push_str(&dims.join(","));
                    out.push('}');
                }
                None => {}
            }
        }
        Some(())
    }

    /// The text between `open` and its matching `close` (the reader is at `open`),
    /// spaces dropped.
    fn balanced(&mut self, open: u8, close: u8) -> Option<String> {
        self.at += 1;
        let mut depth = 1;
        let mut inside = Vec::new();
        while let Some(&b) = self.text.get(self.at) {
            self.at += 1;
            if b == open {
                depth += 1;
            } else if b == close {
                depth -= 1;
                if depth == 0 {
                    return String::from_utf8(inside).ok();
                }
            }
            if !b.is_ascii_whitespace() {
                inside.push(b);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn default_layouts_are_added_and_scalars_keep_none() {
        assert_eq!(
            canonical("f32[2,3]", true).as_deref(),
            Some("f32[2,3]{1,0}")
        );
        assert_eq!(canonical("f32[]", true).as_deref(), Some("f32[]"));
        assert_eq!(canonical("f32[] {}", true).as_deref(), Some("f32[]"));
        assert_eq!(
            canonical("(f32[2] {0},(s32[], token[]))", true).as_deref(),
            Some("(f32[2]{0}, (s32[], token[]))")
        );
    }

    #[test]
    fn layouts_are_kept_as_written_or_dropped() {
        let tiled = "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}";
        assert_eq!(canonical(tiled, true).as_deref(), Some(tiled));
        assert_eq!(canonical(tiled, false).as_deref(), Some("bf16[8,128]"));
        assert_eq!(
            canonical("f32[<=4, 2]", true).as_deref(),
            Some("f32[<=4,2]{1,0}")
        );
        assert_eq!(canonical("f32[2", true), None);
        assert_eq!(
            canonical("(s8[], s8[], s8[], s8[], s8[], s8[])", false).as_deref(),
            Some("(s8[], s8[], s8[], s8[], s8[], /*index=5*/s8[])")
        );
    }
}
