//! Byte offsets to line and column numbers, and the crate's one rule of where a
//! line ends ([`line_break_ends`]).

/// 1-based line and column (in characters) of `byte` in `text`, for messages in
/// the `FILE:LINE:COL` form. `byte` is clamped to the text and to a char boundary.
pub fn line_col(text: &str, byte: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(text, byte)
}

/// The offset just past each line break of `text`, in order. A line ends at `\n`,
/// `\r\n` or a lone `\r`, as LSP counts lines. Every line table uses this rule (the
/// CLI's [`LineIndex`] and the server's per-chunk tables), so that `hlo-lsp check`
/// and the editor put a finding on the same line.
pub(crate) fn line_break_ends(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr2_iter(b'\n', b'\r', text)
        .filter(move |&i| text[i] == b'\n' || text.get(i + 1) != Some(&b'\n'))
        .map(|i| i + 1)
}

/// Start offsets of all lines, for many lookups into one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(line_break_ends(text.as_bytes()));
        LineIndex { line_starts }
    }

    /// 1-based line and 1-based character column of `byte`.
    pub fn line_col(&self, text: &str, byte: usize) -> (usize, usize) {
        let mut byte = byte.min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= byte) - 1;
        let col = text[self.line_starts[line]..byte].chars().count();
        (line + 1, col + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_and_characters_from_one() {
        let text = "ab\nçd\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 2), (1, 3));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, 5), (2, 2)); // after the two-byte ç
        assert_eq!(line_col(text, 4), (2, 1)); // inside ç: clamped to its start
        assert_eq!(line_col(text, 99), (3, 1));
    }

    #[test]
    fn lines_end_at_lf_crlf_and_a_lone_cr() {
        let text = "a\rb\r\nc\nd";
        assert_eq!(
            line_break_ends(text.as_bytes()).collect::<Vec<_>>(),
            [2, 5, 7]
        );
        assert_eq!(line_col(text, 2), (2, 1)); // b, after a lone \r
        assert_eq!(line_col(text, 3), (2, 2)); // the \r of \r\n ends line 2
        assert_eq!(line_col(text, 5), (3, 1)); // c
        assert_eq!(line_col(text, 7), (4, 1)); // d
        assert_eq!(line_col("\r", 1), (2, 1));
    }
}
