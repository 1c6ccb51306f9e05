//! The module priority fusion is rewriting, kept as a [`model::Document`] between
//! rounds so that a round re-reads only what the last fusion changed.
//!
//! Each round reads the module as rewritten so far. Parsing the whole text again every
//! round was most of a run's time (1,300 fusions of a 165 KB module took 13 s): a fusion
//! changes a few lines of one computation and adds or removes a small fused
//! computation. The rewrite ([`Text`]) says which computations it touched; their new
//! text is compared line by line with what the document holds, and only the lines that
//! differ are edited ([`model::Document::edited`]). The document then shares every
//! other computation (its chunk, tree and model) with the previous round, and the
//! computation that changed is reparsed incrementally from its kept tree.
//!
//! The document's text is always exactly [`Text::print`]: the first
//! [`FusedDocument::sync`] prints the whole module once (the input's own formatting,
//! which the first round reads, is replaced by the printed one, as before).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::rewrite::Text;
use crate::model::{self, Document};

/// See the module docs.
pub struct FusedDocument {
    document: Document,
    text: Text,
    /// Each computation's printed text, in document order, once the document holds
    /// [`Text::print`]; `None` while it still holds the input text.
    printed: Option<Vec<(String, String)>>,
    /// The length of the header before the first computation.
    header_len: usize,
}

impl FusedDocument {
    /// The module of `input` (its first), ready to be rewritten.
    pub fn new(input: &str) -> FusedDocument {
        let document = Document::parse(input);
        let text = match document.file().modules.first() {
            Some(module) => Text::new(module, input),
            None => Text::new(&model::Module::default(), input),
        };
        FusedDocument {
            document,
            text,
            printed: None,
            header_len: 0,
        }
    }

    /// The module as rewritten so far (`None` when the text holds no module).
    pub fn module(&self) -> Option<&model::Module> {
        self.document.file().modules.first()
    }

    /// The rewrite to apply the next fusion to; [`FusedDocument::sync`] afterwards.
    pub fn text_mut(&mut self) -> &mut Text {
        &mut self.text
    }

    /// The document's text: the input until the first sync, then [`Text::print`].
    pub fn text(&self) -> String {
        self.document.syntax().text()
    }

    /// Brings the document up to date with the rewrite: the first time by printing
    /// the whole module, then by editing only the lines of the computations the
    /// rewrite touched.
    pub fn sync(&mut self) {
        let touched = self.text.take_touched();
        let Some(old) = self.printed.take() else {
            let header = self.text.print_header();
            let printed: Vec<(String, String)> = self
                .text
                .computation_names()
                .map(|n| {
                    (
                        n.to_string(),
                        self.text.print_computation(n).unwrap_or_default(),
                    )
                })
                .collect();
            let mut full = header.clone();
            printed.iter().for_each(|(_, t)| full.push_str(t));
            self.document = Document::parse(&full);
            self.header_len = header.len();
            self.printed = Some(printed);
            return;
        };
        let new: Vec<(String, String)> = {
            let mut old_texts: HashMap<&str, &String> =
                old.iter().map(|(n, t)| (n.as_str(), t)).collect();
            self.text
                .computation_names()
                .map(|n| {
                    let text = match old_texts.remove(n) {
                        Some(t) if !touched.contains(n) => t.clone(),
                        _ => self.text.print_computation(n).unwrap_or_default(),
                    };
                    (n.to_string(), text)
                })
                .collect()
        };
        let mut groups = computation_edits(&old, &new, self.header_len);
        // From the end back, so that each edit's offsets hold when it is applied; at one
        // offset a removal before an insertion.
        let key = |g: &Vec<Edit>| g.first().map(|(r, _)| (r.start, r.end));
        groups.sort_by_key(|g| std::cmp::Reverse(key(g)));
        for group in groups {
            self.apply(&group);
        }
        self.printed = Some(new);
    }

    /// Applies `edits` (sorted, in document bytes): at once when they lie inside one
    /// computation's body, else one by one from the last.
    fn apply(&mut self, edits: &[Edit]) {
        if let Some((next, _)) = self.document.edited_within_chunk(edits) {
            self.document = next;
            return;
        }
        for (range, replacement) in edits.iter().rev() {
            let (next, _) = self.document.edited(range.start, range.end, replacement);
            self.document = next;
        }
    }
}

/// A byte range of the document and its replacement.
type Edit = (Range<usize>, String);

/// The edits that turn the computations `old` (as the document holds them, after a
/// header of `header_len` bytes) into `new`: byte ranges of the document and their
/// replacements, grouped by computation (the line edits of one changed computation
/// are one group). Computations keep their relative order; one is added, removed or
/// changed in place.
fn computation_edits(
    old: &[(String, String)],
    new: &[(String, String)],
    header_len: usize,
) -> Vec<Vec<Edit>> {
    let old_names: HashSet<&str> = old.iter().map(|(n, _)| n.as_str()).collect();
    let new_names: HashSet<&str> = new.iter().map(|(n, _)| n.as_str()).collect();
    let mut edits = vec![];
    let (mut i, mut j) = (0, 0);
    let mut at = header_len;
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some((a, ta)), Some((b, tb))) if a == b => {
                if ta != tb {
                    edits.push(
                        line_hunks(ta, tb)
                            .into_iter()
                            .map(|(r, t)| (at + r.start..at + r.end, t))
                            .collect(),
                    );
                }
                at += ta.len();
                i += 1;
                j += 1;
            }
            (Some((a, ta)), _) if !new_names.contains(a.as_str()) => {
                edits.push(vec![(at..at + ta.len(), String::new())]);
                at += ta.len();
                i += 1;
            }
            (_, Some((b, tb))) if !old_names.contains(b.as_str()) => {
                insert(&mut edits, at, tb);
                j += 1;
            }
            // A computation that moved: removed here, written again where it now is.
            (Some((_, ta)), _) => {
                edits.push(vec![(at..at + ta.len(), String::new())]);
                at += ta.len();
                i += 1;
            }
            (None, Some((_, tb))) => {
                insert(&mut edits, at, tb);
                j += 1;
            }
            (None, None) => break,
        }
    }
    edits
}

/// Adds an insertion of `text` at `at`, after one already there (two insertions at
/// one offset would otherwise be applied in the wrong order).
fn insert(edits: &mut Vec<Vec<Edit>>, at: usize, text: &str) {
    match edits.last_mut().map(|g| g.as_mut_slice()) {
        Some([(r, t)]) if *r == (at..at) => t.push_str(text),
        _ => edits.push(vec![(at..at, text.to_string())]),
    }
}

/// The lines of `s`, each with its line break, and where each starts.
fn lines(s: &str) -> Vec<(usize, &str)> {
    let mut out = vec![];
    let mut start = 0;
    for (k, _) in s.match_indices('\n') {
        out.push((start, &s[start..=k]));
        start = k + 1;
    }
    if start < s.len() {
        out.push((start, &s[start..]));
    }
    out
}

/// The edits, by whole lines, that turn `old` into `new`: byte ranges of `old` and
/// their replacements, in order. The rewrite deletes, inserts and changes a few
/// instruction lines and never reorders them, so a line found only in `old` is
/// deleted, one found only in `new` is inserted, and equal lines are kept; any other
/// difference is a deletion and an insertion, which still yields `new` exactly.
pub fn line_hunks(old: &str, new: &str) -> Vec<(Range<usize>, String)> {
    let (a, b) = (lines(old), lines(new));
    let in_a: HashSet<&str> = a.iter().map(|l| l.1).collect();
    let in_b: HashSet<&str> = b.iter().map(|l| l.1).collect();
    let mut hunks: Vec<(Range<usize>, String)> = vec![];
    let mut open: Option<(Range<usize>, String)> = None;
    let (mut i, mut j) = (0, 0);
    let offset = |i: usize| a.get(i).map_or(old.len(), |l| l.0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i].1 == b[j].1 {
            hunks.extend(open.take());
            i += 1;
            j += 1;
            continue;
        }
        let hunk = open.get_or_insert_with(|| (offset(i)..offset(i), String::new()));
        let delete = i < a.len() && (!in_b.contains(a[i].1) || j >= b.len());
        let insert = j < b.len() && (!in_a.contains(b[j].1) || i >= a.len());
        if (delete || !insert) && i < a.len() {
            hunk.0.end = offset(i + 1);
            i += 1;
        }
        if (insert || !delete) && j < b.len() {
            hunk.1.push_str(b[j].1);
            j += 1;
        }
    }
    hunks.extend(open);
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &str, hunks: &[(Range<usize>, String)]) -> String {
        let mut out = old.to_string();
        for (r, t) in hunks.iter().rev() {
            out.replace_range(r.clone(), t);
        }
        out
    }

    #[test]
    fn line_hunks_turn_old_into_new() {
        let old = "a {\n  x = 1\n  y = 2\n  z = 3\n  w = 4\n}\n\n";
        let cases = [
            "a {\n  x = 1\n  z = 3\n  w = 4\n}\n\n",
            "a {\n  x = 1\n  y = 2\n  q = 9\n  z = 3\n  w = 4\n}\n\n",
            "a {\n  y = 2\n  z = 3\n  w = 5\n}\n\n",
            "a {\n  w = 4\n  x = 1\n}\n\n",
            "",
            "b {\n}\n",
        ];
        for new in cases {
            let hunks = line_hunks(old, new);
            assert_eq!(apply(old, &hunks), new, "{hunks:?}");
        }
        // Two changes far apart stay two small edits.
        let hunks = line_hunks(old, "a {\n  X = 1\n  y = 2\n  z = 3\n  W = 4\n}\n\n");
        assert_eq!(hunks.len(), 2, "{hunks:?}");
        assert!(line_hunks(old, old).is_empty());
    }

    #[test]
    fn a_synced_document_is_the_printed_rewrite() {
        let input = "HloModule m\n\nENTRY e {\n  p0 = f32[8] parameter(0)\n  a = f32[8] negate(p0)\n  b = f32[8] exponential(a)\n  ROOT c = f32[8] log(b)\n}\n";
        let mut d = FusedDocument::new(input);
        d.text_mut().fuse("e", "b", "c", "kLoop").unwrap();
        d.sync();
        assert_eq!(d.text(), d.text_mut().print());
        d.text_mut().fuse("e", "a", "fusion", "kLoop").unwrap();
        d.sync();
        assert_eq!(d.text(), d.text_mut().print());
        let module = d.module().unwrap();
        let entry = module.entry_computation().unwrap();
        assert_eq!(entry.model().instructions.len(), 2);
        // One producer into two consumers: two fused computations inserted at one place.
        let input = "HloModule m\n\nENTRY e {\n  p0 = f32[8] parameter(0)\n  a = f32[8] negate(p0)\n  b = f32[8] exponential(a)\n  c = f32[8] log(a)\n  ROOT t = (f32[8], f32[8]) tuple(b, c)\n}\n";
        let mut d = FusedDocument::new(input);
        d.sync();
        d.text_mut().fuse("e", "a", "b", "kLoop").unwrap();
        d.text_mut().fuse("e", "a", "c", "kLoop").unwrap();
        d.sync();
        assert_eq!(d.text(), d.text_mut().print());
    }
}
