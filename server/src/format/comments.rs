//! Comments through formatting. XLA's printer writes what it parsed, and comments
//! are not parsed: `hlo_module_from_text(text).to_string()` has none. A formatter
//! in an editor must not delete the user's text, so [`Comments::Keep`] (the
//! editor's and `hlo-lsp fmt`'s mode) writes each comment back beside what it was
//! written beside: a comment on lines of its own above the instruction or
//! computation that follows it, one after an instruction (or inside it) at the end
//! of that instruction's line, one after a closing brace after that brace.
//! [`Comments::Drop`] prints exactly what XLA prints, comments gone (the
//! conformance comparison).
//!
//! Both start from the text with its comments cut out ([`strip`]), so the
//! printer, which copies literals and attribute values as written, never copies a
//! comment along with them.

use std::collections::HashMap;

use crate::model::Module;

/// What formatting does with comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comments {
    /// Kept beside the instruction or computation they were written beside.
    Keep,
    /// Left out, as XLA's printer leaves them out.
    Drop,
}

/// One comment cut out of the text.
#[derive(Debug, Clone)]
pub struct Comment {
    /// Where it was, in the text without comments.
    pub at: usize,
    /// `// ...` (without its line end) or `/* ... */`.
    pub text: String,
}

/// A text with its comments cut out, and the comments.
pub struct Stripped {
    pub text: String,
    pub comments: Vec<Comment>,
    /// (offset in `text`, bytes cut before it in the original), at each cut.
    cuts: Vec<(usize, usize)>,
}

impl Stripped {
    /// The offset in the original text of `at`, an offset in the stripped one.
    pub fn original_offset(&self, at: usize) -> usize {
        let k = self.cuts.partition_point(|(cut, _)| *cut <= at);
        at + k.checked_sub(1).map_or(0, |k| self.cuts[k].1)
    }
}

/// The comments of `text`, in order, as byte ranges. Text in quotes is not looked
/// into; XLA's own annotations (`/*index=5*/`, `/*i0=1*/`) and the `// -----`
/// lines between modules are not comments here.
struct CommentSpans<'t> {
    text: &'t str,
    at: usize,
    quoted: bool,
}

impl<'t> CommentSpans<'t> {
    fn of(text: &'t str) -> CommentSpans<'t> {
        CommentSpans {
            text,
            at: 0,
            quoted: false,
        }
    }
}

impl Iterator for CommentSpans<'_> {
    type Item = std::ops::Range<usize>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        loop {
            // Only a quote, or outside quotes a slash (inside them a backslash), matters.
            let rest = bytes.get(self.at..)?;
            let found = match self.quoted {
                false => memchr::memchr2(b'"', b'/', rest),
                true => memchr::memchr2(b'"', b'\\', rest),
            };
            let at = self.at + found?;
            match (bytes[at], bytes.get(at + 1)) {
                (b'\\', _) => self.at = at + 2,
                (b'"', _) => {
                    self.quoted = !self.quoted;
                    self.at = at + 1;
                }
                (b'/', Some(b'/' | b'*')) => {
                    let end = comment_end(self.text, at);
                    self.at = end;
                    let comment = &self.text[at..end];
                    if !comment.starts_with("// -----") && !super::is_xla_annotation(comment) {
                        return Some(at..end);
                    }
                }
                _ => self.at = at + 1,
            }
        }
    }
}

/// Whether `text` holds a comment ([`strip`] would cut one), found without a copy.
pub fn any(text: &str) -> bool {
    CommentSpans::of(text).next().is_some()
}

/// `text` without its comments (and the blanks before each on its line); what is
/// a comment is [`CommentSpans`]'.
pub fn strip(text: &str) -> Stripped {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut comments = Vec::new();
    let mut cuts = Vec::new();
    let (mut copied, mut removed) = (0usize, 0usize);
    for span in CommentSpans::of(text) {
        let (at, end) = (span.start, span.end);
        out.push_str(&text[copied..at]);
        let before = out.len();
        while out.ends_with([' ', '\t']) {
            out.pop();
        }
        let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        let space = word(out.as_bytes().last()) && word(bytes.get(end));
        removed += end - at + (before - out.len()) - usize::from(space);
        if space {
            out.push(' ');
        }
        comments.push(Comment {
            at: out.len(),
            text: text[at..end].to_string(),
        });
        cuts.push((out.len(), removed));
        copied = end;
    }
    out.push_str(&text[copied.min(text.len())..]);
    Stripped {
        text: out,
        comments,
        cuts,
    }
}

/// Where the comment starting at `start` ends: before the line end for `//`,
/// after `*/` for `/*` (the text's end when it is not closed).
fn comment_end(text: &str, start: usize) -> usize {
    let rest = &text[start..];
    if rest.starts_with("//") {
        rest.find(['\n', '\r']).map_or(text.len(), |k| start + k)
    } else {
        rest[2..]
            .find("*/")
            .map_or(text.len(), |k| start + 2 + k + 2)
    }
}

/// Where a kept comment is written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// Above the module header.
    Top,
    /// On lines of their own above computation `c` (by index).
    BeforeComputation(usize),
    /// On lines of their own above instruction `i` of computation `c`.
    BeforeInstruction(usize, usize),
    /// At the end of instruction `i`'s line.
    AfterInstruction(usize, usize),
    /// On lines of their own above computation `c`'s closing brace.
    BeforeClose(usize),
    /// After computation `c`'s closing brace.
    AfterClose(usize),
    /// After the last computation.
    End,
}

/// The comments of a module by where they go back.
#[derive(Default)]
pub struct Attached {
    by_anchor: HashMap<Anchor, Vec<Comment>>,
}

impl Attached {
    /// Each comment of `stripped` given its place among the computations and
    /// instructions of `module`, built from the stripped text.
    pub fn of(module: &Module, stripped: &Stripped) -> Attached {
        let mut by_anchor: HashMap<Anchor, Vec<Comment>> = HashMap::new();
        for comment in &stripped.comments {
            let anchor = anchor(module, &stripped.text, comment.at);
            by_anchor.entry(anchor).or_default().push(comment.clone());
        }
        Attached { by_anchor }
    }

    /// Whether there are no comments to write back.
    pub fn is_empty(&self) -> bool {
        self.by_anchor.is_empty()
    }

    /// The comments written back at `anchor`, in written order.
    pub fn at(&self, anchor: Anchor) -> &[Comment] {
        self.by_anchor.get(&anchor).map_or(&[], Vec::as_slice)
    }

    /// `comments` on lines of their own, each indented by `indent`.
    pub fn lines(out: &mut String, comments: &[Comment], indent: &str) {
        for c in comments {
            out.push_str(indent);
            out.push_str(&c.text);
            out.push('\n');
        }
    }

    /// `comments` after what `out` ends with, on the same line.
    pub fn trailing(out: &mut String, comments: &[Comment]) {
        for c in comments {
            out.push(' ');
            out.push_str(&c.text);
        }
    }
}

/// Where the comment cut at `at` (of the stripped `text`) goes back.
fn anchor(module: &Module, text: &str, at: usize) -> Anchor {
    let same_line = |from: usize, to: usize| {
        text.get(from.min(to)..to.max(from))
            .is_some_and(|between| !between.contains(['\n', '\r']))
    };
    let computations: Vec<_> = module.computations().collect();
    let Some(first) = computations.first() else {
        return Anchor::End;
    };
    let header_start = text.len() - text.trim_start().len();
    if at <= header_start || (at < first.range().start && module.header_text().is_none()) {
        return Anchor::Top;
    }
    for (k, c) in computations.iter().enumerate() {
        let range = c.range();
        if at < range.start {
            // Between two computations: after the brace before it, on its line,
            // or above the next.
            if k > 0 && same_line(computations[k - 1].range().end, at) {
                return Anchor::AfterClose(k - 1);
            }
            return Anchor::BeforeComputation(k);
        }
        if at > range.end {
            continue;
        }
        let opened = text
            .get(range.start..at)
            .is_some_and(|head| head.contains('{'));
        if !opened {
            return Anchor::BeforeComputation(k);
        }
        if at >= range.end {
            return Anchor::AfterClose(k);
        }
        for (n, i) in c.instructions.iter().enumerate() {
            let span = c.abs(i.range);
            if (span.start..=span.end).contains(&at) || (at > span.end && same_line(span.end, at)) {
                return Anchor::AfterInstruction(k, n);
            }
            if span.start > at {
                return Anchor::BeforeInstruction(k, n);
            }
        }
        return Anchor::BeforeClose(k);
    }
    match computations.last() {
        Some(last) if same_line(last.range().end, at) => Anchor::AfterClose(computations.len() - 1),
        _ => Anchor::End,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_cut_out_with_the_blanks_before_them() {
        let s = strip("a = f32[1] constant({1 /*x*/}) // end\n\"q // not\" b/*c*/c\n");
        assert_eq!(s.text, "a = f32[1] constant({1})\n\"q // not\" b c\n");
        let texts: Vec<&str> = s.comments.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["/*x*/", "// end", "/*c*/"]);
        assert_eq!(s.original_offset(0), 0);
        assert_eq!(s.original_offset(s.text.find('\n').unwrap_or(0)), 37);
    }

    #[test]
    fn xla_annotations_stay() {
        let s = strip("tuple(%a, /*index=5*/%b) {/*i0=1*/ 2}");
        assert!(s.comments.is_empty());
    }
}
