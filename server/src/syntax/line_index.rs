//! Byte offsets to line and column numbers.

/// 1-based line and column (in characters) of `byte` in `text`, for messages in
/// the `FILE:LINE:COL` form. `byte` is clamped to the text and to a char boundary.
pub fn line_col(text: &str, byte: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(text, byte)
}

/// Start offsets of all lines, for many lookups into one text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
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
}
