//! The formatted text as small edits of the old one: a line diff (Myers' O(ND)
//! algorithm), each replaced line its own edit where old and new lines pair up, so an
//! editor keeps its cursor and marks on the lines formatting leaves alone, and range
//! formatting can keep only the edits inside the lines it was asked about.

use std::ops::Range;

use crate::model::{HloFile, TextEdit};
use crate::syntax::SyntaxDocument;

/// Differences beyond this many lines are sent as one edit of the span between the
/// common head and tail: the diff's memory grows with the square of the differences.
const MAX_DIFFERENCES: usize = 1000;

/// Longer spans of changed lines (that do not pair up one to one) are not diffed
/// either: the diff's time grows with their length times the differences.
const MAX_DIFF_LINES: usize = 20_000;

/// Lines of `text` with their byte ranges, line breaks included.
fn lines(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// The edits that turn `old` into `new`.
pub fn line_edits(old: &str, new: &str) -> Vec<TextEdit> {
    if old == new {
        return Vec::new();
    }
    let a = lines(old);
    let b = lines(new);
    let (la, lb): (Vec<&str>, Vec<&str>) = (
        a.iter().map(|r| &old[r.clone()]).collect(),
        b.iter().map(|r| &new[r.clone()]).collect(),
    );
    let head = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    let tail = la[head..]
        .iter()
        .rev()
        .zip(lb[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&la[head..la.len() - tail], &lb[head..lb.len() - tail]);
    let middle = if ma.len() == mb.len() {
        // Formatting mostly rewrites lines in place: pair them one to one.
        (0..ma.len())
            .filter(|&k| ma[k] == mb[k])
            .map(|k| (k, k))
            .collect()
    } else if ma.len() + mb.len() <= MAX_DIFF_LINES {
        common_lines(ma, mb).unwrap_or_default()
    } else {
        Vec::new()
    };
    let matches = (0..head)
        .map(|k| (k, k))
        .chain(middle.into_iter().map(|(x, y)| (x + head, y + head)))
        .chain((0..tail).map(|k| (la.len() - tail + k, lb.len() - tail + k)));
    let mut edits = Vec::new();
    let (mut i, mut j) = (0, 0);
    let at = |k: usize| a.get(k).map_or(old.len(), |r| r.start);
    let gap = |i0: usize, i1: usize, j0: usize, j1: usize, edits: &mut Vec<TextEdit>| {
        if i1 - i0 == j1 - j0 {
            for k in 0..i1 - i0 {
                edits.push(TextEdit {
                    range: a[i0 + k].clone(),
                    new_text: lb[j0 + k].to_string(),
                });
            }
        } else if i0 < i1 || j0 < j1 {
            edits.push(TextEdit {
                range: at(i0)..at(i1),
                new_text: lb[j0..j1].concat(),
            });
        }
    };
    for (mi, mj) in matches {
        gap(i, mi, j, mj, &mut edits);
        i = mi + 1;
        j = mj + 1;
    }
    gap(i, la.len(), j, lb.len(), &mut edits);
    for edit in &mut edits {
        inside_last_line(old, edit);
    }
    edits
}

/// Lines added after the last one are inserted before the text's final line break
/// instead (the same text): a position past the last line is where editors differ
/// (Neovim 0.12 added a line there), one inside a line is not.
fn inside_last_line(old: &str, edit: &mut TextEdit) {
    let end = old.len();
    if edit.range == (end..end) && old.ends_with('\n') && edit.new_text.ends_with('\n') {
        let lines = &edit.new_text[..edit.new_text.len() - 1];
        edit.new_text = format!("\n{lines}");
        edit.range = end - 1..end - 1;
    }
}

/// The pairs of equal lines of a longest common subsequence, in order; `None` when
/// the inputs differ in more than [`MAX_DIFFERENCES`] lines.
fn common_lines(a: &[&str], b: &[&str]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let limit = max.min(MAX_DIFFERENCES);
    let offset = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=limit as isize {
        // Only the diagonals step `d` can read: -d-1 ..= d+1.
        let lo = (offset - d - 1).max(0) as usize;
        let hi = ((offset + d + 1) as usize).min(v.len() - 1);
        trace.push(v[lo..=hi].to_vec());
        let mut k = -d;
        while k <= d {
            let idx = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, a, b, d, k, offset));
            }
            k += 2;
        }
    }
    None
}

/// Walks the saved frontiers back from the end, collecting the diagonal moves.
fn backtrack(
    trace: &[Vec<isize>],
    a: &[&str],
    b: &[&str],
    d_end: isize,
    k_end: isize,
    offset: isize,
) -> Vec<(usize, usize)> {
    let (mut x, mut y) = (a.len() as isize, b.len() as isize);
    let mut pairs = Vec::new();
    let mut k = k_end;
    for d in (0..=d_end).rev() {
        let saved = &trace[d as usize];
        let base = (offset - d - 1).max(0);
        let v = |k: isize| saved[(k + offset - base) as usize];
        let (prev_k, prev_x) = if d == 0 {
            (0, 0)
        } else {
            let pk = if k == -d || (k != d && v(k - 1) < v(k + 1)) {
                k + 1
            } else {
                k - 1
            };
            (pk, v(pk))
        };
        let prev_y = prev_x - prev_k;
        let (start_x, start_y) = if d == 0 {
            (0, 0)
        } else if prev_k == k + 1 {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        while x > start_x && y > start_y {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        x = prev_x;
        y = prev_y;
        k = prev_k;
    }
    pairs.reverse();
    pairs
}

/// The edits of `all` inside the lines of what `range` touches: whole instructions,
/// and a whole computation when the range reaches its header or closing brace.
pub fn within(
    file: &HloFile,
    syntax: &SyntaxDocument,
    range: Range<usize>,
    all: Vec<TextEdit>,
) -> Vec<TextEdit> {
    let line_start = |offset: usize| syntax.line_of(offset).1;
    let mut covered = range.clone();
    for (_, c) in file.all_computations() {
        let whole = c.range();
        if whole.end < range.start || whole.start > range.end {
            continue;
        }
        for i in &c.instructions {
            let r = c.abs(i.range);
            if r.start <= range.end && range.start <= r.end {
                covered.start = covered.start.min(r.start);
                covered.end = covered.end.max(r.end);
            }
        }
        let first = c.instructions.first().map(|i| c.abs(i.range).start);
        let last = c.instructions.last().map(|i| c.abs(i.range).end);
        let reaches_outside = first.is_none_or(|f| range.start < line_start(f))
            || last.is_some_and(|l| range.end > l);
        if reaches_outside {
            covered.start = covered.start.min(whole.start);
            covered.end = covered.end.max(whole.end);
        }
    }
    let start = line_start(covered.start);
    let end = covered.end;
    all.into_iter()
        .filter(|e| {
            if e.range.is_empty() {
                start <= e.range.start && e.range.start <= end
            } else {
                e.range.start < end && start < e.range.end
            }
        })
        .collect()
}
